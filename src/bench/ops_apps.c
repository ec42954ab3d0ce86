/* Application twins (apps.h): the LoGPC §5 patterns as operation descriptors timed by the one
 * driver -- this file holds their registry and the run; each pattern lives in its own file
 * (app_remap.c, app_dag.c; shared state in src/include/latscope/apps_internal.h). One repetition
 * is the whole remap or the whole wavefront; what arrived is checked in prepare()/fini(), outside
 * the timed region, and the receive buffers are poisoned before the next repetition so that stale
 * data can never pass for new. */
#include "latscope/apps.h"
#include "latscope/errors.h"
#include "latscope/timer.h"
#include "latscope/util.h"
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "latscope/apps_internal.h"

void lts_app_fail_verify(lts_app_run_state_t *st, const char *fmt, ...) {
    if (st->failed) return;   /* the first mismatch is the one reported */
    st->failed = 1;
    int k = snprintf(st->msg, sizeof st->msg, "rank %d: ", st->me);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg + k, sizeof st->msg - (size_t)k, fmt, ap);
    va_end(ap);
}

/* ---- null: the registry's test row ------------------------------------------------------- */

static int null_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks, size_t nblocks,
                      int P, char *msg, size_t len) {
    (void)p; (void)sizes; (void)nsizes; (void)blocks; (void)nblocks; (void)P; (void)msg; (void)len;
    return LTS_OK;
}
static const char *null_variant(const lts_app_params_t *p) { (void)p; return "none"; }
static int null_run(lts_op_ctx_t *c) { (void)c; return LTS_OK; }

/* ---- the registry --------------------------------------------------------------------------- */

/* The row of a pattern in its own file app_<name>.c: every hook lts_app_<name>_<hook>
 * (LTS_APP_PATTERN_HOOKS in apps_internal.h). */
#define LTS_APP_PATTERN_ROW(name_, help_, uses_blocks_)                                                                \
    {{.name = #name_, .help = help_, .group_size = 0, .scale = 1.0, .metric = "time",                                  \
      .init = lts_app_##name_##_init, .run = lts_app_##name_##_run, .fini = lts_app_##name_##_fini,                    \
      .prepare = lts_app_##name_##_prepare},                                                                           \
     lts_app_##name_##_variant, lts_app_##name_##_check, lts_app_##name_##_setup, lts_app_##name_##_teardown,         \
     uses_blocks_}

static const lts_app_pattern_t patterns[] = {
    LTS_APP_PATTERN_ROW(remap, "all-to-all remap (LoGPC §5.1): --messages N of --sizes bytes per rank, --dest "
                        "random|shift, --style sync|async", 0),
    LTS_APP_PATTERN_ROW(dag, "Diamond-DAG wavefront (LoGPC §5.2, eq. 15): --grid n, stripes of rows, --blocks b, "
                        "--task-work T, --sizes = bytes per boundary value", 1),
    {{.name = "null", .help = "no work: the driver's own cost (tests the registry)", .group_size = 0, .scale = 1.0,
      .metric = "time", .run = null_run},
     null_variant, null_check, NULL, NULL, 0},
};
_Static_assert(sizeof(patterns) / sizeof(patterns[0]) <= LTS_REGISTRY_MAX, "app registry too large");
const lts_registry_t lts_app_registry = LTS_REGISTRY("application pattern", patterns);

/* ---- the run --------------------------------------------------------------------------------- */

/* Every rank learns whether any rank's check failed; rank 0 gets the lowest failing rank's text. */
static int agree_verify(lts_app_run_state_t *st, MPI_Comm comm, char *out, size_t len) {
    int who = st->failed ? st->me : st->P, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == st->P) return 0;
    char buf[sizeof st->msg];
    if (first == 0) memcpy(buf, st->msg, sizeof buf);
    else if (st->me == first) MPI_Send(st->msg, (int)sizeof st->msg, MPI_CHAR, 0, TAG_REP + 1, comm);
    else if (st->me == 0) MPI_Recv(buf, (int)sizeof buf, MPI_CHAR, first, TAG_REP + 1, comm, MPI_STATUS_IGNORE);
    if (st->me == 0 && out && len) snprintf(out, len, "%s", buf);
    return 1;
}

