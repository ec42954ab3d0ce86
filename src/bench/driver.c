/* The one measurement loop (docs/architecture.md "C: one driver, descriptors and registries").
 * A repetition is
 *     [timing start: e.g. wait for the common start]  t0; op; [timing stop: confirmation / ack]; t1;
 *     [dummy work]
 * followed, when repetitions are isolated, by the stop-sync: ONE allreduce (MAX) that separates
 * repetitions, carries every rank's time (max timing), the late flags (global timing), the
 * root's stop decision and what the timing method announces (global: the next common start).
 * What differs between timing methods is in their rows (timing.c), not here. */
#include "timing.h"
#include "latscope/bench.h"
#include "latscope/clocksync.h"
#include "latscope/errors.h"
#include "latscope/util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const lts_sync_desc_t syncs[] = {
    {"auto", "none for a round trip measured one group at a time (it isolates itself), else barrier (default)", -1},
    {"barrier", "repetitions isolated: a synchronising allreduce separates each one", 1},
    {"none", "repetitions back to back (pipelined); stop decisions between blocks", 0},
};
_Static_assert(sizeof(syncs) / sizeof(syncs[0]) <= LTS_REGISTRY_MAX, "sync registry too large");
const lts_registry_t lts_sync_registry = LTS_REGISTRY("sync method", syncs);

/* docs/measurement.md "Isolation": a self-isolating round trip gains nothing from a stop-sync
 * after every repetition and loses by it. The initiator leaves the allreduce first and its next
 * message then reaches a partner still on its way out; on MPICH's shared memory that costs about
 * 300 ns of an 1.1 us one-way latency (bench/p2p_overhead.py). */
const lts_sync_desc_t *lts_sync_resolve(const lts_sync_desc_t *s, const lts_op_desc_t *op, int concurrent,
                                        int needs_per_rep) {
    if (!s || s->per_rep >= 0) return s;
    const char *name = op && op->self_isolating && !concurrent && !needs_per_rep ? "none" : "barrier";
    for (size_t i = 0; i < sizeof syncs / sizeof syncs[0]; i++)
        if (!strcmp(syncs[i].name, name)) return &syncs[i];
    return s;
}

void lts_measurement_free(lts_measurement_t *m) {
    free(m->samples);
    free(m->local);
    free(m->tasks);
    m->samples = NULL;
    m->local = NULL;
    m->tasks = NULL;
    m->n = 0;
    m->nlocal = m->ntasks = 0;
}

void *lts_buffer_alloc(size_t bytes) {
    void *p = NULL;
    if (bytes == 0) bytes = 1;
    if (posix_memalign(&p, 4096, bytes)) return NULL;
    memset(p, 0, bytes);
    return p;
}

void lts_measurement_pack(const lts_measurement_t *m, double *h) {
    h[0] = (double)m->n; h[1] = (double)m->reps_total; h[2] = m->stop_reason; h[3] = m->rel_err; h[4] = m->wall_s;
    h[5] = (double)m->reps_invalid; h[6] = (double)m->negative; h[7] = m->confirm_s; h[8] = m->window_s;
    h[9] = m->local ? m->nlocal : 0; h[10] = (double)m->discarded; h[11] = m->stationary;
    h[12] = m->sync ? lts_reg_find(&lts_sync_registry, m->sync) : -1;
    h[13] = m->tasks ? m->ntasks : 0;
}

void lts_measurement_unpack(const double *h, lts_measurement_t *m) {
    memset(m, 0, sizeof *m);
    m->n = (size_t)h[0]; m->reps_total = (long)h[1]; m->stop_reason = (int)h[2]; m->rel_err = h[3]; m->wall_s = h[4];
    m->reps_invalid = (long)h[5]; m->negative = (long)h[6]; m->confirm_s = h[7]; m->window_s = h[8];
    m->nlocal = (int)h[9]; m->discarded = (long)h[10]; m->stationary = (int)h[11];
    m->sync = h[12] >= 0 ? lts_reg_row(&lts_sync_registry, (size_t)h[12])->name : NULL;
    m->ntasks = (int)h[13];
}

