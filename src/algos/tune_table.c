/* Decision tables, the pure part (include/latscope/tune.h): MPIBlib's Opt_Scatter (seed 001 §4:
 * "find i such that M[i] <= m < M[i+1]; find j such that T[j][i] = min(T[0..N-1][i])") with the
 * decision made once from measured points, merged into ranges, and looked up by binary search.
 * No MPI call and no I/O here: reading and writing are tune_json.c, measuring is
 * src/bench/tune_measure.c, the tuned calls are tune_dispatch.c (docs/architecture.md). */
#include "tune_internal.h"
#include "latscope/errors.h"
#include "latscope/results.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    if (!isfinite(o->median_s)) { lts_tune_msg(why, len, "no median (not measured, or undefined)"); return 1; }
    if (o->reps_valid < 1) {
        lts_tune_msg(why, len, "no valid repetition (reps_valid 0 of %ld)", o->reps_total);
        return 1;
    }
    /* root timing subtracts a measured confirmation time and never clamps (results-schema.md):
     * an operation that does almost nothing gets medians around zero; ranking them ranks noise */
    if (o->median_s <= 0) {
        lts_tune_msg(why, len, "median %.3f us is not positive%s", o->median_s * 1e6, negs);
        return 1;
    }
    if (isfinite(o->ci_lo_s) && o->ci_lo_s <= 0) {
        lts_tune_msg(why, len, "median %.3f us cannot be told from zero: its CI reaches %.3f us%s", o->median_s * 1e6,
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
            lts_tune_msg(msg, msglen, "size %zu B: no eligible candidate (docs/tune-format.md, \"Which candidates are "
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
    lts_tune_copystr(t->statistic, sizeof t->statistic, "median");
    lts_tune_copystr(t->version, sizeof t->version, LTS_VERSION);
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
