#include "latscope/reps.h"
#include "latscope/errors.h"
#include "latscope/util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lts_rep_policy_default(lts_rep_policy_t *p) {
    p->warmup = 100;   /* fewer left the first timed repetitions measurably slower (bench/adaptive_reps.py) */
    /* 200: the stationarity check compares halves of 100; with 20 a point measured in 25 us
     * reported a momentary state, 5 % off the long-run median (bench/steady_state.py) */
    p->min_reps = 200;
    p->max_reps = 100000;
    p->confidence = 0.95;
    p->rel_err = 0.025;
    p->budget_s = 10.0;
    /* the median's CI: latencies are skewed with rare long tails (a preempted rank), and the
     * CI of the mean then never narrows at 0 B; the median is what is reported */
    p->rule = LTS_STOP_MEDIAN;
    p->quick = 0;
}

void lts_rep_policy_quick(lts_rep_policy_t *p) {
    /* caps only: a smaller value the user asked for is kept */
    if (p->warmup > LTS_QUICK_WARMUP) p->warmup = LTS_QUICK_WARMUP;
    if (p->max_reps > LTS_QUICK_MAX_REPS) p->max_reps = LTS_QUICK_MAX_REPS;
    if (p->min_reps > p->max_reps) p->min_reps = p->max_reps;
    if (!(p->budget_s > 0) || p->budget_s > LTS_QUICK_BUDGET_S) p->budget_s = LTS_QUICK_BUDGET_S;
    p->quick = 1;
}

int lts_rep_policy_check(const lts_rep_policy_t *p, char *msg, size_t len) {
    if (p->warmup < 0) { snprintf(msg, len, "--warmup %d: must be >= 0", p->warmup); return LTS_EINVAL; }
    if (p->min_reps < 1) { snprintf(msg, len, "--min-reps %d: must be >= 1", p->min_reps); return LTS_EINVAL; }
    if (p->max_reps < p->min_reps) {
        snprintf(msg, len, "--max-reps %d is less than --min-reps %d: need min <= max", p->max_reps, p->min_reps);
        return LTS_EINVAL;
    }
    if (!(p->confidence > 0 && p->confidence < 1)) {
        snprintf(msg, len, "--confidence %g: must be in the open interval (0, 1)", p->confidence);
        return LTS_EINVAL;
    }
    if (!(p->rel_err > 0 && p->rel_err < 1)) {
        snprintf(msg, len, "--rel-err %g: must be in the open interval (0, 1)", p->rel_err);
        return LTS_EINVAL;
    }
    if (!(p->budget_s >= 0) || isinf(p->budget_s)) {
        snprintf(msg, len, "--budget %g: must be a finite number of seconds >= 0 (0: no budget)", p->budget_s);
        return LTS_EINVAL;
    }
    return LTS_OK;
}

const char *lts_stop_reason_name(lts_stop_reason_t r) {
    switch (r) {
    case LTS_STOP_CONVERGED: return "converged";
    case LTS_STOP_MAX_REPS: return "max_reps";
    case LTS_STOP_BUDGET: return "budget";
    case LTS_STOP_FIXED: return "fixed";
    default: return "continue";
    }
}

int lts_rep_ctl_init(lts_rep_ctl_t *c, const lts_rep_policy_t *p) {
    memset(c, 0, sizeof *c);
    c->pol = *p;
    c->cap = (size_t)(p->min_reps < 1024 ? 1024 : p->min_reps);
    if (c->cap > (size_t)p->max_reps) c->cap = (size_t)p->max_reps;
    c->samples = malloc(c->cap * sizeof *c->samples);
    c->next_check = (size_t)p->min_reps;
    c->achieved_rel_err = NAN;
    return c->samples ? LTS_OK : LTS_ENOMEM;
}

void lts_rep_ctl_free(lts_rep_ctl_t *c) { free(c->samples); c->samples = NULL; }

int lts_rep_add(lts_rep_ctl_t *c, double x) {
    if (c->n == c->cap) {
        size_t nc = c->cap * 2;
        double *s = realloc(c->samples, nc * sizeof *s);
        if (!s) return LTS_ENOMEM;
        c->samples = s; c->cap = nc;
    }
    c->samples[c->n++] = x;
    double d = x - c->mean;
    c->mean += d / (double)c->n;
    c->m2 += d * (x - c->mean);
    return LTS_OK;
}

