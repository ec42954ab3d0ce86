/* The application twins' private parts (src/bench/ops_apps.c: the registry and the run;
 * app_remap.c: LoGPC §5.1's all-to-all remap; app_dag.c: §5.2's Diamond DAG): the per-run state
 * every pattern shares, the verification message, the mixing function, and the patterns' hooks
 * that the registry rows name. */
#ifndef LATSCOPE_APPS_INTERNAL_H
#define LATSCOPE_APPS_INTERNAL_H
#include "latscope/apps.h"
#include "latscope/timer.h"
#include <stdint.h>

enum { TAG_REQ = 0x4150, TAG_REP = 0x4151, TAG_DAG = 0x4152, TAG_RR_REQ = 0x4153, TAG_RR_REP = 0x4154 };
#define POISON 0xEE

typedef struct lts_app_run_state {
    MPI_Comm comm;                 /* a duplicate: the pattern's messages never meet the driver's */
    int me, P;
    const lts_app_params_t *p;
    const lts_timer_t *timer;
    size_t bytes;                  /* the current point: message size / bytes per boundary value */
    int blocks;
    /* remap: destination table (P rows of `messages`, row = source), the same on every rank */
    int *dest;
    int nin;                       /* messages this rank receives per repetition */
    int *in_src, *in_seq;          /* who sends each of them, ordered by (source, seq) */
    int nsrc;                      /* ranks that send to this one; their slots: */
    int *src_rank, *src_off, *src_cnt, *src_done;   /* in_src[src_off[q] .. + src_cnt[q]) == src_rank[q] */
    int recv_min, recv_max;
    double rr_rtt_s;               /* sync remap: the contention-free request-reply round trip (NAN: none) */
    double rr_handler_s;           /* sync remap: a request handler's cost, o_r + o_s (NAN: none) */
    unsigned char *sbuf, *rbuf, *pbuf;   /* requests sent, requests received, replies received */
    MPI_Request *req, *sreq;
    MPI_Status *in_st, *rep_st;
    /* dag */
    long rounds;
    double task_s;
    int row0, nrows;
    uint64_t *ref;                 /* this rank's stripe of the serial grid, computed on rank 0 */
    uint64_t *grid;
    unsigned char *dag_in, *dag_out;
    size_t slot;                   /* bytes of one block message slot */
    /* verification */
    int pending;                   /* a repetition ran and has not been checked */
    int failed;
    char msg[400];
} lts_app_run_state_t;


/* The first mismatch of a run, with this rank's number (reported by rank 0 after agreement). */
void lts_app_fail_verify(lts_app_run_state_t *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* splitmix64's finaliser: payload words, destinations and boundary values all derive from it. */
static inline uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The hooks a pattern's own file app_<name>.c defines, all named lts_app_<name>_<hook>: the
 * lts_app_pattern_t members and the descriptor's init/run/fini/prepare. Its registry row in
 * ops_apps.c (LTS_APP_PATTERN_ROW) names the same set, so the two cannot drift apart. */
#define LTS_APP_PATTERN_HOOKS(name)                                                                                    \
    const char *lts_app_##name##_variant(const lts_app_params_t *p);                                                   \
    int lts_app_##name##_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks,      \
                               size_t nblocks, int P, char *msg, size_t len);                                          \
    int lts_app_##name##_setup(lts_app_run_state_t *st);                                                               \
    void lts_app_##name##_teardown(lts_app_run_state_t *st);                                                           \
    int lts_app_##name##_init(lts_op_ctx_t *c);                                                                        \
    int lts_app_##name##_run(lts_op_ctx_t *c);                                                                         \
    void lts_app_##name##_fini(lts_op_ctx_t *c);                                                                       \
    int lts_app_##name##_prepare(lts_op_ctx_t *c);

LTS_APP_PATTERN_HOOKS(remap)   /* app_remap.c */
LTS_APP_PATTERN_HOOKS(dag)     /* app_dag.c */

#endif
