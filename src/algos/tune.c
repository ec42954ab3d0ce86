/* Run-time selection of collective algorithms (include/latscope/tune.h): MPIBlib's Opt_Scatter
 * (seed 001 §4: "find i such that M[i] <= m < M[i+1]; find j such that T[j][i] = min(T[0..N-1][i]);
 * return impls[j](...)") with the decision made once, merged into ranges, saved as JSON
 * (docs/tune-format.md), agreed across ranks, and dispatched by binary search. */
#include "latscope/tune.h"
#include "latscope/errors.h"
#include "latscope/json.h"
#include "latscope/jsonread.h"
#include "latscope/results.h"
#include "latscope/stats.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *op_name(lts_coll_op_t op) { return lts_reg_row(&lts_coll_op_names, (size_t)op)->name; }

static void setmsg(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setmsg(char *msg, size_t len, const char *fmt, ...) {
    if (!msg || !len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

/* bounded copy; a too-long source is cut (the MPI library string: the first 255 characters) */
static void copystr(char *dst, size_t n, const char *src) {
    size_t k = src ? strnlen(src, n - 1) : 0;
    if (k) memcpy(dst, src, k);
    dst[k] = '\0';
}

/* ---- the table ----------------------------------------------------------------------------- */

void lts_tune_free(lts_tune_table_t *t) {
    if (!t) return;
    for (size_t r = 0; r < t->nranges; r++) {
        for (size_t p = 0; p < t->ranges[r].npoints; p++) free(t->ranges[r].points[p].median_s);
        free(t->ranges[r].points);
    }
    free(t->ranges);
    free(t->cand);
    free(t);
}

/* The boundary between measured sizes a < c with different winners: the geometric midpoint
 * rounded up, i.e. the smallest integer b with b*b >= max(a,1)*c (a = 0 counts as 1: on a log
 * axis 0 sits with 1). a < b <= c always holds, so every measured size keeps its own winner.
 * Integer arithmetic: sizes are at most 1 GiB, so the product fits in 64 bits. */
static size_t geo_boundary(size_t a, size_t c) {
    uint64_t p = (uint64_t)(a ? a : 1) * (uint64_t)c;
    uint64_t b = (uint64_t)ceil(sqrt((double)p));
    while (b > 0 && (b - 1) * (b - 1) >= p) b--;
    while (b * b < p) b++;
    if (b <= a) b = a + 1;   /* a = 0, c = 1 */
    if (b > c) b = c;
    return (size_t)b;
}

int lts_tune_decide(lts_coll_op_t op, int ranks, const lts_coll_alg_t *const *cand, size_t ncand,
                    const size_t *sizes, size_t nsizes, const double *median_s, lts_tune_table_t **out) {
    *out = NULL;
    if ((int)op < 0 || op >= LTS_COLL_NOPS || ranks < 1 || !cand || ncand == 0 || ncand > LTS_TUNE_MAX_CANDIDATES ||
        !sizes || nsizes == 0 || !median_s)
        return LTS_EINVAL;
    for (size_t c = 0; c < ncand; c++)
        if (!cand[c] || cand[c]->op != op) return LTS_EINVAL;
    for (size_t s = 1; s < nsizes; s++)
        if (sizes[s] <= sizes[s - 1]) return LTS_EINVAL;
    if (sizes[nsizes - 1] >= LTS_TUNE_OPEN) return LTS_ERANGE;
    /* the winner per size: smallest median; ties go to the earlier candidate; NaN never wins */
    size_t *best = malloc(nsizes * sizeof *best);
    if (!best) return LTS_ENOMEM;
    for (size_t s = 0; s < nsizes; s++) {
        best[s] = ncand;
        for (size_t c = 0; c < ncand; c++) {
            double v = median_s[c * nsizes + s];
            if (!isnan(v) && (best[s] == ncand || v < median_s[best[s] * nsizes + s])) best[s] = c;
        }
        if (best[s] == ncand) { free(best); return LTS_ENODATA; }
    }
    lts_tune_table_t *t = calloc(1, sizeof *t);
    if (!t) { free(best); return LTS_ENOMEM; }
    t->op = op;
    t->ranks = ranks;
    t->ncand = ncand;
    t->cand = malloc(ncand * sizeof *t->cand);
    size_t nr = 1;
    for (size_t s = 1; s < nsizes; s++) nr += best[s] != best[s - 1];
    t->ranges = calloc(nr, sizeof *t->ranges);
    if (!t->cand || !t->ranges) { free(best); lts_tune_free(t); return LTS_ENOMEM; }
    memcpy(t->cand, cand, ncand * sizeof *cand);
    copystr(t->statistic, sizeof t->statistic, "median");
    copystr(t->version, sizeof t->version, LTS_VERSION);
    /* merge adjacent sizes with the same winner into one range */
    size_t s0 = 0;
    for (size_t r = 0; r < nr; r++) {
        size_t s1 = s0 + 1;
        while (s1 < nsizes && best[s1] == best[s0]) s1++;
        lts_tune_range_t *R = &t->ranges[t->nranges++];
        R->lo = r == 0 ? 0 : geo_boundary(sizes[s0 - 1], sizes[s0]);
        R->hi = s1 == nsizes ? LTS_TUNE_OPEN : geo_boundary(sizes[s1 - 1], sizes[s1]);
        R->alg = cand[best[s0]];
        R->points = calloc(s1 - s0, sizeof *R->points);
        if (!R->points) { free(best); lts_tune_free(t); return LTS_ENOMEM; }
        for (size_t s = s0; s < s1; s++) {
            lts_tune_point_t *pt = &R->points[R->npoints++];
            pt->size_bytes = sizes[s];
            pt->median_s = malloc(ncand * sizeof *pt->median_s);
            if (!pt->median_s) { free(best); lts_tune_free(t); return LTS_ENOMEM; }
            for (size_t c = 0; c < ncand; c++) pt->median_s[c] = median_s[c * nsizes + s];
        }
        s0 = s1;
    }
    free(best);
    *out = t;
    return LTS_OK;
}

const lts_coll_alg_t *lts_tune_lookup(const lts_tune_table_t *t, size_t bytes) {
    if (!t || !t->nranges) return NULL;
    /* the last range whose lo <= bytes (ranges[0].lo == 0) */
    size_t lo = 0, hi = t->nranges;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ranges[mid].lo <= bytes) lo = mid;
        else hi = mid;
    }
    return t->ranges[lo].alg;
}

/* ---- writing ------------------------------------------------------------------------------- */

/* Indent the compact JSON from lts_json: a container whose compact text fits in WIDTH (120) columns
 * at its indentation stays on one line (with ", " and ": "), larger ones get one item per line.
 * Deterministic, so save(load(save(t))) is byte-identical. */
enum { WIDTH = 120 };

typedef struct sbuf { char *b; size_t n, cap; int oom; } sbuf_t;
static void sput(sbuf_t *s, const char *p, size_t n) {
    if (s->oom) return;
    if (s->n + n + 1 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        while (nc < s->n + n + 1) nc *= 2;
        char *b = realloc(s->b, nc);
        if (!b) { s->oom = 1; return; }
        s->b = b;
        s->cap = nc;
    }
    memcpy(s->b + s->n, p, n);
    s->n += n;
    s->b[s->n] = '\0';
}
static void sindent(sbuf_t *s, int k) { for (int i = 0; i < k; i++) sput(s, " ", 1); }

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
static void one_line(sbuf_t *s, const char *j, size_t i, size_t e) {
    while (i < e) {
        if (j[i] == '"') {
            size_t k = str_end(j, i);
            sput(s, j + i, k - i);
            i = k;
            continue;
        }
        sput(s, j + i, 1);
        if (j[i] == ',' || j[i] == ':') sput(s, " ", 1);
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
static void pretty(sbuf_t *s, const char *j, size_t i, int indent, int col) {
    size_t e = val_end(j, i);
    if ((j[i] != '{' && j[i] != '[') || (size_t)col + spaced_len(j, i, e) <= WIDTH || e - i == 2) {
        one_line(s, j, i, e);
        return;
    }
    int obj = j[i] == '{';
    sput(s, j + i, 1);
    i++;
    while (i < e - 1) {
        sput(s, "\n", 1);
        sindent(s, indent + 2);
        int c = indent + 2;
        if (obj) {
            size_t k = str_end(j, i);
            sput(s, j + i, k - i);
            sput(s, ": ", 2);
            c += (int)(k - i) + 2;
            i = k + 1;   /* past ':' */
        }
        size_t ve = val_end(j, i);
        pretty(s, j, i, indent + 2, c);
        i = ve;
        if (j[i] == ',') { sput(s, ",", 1); i++; }
    }
    sput(s, "\n", 1);
    sindent(s, indent);
    sput(s, j + e - 1, 1);
}

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
    lts_json_str(&j, "op", op_name(t->op));
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
            lts_json_obj_end(&j);
        }
        lts_json_arr_end(&j);
        lts_json_obj_end(&j);
    }
    lts_json_arr_end(&j);
    lts_json_obj_end(&j);
    if (j.oom) { lts_json_free(&j); return LTS_ENOMEM; }
    sbuf_t s = {0};
    pretty(&s, j.buf, 0, 0, 0);
    sput(&s, "\n", 1);
    lts_json_free(&j);
    if (s.oom) { free(s.b); return LTS_ENOMEM; }
    *text = s.b;
    return LTS_OK;
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
    copystr(dst, n, v->str);
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
    copystr(t->statistic, sizeof t->statistic, "median");
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
                       "lts_coll_register before loading)", it->str, op_name(t->op), algnames);
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
    static const char *const pkeys[] = {"size_bytes", "median_s", NULL};
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
                return bad(l, av, "%s \"%s\": unknown algorithm for op %s; valid: %s", what, av->str, op_name(t->op),
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
        if (rc == LTS_ENOMEM) setmsg(msg, msglen, "out of memory");
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
        setmsg(msg, msglen, "%s: cannot be read (%s)", path ? path : "(null)", strerror(errno));
        return LTS_EIO;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) { fclose(f); setmsg(msg, msglen, "out of memory"); return LTS_ENOMEM; }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *b = realloc(buf, cap * 2);
        if (!b) free(buf);
        buf = b;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(buf); setmsg(msg, msglen, "%s: read error", path); return LTS_EIO; }
    char inner[768] = "";
    int rc = lts_tune_parse(buf, n, out, inner, sizeof inner);
    free(buf);
    if (rc) setmsg(msg, msglen, "%s: %s", path, inner);
    return rc;
}