/* The point runner's settle step (point.c): every rank learns whether any rank's check failed
 * (rank 0 gets the failing rank's text), then rank 0 fills in what the pattern saw. */
typedef struct {
    lts_app_run_state_t *st;
    const lts_app_cfg_t *cfg;
    lts_app_point_t ap;
} app_settle_t;

static int app_settle(lts_point_job_t *job, int rc) {
    app_settle_t *x = job->settle_state;
    lts_app_run_state_t *st = x->st;
    const lts_app_cfg_t *cfg = x->cfg;
    if (rc == LTS_OK && agree_verify(st, job->ctx->comm, cfg->errmsg, cfg->errlen)) rc = LTS_APP_EVERIFY;
    if (rc == LTS_OK && st->me == 0) {
        const lts_app_pattern_t *pat = cfg->pattern;
        const int n = cfg->params.grid;
        x->ap = (lts_app_point_t){pat->op.name, job->pt.alg, st->bytes, st->blocks,
                                  pat->uses_blocks ? st->bytes * (size_t)((n + st->blocks - 1) / st->blocks) : 0,
                                  st->recv_min, st->recv_max, st->rounds, st->task_s, st->rr_rtt_s, st->rr_handler_s};
        job->pt.app = &x->ap;
    }
    return rc;
}

int lts_app_run(MPI_Comm comm, const lts_app_cfg_t *cfg) {
    const lts_app_pattern_t *pat = cfg->pattern;
    lts_app_run_state_t st;
    memset(&st, 0, sizeof st);
    MPI_Comm_rank(comm, &st.me);
    MPI_Comm_size(comm, &st.P);
    st.p = &cfg->params;
    st.timer = cfg->measure.timer;
    char msg[256];
    if (pat->check(&cfg->params, cfg->sizes, cfg->nsizes, cfg->blocks, cfg->nblocks, st.P, msg, sizeof msg))
        return LTS_EINVAL;
    if (pat->uses_blocks ? !cfg->nblocks : cfg->nblocks) return LTS_EINVAL;
    if (MPI_Comm_dup(comm, &st.comm)) return LTS_EMPI;
    int lrc = pat->setup ? pat->setup(&st) : LTS_OK, rc;
    MPI_Allreduce(&lrc, &rc, 1, MPI_INT, MPI_MIN, comm);
    const int one_block = 0;
    const int *blocks = pat->uses_blocks ? cfg->blocks : &one_block;
    const size_t nblocks = pat->uses_blocks ? cfg->nblocks : 1;
    for (size_t s = 0; s < cfg->nsizes && rc == LTS_OK; s++)
        for (size_t b = 0; b < nblocks && rc == LTS_OK; b++) {
            st.bytes = cfg->sizes[s];
            st.blocks = blocks[b];
            lts_op_ctx_t ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.comm = comm;
            ctx.rank = st.me;
            ctx.size = st.P;
            ctx.bytes = st.bytes;
            ctx.state = &st;
            ctx.req = MPI_REQUEST_NULL;
            static const int all = -1;
            app_settle_t settle = {&st, cfg, {0}};
            lts_point_job_t job = {
                .pt = {.op = pat->op.name, .group = &all, .bytes = st.bytes, .reply_bytes = st.bytes,
                       .alg = pat->variant(&cfg->params), .root = 0},
                .src = 0, .op = &pat->op, .ctx = &ctx, .measure = cfg->measure, .settle = app_settle,
                .settle_state = &settle};
            rc = lts_point_run(comm, &job, 1, cfg->on_point, cfg->ud);
        }
    if (pat->teardown) pat->teardown(&st);
    MPI_Comm_free(&st.comm);
    return rc;
}
