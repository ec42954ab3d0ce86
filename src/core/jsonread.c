/* Strict JSON reader (RFC 8259 grammar) into a value tree; see include/latscope/jsonread.h.
 * Recursive descent with a depth limit, so a hostile file cannot exhaust the stack. */
#include "latscope/jsonread.h"
#include "latscope/errors.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const char *s;
    size_t len, pos;
    int line, col;
    char *msg;
    size_t msglen;
    int err;   /* first error code; the first message is kept */
} rd_t;

static int fail(rd_t *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rd_t *r, int code, const char *fmt, ...) {
    if (r->err) return r->err;
    r->err = code;
    if (r->msg && r->msglen) {
        int k = snprintf(r->msg, r->msglen, "line %d, column %d: ", r->line, r->col);
        if (k >= 0 && (size_t)k < r->msglen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->msg + k, r->msglen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return code;
}

static int peek(const rd_t *r) { return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1; }
static void adv(rd_t *r) {
    if (r->pos >= r->len) return;
    if (r->s[r->pos] == '\n') { r->line++; r->col = 1; }
    else r->col++;
    r->pos++;
}
static void ws(rd_t *r) {
    for (int c = peek(r); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(r)) adv(r);
}

static void what(int c, char *buf, size_t n) {
    if (c < 0) snprintf(buf, n, "the end of the text");
    else if (c >= 0x20 && c < 0x7f) snprintf(buf, n, "'%c'", c);
    else snprintf(buf, n, "byte 0x%02x", c);
}

static int literal(rd_t *r, const char *word) {
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n)) return fail(r, LTS_EINVAL, "not a JSON value (expected %s)", word);
    for (size_t i = 0; i < n; i++) adv(r);
    return 0;
}

static int hex4(rd_t *r, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(r);
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return fail(r, LTS_EINVAL, "\\u escape needs 4 hex digits");
        v = v * 16 + (unsigned)d;
        adv(r);
    }
    *out = v;
    return 0;
}

