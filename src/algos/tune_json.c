/* Decision tables as JSON (schema latscope.tune/1, docs/tune-format.md): written with the one JSON
 * writer (src/core/json.c, laid out by lts_json_pretty) and read strictly from the one JSON
 * reader's tree (src/core/jsonread.c), every field checked against the collective registry. */
#include "tune_internal.h"
#include "latscope/errors.h"
#include "latscope/json.h"
#include "latscope/jsonread.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ------------------------------------------------------------------------------- */

/* A container whose text fits in 120 columns stays on one line (docs/tune-format.md). */
enum { WIDTH = 120 };

static void size_json(lts_json_t *j, const char *key, size_t v) {
    if (v == LTS_TUNE_OPEN) lts_json_null(j, key);
    else lts_json_int(j, key, (long long)v);
}

int lts_tune_to_json(const lts_tune_table_t *t, char **text) {
    *text = NULL;
    if (!t || (int)t->op < 0 || t->op >= LTS_COLL_NOPS) return LTS_EINVAL;
    lts_json_t j;
    lts_json_init(&j);
    lts_json_obj_begin(&j, NULL);
    lts_json_str(&j, "schema", LTS_TUNE_SCHEMA);
    lts_json_str(&j, "op", lts_tune_op_name(t->op));
    lts_json_int(&j, "ranks", t->ranks);
    lts_json_str(&j, "statistic", t->statistic[0] ? t->statistic : "median");
    lts_json_str(&j, "boundary_rule", "geometric-midpoint");
    lts_json_str(&j, "timer", t->timer[0] ? t->timer : NULL);
    lts_json_str(&j, "timing_method", t->timing[0] ? t->timing : NULL);
    lts_json_str(&j, "mpi_library", t->mpi_library[0] ? t->mpi_library : NULL);
    lts_json_str(&j, "utc_time", t->utc_time[0] ? t->utc_time : NULL);
    lts_json_str(&j, "latscope_version", t->version[0] ? t->version : NULL);
    lts_json_arr_begin(&j, "candidates");
    for (size_t c = 0; c < t->ncand; c++) lts_json_str(&j, NULL, t->cand[c]->name);
    lts_json_arr_end(&j);
    lts_json_arr_begin(&j, "ranges");
    for (size_t r = 0; r < t->nranges; r++) {
        const lts_tune_range_t *R = &t->ranges[r];
        lts_json_obj_begin(&j, NULL);
        size_json(&j, "lo_bytes", R->lo);
        size_json(&j, "hi_bytes", R->hi);
        lts_json_str(&j, "alg", R->alg->name);
        lts_json_arr_begin(&j, "points");
        for (size_t p = 0; p < R->npoints; p++) {
            lts_json_obj_begin(&j, NULL);
            lts_json_int(&j, "size_bytes", (long long)R->points[p].size_bytes);
            lts_json_obj_begin(&j, "median_s");
            for (size_t c = 0; c < t->ncand; c++) lts_json_dbl(&j, t->cand[c]->name, R->points[p].median_s[c]);
            lts_json_obj_end(&j);
            /* only where something was set aside: other tables are written as before */
            if (R->points[p].set_aside) {
                lts_json_obj_begin(&j, "set_aside");
                for (size_t c = 0; c < t->ncand; c++)
                    if (R->points[p].set_aside[c]) lts_json_str(&j, t->cand[c]->name, R->points[p].set_aside[c]);
                lts_json_obj_end(&j);
            }
            lts_json_obj_end(&j);
        }
        lts_json_arr_end(&j);
        lts_json_obj_end(&j);
    }
    lts_json_arr_end(&j);
    lts_json_obj_end(&j);
    int rc = lts_json_pretty(&j, WIDTH, text);
    lts_json_free(&j);
    return rc;
}

int lts_tune_write(const lts_tune_table_t *t, FILE *f) {
    char *text;
    int rc = lts_tune_to_json(t, &text);
    if (rc) return rc;
    if (fputs(text, f) < 0 || fflush(f) != 0) rc = LTS_EIO;
    free(text);
    return rc;
}

int lts_tune_save(const lts_tune_table_t *t, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return LTS_EIO;
    int rc = lts_tune_write(t, f);
    if (fclose(f) != 0 && !rc) rc = LTS_EIO;
    return rc;
}

