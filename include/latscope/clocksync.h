/* Clock synchronisation, selected by name (--clock-sync none|mpibench|skampi|jk|hca), for the
 * global timing method (MPIBlib §2.1: "the local clocks of the processors have to be
 * synchronized"). Every method ends with an affine model per rank that maps its local timer to
 * the reference clock (rank 0 of the communicator):  global(t) = A + B * t.
 *
 *   mpibench  MPIBench (Grove & Coddington), as seed 001 §2.1 describes it: rank 0 and each rank
 *             in turn ping-pong until no new minimum round trip has been seen for `patience`
 *             exchanges; the offset is taken from the exchange with the fastest round trip,
 *             assuming its message arrived half a round trip after it was sent. Offset only.
 *   skampi    SKaMPI: every exchange bounds the offset between the send and receive time stamps
 *             of the reference; the bounds of all exchanges are intersected and the midpoint
 *             taken. Offset only.
 *   jk        Jones & Koenig: min-RTT offset estimates at `rounds` instants spread over `span_s`,
 *             a least-squares line offset(t) = a + b t (linear drift).
 *   hca       in the spirit of HCA (Hunold & Carpen-Amarie): pairwise linear models in
 *             ceil(log2 P) rounds of disjoint pairs (rank r syncs with r - lowbit(r)), composed
 *             down the binomial tree to the root: O(log P) rounds instead of O(P).
 *   none      identity: trusts the timer to be global already (one host, MPI_WTIME_IS_GLOBAL).
 *
 * Drift models (jk, hca) are validated: the line is fitted to the earlier 2/3 of the samples and
 * must predict the later 1/3 better than a constant offset fitted to the same samples; if it
 * does not, the method falls back to offset only and says so (drift_rejected). After any method
 * the residual error is measured (SKaMPI bounds on the synchronised clocks, rank 0 against each
 * rank) and recorded. */
#ifndef LATSCOPE_CLOCKSYNC_H
#define LATSCOPE_CLOCKSYNC_H
#include <mpi.h>
#include <stddef.h>
#include "latscope/registry.h"
#include "latscope/timer.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A synchronised clock: global time = A + B * (local timer reading). */
typedef struct lts_clock {
    const lts_timer_t *timer;
    double A, B;
} lts_clock_t;

static inline double lts_clock_now(const lts_clock_t *c) { return c->A + c->B * lts_timer_now(c->timer); }
static inline double lts_clock_of(const lts_clock_t *c, double local) { return c->A + c->B * local; }

typedef struct lts_clocksync_opts {
    int exchanges;      /* ping-pongs per estimate (skampi, and per round for jk/hca); default 20 */
    int patience;       /* mpibench: stop after this many exchanges without a new minimum RTT; default 20 */
    int max_exchanges;  /* mpibench: hard cap; default 2000 */
    int rounds;         /* jk, hca: offset estimates spread over span_s; default 12 */
    double span_s;      /* jk, hca: time over which the estimates are spread; default 0.05 s */
    int residual_exchanges;  /* exchanges of the residual check; default 10 */
} lts_clocksync_opts_t;

void lts_clocksync_opts_default(lts_clocksync_opts_t *o);

/* What a synchronisation did; filled on every rank, the arrays on rank 0 only. */
typedef struct lts_clocksync_info {
    const char *method;
    const char *model;        /* "identity", "offset" or "drift" */
    int drift_rejected;       /* a drift fit was tried and predicted worse than offset only */
    double cost_s;            /* wall time of the synchronisation (residual check not included) */
    double check_cost_s;      /* wall time of the residual check */
    double residual_max_s;    /* max over ranks of |offset left after sync| (rank 0: 0) */
    double residual_bound_s;  /* max over ranks of the check's own uncertainty (half the bounds' width) */
    int nranks;
    double *residual_s;       /* rank 0: per rank (nranks), signed */
    double *A, *B;            /* rank 0, per rank: A = global - local at the end of the sync (the
                               * offset then), B = the rate (global = A + B (local - then)) */
} lts_clocksync_info_t;

void lts_clocksync_info_free(lts_clocksync_info_t *i);

typedef struct lts_clocksync_desc {
    const char *name;
    const char *help;
    /* collective over comm; sets *clock (timer already set by the caller) */
    int (*sync)(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clock, lts_clocksync_info_t *info);
} lts_clocksync_desc_t;

extern const lts_registry_t lts_clocksync_registry;

/* Synchronise with the named method, then measure the residual error. Collective over comm.
 * info->method/model/drift_rejected/cost/residuals are filled. */
int lts_clocksync(MPI_Comm comm, const char *method, const lts_clocksync_opts_t *o, const lts_timer_t *timer,
                  lts_clock_t *clock, lts_clocksync_info_t *info);

/* Measure the residual offset of the synchronised clocks (rank 0 against each rank). */
int lts_clocksync_check(MPI_Comm comm, const lts_clock_t *clock, int exchanges, lts_clocksync_info_t *info);

/* Model choice on offset samples theta[i] taken at local times t[i] (time-ordered), n >= 2:
 * fits a constant and a line on the earlier 2/3, compares their squared prediction errors on
 * the later 1/3. Returns 1 if the line is kept, 0 if rejected (offset only). *a, *b: the chosen
 * model refitted on all samples (b = 0 for offset only). Exposed for tests. */
int lts_clocksync_choose_model(const double *t, const double *theta, size_t n, double *a, double *b);

/* Test hook (include/latscope/hooks.h, clock_skew with offset O and drift D): makes rank r's
 * timer report (1 + r*D) t + r*O, with t counted from the host-wide epoch (not the timer's open),
 * so clock synchronisation has a known offset and drift to recover. Returns 1 if applied, 0 if
 * the hook is off. */
int lts_timer_apply_test_skew(lts_timer_t *t, int rank);

#ifdef __cplusplus
}
#endif
#endif
