/* What bench/steady_state.c and bench/steady_state_trace.c share: latscope's default ping-pong
 * between ranks 0 and 1, set up as `latscope-bench p2p --op pingpong` does when given no
 * repetition options (lts_rep_policy_default, the `auto` sync row, root timing, the `monotonic`
 * timer; docs/measurement.md "Steady state"). Include after "standalone.h". */
#ifndef LTS_BENCH_STEADY_STATE_H
#define LTS_BENCH_STEADY_STATE_H
#include <latscope/latscope.h>
#include <string.h>

/* The `pingpong` row and cfg filled with the defaults; timer must outlive cfg. */
static inline const lts_op_desc_t *lts_ss_default_pingpong(lts_timer_t *timer, lts_measure_cfg_t *cfg) {
    if (lts_timer_open("monotonic", timer)) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(cfg, 0, sizeof *cfg);
    cfg->timer = timer;
    lts_rep_policy_default(&cfg->policy);
    cfg->sync = (const lts_sync_desc_t *)lts_reg_row(&lts_sync_registry, (size_t)lts_reg_find(&lts_sync_registry, "auto"));
    cfg->timing = LTS_TIMING_ROOT;
    return (const lts_op_desc_t *)lts_reg_row(&lts_p2p_registry, (size_t)lts_reg_find(&lts_p2p_registry, "pingpong"));
}

/* The operation's context for one message size between ranks 0 and 1 of MPI_COMM_WORLD. */
static inline void lts_ss_ctx(lts_op_ctx_t *ctx, int me, size_t bytes, char *sbuf, char *rbuf) {
    memset(ctx, 0, sizeof *ctx);
    ctx->comm = MPI_COMM_WORLD;
    ctx->rank = me;
    ctx->size = 2;
    ctx->bytes = ctx->reply_bytes = bytes;
    ctx->sbuf = sbuf;
    ctx->rbuf = rbuf;
}

#endif