/* ---- measuring ----------------------------------------------------------------------------- */

typedef struct collect {
    const lts_coll_alg_t *const *cand;
    size_t ncand;
    const size_t *sizes;
    size_t nsizes;
    double *median_s;
    const lts_tune_opts_t *opts;
} collect_t;

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* lts_point_cb on rank 0: keep the point's median (the statistic MPIBlib's T[j][i] holds). */
static void collect(void *ud, const lts_point_t *pt) {
    collect_t *c = ud;
    size_t a = 0, s = 0;
    while (a < c->ncand && strcmp(c->cand[a]->name, pt->alg)) a++;
    while (s < c->nsizes && c->sizes[s] != pt->bytes) s++;
    if (a < c->ncand && s < c->nsizes && pt->m->n > 0) {
        double *x = malloc(pt->m->n * sizeof *x);
        if (x) {
            memcpy(x, pt->m->samples, pt->m->n * sizeof *x);
            qsort(x, pt->m->n, sizeof *x, cmp_dbl);
            c->median_s[a * c->nsizes + s] = lts_quantile_sorted(x, pt->m->n, 0.5);
            free(x);
        }
    }
    if (c->opts && c->opts->on_point) c->opts->on_point(c->opts->ud, pt);
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static const char *timing_name(lts_timing_t t) {
    return (size_t)t < lts_timing_registry.count ? lts_reg_row(&lts_timing_registry, (size_t)t)->name : "unknown";
}

int lts_tune(MPI_Comm comm, lts_coll_op_t op, const char *alg_spec, const size_t *sizes, size_t n,
             const lts_measure_cfg_t *mcfg, lts_tune_table_t **out) {
    return lts_tune_ex(comm, op, alg_spec, sizes, n, mcfg, NULL, out);
}

int lts_tune_ex(MPI_Comm comm, lts_coll_op_t op, const char *alg_spec, const size_t *sizes, size_t n,
                const lts_measure_cfg_t *mcfg, const lts_tune_opts_t *opts, lts_tune_table_t **out) {
    *out = NULL;
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    /* Argument checks first: every rank is given the same arguments, so all return the same
     * code here without communicating. */
    const lts_registry_t *reg = lts_coll_registry(op);
    int root = opts ? opts->root : 0;
    if (!reg || !mcfg || !mcfg->timer || !mcfg->sync || !sizes || n == 0 || root < 0 || root >= P) return LTS_EINVAL;
    /* the candidates in selection order; parametrised rows ("tree:k=3") become instances */
    const lts_coll_alg_t **cand = NULL;
    size_t ncand = 0;
    int rc = lts_coll_select(op, alg_spec ? alg_spec : "all", &cand, &ncand, NULL, 0);
    if (rc) return rc;
    if (ncand == 0 || ncand > LTS_TUNE_MAX_CANDIDATES) { free(cand); return ncand ? LTS_ERANGE : LTS_EINVAL; }
    size_t *sz = malloc(n * sizeof *sz);
    double *med = malloc(ncand * n * sizeof *med);
    /* a local failure in a collective context: the other ranks would wait forever (DESIGN.md) */
    if (!sz || !med) MPI_Abort(comm, 1);
    memcpy(sz, sizes, n * sizeof *sz);
    qsort(sz, n, sizeof *sz, cmp_size);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (ns == 0 || sz[i] != sz[ns - 1]) sz[ns++] = sz[i];
    for (size_t i = 0; i < ns; i++)
        if (!lts_coll_size_ok(op, sz[i], P) || sz[i] > (size_t)0x7fffffff) { free(sz); free(med); free(cand); return LTS_EINVAL; }
    for (size_t i = 0; i < ncand * ns; i++) med[i] = NAN;

    collect_t col = {cand, ncand, sz, ns, med, opts};
    lts_coll_cfg_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.op = op;
    cfg.algs = cand;
    cfg.nalgs = ncand;
    cfg.root = root;
    cfg.sizes = sz;
    cfg.nsizes = ns;
    cfg.measure = *mcfg;
    cfg.on_point = collect;
    cfg.ud = &col;
    rc = lts_coll_run(comm, &cfg);
    int agreed;
    MPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, comm);
    rc = agreed;

    /* Rank 0 (where the points arrive) decides and broadcasts the table as its JSON text; every
     * rank, rank 0 included, parses that text, so all hold the identical table and the tuned
     * calls take the same branch everywhere (a rank choosing another algorithm would deadlock). */
    char *text = NULL;
    long long len = 0;
    if (!rc && me == 0) {
        lts_tune_table_t *t;
        rc = lts_tune_decide(op, P, cand, ncand, sz, ns, med, &t);
        if (!rc) {
            copystr(t->timer, sizeof t->timer, mcfg->timer->desc->name);
            copystr(t->timing, sizeof t->timing, timing_name(mcfg->timing));
            char lib[MPI_MAX_LIBRARY_VERSION_STRING];
            int ll;
            MPI_Get_library_version(lib, &ll);
            lib[strcspn(lib, "\n")] = '\0';
            copystr(t->mpi_library, sizeof t->mpi_library, lib);
            time_t now = time(NULL);
            struct tm tmv;
            gmtime_r(&now, &tmv);
            strftime(t->utc_time, sizeof t->utc_time, "%Y-%m-%dT%H:%M:%SZ", &tmv);
            rc = lts_tune_to_json(t, &text);
            lts_tune_free(t);
        }
        len = rc ? rc : (long long)strlen(text);   /* negative: the error code */
    }
    free(sz);
    free(med);
    free(cand);
    if (agreed) return agreed;
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm);
    if (len < 0) { free(text); return (int)len; }
    if (me != 0) text = malloc((size_t)len + 1);
    int lok = text != NULL, ok;
    MPI_Allreduce(&lok, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) { free(text); return LTS_ENOMEM; }
    MPI_Bcast(text, (int)len, MPI_CHAR, 0, comm);
    text[len] = '\0';
    rc = lts_tune_parse(text, (size_t)len, out, NULL, 0);
    free(text);
    /* a rank whose registry lacks a candidate could not parse: nobody may go on alone */
    MPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, comm);
    if (agreed) { lts_tune_free(*out); *out = NULL; }
    return agreed;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

