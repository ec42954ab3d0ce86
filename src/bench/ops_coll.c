/* Collective operation descriptors: each calls the selected algorithm (ctx->alg, a row of
 * lts_coll_registry) on all of ctx->comm, timed by the one driver (lts_measure). Data are
 * bytes (MPI_BYTE; reductions use MPI_BOR, defined on bytes). */
#include "latscope/algos.h"
#include "latscope/bench.h"
#include "latscope/clocksync.h"
#include "latscope/errors.h"
#include "latscope/util.h"
#include <stdlib.h>
#include <string.h>

/* per-rank block of the operations whose size is split into P blocks */
static int blk(const lts_op_ctx_t *c) { return (int)(c->bytes / (size_t)c->size); }

static int barrier_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->barrier_k ? c->alg->barrier_k(c->comm, c->alg->k) : c->alg->fn.barrier(c->comm));
}
static int bcast_run(lts_op_ctx_t *c) { return lts_chk(c->alg->fn.bcast(c->sbuf, (int)c->bytes, MPI_BYTE, c->root, c->comm)); }
static int reduce_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->fn.reduce(c->sbuf, c->rbuf, (int)c->bytes, MPI_BYTE, MPI_BOR, c->root, c->comm));
}
static int allreduce_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->fn.allreduce(c->sbuf, c->rbuf, (int)c->bytes, MPI_BYTE, MPI_BOR, c->comm));
}
static int scatter_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->fn.scatter(c->sbuf, blk(c), MPI_BYTE, c->rbuf, blk(c), MPI_BYTE, c->root, c->comm));
}
static int gather_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->fn.gather(c->sbuf, blk(c), MPI_BYTE, c->rbuf, blk(c), MPI_BYTE, c->root, c->comm));
}
static int allgather_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->fn.allgather(c->sbuf, blk(c), MPI_BYTE, c->rbuf, blk(c), MPI_BYTE, c->comm));
}
static int alltoall_run(lts_op_ctx_t *c) {
    return lts_chk(c->alg->fn.alltoall(c->sbuf, blk(c), MPI_BYTE, c->rbuf, blk(c), MPI_BYTE, c->comm));
}

/* Row i is lts_coll_op_t i; names and help as lts_coll_op_names. */
/* designated: lts_op_desc_t grows optional hooks that collectives leave NULL */
#define COLL(name_, help_, run_) {.name = name_, .help = help_, .group_size = 0, .scale = 1.0, .metric = "time", .run = run_}
/* one row per LTS_COLL_OP_LIST entry (algos.h): the names and help are that list's */
#define COLL_ROW(id_, help_) COLL(#id_, help_, id_##_run),
static const lts_op_desc_t coll_ops[] = {LTS_COLL_OP_LIST(COLL_ROW)};
_Static_assert(sizeof(coll_ops) / sizeof(coll_ops[0]) == LTS_COLL_NOPS, "one descriptor per collective operation");
const lts_registry_t lts_coll_op_registry = LTS_REGISTRY("collective operation", coll_ops);

int lts_coll_size_ok(int op, size_t bytes, int P) {
    switch (op) {
    case LTS_COLL_SCATTER: case LTS_COLL_GATHER: case LTS_COLL_ALLGATHER: case LTS_COLL_ALLTOALL:
        return P > 0 && bytes % (size_t)P == 0;
    default:
        return 1;
    }
}

static int do_sync(MPI_Comm comm, const lts_coll_cfg_t *cfg, lts_clock_t *clk, double *when) {
    lts_clocksync_info_t info = {0};
    int rc = lts_clocksync(comm, cfg->clock_sync ? cfg->clock_sync : "hca", cfg->sync_opts, cfg->measure.timer, clk,
                           &info);
    *when = MPI_Wtime();
    int me;
    MPI_Comm_rank(comm, &me);
    if (!rc && me == 0 && cfg->on_sync) cfg->on_sync(cfg->ud, &info);
    /* a given start window must cover the clocks' disagreement both ways */
    if (!rc && cfg->measure.start_window_s > 0 && cfg->measure.start_window_s < 2 * info.residual_max_s) rc = LTS_ERANGE;
    lts_clocksync_info_free(&info);
    return rc;
}

