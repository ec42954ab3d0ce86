/* The one measurement loop (DESIGN.md "One driver loop"), with every timing method of
 * bench.h. A repetition is
 *     [global: wait for the common start]  t0; op; [confirmation / ack]; t1;  [dummy work]
 * followed, when repetitions are isolated, by the stop-sync: ONE allreduce (MAX) that separates
 * repetitions, carries every rank's time (max timing), the late flags (global timing), the
 * root's stop decision and the next common start instant. */
#include "latscope/bench.h"
#include "latscope/clocksync.h"
#include "latscope/errors.h"
#include "latscope/hooks.h"
#include "latscope/stats.h"
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

/* Row i is lts_timing_t i. */
static const lts_timing_desc_t timings[] = {
    {"root", "the root's clock; collectives: completion confirmed by empty messages, confirmation time subtracted", 0},
    {"max", "maximum over ranks of local times after a synchronised start", 0},
    {"global", "common start instant on synchronised clocks; latest finish on the global clock", 1},
    {"local", "per-rank local times (IMB style): min/avg/max over ranks reported", 0},
    {"individual", "bcast/scatter linear & binomial: root->rank i tasks with an ack, corrected by the ack time", 0},
};
_Static_assert(sizeof(timings) / sizeof(timings[0]) == LTS_TIMING_N, "one row per timing method");
const lts_registry_t lts_timing_registry = LTS_REGISTRY("timing method", timings);

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

enum { TAG_CONFIRM = 0x4c43, TAG_ACK = 0x4c44 };

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

static void spin(const lts_timer_t *t, double seconds) {
    if (seconds <= 0) return;
    double until = lts_timer_now(t) + seconds;
    while (lts_timer_now(t) < until) {
    }
}

/* MPIBlib root timing: every rank confirms completion to the root with an empty message. */
static int confirm(const lts_op_ctx_t *c) {
    if (c->rank != 0) return MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_CONFIRM, c->comm) ? LTS_EMPI : LTS_OK;
    for (int k = 1; k < c->size; k++)
        if (MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG_CONFIRM, c->comm, MPI_STATUS_IGNORE)) return LTS_EMPI;
    return LTS_OK;
}

/* The individual task's acknowledgement: the target tells the root it has finished. */
static int ack(const lts_op_ctx_t *c, int target) {
    if (c->rank == target) return MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, c->comm) ? LTS_EMPI : LTS_OK;
    if (c->rank == 0) return MPI_Recv(NULL, 0, MPI_BYTE, target, TAG_ACK, c->comm, MPI_STATUS_IGNORE) ? LTS_EMPI : LTS_OK;
    return LTS_OK;
}

/* Median (on the root) of `reps` isolated executions of a correction step, broadcast. kind 0:
 * the confirmation alone; 1: an empty ping-pong root<->target, halved (the ack's one-way time);
 * 2: the allreduce itself (to size the global start window). */
static double correction(const lts_op_ctx_t *c, const lts_timer_t *tm, int kind, int target, int reps) {
    double *v = malloc((size_t)reps * sizeof *v), x = 0.0, med = NAN;
    if (!v) return NAN;
    for (int k = 0; k < reps; k++) {
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, c->comm);
        double t0 = lts_timer_now(tm);
        if (kind == 0) {
            confirm(c);
        } else if (kind == 1) {
            if (c->rank == 0) {
                MPI_Send(NULL, 0, MPI_BYTE, target, TAG_ACK, c->comm);
                MPI_Recv(NULL, 0, MPI_BYTE, target, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
            } else if (c->rank == target) {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, c->comm);
            }
        } else {
            MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, c->comm);
        }
        v[k] = (lts_timer_now(tm) - t0) * (kind == 1 ? 0.5 : 1.0);
    }
    if (c->rank == 0) {
        lts_summary_t s;
        lts_summarize(v, (size_t)reps, 0.95, LTS_STOP_MEDIAN, &s);
        med = s.median;
    }
    /* the allreduce's cost matters on the slowest rank: take the max of the medians */
    if (kind == 2) {
        lts_summary_t s;
        lts_summarize(v, (size_t)reps, 0.95, LTS_STOP_MEDIAN, &s);
        med = s.median;
        MPI_Allreduce(MPI_IN_PLACE, &med, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    } else {
        MPI_Bcast(&med, 1, MPI_DOUBLE, 0, c->comm);
    }
    free(v);
    return med;
}

