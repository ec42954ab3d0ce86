/* The one measurement loop (DESIGN.md "One driver loop"). */
#include "latscope/bench.h"
#include "latscope/errors.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const lts_sync_desc_t syncs[] = {
    {"barrier", "repetitions isolated: a synchronising allreduce separates each one (default)", 1},
    {"none", "repetitions back to back (pipelined); stop decisions between blocks", 0},
};
_Static_assert(sizeof(syncs) / sizeof(syncs[0]) <= LTS_REGISTRY_MAX, "sync registry too large");
const lts_registry_t lts_sync_registry = LTS_REGISTRY("sync method", syncs);

void lts_measurement_free(lts_measurement_t *m) {
    free(m->samples);
    m->samples = NULL;
    m->n = 0;
}

int lts_measure(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const lts_measure_cfg_t *cfg, lts_measurement_t *out) {
    const lts_timer_t *tm = cfg->timer;
    const int root = ctx->rank == 0;
    int rc = LTS_OK;
    memset(out, 0, sizeof *out);
    out->rel_err = NAN;
    out->stop_reason = LTS_STOP_CONTINUE;

    lts_rep_ctl_t ctl;
    if ((rc = lts_rep_ctl_init(&ctl, &cfg->policy))) return rc;
    /* one slot per repetition in a block plus the stop flag */
    size_t blk_cap = cfg->sync->per_rep ? 1 : 1024;
    double *loc = malloc((blk_cap + 1) * sizeof *loc), *glob = malloc((blk_cap + 1) * sizeof *glob);
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

    double tstart = MPI_Wtime();
    lts_stop_reason_t decided = LTS_STOP_CONTINUE;
    for (;;) {
        /* Block length: 1 when isolated; otherwise up to min_reps first, then ~2 % more, so the
         * decision lags by at most one block. All ranks compute the same length from n. */
        size_t n = (size_t)out->reps_total, nb = 1;
        if (!cfg->sync->per_rep) {
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
            double t0 = lts_timer_now(tm);
            if (!r) r = op->run(ctx);
            double t1 = lts_timer_now(tm);
            if (r && !rc) rc = r;
            loc[b] = r ? INFINITY : (root || cfg->timing == LTS_TIMING_MAX ? (t1 - t0) * op->scale : -INFINITY);
        }
        /* post the next repetition's receives before the stop-sync, when there can be one */
        if (op->prepare && !rc && n + nb < (size_t)cfg->policy.max_reps) {
            int r = op->prepare(ctx);
            if (r) rc = r; else prepared = 1;
        }
        /* the root's decision (from the samples before this block) rides along */
        loc[nb] = root ? (double)decided : 0.0;
        /* Stop-sync: one allreduce isolates repetitions, agrees the decision, and takes the
         * maximum over ranks for max timing (MPIBlib §2.1 "maximum timing"). */
        MPI_Allreduce(loc, glob, (int)nb + 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
        out->reps_total += (long)nb;
        for (size_t b = 0; b < nb; b++)
            if (isinf(glob[b]) && glob[b] > 0) rc = LTS_EMPI;
        /* an error on any rank shows as +inf; all ranks leave together */
        if (rc) break;
        /* The block just run started after the root had decided to stop: it only told the
         * others. Its samples are not kept, so the statistics are those the decision saw. */
        if (glob[nb] != (double)LTS_STOP_CONTINUE) { out->stop_reason = (int)glob[nb]; break; }
        for (size_t b = 0; b < nb && root && rc == LTS_OK; b++) rc = lts_rep_add(&ctl, glob[b]);
        if (rc) break;
        if (root) decided = lts_rep_decide(&ctl, MPI_Wtime() - tstart);
        /* nb == 0 only at max_reps, where the root has already decided to stop */
        if (nb == 0) {
            out->stop_reason = cfg->policy.min_reps == cfg->policy.max_reps ? LTS_STOP_FIXED : LTS_STOP_MAX_REPS;
            break;
        }
    }
    if (prepared && op->cancel) op->cancel(ctx);
    out->wall_s = MPI_Wtime() - start;
    if (root && rc == LTS_OK) {
        out->rel_err = ctl.achieved_rel_err;
        out->n = ctl.n;
        out->samples = ctl.samples;
        ctl.samples = NULL;
    }
fini:
    if (op->fini) op->fini(ctx);
done:
    free(loc);
    free(glob);
    lts_rep_ctl_free(&ctl);
    return rc;
}