int lts_coll_run(MPI_Comm comm, const lts_coll_cfg_t *cfg) {
    int me, P, rc = LTS_OK;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (cfg->op < 0 || cfg->op >= LTS_COLL_NOPS || cfg->root < 0 || cfg->root >= P) return LTS_EINVAL;
    for (size_t s = 0; s < cfg->nsizes; s++)
        if (!lts_coll_size_ok(cfg->op, cfg->sizes[s], P) || cfg->sizes[s] > (size_t)0x7fffffff) return LTS_EINVAL;
    unsigned timings = cfg->timings ? cfg->timings : 1u << cfg->measure.timing;
    if (timings >> LTS_TIMING_N) return LTS_EINVAL;
    const lts_op_desc_t *op = (const lts_op_desc_t *)lts_reg_row(&lts_coll_op_registry, (size_t)cfg->op);
    /* The driver times on rank 0 of its communicator: renumber so that the root is rank 0.
     * Binomial and linear trees use ranks relative to the root, so the trees are unchanged. */
    MPI_Comm rc_comm;
    if (MPI_Comm_split(comm, 0, (me - cfg->root + P) % P, &rc_comm)) return LTS_EMPI;
    size_t maxb = 0;
    for (size_t s = 0; s < cfg->nsizes; s++) if (cfg->sizes[s] > maxb) maxb = cfg->sizes[s];
    lts_op_ctx_t ctx = {0};
    ctx.comm = rc_comm;
    MPI_Comm_rank(rc_comm, &ctx.rank);
    ctx.size = P;
    ctx.root = 0;
    ctx.sbuf = lts_buffer_alloc(maxb + 1);
    ctx.rbuf = lts_buffer_alloc(maxb + 1);
    int lok = ctx.sbuf && ctx.rbuf, ok;
    MPI_Allreduce(&lok, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) { rc = LTS_ENOMEM; goto out; }
    memset(ctx.sbuf, me & 0xff, maxb + 1);
    memset(ctx.rbuf, 0, maxb + 1);
    lts_clock_t clk = {cfg->measure.timer, 0.0, 1.0};
    double synced_at = -1.0;
    for (size_t a = 0; a < cfg->nalgs && rc == LTS_OK; a++) {
        ctx.alg = cfg->algs[a];
        for (size_t s = 0; s < cfg->nsizes && rc == LTS_OK; s++) {
            ctx.bytes = cfg->sizes[s];
            for (int tm = 0; tm < LTS_TIMING_N && rc == LTS_OK; tm++) {
                if (!(timings & (1u << tm))) continue;
                const lts_timing_desc_t *trow = lts_timing_row((lts_timing_t)tm);
                if (!lts_timing_applies(trow, ctx.alg, P)) {
                    if (cfg->timings) continue;   /* "all": only where it applies */
                    rc = LTS_EINVAL;
                    break;
                }
                lts_measure_cfg_t mc = cfg->measure;
                mc.timing = (lts_timing_t)tm;
                if (trow->needs_clock) {
                    /* (re-)synchronise the clocks when none is fresh enough (synced_at is the
                     * same decision on every rank: MPI_Wtime differences are local but the
                     * verdict is broadcast) */
                    int need = synced_at < 0 || (cfg->resync_s > 0 && MPI_Wtime() - synced_at > cfg->resync_s);
                    MPI_Bcast(&need, 1, MPI_INT, 0, comm);
                    if (need && (rc = do_sync(rc_comm, cfg, &clk, &synced_at))) break;
                    mc.clock = &clk;
                }
                /* one job, measured by every rank; the result lives on the root */
                static const int all = -1;
                lts_point_job_t job = {
                    .pt = {.op = op->name, .group = &all, .bytes = cfg->sizes[s], .reply_bytes = cfg->sizes[s],
                           .alg = ctx.alg->name, .root = cfg->root,
                           .timing = trow->name},
                    .src = cfg->root, .op = op, .ctx = &ctx, .measure = mc};
                rc = lts_point_run(comm, &job, 1, cfg->on_point, cfg->ud);
            }
        }
    }
out:
    free(ctx.sbuf);
    free(ctx.rbuf);
    MPI_Comm_free(&rc_comm);
    return rc;
}