/* Per-rank local statistics (min, avg, max, median of this rank's kept samples), gathered. */
static int gather_local(const lts_op_ctx_t *c, const double *v, size_t n, lts_measurement_t *out) {
    double st[4] = {NAN, NAN, NAN, NAN};
    if (n) {
        lts_summary_t s;
        lts_summarize(v, n, 0.95, LTS_STOP_MEDIAN, &s);
        st[0] = s.min; st[1] = s.mean; st[2] = s.max; st[3] = s.median;
    }
    double *all = c->rank == 0 ? malloc(4 * (size_t)c->size * sizeof *all) : NULL;
    MPI_Gather(st, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, c->comm);
    if (c->rank == 0) {
        if (!all) return LTS_ENOMEM;
        out->local = all;
        out->nlocal = c->size;
    }
    return LTS_OK;
}

int lts_measure(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const lts_measure_cfg_t *cfg, lts_measurement_t *out) {
    const lts_timer_t *tm = cfg->timer;
    const int root = ctx->rank == 0;
    const lts_timing_t timing = cfg->timing;
    const int global = timing == LTS_TIMING_GLOBAL, local = timing == LTS_TIMING_LOCAL;
    /* max timing needs every repetition to start together, as global timing does */
    const lts_sync_desc_t *sync = lts_sync_resolve(cfg->sync, op, 0, global || timing == LTS_TIMING_MAX);
    const int per_rep = sync->per_rep;
    int rc = LTS_OK;
    memset(out, 0, sizeof *out);
    out->sync = sync->name;
    out->rel_err = NAN;
    out->confirm_s = NAN;
    out->window_s = NAN;
    out->stop_reason = LTS_STOP_CONTINUE;
    if ((unsigned)timing >= LTS_TIMING_N || (global && (!cfg->clock || !per_rep)) ||
        (timing == LTS_TIMING_INDIVIDUAL && (cfg->target <= 0 || cfg->target >= ctx->size)))
        return LTS_EINVAL;
    /* root timing of an operation over all ranks needs the completion confirmed (MPIBlib §2.1) */
    const int confirmed = timing == LTS_TIMING_ROOT && op->group_size == 0 && ctx->size > 1;

    lts_rep_ctl_t ctl;
    if ((rc = lts_rep_ctl_init(&ctl, &cfg->policy))) return rc;
    /* per block: the samples, the late flags, then the stop flag and the next start instant */
    size_t blk_cap = per_rep ? 1 : 1024;
    double *loc = malloc((2 * blk_cap + 2) * sizeof *loc), *glob = malloc((2 * blk_cap + 2) * sizeof *glob);
    double *mine = NULL;   /* local timing: this rank's kept samples */
    size_t nmine = 0, capmine = 0;
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

    /* corrections, measured alone and subtracted (MPIBlib §2.1, [7]) */
    const int ncorr = cfg->policy.min_reps < 20 ? 20 : (cfg->policy.min_reps > 200 ? 200 : cfg->policy.min_reps);
    double corr = 0.0;
    if (confirmed) corr = out->confirm_s = correction(ctx, tm, 0, 0, ncorr);
    if (timing == LTS_TIMING_INDIVIDUAL) corr = cfg->ack_s > 0 ? cfg->ack_s : correction(ctx, tm, 1, cfg->target, ncorr);
    double window = cfg->start_window_s, next_start = 0.0;
    if (global) {
        /* automatic window: the common start must come after the slowest rank leaves the
         * allreduce that announced it: four medians of that allreduce, plus 10 us */
        if (window <= 0) window = 4.0 * correction(ctx, tm, 2, 0, ncorr) + 10e-6;
        out->window_s = window;
        next_start = lts_clock_now(cfg->clock) + window;
        MPI_Allreduce(MPI_IN_PLACE, &next_start, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
    }

    /* test hook: ranks other than 0 reach every common start this late (zero-valid tests) */
    const double late_hook = global && ctx->rank != 0 ? lts_test_hooks()->arrive_late_s : 0.0;

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
        if (local && nmine + nb > capmine) {
            size_t cap = 2 * capmine + nb + 1024;
            double *g = realloc(mine, cap * sizeof *mine);
            if (!g) MPI_Abort(ctx->comm, 1);   /* the others are in the stop-sync: no way out but abort */
            mine = g;
            capmine = cap;
        }
        for (size_t b = 0; b < nb; b++) {
            int r = LTS_OK;
            if (op->prepare && !prepared) r = op->prepare(ctx);
            prepared = 0;
            loc[nb + b] = 0.0;
            double t0;
            if (global) {
                /* wait for the common instant; arriving after it spoils the repetition */
                spin(tm, late_hook);
                double now = lts_clock_now(cfg->clock);
                if (now > next_start) loc[nb + b] = 1.0;
                while (now < next_start) now = lts_clock_now(cfg->clock);
                t0 = next_start;
            } else {
                t0 = lts_timer_now(tm);
            }
            if (!r) r = op->run(ctx);
            if (!r && confirmed) r = confirm(ctx);
            if (!r && timing == LTS_TIMING_INDIVIDUAL) r = ack(ctx, cfg->target);
            double t1 = global ? lts_clock_now(cfg->clock) : lts_timer_now(tm);
            if (r && !rc) rc = r;
            double x = (t1 - t0) * op->scale - corr;
            int mine_counts = root || timing == LTS_TIMING_MAX || global || local;
            loc[b] = r ? INFINITY : (mine_counts ? x : -INFINITY);
            if (local) mine[nmine + b] = x;
            spin(tm, cfg->dummy_work_s);
        }
        /* post the next repetition's receives before the stop-sync, when there can be one */
        if (op->prepare && !rc && n + nb < (size_t)cfg->policy.max_reps) {
            int r = op->prepare(ctx);
            if (r) rc = r; else prepared = 1;
        }
        /* the root's decision (from the samples before this block) rides along */
        loc[2 * nb] = root ? (double)decided : 0.0;
        loc[2 * nb + 1] = global ? lts_clock_now(cfg->clock) + window : 0.0;
        /* Stop-sync: one allreduce isolates repetitions, agrees the decision, takes the maximum
         * over ranks (max and global timing) and agrees the next common start. */
        MPI_Allreduce(loc, glob, (int)(2 * nb + 2), MPI_DOUBLE, MPI_MAX, ctx->comm);
        if (global) next_start = glob[2 * nb + 1];
        out->reps_total += (long)nb;
        for (size_t b = 0; b < nb; b++)
            if (isinf(glob[b]) && glob[b] > 0) rc = LTS_EMPI;
        /* an error on any rank shows as +inf; all ranks leave together */
        if (rc) break;
        /* The block just run started after the root had decided to stop: it only told the
         * others. Its samples are not kept, so the statistics are those the decision saw. */
        if (glob[2 * nb] != (double)LTS_STOP_CONTINUE) { out->stop_reason = (int)glob[2 * nb]; break; }
        size_t kept = nmine;   /* local timing: the block was written at mine[nmine + b] */
        for (size_t b = 0; b < nb; b++) {
            if (glob[nb + b] != 0.0) { out->reps_invalid++; continue; }   /* a rank started late */
            if (root && rc == LTS_OK) {
                rc = lts_rep_add(&ctl, glob[b]);
                if (glob[b] < 0) out->negative++;
            }
            if (local) mine[kept++] = mine[nmine + b];
        }
        nmine = kept;
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
    if (rc == LTS_OK && local) rc = gather_local(ctx, mine, nmine, out);
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
    free(mine);
    lts_rep_ctl_free(&ctl);
    return rc;
}
