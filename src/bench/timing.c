/* The timing methods (include/latscope/bench.h, docs/collectives.md "Timing methods"): one row
 * each, what the method needs and what it does at the steps of lts_measure's repetition
 *     [start: wait for the common start]  t0; op; [stop: confirmation / ack]; t1
 * plus what it subtracts (correct, measured alone after warm-up: MPIBlib §2.1), what rides the
 * stop-sync (announce), what each rank keeps of its own times (keep) and reports (report). */
#include "timing.h"
#include "latscope/algos.h"
#include "latscope/clocksync.h"
#include "latscope/errors.h"
#include "latscope/hooks.h"
#include "latscope/stats.h"
#include "latscope/util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_CONFIRM = 0x4c43, TAG_ACK = 0x4c44 };

/* MPIBlib root timing: every rank confirms completion to the root with an empty message. */
static int confirm(const lts_op_ctx_t *c) {
    if (c->rank != 0) return lts_chk(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_CONFIRM, c->comm));
    for (int k = 1; k < c->size; k++)
        if (MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG_CONFIRM, c->comm, MPI_STATUS_IGNORE)) return LTS_EMPI;
    return LTS_OK;
}

/* The individual task's acknowledgement: the target tells the root it has finished. */
static int ack(const lts_op_ctx_t *c, int target) {
    if (c->rank == target) return lts_chk(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, c->comm));
    if (c->rank == 0) return lts_chk(MPI_Recv(NULL, 0, MPI_BYTE, target, TAG_ACK, c->comm, MPI_STATUS_IGNORE));
    return LTS_OK;
}

/* Correction steps, each timed alone by correction(). */
static void step_confirm(const lts_timing_run_t *r) { confirm(r->ctx); }
/* an empty ping-pong root <-> target: twice the ack's one-way time */
static void step_pingpong(const lts_timing_run_t *r) {
    const lts_op_ctx_t *c = r->ctx;
    const int target = r->cfg->target;
    if (c->rank == 0) {
        MPI_Send(NULL, 0, MPI_BYTE, target, TAG_ACK, c->comm);
        MPI_Recv(NULL, 0, MPI_BYTE, target, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
    } else if (c->rank == target) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, c->comm);
    }
}
/* the stop-sync's allreduce itself */
static void step_allreduce(const lts_timing_run_t *r) {
    double x = 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, r->ctx->comm);
}

/* Median of r->ncorr isolated executions of `step`, times `scale`: the root's, broadcast; or,
 * with max_over_ranks, the largest of the ranks' medians. */
static double correction(const lts_timing_run_t *r, void (*step)(const lts_timing_run_t *), double scale,
                         int max_over_ranks) {
    const lts_op_ctx_t *c = r->ctx;
    const lts_timer_t *tm = r->cfg->timer;
    const int reps = r->ncorr;
    double *v = malloc((size_t)reps * sizeof *v), x = 0.0, med = NAN;
    if (!v) return NAN;
    for (int k = 0; k < reps; k++) {
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, c->comm);
        double t0 = lts_timer_now(tm);
        step(r);
        v[k] = (lts_timer_now(tm) - t0) * scale;
    }
    if (c->rank == 0 || max_over_ranks) {
        lts_summary_t s;
        lts_summarize(v, (size_t)reps, 0.95, LTS_STOP_MEDIAN, &s);
        med = s.median;
    }
    if (max_over_ranks) MPI_Allreduce(MPI_IN_PLACE, &med, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    else MPI_Bcast(&med, 1, MPI_DOUBLE, 0, c->comm);
    free(v);
    return med;
}

/* ---- root: an operation over all ranks needs its completion confirmed (MPIBlib §2.1) ---- */
static void root_correct(lts_timing_run_t *r) {
    r->confirmed = r->op->group_size == 0 && r->ctx->size > 1;
    if (r->confirmed) r->corr = r->out->confirm_s = correction(r, step_confirm, 1.0, 0);
}
static int root_stop(lts_timing_run_t *r) { return r->confirmed ? confirm(r->ctx) : LTS_OK; }

/* ---- global: common start instants on the synchronised clock ---------------------------- */
static void global_correct(lts_timing_run_t *r) {
    const lts_measure_cfg_t *cfg = r->cfg;
    /* automatic window: the common start must come after the slowest rank leaves the allreduce
     * that announced it: four medians of that allreduce, plus 10 us */
    r->window = cfg->start_window_s;
    if (r->window <= 0) r->window = 4.0 * correction(r, step_allreduce, 1.0, 1) + 10e-6;
    r->out->window_s = r->window;
    r->agreed = lts_clock_now(cfg->clock) + r->window;
    MPI_Allreduce(MPI_IN_PLACE, &r->agreed, 1, MPI_DOUBLE, MPI_MAX, r->ctx->comm);
    /* test hook: ranks other than 0 reach every common start this late (zero-valid tests) */
    r->late_s = r->ctx->rank != 0 ? lts_test_hooks()->arrive_late_s : 0.0;
}
/* wait for the agreed instant; arriving after it spoils the repetition */
static double global_start(lts_timing_run_t *r, int *late) {
    lts_spin(r->cfg->timer, r->late_s);
    const double next = r->agreed;
    double now = lts_clock_now(r->cfg->clock);
    if (now > next) *late = 1;
    while (now < next) now = lts_clock_now(r->cfg->clock);
    return next;
}
/* the next common start: the latest of the ranks' "now + window" */
static double global_announce(lts_timing_run_t *r) { return lts_clock_now(r->cfg->clock) + r->window; }