int lts_measure(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const lts_measure_cfg_t *cfg, lts_measurement_t *out) {
    const lts_timer_t *tm = cfg->timer;
    const int root = ctx->rank == 0;
    const lts_timing_desc_t *t = lts_timing_row(cfg->timing);
    /* methods whose repetitions start together (max, global) isolate them under --sync auto */
    const lts_sync_desc_t *sync = lts_sync_resolve(cfg->sync, op, 0, t && t->sync_start);
    const int per_rep = sync->per_rep;
    int rc = LTS_OK;
    memset(out, 0, sizeof *out);
    out->sync = sync->name;
    out->rel_err = NAN;
    out->confirm_s = NAN;
    out->window_s = NAN;
    out->stop_reason = LTS_STOP_CONTINUE;
    if (!t || (t->needs_clock && (!cfg->clock || !per_rep)) ||
        (t->per_target && (cfg->target <= 0 || cfg->target >= ctx->size)))
        return LTS_EINVAL;
    /* the method's times are on the synchronised clock (global) or on the timer */
    const lts_clock_t *clk = t->needs_clock ? cfg->clock : NULL;
    lts_timing_run_t run = {.op = op, .ctx = ctx, .cfg = cfg, .out = out};

    lts_rep_ctl_t ctl;
    if ((rc = lts_rep_ctl_init(&ctl, &cfg->policy))) return rc;
    /* repetitions back to back: the median's CI also over batches (autocorrelated samples) */
    ctl.ci_batch = lts_rep_ci_batch_len(&cfg->policy, !per_rep);
    /* per block: the samples, the late flags, then the stop flag and the next start instant */
    size_t blk_cap = per_rep ? 1 : 1024;
    double *loc = malloc((2 * blk_cap + 2) * sizeof *loc), *glob = malloc((2 * blk_cap + 2) * sizeof *glob);
    if (!loc || !glob) { rc = LTS_ENOMEM; goto done; }
    /* Every rank must agree that init and warm-up worked before timing starts (a local failure
     * must not leave the partner waiting): errors are combined with an allreduce. */
    int lrc = op->init ? op->init(ctx) : LTS_OK, grc;
    MPI_Allreduce(&lrc, &grc, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (grc) { rc = grc; if (lrc == LTS_OK && op->fini) op->fini(ctx); goto done; }

    /* wall time and the budget use MPI_Wtime: the selected timer may be a test timer */
    double start = MPI_Wtime();
    ctx->req = MPI_REQUEST_NULL;
    int prepared = 0;   /* a receive for the next repetition is posted */
    for (int w = 0; w < cfg->policy.warmup; w++) {
        int r = op->prepare ? op->prepare(ctx) : LTS_OK;
        if (!r) r = op->run(ctx);
        if (r && !lrc) lrc = r;
    }
    MPI_Allreduce(&lrc, &grc, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (grc) { rc = grc; goto fini; }

    /* the method's corrections, measured alone and subtracted (MPIBlib §2.1, [7]) */
    run.ncorr = cfg->policy.min_reps < 20 ? 20 : (cfg->policy.min_reps > 200 ? 200 : cfg->policy.min_reps);
    if (t->correct) t->correct(&run);
    const double corr = run.corr;

    double tstart = MPI_Wtime();
    lts_stop_reason_t decided = LTS_STOP_CONTINUE;
    for (;;) {
        /* Block length: 1 when isolated; otherwise up to min_reps first, then ~2 % more, so the
         * decision lags by at most one block. All ranks compute the same length from n. */
        size_t n = (size_t)out->reps_total, nb = 1;
        if (!per_rep) {
            nb = n < (size_t)cfg->policy.min_reps ? (size_t)cfg->policy.min_reps - n : n / 50;
            if (nb < 1) nb = 1;
            if (nb > blk_cap) nb = blk_cap;
        }
        /* never past max_reps: a fixed count gives exactly that many samples */
        if (n + nb > (size_t)cfg->policy.max_reps) nb = (size_t)cfg->policy.max_reps - n;
        for (size_t b = 0; b < nb; b++) {
            int r = LTS_OK;
            if (op->prepare && !prepared) r = op->prepare(ctx);
            prepared = 0;
            int late = 0;
            double t0 = t->start ? t->start(&run, &late) : lts_timer_now(tm);
            loc[nb + b] = late ? 1.0 : 0.0;
            if (!r) r = op->run(ctx);
            if (!r && t->stop) r = t->stop(&run);
            double t1 = clk ? lts_clock_now(clk) : lts_timer_now(tm);
            if (r && !rc) rc = r;
            double x = (t1 - t0) * op->scale - corr;
            /* the maximum over ranks is of every rank's time, or of the root's alone */
            loc[b] = r ? INFINITY : (root || t->every_rank ? x : -INFINITY);
            lts_spin(tm, cfg->dummy_work_s);
        }
        /* post the next repetition's receives before the stop-sync, when there can be one */
        if (op->prepare && !rc && n + nb < (size_t)cfg->policy.max_reps) {
            int r = op->prepare(ctx);
            if (r) rc = r; else prepared = 1;
        }
        /* the root's decision (from the samples before this block) rides along */
        loc[2 * nb] = root ? (double)decided : 0.0;
        loc[2 * nb + 1] = t->announce ? t->announce(&run) : 0.0;
        /* Stop-sync: one allreduce isolates repetitions, agrees the decision, takes the maximum
         * over ranks (max and global timing) and agrees what the method announced. */
        MPI_Allreduce(loc, glob, (int)(2 * nb + 2), MPI_DOUBLE, MPI_MAX, ctx->comm);
        if (t->announce) run.agreed = glob[2 * nb + 1];
        out->reps_total += (long)nb;
        for (size_t b = 0; b < nb; b++)
            if (isinf(glob[b]) && glob[b] > 0) rc = LTS_EMPI;
        /* an error on any rank shows as +inf; all ranks leave together */
        if (rc) break;
        /* The block just run started after the root had decided to stop: it only told the
         * others. Its samples are not kept, so the statistics are those the decision saw. */
        if (glob[2 * nb] != (double)LTS_STOP_CONTINUE) { out->stop_reason = (int)glob[2 * nb]; break; }
        for (size_t b = 0; b < nb; b++) {
            if (glob[nb + b] != 0.0) { out->reps_invalid++; continue; }   /* a rank started late */
            if (root && rc == LTS_OK) {
                rc = lts_rep_add(&ctl, glob[b]);
                if (glob[b] < 0) out->negative++;
            }
            if (t->keep) t->keep(&run, loc[b]);   /* this rank's own time (no error: rc would be set) */
        }
        if (rc) break;
        if (root) decided = lts_rep_decide(&ctl, MPI_Wtime() - tstart);
        /* nb == 0 only at max_reps, where the root has already decided to stop */
        if (nb == 0) {
            out->stop_reason = cfg->policy.min_reps == cfg->policy.max_reps ? LTS_STOP_FIXED : LTS_STOP_MAX_REPS;
            break;
        }
    }
    if (prepared && op->cancel) op->cancel(ctx);
    /* agree on the outcome before the collective gathers below */
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (rc == LTS_OK && t->report) rc = t->report(&run);
    out->wall_s = MPI_Wtime() - start;
    if (root && rc == LTS_OK) {
        out->rel_err = ctl.achieved_rel_err;
        out->discarded = (long)ctl.discarded;
        out->stationary = ctl.stationary;
        out->n = ctl.n;
        out->samples = ctl.samples;
        ctl.samples = NULL;
    }
    /* every repetition rejected (global timing: the start window is too short) */
    long nvalid = out->reps_total - out->reps_invalid;
    if (rc == LTS_OK && nvalid <= 0) rc = LTS_ENODATA;
fini:
    if (op->fini) op->fini(ctx);
done:
    free(loc);
    free(glob);
    free(run.own);
    lts_rep_ctl_free(&ctl);
    return rc;
}
