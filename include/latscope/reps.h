/* Repetition control (MPIBlib §3): warm-up, min/max repetitions, a confidence level and a target
 * relative CI half-width, a time budget per point. min_reps == max_reps means a fixed count. */
#ifndef LATSCOPE_REPS_H
#define LATSCOPE_REPS_H
#include <stddef.h>
#include "latscope/stats.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct lts_rep_policy {
    int warmup;            /* untimed repetitions before measuring */
    int min_reps, max_reps;
    double confidence;     /* in (0,1), default 0.95 */
    double rel_err;        /* target relative CI half-width, default 0.025 */
    double budget_s;       /* time budget per point (<= 0: none) */
    lts_stop_rule_t rule;  /* which CI the stop rule watches */
    int quick;             /* 1: capped by lts_rep_policy_quick (recorded in the metadata) */
} lts_rep_policy_t;

void lts_rep_policy_default(lts_rep_policy_t *p);

/* Cap a policy to a smoke-test size (LATSCOPE_QUICK=1 in latscope-bench): at most
 * LTS_QUICK_WARMUP warm-up and LTS_QUICK_MAX_REPS repetitions, LTS_QUICK_BUDGET_S per point. */
#define LTS_QUICK_WARMUP 10
#define LTS_QUICK_MAX_REPS 30
#define LTS_QUICK_BUDGET_S 0.05
void lts_rep_policy_quick(lts_rep_policy_t *p);

/* LTS_OK, or LTS_EINVAL with a message naming the bad field and the allowed range in msg. */
int lts_rep_policy_check(const lts_rep_policy_t *p, char *msg, size_t len);

typedef enum {
    LTS_STOP_CONTINUE = 0,
    LTS_STOP_CONVERGED,
    LTS_STOP_MAX_REPS,
    LTS_STOP_BUDGET,
    LTS_STOP_FIXED
} lts_stop_reason_t;

const char *lts_stop_reason_name(lts_stop_reason_t r);

/* Streaming stop-rule state over one point's samples. The rule is re-evaluated on a
 * geometric schedule (every ~2 % more samples) so checking costs O(n log n) in total and
 * overshoots the needed count by at most ~2 %. */
/* Steady state (docs/measurement.md "Steady state"): an adaptive policy stops only when the CI
 * target is met AND the kept samples are stationary: the medians of their older and newer halves,
 * and of their newest quarter and the rest, differ by at most rel_err of the whole median. When they differ, the older half is dropped as
 * warm-up (counted in `discarded`) and measuring goes on, so the warm-up adapts to the point.
 * max_reps bounds the timed repetitions kept plus discarded. A fixed count is kept whole.
 * With ci_batch (repetitions back to back), the median's CI must also be met over batch medians,
 * and no check is made before LTS_CI_BATCHES batches are there. */
typedef struct lts_rep_ctl {
    lts_rep_policy_t pol;
    double *samples;        /* the kept samples: samples[0..n) */
    size_t n, cap;
    size_t next_check;
    double sum, m2, mean;   /* Welford, over the kept samples */
    double achieved_rel_err;
    size_t discarded;       /* samples dropped as warm-up by the stationarity check */
    int stationary;         /* the last check found the halves in agreement */
    double halves_rel_diff; /* |median(newer half) - median(older half)| / |median| at the last check */
    double recent_rel_diff; /* |median(newest quarter) - median(the rest)| / |median| at the last check */
    size_t ci_batch;        /* the median's batch CI: batch length (0: none; lts_rep_ci_batch_len) */
} lts_rep_ctl_t;

/* The median's batch CI for repetitions run back to back (docs/measurement.md "Steady state",
 * "Autocorrelated samples"): at least LTS_CI_BATCHES batches of LTS_CI_BATCH_LEN consecutive
 * samples. 200: the lag at which the autocorrelation of [sample <= median] of the default
 * ping-pong fell to 1/e of its lag-1 value in pinned traces (111-199 at 0 B and 8 B; samples
 * farther apart than that are nearly independent, so their batch medians are too). 5: the fewest
 * batches a t-CI is usable with (t_4 = 2.78). */
#define LTS_CI_BATCHES 5
#define LTS_CI_BATCH_LEN 200
/* The batch length for a policy: LTS_CI_BATCH_LEN for samples taken back to back, shortened so
 * that LTS_CI_BATCHES batches fit in half of max_reps; 0 (no batch CI) for isolated repetitions,
 * a fixed count, or fewer than 2 samples a batch. */
size_t lts_rep_ci_batch_len(const lts_rep_policy_t *p, int back_to_back);
/* The median's relative CI half-width from the medians of the newest nonoverlapping batches of L
 * samples of x[0..n) (at least LTS_CI_BATCHES of them; INFINITY with fewer): the CI the stop rule
 * judges back-to-back samples by, and the one their results record reports when it is the wider
 * (src/bench/results.c). */
double lts_rep_batch_rel_err(const double *x, size_t n, size_t L, double confidence, double median);

int lts_rep_ctl_init(lts_rep_ctl_t *c, const lts_rep_policy_t *p);
void lts_rep_ctl_free(lts_rep_ctl_t *c);
/* Add a sample; returns 0 or LTS_ENOMEM. */
int lts_rep_add(lts_rep_ctl_t *c, double x);
/* Decide after the samples so far; elapsed_s is the point's wall time so far. May drop the
 * older half of the kept samples (see above). */
lts_stop_reason_t lts_rep_decide(lts_rep_ctl_t *c, double elapsed_s);

#ifdef __cplusplus
}
#endif
#endif