#define MAX_INSTALLED 16

typedef struct installed {
    int used;
    lts_coll_op_t op;
    int P;
    size_t n;
    size_t *lo;                    /* range starts, ascending, lo[0] == 0 */
    const lts_coll_alg_t **alg;
} installed_t;

static installed_t slots[MAX_INSTALLED];
static const lts_coll_alg_t *native_rows[LTS_COLL_NOPS];

static const lts_coll_alg_t *native_row(lts_coll_op_t op) {
    if (!native_rows[op]) native_rows[op] = lts_coll_find(op, "native");
    return native_rows[op];
}

static void slot_free(installed_t *s) {
    free(s->lo);
    free(s->alg);
    memset(s, 0, sizeof *s);
}

void lts_tune_clear(lts_coll_op_t op) {
    for (int i = 0; i < MAX_INSTALLED; i++)
        if (slots[i].used && (op == LTS_COLL_NOPS || slots[i].op == op)) slot_free(&slots[i]);
}

int lts_tune_use(const lts_tune_table_t *t, MPI_Comm comm, char *msg, size_t msglen) {
    if (!t || (int)t->op < 0 || t->op >= LTS_COLL_NOPS || t->nranges == 0 || t->ranges[0].lo != 0) {
        setmsg(msg, msglen, "not a decision table (no ranges, or not starting at 0)");
        return LTS_EINVAL;
    }
    if (comm != MPI_COMM_NULL) {
        int P;
        MPI_Comm_size(comm, &P);
        if (P != t->ranks) {
            setmsg(msg, msglen, "the %s table was measured on %d ranks; this communicator has %d: tune on %d ranks "
                   "(latscope tune --np %d) or load a table made for them", op_name(t->op), t->ranks, P, P, P);
            return LTS_EINVAL;
        }
    }
    for (size_t r = 0; r < t->nranges; r++)
        if (!t->ranges[r].alg || t->ranges[r].alg->op != t->op || (r && t->ranges[r].lo <= t->ranges[r - 1].lo)) {
            setmsg(msg, msglen, "range %zu of the %s table: no algorithm of that operation, or not sorted", r,
                   op_name(t->op));
            return LTS_EINVAL;
        }
    installed_t s = {1, t->op, t->ranks, t->nranges, malloc(t->nranges * sizeof(size_t)),
                     malloc(t->nranges * sizeof(const lts_coll_alg_t *))};
    if (!s.lo || !s.alg) { slot_free(&s); setmsg(msg, msglen, "out of memory"); return LTS_ENOMEM; }
    for (size_t r = 0; r < t->nranges; r++) {
        s.lo[r] = t->ranges[r].lo;
        s.alg[r] = t->ranges[r].alg;
    }
    int free_i = -1;
    for (int i = 0; i < MAX_INSTALLED; i++) {
        if (slots[i].used && slots[i].op == t->op && slots[i].P == t->ranks) { free_i = i; break; }
        if (!slots[i].used && free_i < 0) free_i = i;
    }
    if (free_i < 0) {
        slot_free(&s);
        setmsg(msg, msglen, "%d tables are installed already: lts_tune_clear some first", MAX_INSTALLED);
        return LTS_ERANGE;
    }
    slot_free(&slots[free_i]);
    slots[free_i] = s;
    return LTS_OK;
}