/* ---- strict loading ------------------------------------------------------------------------ */

typedef struct ld { char *msg; size_t len; } ld_t;

static int bad(ld_t *l, const lts_jv_t *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(ld_t *l, const lts_jv_t *v, const char *fmt, ...) {
    if (l->msg && l->len) {
        int k = v ? snprintf(l->msg, l->len, "line %d: ", v->line) : 0;
        if (k < 0 || (size_t)k >= l->len) k = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->msg + k, l->len - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return LTS_EINVAL;
}

/* Every key of obj must be one of `allowed` (NULL-terminated); required ones must be present. */
static int keys_ok(ld_t *l, const lts_jv_t *obj, const char *where, const char *const *allowed, size_t nreq) {
    for (size_t i = 0; i < obj->n; i++) {
        int ok = 0;
        for (size_t a = 0; allowed[a] && !ok; a++) ok = !strcmp(obj->keys[i], allowed[a]);
        if (!ok) {
            char list[512] = "";
            for (size_t a = 0; allowed[a]; a++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a ? ", " : "", allowed[a]);
            return bad(l, &obj->items[i], "%s: unknown field \"%s\"; allowed: %s", where, obj->keys[i], list);
        }
    }
    for (size_t a = 0; a < nreq; a++)
        if (!lts_jv_get(obj, allowed[a])) return bad(l, obj, "%s: missing field \"%s\"", where, allowed[a]);
    return 0;
}

static int want(ld_t *l, const lts_jv_t *v, lts_jv_type_t type, int null_ok, const char *what) {
    if (v->type == type || (null_ok && v->type == LTS_JV_NULL)) return 0;
    return bad(l, v, "%s must be %s%s%s, not %s", what, type == LTS_JV_ARR ? "an " : type == LTS_JV_OBJ ? "an " : "a ",
               lts_jv_type_name(type), null_ok ? " or null" : "", lts_jv_type_name(v->type));
}

/* A byte count: a non-negative integer below LTS_TUNE_OPEN; null_ok: null = open. */
static int size_field(ld_t *l, const lts_jv_t *v, const char *what, int null_ok, size_t *out) {
    if (null_ok && v->type == LTS_JV_NULL) { *out = LTS_TUNE_OPEN; return 0; }
    if (v->type != LTS_JV_NUM || !v->is_integer || v->integer < 0)
        return bad(l, v, "%s must be a non-negative integer (bytes)%s", what, null_ok ? " or null (no upper bound)" : "");
    *out = (size_t)v->integer;
    return 0;
}

static int text_field(ld_t *l, const lts_jv_t *root, const char *key, char *dst, size_t n) {
    const lts_jv_t *v = lts_jv_get(root, key);
    if (!v || v->type == LTS_JV_NULL) { dst[0] = '\0'; return 0; }
    if (want(l, v, LTS_JV_STR, 1, key)) return LTS_EINVAL;
    if (strlen(v->str) >= n) return bad(l, v, "%s is longer than %zu characters", key, n - 1);
    lts_tune_copystr(dst, n, v->str);
    return 0;
}

/* The row named exactly `name`, parametrised instances ("tree:k=3") included; else NULL. */
static const lts_coll_alg_t *find_alg(lts_coll_op_t op, const char *name) {
    const lts_coll_alg_t **rows = NULL, *a = NULL;
    size_t n = 0;
    if (!strchr(name, ',') && name[0] != '-' && strcmp(name, "all") &&
        lts_coll_select(op, name, &rows, &n, NULL, 0) == 0 && n == 1 && !strcmp(rows[0]->name, name))
        a = rows[0];
    free(rows);
    return a;
}

static int parse_tree(ld_t *l, const lts_jv_t *root, lts_tune_table_t *t) {
    static const char *const top[] = {"schema", "op", "ranks", "candidates", "ranges", "statistic", "boundary_rule",
                                      "timer", "timing_method", "mpi_library", "utc_time", "latscope_version", NULL};
    if (want(l, root, LTS_JV_OBJ, 0, "the table")) return LTS_EINVAL;
    const lts_jv_t *v = lts_jv_get(root, "schema");
    if (!v) return bad(l, root, "missing field \"schema\": a decision table has \"schema\": \"%s\"", LTS_TUNE_SCHEMA);
    if (v->type != LTS_JV_STR || strcmp(v->str, LTS_TUNE_SCHEMA))
        return bad(l, v, "schema %s%s%s: this reader knows \"%s\"", v->type == LTS_JV_STR ? "\"" : "",
                   v->type == LTS_JV_STR ? v->str : lts_jv_type_name(v->type), v->type == LTS_JV_STR ? "\"" : "",
                   LTS_TUNE_SCHEMA);
    if (keys_ok(l, root, "table", top, 5)) return LTS_EINVAL;

    v = lts_jv_get(root, "op");
    if (want(l, v, LTS_JV_STR, 0, "op")) return LTS_EINVAL;
    int op = lts_coll_op_find(v->str);
    if (op < 0) {
        char names[256];
        lts_reg_names(&lts_coll_op_names, names, sizeof names);
        return bad(l, v, "op \"%s\": unknown collective operation; valid: %s", v->str, names);
    }
    t->op = (lts_coll_op_t)op;
    const lts_registry_t *reg = lts_coll_registry(t->op);
    char algnames[512];
    lts_reg_names(reg, algnames, sizeof algnames);

    v = lts_jv_get(root, "ranks");
    if (v->type != LTS_JV_NUM || !v->is_integer || v->integer < 1 || v->integer > 0x7fffffff)
        return bad(l, v, "ranks must be a positive integer (the communicator size the table was measured on)");
    t->ranks = (int)v->integer;

    v = lts_jv_get(root, "statistic");
    if (v && (v->type != LTS_JV_STR || strcmp(v->str, "median")))
        return bad(l, v, "statistic: only \"median\" is known");
    lts_tune_copystr(t->statistic, sizeof t->statistic, "median");
    v = lts_jv_get(root, "boundary_rule");
    if (v && (v->type != LTS_JV_STR || strcmp(v->str, "geometric-midpoint")))
        return bad(l, v, "boundary_rule: only \"geometric-midpoint\" is known");
    if (text_field(l, root, "timer", t->timer, sizeof t->timer) ||
        text_field(l, root, "timing_method", t->timing, sizeof t->timing) ||
        text_field(l, root, "mpi_library", t->mpi_library, sizeof t->mpi_library) ||
        text_field(l, root, "utc_time", t->utc_time, sizeof t->utc_time) ||
        text_field(l, root, "latscope_version", t->version, sizeof t->version))
        return LTS_EINVAL;

    v = lts_jv_get(root, "candidates");
    if (want(l, v, LTS_JV_ARR, 0, "candidates")) return LTS_EINVAL;
    if (v->n == 0 || v->n > LTS_TUNE_MAX_CANDIDATES)
        return bad(l, v, "candidates: between 1 and %d algorithm names", LTS_TUNE_MAX_CANDIDATES);
    t->cand = calloc(v->n, sizeof *t->cand);
    if (!t->cand) return LTS_ENOMEM;
    for (size_t c = 0; c < v->n; c++) {
        const lts_jv_t *it = &v->items[c];
        if (want(l, it, LTS_JV_STR, 0, "a candidate")) return LTS_EINVAL;
        const lts_coll_alg_t *a = find_alg(t->op, it->str);
        if (!a)
            return bad(l, it, "candidate \"%s\": unknown algorithm for op %s; valid: %s (register your own with "
                       "lts_coll_register before loading)", it->str, lts_tune_op_name(t->op), algnames);
        for (size_t d = 0; d < c; d++)
            if (!strcmp(t->cand[d]->name, a->name)) return bad(l, it, "candidate \"%s\" is listed twice", it->str);
        t->cand[t->ncand++] = a;
    }

    const lts_jv_t *rs = lts_jv_get(root, "ranges");
    if (want(l, rs, LTS_JV_ARR, 0, "ranges")) return LTS_EINVAL;
    if (rs->n == 0) return bad(l, rs, "ranges: at least one range [lo_bytes, hi_bytes)");
    t->ranges = calloc(rs->n, sizeof *t->ranges);
    if (!t->ranges) return LTS_ENOMEM;
    static const char *const rkeys[] = {"lo_bytes", "hi_bytes", "alg", "points", NULL};
    static const char *const pkeys[] = {"size_bytes", "median_s", "set_aside", NULL};
    size_t prev_size = 0;
    int any_point = 0;
    for (size_t r = 0; r < rs->n; r++) {
        const lts_jv_t *rv = &rs->items[r];
        char where[48];
        snprintf(where, sizeof where, "ranges[%zu]", r);
        if (want(l, rv, LTS_JV_OBJ, 0, where) || keys_ok(l, rv, where, rkeys, 4)) return LTS_EINVAL;
        lts_tune_range_t *R = &t->ranges[t->nranges++];
        char what[96];
        snprintf(what, sizeof what, "%s.lo_bytes", where);
        if (size_field(l, lts_jv_get(rv, "lo_bytes"), what, 0, &R->lo)) return LTS_EINVAL;
        if (r == 0 && R->lo != 0)
            return bad(l, lts_jv_get(rv, "lo_bytes"), "ranges[0].lo_bytes is %zu: the first range must start at 0", R->lo);
        if (r > 0 && R->lo != t->ranges[r - 1].hi)
            return bad(l, lts_jv_get(rv, "lo_bytes"), "%s.lo_bytes %zu must equal ranges[%zu].hi_bytes %zu: ranges are "
                       "sorted and contiguous", where, R->lo, r - 1, t->ranges[r - 1].hi);
        snprintf(what, sizeof what, "%s.hi_bytes", where);
        if (size_field(l, lts_jv_get(rv, "hi_bytes"), what, r + 1 == rs->n, &R->hi)) return LTS_EINVAL;
        if (R->hi != LTS_TUNE_OPEN && R->hi <= R->lo)
            return bad(l, lts_jv_get(rv, "hi_bytes"), "%s: hi_bytes %zu must be above lo_bytes %zu (ranges are sorted)",
                       where, R->hi, R->lo);
        if (r + 1 == rs->n && R->hi != LTS_TUNE_OPEN)
            return bad(l, lts_jv_get(rv, "hi_bytes"), "%s.hi_bytes: the last range has no upper bound: null", where);
        const lts_jv_t *av = lts_jv_get(rv, "alg");
        snprintf(what, sizeof what, "%s.alg", where);
        if (want(l, av, LTS_JV_STR, 0, what)) return LTS_EINVAL;
        for (size_t c = 0; c < t->ncand && !R->alg; c++)
            if (!strcmp(t->cand[c]->name, av->str)) R->alg = t->cand[c];
        if (!R->alg) {
            if (!find_alg(t->op, av->str))
                return bad(l, av, "%s \"%s\": unknown algorithm for op %s; valid: %s", what, av->str, lts_tune_op_name(t->op),
                           algnames);
            return bad(l, av, "%s \"%s\" is not one of the candidates", what, av->str);
        }
        const lts_jv_t *ps = lts_jv_get(rv, "points");
        snprintf(what, sizeof what, "%s.points", where);
        if (want(l, ps, LTS_JV_ARR, 0, what)) return LTS_EINVAL;
        R->points = calloc(ps->n + 1, sizeof *R->points);
        if (!R->points) return LTS_ENOMEM;
        for (size_t p = 0; p < ps->n; p++) {
            const lts_jv_t *pv = &ps->items[p];
            snprintf(what, sizeof what, "%s.points[%zu]", where, p);
            if (want(l, pv, LTS_JV_OBJ, 0, what) || keys_ok(l, pv, what, pkeys, 2)) return LTS_EINVAL;
            lts_tune_point_t *pt = &R->points[R->npoints];
            pt->median_s = malloc(t->ncand * sizeof *pt->median_s);
            if (!pt->median_s) return LTS_ENOMEM;
            R->npoints++;
            const lts_jv_t *sv = lts_jv_get(pv, "size_bytes");
            if (size_field(l, sv, "size_bytes", 0, &pt->size_bytes)) return LTS_EINVAL;
            if (pt->size_bytes < R->lo || (R->hi != LTS_TUNE_OPEN && pt->size_bytes >= R->hi))
                return bad(l, sv, "%s.size_bytes %zu lies outside its range [%zu, %s)", what, pt->size_bytes, R->lo,
                           R->hi == LTS_TUNE_OPEN ? "inf" : (snprintf(where, sizeof where, "%zu", R->hi), where));
            if (any_point && pt->size_bytes <= prev_size)
                return bad(l, sv, "%s.size_bytes %zu: measured sizes must increase (previous %zu)", what, pt->size_bytes,
                           prev_size);
            prev_size = pt->size_bytes;
            any_point = 1;
            const lts_jv_t *mv = lts_jv_get(pv, "median_s");
            if (want(l, mv, LTS_JV_OBJ, 0, "median_s")) return LTS_EINVAL;
            if (mv->n != t->ncand)
                return bad(l, mv, "%s.median_s has %zu entries: one per candidate (%zu)", what, mv->n, t->ncand);
            for (size_t c = 0; c < t->ncand; c++) {
                const lts_jv_t *x = lts_jv_get(mv, t->cand[c]->name);
                if (!x) return bad(l, mv, "%s.median_s: missing candidate \"%s\"", what, t->cand[c]->name);
                if (x->type == LTS_JV_NULL) pt->median_s[c] = NAN;
                else if (x->type == LTS_JV_NUM) pt->median_s[c] = x->num;
                else return bad(l, x, "%s.median_s.%s must be a number (seconds) or null", what, t->cand[c]->name);
            }
            /* optional: candidate -> why it was not ranked at this size (at least one entry) */
            const lts_jv_t *av2 = lts_jv_get(pv, "set_aside");
            if (av2) {
                if (want(l, av2, LTS_JV_OBJ, 0, "set_aside")) return LTS_EINVAL;
                if (av2->n == 0) return bad(l, av2, "%s.set_aside is empty: leave it out", what);
                if (!(pt->set_aside = calloc(t->ncand, sizeof *pt->set_aside))) return LTS_ENOMEM;
                for (size_t k = 0; k < av2->n; k++) {
                    size_t c = 0;
                    while (c < t->ncand && strcmp(t->cand[c]->name, av2->keys[k])) c++;
                    if (c == t->ncand)
                        return bad(l, &av2->items[k], "%s.set_aside: \"%s\" is not one of the candidates", what,
                                   av2->keys[k]);
                    if (av2->items[k].type != LTS_JV_STR)
                        return bad(l, &av2->items[k], "%s.set_aside.%s must be a string (the reason)", what, av2->keys[k]);
                    if (!strcmp(t->cand[c]->name, R->alg->name))
                        return bad(l, &av2->items[k], "%s.set_aside: \"%s\" is the range's algorithm: a candidate "
                                   "set aside never wins", what, av2->keys[k]);
                    if (!(pt->set_aside[c] = strdup(av2->items[k].str))) return LTS_ENOMEM;
                }
            }
        }
    }
    return 0;
}

int lts_tune_parse(const char *text, size_t len, lts_tune_table_t **out, char *msg, size_t msglen) {
    *out = NULL;
    lts_jv_t *root;
    int rc = lts_jv_parse(text, len, &root, msg, msglen);
    if (rc) return rc;
    lts_tune_table_t *t = calloc(1, sizeof *t);
    if (!t) { lts_jv_free(root); return LTS_ENOMEM; }
    ld_t l = {msg, msglen};
    rc = parse_tree(&l, root, t);
    lts_jv_free(root);
    if (rc) {
        if (rc == LTS_ENOMEM) lts_tune_msg(msg, msglen, "out of memory");
        lts_tune_free(t);
        return rc;
    }
    *out = t;
    return LTS_OK;
}

int lts_tune_load(const char *path, lts_tune_table_t **out, char *msg, size_t msglen) {
    *out = NULL;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        lts_tune_msg(msg, msglen, "%s: cannot be read (%s)", path ? path : "(null)", strerror(errno));
        return LTS_EIO;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) { fclose(f); lts_tune_msg(msg, msglen, "out of memory"); return LTS_ENOMEM; }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *b = realloc(buf, cap * 2);
        if (!b) free(buf);
        buf = b;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(buf); lts_tune_msg(msg, msglen, "%s: read error", path); return LTS_EIO; }
    char inner[768] = "";
    int rc = lts_tune_parse(buf, n, out, inner, sizeof inner);
    free(buf);
    if (rc) lts_tune_msg(msg, msglen, "%s: %s", path, inner);
    return rc;
}
