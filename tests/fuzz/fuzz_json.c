/* Fuzz harness: the strict JSON reader (src/core/jsonread.c) that every latscope file loader
 * walks. Invariants beyond "no sanitizer report": a rejected text returns a negative code, no
 * tree and a "line L, column C: ..." message; an accepted tree is well formed (no depth beyond
 * LTS_JV_MAX_DEPTH, unique keys, positions inside the text), and written back as JSON by the
 * small writer below it parses to an equal tree (same types, strings, keys, numbers). */
#include "fuzz.h"
#include "latscope/errors.h"
#include "latscope/jsonread.h"
#include <string.h>

typedef struct out { char *p; size_t n, cap; } out_t;

static void put(out_t *o, const char *s, size_t n) {
    if (o->n + n + 1 > o->cap) {
        o->cap = (o->n + n + 1) * 2;
        o->p = realloc(o->p, o->cap);
        if (!o->p) abort();
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = '\0';
}
static void puts_(out_t *o, const char *s) { put(o, s, strlen(s)); }

static void put_string(out_t *o, const char *s) {
    put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[8];
        if (c == '"' || c == '\\') { e[0] = '\\'; e[1] = (char)c; put(o, e, 2); }
        else if (c < 0x20) { snprintf(e, sizeof e, "\\u%04x", c); put(o, e, 6); }
        else put(o, (const char *)&c, 1);
    }
    put(o, "\"", 1);
}

static void write_value(out_t *o, const lts_jv_t *v) {
    char b[64];
    switch (v->type) {
    case LTS_JV_NULL: puts_(o, "null"); break;
    case LTS_JV_BOOL: puts_(o, v->boolean ? "true" : "false"); break;
    case LTS_JV_NUM:
        if (v->is_integer) snprintf(b, sizeof b, "%lld", v->integer);
        else {
            snprintf(b, sizeof b, "%.17g", v->num);   /* 17 digits: the same double back */
            if (!strpbrk(b, ".eEn")) strcat(b, ".0");  /* keep it non-integral, as it was read */
        }
        puts_(o, b);
        break;
    case LTS_JV_STR: put_string(o, v->str); break;
    case LTS_JV_ARR:
    case LTS_JV_OBJ:
        puts_(o, v->type == LTS_JV_ARR ? "[" : "{");
        for (size_t i = 0; i < v->n; i++) {
            if (i) puts_(o, ",");
            if (v->type == LTS_JV_OBJ) { put_string(o, v->keys[i]); puts_(o, ":"); }
            write_value(o, &v->items[i]);
        }
        puts_(o, v->type == LTS_JV_ARR ? "]" : "}");
        break;
    }
}

static void check_tree(const lts_jv_t *v, int depth, size_t len) {
    FUZZ_CHECK(depth <= LTS_JV_MAX_DEPTH, "depth %d", depth);
    FUZZ_CHECK(v->line >= 1 && v->col >= 1 && (size_t)v->line <= len + 1, "position %d:%d", v->line, v->col);
    FUZZ_CHECK(v->type >= LTS_JV_NULL && v->type <= LTS_JV_OBJ, "type %d", (int)v->type);
    if (v->type == LTS_JV_STR) FUZZ_CHECK(v->str != NULL, "string without text");
    if (v->type != LTS_JV_ARR && v->type != LTS_JV_OBJ) return;
    FUZZ_CHECK(v->n == 0 || v->items, "%zu items, no array", v->n);
    for (size_t i = 0; i < v->n; i++) {
        if (v->type == LTS_JV_OBJ) {
            for (size_t j = 0; j < i; j++) FUZZ_CHECK(strcmp(v->keys[i], v->keys[j]), "duplicate key '%s'", v->keys[i]);
            FUZZ_CHECK(lts_jv_get(v, v->keys[i]) == &v->items[i], "lts_jv_get('%s') finds another item", v->keys[i]);
        }
        check_tree(&v->items[i], depth + 1, len);
    }
}

static int same(const lts_jv_t *a, const lts_jv_t *b) {
    if (a->type != b->type) return 0;
    switch (a->type) {
    case LTS_JV_NULL: return 1;
    case LTS_JV_BOOL: return a->boolean == b->boolean;
    case LTS_JV_NUM:
        return a->num == b->num && a->is_integer == b->is_integer && (!a->is_integer || a->integer == b->integer);
    case LTS_JV_STR: return !strcmp(a->str, b->str);
    default:
        if (a->n != b->n) return 0;
        for (size_t i = 0; i < a->n; i++)
            if ((a->type == LTS_JV_OBJ && strcmp(a->keys[i], b->keys[i])) || !same(&a->items[i], &b->items[i])) return 0;
        return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    lts_jv_t *v = (lts_jv_t *)&size;
    char msg[512];
    msg[0] = '\0';
    int rc = lts_jv_parse((const char *)data, size, &v, msg, sizeof msg);
    if (rc != LTS_OK) {
        FUZZ_CHECK(rc < 0 && v == NULL, "error %d with a tree", rc);
        FUZZ_CHECK(rc == LTS_ENOMEM || !strncmp(msg, "line ", 5), "message without a position: '%s'", msg);
        return 0;
    }
    FUZZ_CHECK(v != NULL, "no tree");
    check_tree(v, 0, size);
    out_t o = {0};
    write_value(&o, v);
    lts_jv_t *w = NULL;
    rc = lts_jv_parse(o.p, o.n, &w, msg, sizeof msg);
    FUZZ_CHECK(rc == LTS_OK, "the tree written back does not parse: %s: %s", msg, o.p);
    FUZZ_CHECK(same(v, w), "the tree written back parses to another tree: %s", o.p);
    lts_jv_free(w);
    lts_jv_free(v);
    free(o.p);
    return 0;
}