const lts_coll_alg_t *lts_tune_choice(lts_coll_op_t op, int P, size_t bytes) {
    if ((int)op < 0 || op >= LTS_COLL_NOPS) return NULL;
    for (int i = 0; i < MAX_INSTALLED; i++) {
        const installed_t *s = &slots[i];
        if (!s->used || s->op != op || s->P != P) continue;
        size_t lo = 0, hi = s->n;   /* the last range starting at or below bytes */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->lo[mid] <= bytes) lo = mid;
            else hi = mid;
        }
        return s->alg[lo];
    }
    return native_row(op);
}

/* count x type size, the bytes a call moves in the registry's convention */
static size_t nbytes(int count, MPI_Datatype dt, int P) {
    int tsz = 0;
    if (count <= 0) return 0;
    MPI_Type_size(dt, &tsz);
    return (size_t)count * (size_t)(tsz > 0 ? tsz : 0) * (size_t)P;
}

int lts_barrier_tuned(MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    const lts_coll_alg_t *a = lts_tune_choice(LTS_COLL_BARRIER, P, 0);
    return a->barrier_k ? a->barrier_k(comm, a->k) : a->fn.barrier(comm);
}

int lts_bcast_tuned(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    return lts_tune_choice(LTS_COLL_BCAST, P, nbytes(count, dt, 1))->fn.bcast(buf, count, dt, root, comm);
}