/* ---- local (IMB): each rank keeps its own times; per-rank statistics gathered ------------ */
static void local_keep(lts_timing_run_t *r, double x) {
    if (r->nown == r->capown) {
        size_t cap = 2 * r->capown + 1024;
        double *g = realloc(r->own, cap * sizeof *g);
        if (!g) MPI_Abort(r->ctx->comm, 1);   /* the others are in the stop-sync: no way out but abort */
        r->own = g;
        r->capown = cap;
    }
    r->own[r->nown++] = x;
}
/* per-rank min, avg, max, median of this rank's kept samples, gathered on rank 0 */
static int local_report(lts_timing_run_t *r) {
    const lts_op_ctx_t *c = r->ctx;
    double st[4] = {NAN, NAN, NAN, NAN};
    if (r->nown) {
        lts_summary_t s;
        lts_summarize(r->own, r->nown, 0.95, LTS_STOP_MEDIAN, &s);
        st[0] = s.min; st[1] = s.mean; st[2] = s.max; st[3] = s.median;
    }
    double *all = c->rank == 0 ? malloc(4 * (size_t)c->size * sizeof *all) : NULL;
    MPI_Gather(st, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, c->comm);
    if (c->rank == 0) {
        if (!all) return LTS_ENOMEM;
        r->out->local = all;
        r->out->nlocal = c->size;
    }
    return LTS_OK;
}

/* ---- individual: root -> rank i tasks, each acknowledged, corrected by the ack's time ---- */
static void individual_correct(lts_timing_run_t *r) {
    r->corr = r->cfg->ack_s > 0 ? r->cfg->ack_s : correction(r, step_pingpong, 0.5, 0);
}
static int individual_stop(lts_timing_run_t *r) { return ack(r->ctx, r->cfg->target); }

/* One measurement per target rank t (root -> t with an ack); the point's value is the slowest
 * task, whose samples are kept; every task's median goes in tasks[t]. */
static int individual_measure(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const lts_measure_cfg_t *mc,
                              lts_measurement_t *out) {
    memset(out, 0, sizeof *out);
    double worst = -INFINITY;
    double wall = 0.0;
    long total = 0;
    double *tasks = malloc((size_t)ctx->size * sizeof *tasks);
    if (!tasks) MPI_Abort(ctx->comm, 1);   /* in a collective context: the others would wait */
    for (int i = 0; i < ctx->size; i++) tasks[i] = NAN;
    for (int t = 1; t < ctx->size; t++) {
        lts_measure_cfg_t c = *mc;
        c.target = t;
        c.ack_s = 0.0;
        lts_measurement_t m;
        int rc = lts_measure(op, ctx, &c, &m);
        if (rc) { lts_measurement_free(out); free(tasks); return rc; }
        wall += m.wall_s;
        total += m.reps_total;
        double med = NAN;
        if (ctx->rank == 0) {
            lts_summary_t s;
            lts_summarize(m.samples, m.n, mc->policy.confidence, mc->policy.rule, &s);
            med = s.median;
            tasks[t] = med;
        }
        if (ctx->rank == 0 && med > worst) {
            worst = med;
            lts_measurement_free(out);
            *out = m;
        } else {
            lts_measurement_free(&m);
        }
    }
    out->wall_s = wall;
    out->reps_total = total;
    if (ctx->rank == 0) {   /* the result lives on the root: the tasks travel with it */
        out->tasks = tasks;
        out->ntasks = ctx->size;
    } else {
        free(tasks);
    }
    return LTS_OK;
}

/* Row i is lts_timing_t i. */
static const lts_timing_desc_t timings[] = {
    {.name = "root",
     .help = "the root's clock; collectives: completion confirmed by empty messages, confirmation time subtracted",
     .correct = root_correct, .stop = root_stop},
    {.name = "max", .help = "maximum over ranks of local times after a synchronised start", .sync_start = 1,
     .every_rank = 1},
    {.name = "global", .help = "common start instant on synchronised clocks; latest finish on the global clock",
     .needs_clock = 1, .sync_start = 1, .every_rank = 1, .correct = global_correct, .start = global_start,
     .announce = global_announce},
    {.name = "local", .help = "per-rank local times (IMB style): min/avg/max over ranks reported", .every_rank = 1,
     .keep = local_keep, .report = local_report},
    {.name = "individual",
     .help = "bcast/scatter linear & binomial: root->rank i tasks with an ack, corrected by the ack time",
     .per_target = 1, .alg_flags = LTS_ALG_TASKS, .correct = individual_correct, .stop = individual_stop,
     .measure = individual_measure},
};
_Static_assert(sizeof(timings) / sizeof(timings[0]) == LTS_TIMING_N, "one row per timing method");
const lts_registry_t lts_timing_registry = LTS_REGISTRY("timing method", timings);

const lts_timing_desc_t *lts_timing_row(lts_timing_t t) {
    return (unsigned)t < LTS_TIMING_N ? &timings[t] : NULL;
}

int lts_timing_applies(const lts_timing_desc_t *t, const lts_coll_alg_t *alg, int P) {
    if (!t) return 0;
    if (t->alg_flags && (!alg || (alg->flags & t->alg_flags) != t->alg_flags)) return 0;
    return !t->per_target || P >= 2;
}