/* Median of x[0..n) (n >= 1), using tmp as scratch. */
static double median_of(const double *x, size_t n, double *tmp) {
    memcpy(tmp, x, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, lts_cmp_double);
    return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

size_t lts_rep_ci_batch_len(const lts_rep_policy_t *p, int back_to_back) {
    if (!back_to_back || p->min_reps >= p->max_reps) return 0;
    /* the batches in half of max_reps at most: room to stop by convergence, after a halving too */
    size_t L = (size_t)p->max_reps / (2 * LTS_CI_BATCHES);
    if (L > LTS_CI_BATCH_LEN) L = LTS_CI_BATCH_LEN;
    return L >= 2 ? L : 0;
}

/* The median's CI from nonoverlapping batch medians (docs/measurement.md "Steady state",
 * "Autocorrelated samples"): the newest B * L samples (B = n / L batches of L, B >= LTS_CI_BATCHES),
 * half-width t_{B-1,(1+conf)/2} sd(batch medians) / sqrt(B), relative to |median| (batch means,
 * Schmeiser 1982, with medians for the means). Back-to-back round trips are autocorrelated
 * (sub-levels ~5 % apart lasting 50-200 repetitions), and the order-statistic CI, which counts
 * every sample as independent, says +-2.5 % where a 200-sample median is 3 % off the long run in
 * 16-29 % of windows. INFINITY (go on measuring) with fewer than LTS_CI_BATCHES batches. */
double lts_rep_batch_rel_err(const double *x, size_t n, size_t L, double confidence, double median) {
    size_t B = n / L;
    if (B < LTS_CI_BATCHES) return INFINITY;
    double *tmp = malloc(L * sizeof *tmp), *m = malloc(B * sizeof *m), mean = 0, ss = 0;
    if (!tmp || !m || median == 0) { free(tmp); free(m); return INFINITY; }
    for (size_t k = 0; k < B; k++) {
        m[k] = median_of(x + (n - B * L) + k * L, L, tmp);
        mean += m[k] / (double)B;
    }
    for (size_t k = 0; k < B; k++) ss += (m[k] - mean) * (m[k] - mean);
    free(tmp);
    free(m);
    return lts_t_quantile(0.5 + confidence / 2, (double)(B - 1)) * sqrt(ss / (double)(B - 1)) / sqrt((double)B) / fabs(median);
}

/* Relative half-width of the CI the policy watches, on the current samples, counting them as
 * independent; the median's is widened by the batch CI only once the samples are one state (see
 * lts_rep_decide). *median: the median of the samples (the median rule), else NAN. */
static double rel_err_now(lts_rep_ctl_t *c, double *median) {
    size_t n = c->n;
    *median = NAN;
    if (n < 2) return NAN;
    if (c->pol.rule == LTS_STOP_MEAN) {
        /* Student t CI of the mean: t_{(1+conf)/2, n-1} * s / sqrt(n)  (MPIBlib §3) */
        double sd = sqrt(c->m2 / (double)(n - 1));
        double h = lts_t_quantile(0.5 + c->pol.confidence / 2, (double)(n - 1)) * sd / sqrt((double)n);
        return c->mean != 0 ? h / fabs(c->mean) : NAN;
    }
    lts_summary_t s;
    if (lts_summarize(c->samples, n, c->pol.confidence, LTS_STOP_MEDIAN, &s)) return NAN;
    *median = s.median;
    return s.rel_err;
}

/* The stationarity check (docs/measurement.md "Steady state"): the kept samples are one state
 * when, to within the requested relative precision of their median,
 *   - the older and the newer half have the same median (a warm-up or a change mid-run), and
 *   - the newest quarter has the median of the three quarters before it: a state change in the
 *     last quarter leaves the newer half's median in the old state (fewer than half of it is
 *     new), so the halves alone would stop in the state the process has just left.
 * (A point whose median depends on which part of its samples is taken is not known to that
 * precision, whatever its CI says.) */
static int one_state(lts_rep_ctl_t *c) {
    size_t h = c->n / 2, q = c->n / 4;
    double *tmp = malloc(c->n * sizeof *tmp);
    c->halves_rel_diff = c->recent_rel_diff = NAN;
    if (!tmp || h == 0) { free(tmp); return 0; }
    double all = median_of(c->samples, c->n, tmp);
    double older = median_of(c->samples, h, tmp), newer = median_of(c->samples + (c->n - h), h, tmp);
    if (all != 0) c->halves_rel_diff = fabs(newer - older) / fabs(all);
    if (q > 0 && all != 0) {   /* fewer than 4 samples (a tiny fixed count): the halves only */
        double before = median_of(c->samples, c->n - q, tmp), recent = median_of(c->samples + (c->n - q), q, tmp);
        c->recent_rel_diff = fabs(recent - before) / fabs(all);
    }
    free(tmp);
    return c->halves_rel_diff <= c->pol.rel_err && (q == 0 || c->recent_rel_diff <= c->pol.rel_err);
}

/* Drop the older half of the kept samples as warm-up; Welford restarts on the rest. */
static void drop_older_half(lts_rep_ctl_t *c) {
    size_t h = c->n / 2;
    memmove(c->samples, c->samples + h, (c->n - h) * sizeof *c->samples);
    c->n -= h;
    c->discarded += h;
    c->mean = c->m2 = 0.0;
    for (size_t i = 0; i < c->n; i++) {
        double d = c->samples[i] - c->mean;
        c->mean += d / (double)(i + 1);
        c->m2 += d * (c->samples[i] - c->mean);
    }
}

/* Stopping for a reason other than convergence: the check is still made on what is reported. */
static lts_stop_reason_t stop_unchecked(lts_rep_ctl_t *c, lts_stop_reason_t why) {
    c->stationary = c->n >= 2 && one_state(c);
    return why;
}

lts_stop_reason_t lts_rep_decide(lts_rep_ctl_t *c, double elapsed_s) {
    if (c->pol.min_reps == c->pol.max_reps)
        return c->n >= (size_t)c->pol.max_reps ? stop_unchecked(c, LTS_STOP_FIXED) : LTS_STOP_CONTINUE;
    if (c->n + c->discarded >= (size_t)c->pol.max_reps) return stop_unchecked(c, LTS_STOP_MAX_REPS);
    /* with a batch CI, no check before it has its batches: the halves are then compared over
     * as many samples, and a halving before would throw away samples the batches need */
    size_t first = c->ci_batch * LTS_CI_BATCHES > (size_t)c->pol.min_reps ? c->ci_batch * LTS_CI_BATCHES
                                                                          : (size_t)c->pol.min_reps;
    if (c->n >= first && c->n >= c->next_check) {
        double median;
        c->achieved_rel_err = rel_err_now(c, &median);
        size_t step = c->n / 50;
        c->next_check = c->n + (step ? step : 1);
        /* stationarity is asked only once the CI is narrow enough to stop on: asked earlier,
         * a wide distribution would fail it by chance and be halved again and again */
        if (c->achieved_rel_err <= c->pol.rel_err) {
            c->stationary = one_state(c);
            if (c->stationary) {
                /* one state: the median's CI must also hold over batches (autocorrelated samples).
                 * Asked after the halves, so that a warm-up inside the samples is still dropped
                 * (its batches would widen this CI, and measuring on would only dilute it). */
                double b = c->pol.rule == LTS_STOP_MEDIAN && c->ci_batch
                               ? lts_rep_batch_rel_err(c->samples, c->n, c->ci_batch, c->pol.confidence, median) : NAN;
                if (b > c->achieved_rel_err) c->achieved_rel_err = b;
                if (c->achieved_rel_err <= c->pol.rel_err) return LTS_STOP_CONVERGED;
            } else {
                drop_older_half(c);
                c->achieved_rel_err = NAN;
                c->next_check = first > c->n ? first : c->n + 1;
            }
        }
    }
    if (c->pol.budget_s > 0 && elapsed_s >= c->pol.budget_s) return stop_unchecked(c, LTS_STOP_BUDGET);
    return LTS_STOP_CONTINUE;
}
