#include "latscope/json.h"
#include "latscope/errors.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void lts_json_init(lts_json_t *j) { memset(j, 0, sizeof *j); }
void lts_json_free(lts_json_t *j) { free(j->buf); memset(j, 0, sizeof *j); }

static void put(lts_json_t *j, const char *s, size_t n) {
    if (j->oom) return;
    if (j->len + n + 1 > j->cap) {
        size_t nc = j->cap ? j->cap : 256;
        while (nc < j->len + n + 1) nc *= 2;
        char *b = realloc(j->buf, nc);
        if (!b) { j->oom = 1; return; }
        j->buf = b; j->cap = nc;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}
static void puts_(lts_json_t *j, const char *s) { put(j, s, strlen(s)); }
static void putf(lts_json_t *j, const char *fmt, ...) {
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) put(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void quoted(lts_json_t *j, const char *s) {
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) putf(j, "\\u%04x", *p);
            else put(j, (const char *)p, 1);
        }
    }
    put(j, "\"", 1);
}

static void key(lts_json_t *j, const char *k) {
    if (j->need_comma[j->depth]) put(j, ",", 1);
    j->need_comma[j->depth] = 1;
    if (k) { quoted(j, k); put(j, ":", 1); }
}

static void open_(lts_json_t *j, const char *k, const char *c) {
    key(j, k);
    puts_(j, c);
    if (j->depth < 31) j->depth++;
    j->need_comma[j->depth] = 0;
}
static void close_(lts_json_t *j, const char *c) { puts_(j, c); if (j->depth > 0) j->depth--; }

void lts_json_obj_begin(lts_json_t *j, const char *k) { open_(j, k, "{"); }
void lts_json_obj_end(lts_json_t *j) { close_(j, "}"); }
void lts_json_arr_begin(lts_json_t *j, const char *k) { open_(j, k, "["); }
void lts_json_arr_end(lts_json_t *j) { close_(j, "]"); }
void lts_json_str(lts_json_t *j, const char *k, const char *v) {
    key(j, k);
    if (v) quoted(j, v); else puts_(j, "null");
}
void lts_json_dbl(lts_json_t *j, const char *k, double v) {
    key(j, k);
    if (isfinite(v)) putf(j, "%.9g", v); else puts_(j, "null");
}
void lts_json_int(lts_json_t *j, const char *k, long long v) { key(j, k); putf(j, "%lld", v); }
void lts_json_bool(lts_json_t *j, const char *k, int v) { key(j, k); puts_(j, v ? "true" : "false"); }
void lts_json_null(lts_json_t *j, const char *k) { key(j, k); puts_(j, "null"); }

int lts_json_emit(lts_json_t *j, FILE *f) {
    if (j->oom) return LTS_ENOMEM;
    if (fputs(j->buf ? j->buf : "", f) < 0 || fputc('\n', f) < 0 || fflush(f) != 0) return LTS_EIO;
    return LTS_OK;
}

/* ---- layout for people (decision tables, docs/tune-format.md) ------------------------------ */

/* End (exclusive) of the string starting at j[i] == '"'. */
static size_t str_end(const char *j, size_t i) {
    for (i++; j[i] && j[i] != '"'; i++)
        if (j[i] == '\\' && j[i + 1]) i++;
    return j[i] ? i + 1 : i;
}
/* End (exclusive) of the value starting at i. */
static size_t val_end(const char *j, size_t i) {
    if (j[i] == '"') return str_end(j, i);
    if (j[i] == '{' || j[i] == '[') {
        int depth = 0;
        for (; j[i]; i++) {
            if (j[i] == '"') { i = str_end(j, i) - 1; continue; }
            if (j[i] == '{' || j[i] == '[') depth++;
            else if ((j[i] == '}' || j[i] == ']') && --depth == 0) return i + 1;
        }
        return i;
    }
    while (j[i] && j[i] != ',' && j[i] != '}' && j[i] != ']') i++;
    return i;
}
/* Copy j[i..e) adding a space after ',' and ':' outside strings. */
static void one_line(lts_json_t *s, const char *j, size_t i, size_t e) {
    while (i < e) {
        if (j[i] == '"') {
            size_t k = str_end(j, i);
            put(s, j + i, k - i);
            i = k;
            continue;
        }
        put(s, j + i, 1);
        if (j[i] == ',' || j[i] == ':') put(s, " ", 1);
        i++;
    }
}
static size_t spaced_len(const char *j, size_t i, size_t e) {
    size_t n = 0;
    while (i < e) {
        if (j[i] == '"') { size_t k = str_end(j, i); n += k - i; i = k; continue; }
        n += 1 + (j[i] == ',' || j[i] == ':');
        i++;
    }
    return n;
}
static void indent_(lts_json_t *s, int k) { for (int i = 0; i < k; i++) put(s, " ", 1); }
static void pretty(lts_json_t *s, const char *j, size_t i, int width, int indent, int col) {
    size_t e = val_end(j, i);
    if ((j[i] != '{' && j[i] != '[') || (size_t)col + spaced_len(j, i, e) <= (size_t)width || e - i == 2) {
        one_line(s, j, i, e);
        return;
    }
    int obj = j[i] == '{';
    put(s, j + i, 1);
    i++;
    while (i < e - 1) {
        put(s, "\n", 1);
        indent_(s, indent + 2);
        int c = indent + 2;
        if (obj) {
            size_t k = str_end(j, i);
            put(s, j + i, k - i);
            put(s, ": ", 2);
            c += (int)(k - i) + 2;
            i = k + 1;   /* past ':' */
        }
        size_t ve = val_end(j, i);
        pretty(s, j, i, width, indent + 2, c);
        i = ve;
        if (j[i] == ',') { put(s, ",", 1); i++; }
    }
    put(s, "\n", 1);
    indent_(s, indent);
    put(s, j + e - 1, 1);
}

int lts_json_pretty(const lts_json_t *j, int width, char **text) {
    *text = NULL;
    if (j->oom) return LTS_ENOMEM;
    lts_json_t s;
    lts_json_init(&s);
    pretty(&s, j->buf ? j->buf : "", 0, width, 0, 0);
    put(&s, "\n", 1);
    if (s.oom) { lts_json_free(&s); return LTS_ENOMEM; }
    *text = s.buf;
    return LTS_OK;
}
