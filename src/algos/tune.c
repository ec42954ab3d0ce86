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

static void point_free(lts_tune_point_t *pt, size_t ncand) {
    free(pt->median_s);
    if (pt->set_aside)
        for (size_t c = 0; c < ncand; c++) free(pt->set_aside[c]);
    free(pt->set_aside);
}

void lts_tune_free(lts_tune_table_t *t) {
    if (!t) return;
    for (size_t r = 0; r < t->nranges; r++) {
        for (size_t p = 0; p < t->ranges[r].npoints; p++) point_free(&t->ranges[r].points[p], t->ncand);
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

/* ---- eligibility (tune.h; docs/tune-format.md "Which candidates are ranked") ------------- */

int lts_tune_invalid(const lts_tune_obs_t *o, char *why, size_t len) {
    char negs[96] = "";
    if (o->negative > 0)
        snprintf(negs, sizeof negs, "; %ld of %ld samples negative after the root correction", o->negative, o->reps_valid);
    if (!isfinite(o->median_s)) { setmsg(why, len, "no median (not measured, or undefined)"); return 1; }
    if (o->reps_valid < 1) {
        setmsg(why, len, "no valid repetition (reps_valid 0 of %ld)", o->reps_total);
        return 1;
    }
    /* root timing subtracts a measured confirmation time and never clamps (results-schema.md):
     * an operation that does almost nothing gets medians around zero; ranking them ranks noise */
    if (o->median_s <= 0) {
        setmsg(why, len, "median %.3f us is not positive%s", o->median_s * 1e6, negs);
        return 1;
    }
    if (isfinite(o->ci_lo_s) && o->ci_lo_s <= 0) {
        setmsg(why, len, "median %.3f us cannot be told from zero: its CI reaches %.3f us%s", o->median_s * 1e6,
               o->ci_lo_s * 1e6, negs);
        return 1;
    }
    return 0;
}

int lts_tune_converged(const lts_tune_obs_t *o, double rel_err_target) {
    if (o->stop_reason == LTS_STOP_CONVERGED || o->stop_reason == LTS_STOP_FIXED) return 1;
    return isfinite(o->rel_err) && isfinite(rel_err_target) && o->rel_err <= rel_err_target;
}

static const char *stop_name(int r) { return lts_stop_reason_name((lts_stop_reason_t)r); }

/* Screen the ncand points at one size (obs[c * nsizes]): the winner's index (ncand: none) and
 * the reason for every candidate set aside (why[c], malloc'd; NULL where ranked). */
static int screen(const lts_tune_obs_t *obs, size_t nsizes, size_t ncand, const lts_coll_alg_t *const *cand,
                  double target, size_t *win, char **why) {
    char buf[512];
    int valid[LTS_TUNE_MAX_CANDIDATES], ranked[LTS_TUNE_MAX_CANDIDATES];
    for (size_t c = 0; c < ncand; c++) {
        why[c] = NULL;
        valid[c] = !lts_tune_invalid(&obs[c * nsizes], buf, sizeof buf);
        if (!valid[c] && !(why[c] = strdup(buf))) return LTS_ENOMEM;
    }
    for (size_t c = 0; c < ncand; c++) {
        const lts_tune_obs_t *o = &obs[c * nsizes];
        ranked[c] = valid[c] && lts_tune_converged(o, target);
        if (!valid[c] || ranked[c]) continue;
        /* not converged: ranked only when its CI is disjoint from every other valid point's */
        int has_ci = isfinite(o->ci_lo_s) && isfinite(o->ci_hi_s);
        char clash[224] = "it has no CI";
        ranked[c] = has_ci;
        for (size_t d = 0; d < ncand && ranked[c]; d++) {
            if (d == c || !valid[d]) continue;
            const lts_tune_obs_t *q = &obs[d * nsizes];
            double lo = q->median_s, hi = q->median_s;
            if (isfinite(q->ci_lo_s) && isfinite(q->ci_hi_s)) { lo = q->ci_lo_s; hi = q->ci_hi_s; }
            if (!(o->ci_hi_s < lo || o->ci_lo_s > hi)) {
                ranked[c] = 0;
                snprintf(clash, sizeof clash, "its CI [%.3f us, %.3f us] overlaps %s's [%.3f us, %.3f us]",
                         o->ci_lo_s * 1e6, o->ci_hi_s * 1e6, cand[d]->name, lo * 1e6, hi * 1e6);
            }
        }
        if (ranked[c]) continue;
        char re[32] = "-", tg[32] = "-";
        if (isfinite(o->rel_err)) snprintf(re, sizeof re, "%.3g", o->rel_err);
        if (isfinite(target)) snprintf(tg, sizeof tg, "%.3g", target);
        snprintf(buf, sizeof buf, "not converged (stop %s, rel_err %s > target %s) and %s", stop_name(o->stop_reason),
                 re, tg, clash);
        if (!(why[c] = strdup(buf))) return LTS_ENOMEM;
    }
    /* the winner: smallest median among the ranked; ties go to the earlier candidate */
    *win = ncand;
    for (size_t c = 0; c < ncand; c++)
        if (ranked[c] && (*win == ncand || obs[c * nsizes].median_s < obs[*win * nsizes].median_s)) *win = c;
    return 0;
}

static void free_why(char **why, size_t n) {
    for (size_t c = 0; c < n; c++) free(why[c]);
}

int lts_tune_decide(lts_coll_op_t op, int ranks, const lts_coll_alg_t *const *cand, size_t ncand,
                    const size_t *sizes, size_t nsizes, const double *median_s, lts_tune_table_t **out) {
    *out = NULL;
    if (!median_s || !sizes || nsizes == 0 || ncand == 0 || ncand > LTS_TUNE_MAX_CANDIDATES) return LTS_EINVAL;
    lts_tune_obs_t *obs = malloc(ncand * nsizes * sizeof *obs);
    if (!obs) return LTS_ENOMEM;
    for (size_t i = 0; i < ncand * nsizes; i++)
        obs[i] = (lts_tune_obs_t){median_s[i], NAN, NAN, NAN, 1, 1, 0, LTS_STOP_FIXED};
    int rc = lts_tune_decide_obs(op, ranks, cand, ncand, sizes, nsizes, obs, NAN, out, NULL, 0);
    free(obs);
    return rc;
}

int lts_tune_decide_obs(lts_coll_op_t op, int ranks, const lts_coll_alg_t *const *cand, size_t ncand,
                        const size_t *sizes, size_t nsizes, const lts_tune_obs_t *obs, double rel_err_target,
                        lts_tune_table_t **out, char *msg, size_t msglen) {
    *out = NULL;
    if ((int)op < 0 || op >= LTS_COLL_NOPS || ranks < 1 || !cand || ncand == 0 || ncand > LTS_TUNE_MAX_CANDIDATES ||
        !sizes || nsizes == 0 || !obs)
        return LTS_EINVAL;
    for (size_t c = 0; c < ncand; c++)
        if (!cand[c] || cand[c]->op != op) return LTS_EINVAL;
    for (size_t s = 1; s < nsizes; s++)
        if (sizes[s] <= sizes[s - 1]) return LTS_EINVAL;
    if (sizes[nsizes - 1] >= LTS_TUNE_OPEN) return LTS_ERANGE;
    /* the winner per size among the eligible (screen); why[s * ncand + c]: why c was set aside */
    size_t *best = malloc(nsizes * sizeof *best);
    char **why = calloc(nsizes * ncand, sizeof *why);
    if (!best || !why) { free(best); free(why); return LTS_ENOMEM; }
    int rc = 0;
    for (size_t s = 0; s < nsizes && !rc; s++) {
        rc = screen(obs + s, nsizes, ncand, cand, rel_err_target, &best[s], why + s * ncand);
        if (!rc && best[s] == ncand) {
            /* the error names the size and every candidate's reason */
            setmsg(msg, msglen, "size %zu B: no eligible candidate (docs/tune-format.md, \"Which candidates are "
                   "ranked\")", sizes[s]);
            for (size_t c = 0; c < ncand && msg && msglen; c++) {
                size_t k = strlen(msg);
                if (k + 1 < msglen) snprintf(msg + k, msglen - k, "; %s: %s", cand[c]->name, why[s * ncand + c]);
            }
            rc = LTS_ENOELIGIBLE;
        }
    }
    lts_tune_table_t *t = rc ? NULL : calloc(1, sizeof *t);
    if (!t) {
        free_why(why, nsizes * ncand);
        free(why);
        free(best);
        return rc ? rc : LTS_ENOMEM;
    }
    t->op = op;
    t->ranks = ranks;
    t->ncand = ncand;
    t->cand = malloc(ncand * sizeof *t->cand);
    size_t nr = 1;
    for (size_t s = 1; s < nsizes; s++) nr += best[s] != best[s - 1];
    t->ranges = calloc(nr, sizeof *t->ranges);
    if (!t->cand || !t->ranges) goto oom;
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
        if (!R->points) goto oom;
        for (size_t s = s0; s < s1; s++) {
            lts_tune_point_t *pt = &R->points[R->npoints++];
            pt->size_bytes = sizes[s];
            pt->median_s = malloc(ncand * sizeof *pt->median_s);
            if (!pt->median_s) goto oom;
            for (size_t c = 0; c < ncand; c++) pt->median_s[c] = obs[c * nsizes + s].median_s;
            int any = 0;
            for (size_t c = 0; c < ncand; c++) any |= why[s * ncand + c] != NULL;
            if (any) {   /* the table keeps why (ownership moves to the point) */
                if (!(pt->set_aside = calloc(ncand, sizeof *pt->set_aside))) goto oom;
                for (size_t c = 0; c < ncand; c++) {
                    pt->set_aside[c] = why[s * ncand + c];
                    why[s * ncand + c] = NULL;
                }
            }
        }
        s0 = s1;
    }
    free(why);
    free(best);
    *out = t;
    return LTS_OK;
oom:
    free_why(why, nsizes * ncand);
    free(why);
    free(best);
    lts_tune_free(t);
    return LTS_ENOMEM;
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
    lts_tune_obs_t *obs;
    const lts_rep_policy_t *policy;
    const lts_tune_opts_t *opts;
} collect_t;

/* lts_point_cb on rank 0: keep what selection needs of the point (the median MPIBlib's T[j][i]
 * holds, and its CI, precision, stop reason): lts_summarize with the run's confidence and stop
 * rule, exactly as results.c writes the record, so `decide` in Python sees the same numbers. */
static void collect(void *ud, const lts_point_t *pt) {
    collect_t *c = ud;
    size_t a = 0, s = 0;
    while (a < c->ncand && strcmp(c->cand[a]->name, pt->alg)) a++;
    while (s < c->nsizes && c->sizes[s] != pt->bytes) s++;
    if (a < c->ncand && s < c->nsizes) {
        lts_tune_obs_t *o = &c->obs[a * c->nsizes + s];
        lts_summary_t sm;
        if (pt->m->n > 0 && lts_summarize(pt->m->samples, pt->m->n, c->policy->confidence, c->policy->rule, &sm) == 0) {
            o->median_s = sm.median;
            o->ci_lo_s = sm.ci_lo;
            o->ci_hi_s = sm.ci_hi;
            o->rel_err = sm.rel_err;
        }
        o->reps_valid = (long)pt->m->n;
        o->reps_total = pt->m->reps_total;
        o->negative = pt->m->negative;
        o->stop_reason = pt->m->stop_reason;
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
    lts_tune_obs_t *med = malloc(ncand * n * sizeof *med);
    /* a local failure in a collective context: the other ranks would wait forever (DESIGN.md) */
    if (!sz || !med) MPI_Abort(comm, 1);
    memcpy(sz, sizes, n * sizeof *sz);
    qsort(sz, n, sizeof *sz, cmp_size);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (ns == 0 || sz[i] != sz[ns - 1]) sz[ns++] = sz[i];
    for (size_t i = 0; i < ns; i++)
        if (!lts_coll_size_ok(op, sz[i], P) || sz[i] > (size_t)0x7fffffff) { free(sz); free(med); free(cand); return LTS_EINVAL; }
    for (size_t i = 0; i < ncand * ns; i++) med[i] = (lts_tune_obs_t){NAN, NAN, NAN, NAN, 0, 0, 0, 0};

    collect_t col = {cand, ncand, sz, ns, med, &mcfg->policy, opts};
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
        rc = lts_tune_decide_obs(op, P, cand, ncand, sz, ns, med, mcfg->policy.rel_err, &t, opts ? opts->msg : NULL,
                                 opts ? opts->msglen : 0);
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