int lts_reduce_tuned(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    return lts_tune_choice(LTS_COLL_REDUCE, P, nbytes(count, dt, 1))->fn.reduce(sbuf, rbuf, count, dt, op, root, comm);
}

int lts_allreduce_tuned(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    return lts_tune_choice(LTS_COLL_ALLREDUCE, P, nbytes(count, dt, 1))->fn.allreduce(sbuf, rbuf, count, dt, op, comm);
}

/* Scatter: the root's whole send buffer. The send arguments count only at the root (MPI), so the
 * other ranks use their receive block x P, which matches by MPI's type-signature rule: every
 * rank computes the same size and takes the same branch. */
int lts_scatter_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                      int root, MPI_Comm comm) {
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    size_t b = me == root ? nbytes(scount, stype, P) : nbytes(rcount, rtype, P);
    return lts_tune_choice(LTS_COLL_SCATTER, P, b)->fn.scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

/* Gather: the root's whole receive buffer; the others' send block x P (same by MPI's rule). */
int lts_gather_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int root, MPI_Comm comm) {
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    size_t b = me == root ? nbytes(rcount, rtype, P) : nbytes(scount, stype, P);
    return lts_tune_choice(LTS_COLL_GATHER, P, b)->fn.gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

/* Allgather: each rank's whole result; alltoall: the whole send buffer. Both from the receive
 * arguments, which are significant on every rank even with MPI_IN_PLACE. */
int lts_allgather_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    return lts_tune_choice(LTS_COLL_ALLGATHER, P, nbytes(rcount, rtype, P))
        ->fn.allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int lts_alltoall_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       MPI_Comm comm) {
    int P;
    MPI_Comm_size(comm, &P);
    return lts_tune_choice(LTS_COLL_ALLTOALL, P, nbytes(rcount, rtype, P))
        ->fn.alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}