static void put_utf8(char *b, size_t *k, unsigned cp) {
    if (cp < 0x80) b[(*k)++] = (char)cp;
    else if (cp < 0x800) { b[(*k)++] = (char)(0xc0 | cp >> 6); b[(*k)++] = (char)(0x80 | (cp & 0x3f)); }
    else if (cp < 0x10000) {
        b[(*k)++] = (char)(0xe0 | cp >> 12); b[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        b[(*k)++] = (char)(0xf0 | cp >> 18); b[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f)); b[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* A string at '"'; the decoded text is never longer than the source. */
static int string(rd_t *r, char **out) {
    adv(r);   /* opening quote */
    size_t start = r->pos, k = 0;
    size_t end = start;
    while (end < r->len && r->s[end] != '"') end += r->s[end] == '\\' ? 2 : 1;
    char *b = malloc(end - start + 1);
    if (!b) return fail(r, LTS_ENOMEM, "out of memory");
    for (;;) {
        int c = peek(r);
        if (c < 0) { free(b); return fail(r, LTS_EINVAL, "unterminated string"); }
        if (c == '"') { adv(r); break; }
        if (c < 0x20) { free(b); return fail(r, LTS_EINVAL, "control character 0x%02x inside a string (escape it)", c); }
        if (c != '\\') { b[k++] = (char)c; adv(r); continue; }
        adv(r);
        c = peek(r);
        unsigned cp;
        switch (c) {
        case '"': case '\\': case '/': b[k++] = (char)c; adv(r); break;
        case 'b': b[k++] = '\b'; adv(r); break;
        case 'f': b[k++] = '\f'; adv(r); break;
        case 'n': b[k++] = '\n'; adv(r); break;
        case 'r': b[k++] = '\r'; adv(r); break;
        case 't': b[k++] = '\t'; adv(r); break;
        case 'u':
            adv(r);
            if (hex4(r, &cp)) { free(b); return r->err; }
            if (cp >= 0xd800 && cp < 0xdc00) {   /* a surrogate pair: \uD8xx\uDCxx */
                unsigned lo;
                if (peek(r) != '\\') { free(b); return fail(r, LTS_EINVAL, "unpaired surrogate in \\u escape"); }
                adv(r);
                if (peek(r) != 'u') { free(b); return fail(r, LTS_EINVAL, "unpaired surrogate in \\u escape"); }
                adv(r);
                if (hex4(r, &lo)) { free(b); return r->err; }
                if (lo < 0xdc00 || lo > 0xdfff) { free(b); return fail(r, LTS_EINVAL, "unpaired surrogate in \\u escape"); }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                free(b);
                return fail(r, LTS_EINVAL, "unpaired surrogate in \\u escape");
            }
            if (cp == 0) { free(b); return fail(r, LTS_EINVAL, "\\u0000 is not allowed in a string here"); }
            put_utf8(b, &k, cp);
            break;
        default: {
            char w[32];
            what(c, w, sizeof w);
            free(b);
            return fail(r, LTS_EINVAL, "invalid escape \\%s in a string", c < 0 ? "" : w);
        }
        }
    }
    b[k] = '\0';
    *out = b;
    return 0;
}

/* number = [-] int [frac] [exp]; int = 0 | [1-9][0-9]* */
static int number(rd_t *r, lts_jv_t *v) {
    size_t start = r->pos;
    int integral = 1;
    if (peek(r) == '-') adv(r);
    if (peek(r) == '0') adv(r);
    else if (peek(r) >= '1' && peek(r) <= '9') while (peek(r) >= '0' && peek(r) <= '9') adv(r);
    else return fail(r, LTS_EINVAL, "not a JSON number");
    if (peek(r) == '.') {
        integral = 0;
        adv(r);
        if (!(peek(r) >= '0' && peek(r) <= '9')) return fail(r, LTS_EINVAL, "a digit must follow the decimal point");
        while (peek(r) >= '0' && peek(r) <= '9') adv(r);
    }
    if (peek(r) == 'e' || peek(r) == 'E') {
        integral = 0;
        adv(r);
        if (peek(r) == '+' || peek(r) == '-') adv(r);
        if (!(peek(r) >= '0' && peek(r) <= '9')) return fail(r, LTS_EINVAL, "a digit must follow the exponent");
        while (peek(r) >= '0' && peek(r) <= '9') adv(r);
    }
    char tmp[64];
    size_t n = r->pos - start;
    if (n >= sizeof tmp) return fail(r, LTS_EINVAL, "number too long (%zu characters)", n);
    memcpy(tmp, r->s + start, n);
    tmp[n] = '\0';
    v->type = LTS_JV_NUM;
    errno = 0;
    v->num = strtod(tmp, NULL);
    if (errno == ERANGE && (v->num > 1 || v->num < -1)) return fail(r, LTS_EINVAL, "number %s is out of range", tmp);
    if (integral) {
        errno = 0;
        long long x = strtoll(tmp, NULL, 10);
        if (!errno) { v->is_integer = 1; v->integer = x; }
    }
    return 0;
}

static int value(rd_t *r, lts_jv_t *v, int depth);

static int grow(rd_t *r, lts_jv_t *v, size_t *cap, int with_keys) {
    if (v->n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    lts_jv_t *it = realloc(v->items, nc * sizeof *it);
    if (!it) return fail(r, LTS_ENOMEM, "out of memory");
    v->items = it;
    if (with_keys) {
        char **ks = realloc(v->keys, nc * sizeof *ks);
        if (!ks) return fail(r, LTS_ENOMEM, "out of memory");
        v->keys = ks;
    }
    *cap = nc;
    return 0;
}

static int container(rd_t *r, lts_jv_t *v, int depth, int obj) {
    if (depth >= LTS_JV_MAX_DEPTH) return fail(r, LTS_EINVAL, "nesting deeper than %d levels", LTS_JV_MAX_DEPTH);
    v->type = obj ? LTS_JV_OBJ : LTS_JV_ARR;
    int close = obj ? '}' : ']';
    size_t cap = 0;
    adv(r);
    ws(r);
    if (peek(r) == close) { adv(r); return 0; }
    for (;;) {
        char *key = NULL;
        if (obj) {
            if (peek(r) != '"') {
                char w[32];
                what(peek(r), w, sizeof w);
                return fail(r, LTS_EINVAL, "expected a key string, found %s", w);
            }
            int kl = r->line, kc = r->col;
            if (string(r, &key)) return r->err;
            for (size_t i = 0; i < v->n; i++)
                if (!strcmp(v->keys[i], key)) {
                    r->line = kl;
                    r->col = kc;
                    fail(r, LTS_EINVAL, "duplicate key \"%s\"", key);
                    free(key);
                    return r->err;
                }
            ws(r);
            if (peek(r) != ':') { free(key); return fail(r, LTS_EINVAL, "expected ':' after the key"); }
            adv(r);
            ws(r);
        }
        if (grow(r, v, &cap, obj)) { free(key); return r->err; }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        if (obj) v->keys[v->n] = key;
        v->n++;   /* counted before parsing, so lts_jv_free releases a half-built item */
        if (value(r, &v->items[v->n - 1], depth + 1)) return r->err;
        ws(r);
        int c = peek(r);
        if (c == ',') {
            adv(r);
            ws(r);
            if (peek(r) == close) return fail(r, LTS_EINVAL, "trailing comma before '%c'", close);
            continue;
        }
        if (c == close) { adv(r); return 0; }
        char w[32];
        what(c, w, sizeof w);
        return fail(r, LTS_EINVAL, "expected ',' or '%c', found %s", close, w);
    }
}

static int value(rd_t *r, lts_jv_t *v, int depth) {
    ws(r);
    v->line = r->line;
    v->col = r->col;
    int c = peek(r);
    switch (c) {
    case '{': return container(r, v, depth, 1);
    case '[': return container(r, v, depth, 0);
    case '"': v->type = LTS_JV_STR; return string(r, &v->str);
    case 't': v->type = LTS_JV_BOOL; v->boolean = 1; return literal(r, "true");
    case 'f': v->type = LTS_JV_BOOL; v->boolean = 0; return literal(r, "false");
    case 'n': v->type = LTS_JV_NULL; return literal(r, "null");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return number(r, v);
        char w[32];
        what(c, w, sizeof w);
        return fail(r, LTS_EINVAL, "expected a JSON value, found %s", w);
    }
}

static void release(lts_jv_t *v) {
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        release(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

void lts_jv_free(lts_jv_t *v) {
    if (!v) return;
    release(v);
    free(v);
}

int lts_jv_parse(const char *text, size_t len, lts_jv_t **out, char *msg, size_t msglen) {
    *out = NULL;
    if (msg && msglen) msg[0] = '\0';
    rd_t r = {text, len, 0, 1, 1, msg, msglen, 0};
    lts_jv_t *v = calloc(1, sizeof *v);
    if (!v) return fail(&r, LTS_ENOMEM, "out of memory");
    if (!text) fail(&r, LTS_EINVAL, "no text");
    else if (!value(&r, v, 0)) {
        ws(&r);
        if (r.pos < r.len) {
            char w[32];
            what(peek(&r), w, sizeof w);
            fail(&r, LTS_EINVAL, "unexpected %s after the JSON value", w);
        }
    }
    if (r.err) {
        lts_jv_free(v);
        return r.err;
    }
    *out = v;
    return LTS_OK;
}

const lts_jv_t *lts_jv_get(const lts_jv_t *v, const char *key) {
    if (!v || v->type != LTS_JV_OBJ) return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key)) return &v->items[i];
    return NULL;
}

const char *lts_jv_type_name(lts_jv_type_t t) {
    static const char *names[] = {"null", "boolean", "number", "string", "array", "object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}
