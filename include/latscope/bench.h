/* THE measurement driver and the operation descriptors. Every benchmark is an operation
 * descriptor timed by lts_measure():  init -> warm-up -> sync -> {t0; op; t1; stop-sync (one
 * allreduce: isolation + agreed stop decision + max over ranks)} -> statistics. */
#ifndef LATSCOPE_BENCH_H
#define LATSCOPE_BENCH_H
#include <mpi.h>
#include <stddef.h>
#include "latscope/registry.h"
#include "latscope/reps.h"
#include "latscope/timer.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct lts_op_ctx {
    MPI_Comm comm;        /* the group's communicator: a pair, a triplet, or all ranks */
    int rank, size;       /* in comm; rank 0 is the initiator / root */
    size_t bytes;         /* message size of this point */
    size_t reply_bytes;   /* reply size (roundtrip, point-to-two) */
    int window;           /* messages in flight (bandwidth) */
    void *sbuf, *rbuf;    /* allocated by the caller: see lts_op_bufsize() */
    void *state;          /* the operation's own */
    int root;             /* collectives: the root in comm */
    const struct lts_coll_alg *alg;  /* collectives: the implementation to time (algos.h) */
    MPI_Request req;      /* a receive posted by the op's prepare() */
} lts_op_ctx_t;

typedef struct lts_op_desc {
    const char *name;
    const char *help;
    int group_size;        /* ranks per experiment: 2 pair, 3 triplet, 1 a single rank, 0 all of comm */
    int windowed;          /* rbuf holds `window` messages */
    double scale;          /* reported value = scale * elapsed (ping-pong: RTT/2) */
    const char *metric;    /* what the value is: "latency", "rtt", "time" */
    int (*init)(lts_op_ctx_t *ctx);   /* may be NULL */
    int (*run)(lts_op_ctx_t *ctx);    /* one repetition; returns 0 or an LTS_ error */
    void (*fini)(lts_op_ctx_t *ctx);  /* may be NULL */
    /* Optional: post the next repetition's receives before the stop-sync (untimed), so an
     * isolated repetition meets a posted receive as a back-to-back loop does; cancel drops the
     * last, unused one. */
    int (*prepare)(lts_op_ctx_t *ctx);
    void (*cancel)(lts_op_ctx_t *ctx);
    /* 1: one repetition is a round trip that isolates itself: the initiator's clock stops only
     * after every other rank of the group has done its last step (the reply, the ack), so the
     * next repetition cannot overlap this one and --sync auto runs them back to back
     * (docs/measurement.md "Isolation"). */
    int self_isolating;
} lts_op_desc_t;

extern const lts_registry_t lts_p2p_registry;

/* A message buffer for a measurement: `bytes` (at least 1) zeroed bytes on a page boundary,
 * freed with free(); NULL when out of memory. Page alignment makes the offset between a
 * sender's and a receiver's buffer (mod 4096) the same in every launch; left to malloc it varies
 * with what each rank allocated before, and on AMD Zen a single-copy transfer whose
 * destination - source is 16 mod 4096 runs 4x slower at 64 KiB (docs/measurement.md "Buffers"). */
void *lts_buffer_alloc(size_t bytes);

/* Bytes each of sbuf and rbuf must hold for the largest point. */
size_t lts_op_bufsize(const lts_op_desc_t *op, size_t max_bytes, size_t max_reply, int window);

/* How repetitions are separated (a registry: --sync NAME). */
typedef struct lts_sync_desc {
    const char *name;
    const char *help;
    int per_rep;   /* 1: a synchronising allreduce after every repetition; 0: back to back in blocks;
                      -1 (auto): 0 for a self-isolating operation measured one group at a time, else 1 */
} lts_sync_desc_t;
extern const lts_registry_t lts_sync_registry;

/* The row `s` stands for when measuring `op`: auto resolves to none for a self-isolating
 * operation and to barrier otherwise, and to barrier whenever `concurrent` (groups measured in
 * parallel must start their repetitions together) or `needs_per_rep` (global timing). Rows
 * other than auto are returned as they are. */
const lts_sync_desc_t *lts_sync_resolve(const lts_sync_desc_t *s, const lts_op_desc_t *op, int concurrent,
                                        int needs_per_rep);

/* Timing methods (a registry: --timing NAME; MPIBlib §2.1, IMB for `local`).
 *   root        the initiator's / root's clock; for collectives every other rank confirms its
 *               completion with an empty message and the median confirmation time, measured
 *               alone, is subtracted (results may be negative: reported, never clamped)
 *   max         the maximum over ranks of local times after a synchronised start
 *   global      start at a common future instant on synchronised clocks (cfg.clock); the time is
 *               the latest finish on the global clock minus that instant; a rank that reaches the
 *               start after the instant makes the repetition invalid (counted, not kept)
 *   local       each rank's own times (IMB): per-rank min/avg/max reported; samples are the max
 *   individual  collective algorithms whose root -> rank i tasks can be told apart (rows with
 *               LTS_ALG_TASKS: bcast/scatter, linear and binomial): each task acknowledged by
 *               rank i and corrected by the one-way time of the empty ack
 * A method is one row of lts_timing_registry (src/bench/timing.c): what it needs (data) and what
 * it does at each step of lts_measure's repetition (hooks), so lts_measure has no branch per
 * method (docs/architecture.md "Timing methods"). Row i is lts_timing_t i. */
typedef enum {
    LTS_TIMING_ROOT = 0,
    LTS_TIMING_MAX = 1,
    LTS_TIMING_GLOBAL = 2,
    LTS_TIMING_LOCAL = 3,
    LTS_TIMING_INDIVIDUAL = 4,
    LTS_TIMING_N
} lts_timing_t;

struct lts_measure_cfg;
struct lts_measurement;
struct lts_timing_run;   /* lts_measure's state of one measurement, as the hooks see it (private) */
struct lts_coll_alg;

/* How one point is measured: lts_measure, or a timing method's own sequence of lts_measure calls. */
typedef int (*lts_measure_fn)(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const struct lts_measure_cfg *cfg,
                              struct lts_measurement *out);

typedef struct lts_timing_desc {
    const char *name;
    const char *help;
    /* what the method needs */
    int needs_clock;      /* times on the synchronised clock cfg.clock, with isolated repetitions:
                           * lts_measure refuses to run without both; lts_coll_run synchronises first */
    int sync_start;       /* every repetition starts together: --sync auto isolates repetitions */
    int every_rank;       /* every rank's time enters the maximum (else group rank 0's alone) */
    int per_target;       /* one measurement per target rank 1..P-1 (cfg.target; needs 2 ranks) */
    unsigned alg_flags;   /* collectives: only algorithm rows carrying these LTS_ALG_* flags */
    /* what it does; each may be NULL (nothing to do) */
    void (*correct)(struct lts_timing_run *r);      /* after warm-up, collective: what is subtracted */
    double (*start)(struct lts_timing_run *r, int *late);   /* t0 (NULL: the timer); *late = 1 spoils it */
    int (*stop)(struct lts_timing_run *r);          /* after the operation, inside the timed span */
    double (*announce)(struct lts_timing_run *r);   /* rides the stop-sync; every rank gets the max */
    void (*keep)(struct lts_timing_run *r, double x);   /* a kept repetition: this rank's own time */
    int (*report)(struct lts_timing_run *r);        /* after the last repetition, collective */
    lts_measure_fn measure;   /* the whole point (NULL: lts_measure once) */
} lts_timing_desc_t;
extern const lts_registry_t lts_timing_registry;

/* The row of a timing method (NULL when out of range). */
const lts_timing_desc_t *lts_timing_row(lts_timing_t t);

/* 1 if timing method t applies to collective algorithm `alg` (NULL: a point-to-point operation)
 * on P ranks: the algorithm carries the method's alg_flags, and a per-target method has a target. */
int lts_timing_applies(const lts_timing_desc_t *t, const struct lts_coll_alg *alg, int P);

struct lts_clock;

typedef struct lts_measure_cfg {
    const lts_timer_t *timer;
    lts_rep_policy_t policy;
    const lts_sync_desc_t *sync;
    lts_timing_t timing;
    const struct lts_clock *clock;  /* global timing: the synchronised clock (clocksync.h) */
    double start_window_s;          /* global timing: lead time of the common start (<= 0: automatic) */
    double dummy_work_s;            /* busy-wait after each repetition, untimed (seed 002 §4.3) */
    int target;                     /* individual timing: the rank whose task is timed */
    double ack_s;                   /* individual timing: one-way time of the empty ack (subtracted) */
} lts_measure_cfg_t;

/* What one measured point produced. samples are valid on group rank 0 only. */
typedef struct lts_measurement {
    double *samples;        /* scaled values, seconds; owned: free with lts_measurement_free */
    size_t n;
    long reps_total;        /* repetitions run (valid + rejected) */
    long reps_invalid;      /* global timing: repetitions a rank started late (not kept) */
    long negative;          /* root timing: kept samples below zero after the correction */
    int stop_reason;        /* lts_stop_reason_t */
    double rel_err;         /* achieved relative CI half-width at the last check (NaN if none) */
    double wall_s;          /* wall time of the whole point, warm-up included */
    double confirm_s;       /* root timing of a collective: the subtracted confirmation time (else NaN) */
    double window_s;        /* global timing: the start window used (else NaN) */
    double *local;          /* local timing, rank 0: 4 per rank (min, avg, max, median); else NULL */
    int nlocal;             /* ranks in local */
    const char *sync;       /* the sync row used (auto resolved) */
    long discarded;         /* timed repetitions dropped as warm-up by the stationarity check (reps.h) */
    int stationary;         /* 1: the kept samples passed the stationarity check; 0: not (or never checked) */
    double *tasks;          /* individual timing: per rank of the communicator, its task's median (root: NaN) */
    int ntasks;             /* entries of tasks (0: none) */
} lts_measurement_t;

/* Every scalar of a measurement as LTS_MEASUREMENT_NSCALARS doubles, to move it between ranks
 * (the samples and per-rank arrays travel separately); unpack leaves those pointers NULL. */
#define LTS_MEASUREMENT_NSCALARS 14
void lts_measurement_pack(const lts_measurement_t *m, double *h);
void lts_measurement_unpack(const double *h, lts_measurement_t *m);

/* Time `op` on ctx->comm (collective over it). */
int lts_measure(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const lts_measure_cfg_t *cfg, lts_measurement_t *out);
void lts_measurement_free(lts_measurement_t *m);

/* ---- point-to-point campaigns over pairs or triplets ------------------------------------ */

typedef enum { LTS_MODE_SEQ = 0, LTS_MODE_PAR = 1 } lts_p2p_mode_t;

typedef struct lts_point {
    const char *op;
    const int *group;       /* world ranks of the experiment, initiator first */
    int group_size;
    int round;
    size_t bytes, reply_bytes;
    int window;
    const lts_measurement_t *m;
    const char *alg;        /* collectives: the algorithm (NULL for p2p) */
    int root;               /* collectives: world rank of the root */
    const char *timing;     /* the timing method's name */
    const struct lts_app_point *app;   /* application patterns: what the pattern saw (apps.h); else NULL */
} lts_point_t;

typedef void (*lts_point_cb)(void *ud, const lts_point_t *pt);

/* ---- the one point runner (src/bench/point.c) ------------------------------------------- */

/* One point: what is measured (the campaign says), who measures it, where its result lives. */
typedef struct lts_point_job {
    lts_point_t pt;            /* the point as rank 0 reports it; the runner sets pt.m */
    int src;                   /* rank in the runner's comm that holds the result (the group's rank 0) */
    /* on the ranks that measure this job (the others: ctx NULL) */
    const lts_op_desc_t *op;
    lts_op_ctx_t *ctx;
    lts_measure_cfg_t measure;
    lts_measure_fn fn;         /* NULL: the timing method's measure, else lts_measure */
    /* optional, on the measuring ranks, collective over ctx->comm, after measuring: checks the
     * outcome (e.g. an application's verification) and fills what pt refers to; returns rc */
    int (*settle)(struct lts_point_job *job, int rc);
    void *settle_state;        /* settle's own */
} lts_point_job_t;

/* Measure, move, emit. Each rank measures the job it takes part in (at most one: the jobs of a
 * call are measured side by side), then every job's measurement moves whole -- each scalar, the
 * samples, the per-rank statistics, the individual tasks -- from its src to rank 0 of comm,
 * which calls emit(ud, &job->pt) for each, in the order given; a job that failed is not
 * emitted. Collective over comm; returns the lowest rc of any rank (0: all points emitted). */
int lts_point_run(MPI_Comm comm, lts_point_job_t *jobs, size_t njobs, lts_point_cb emit, void *ud);

typedef struct lts_p2p_cfg {
    const lts_op_desc_t *op;
    lts_p2p_mode_t mode;
    const int *groups;      /* ngroups x op->group_size world ranks, row-major */
    size_t ngroups;
    const size_t *sizes;
    size_t nsizes;
    long reply_bytes;       /* < 0: same as the message size */
    int window;
    lts_measure_cfg_t measure;
    lts_point_cb on_point;  /* called on rank 0 of comm for every point, in completion order */
    void *ud;
} lts_p2p_cfg_t;

/* Run a campaign (collective over comm). Groups are scheduled one at a time (seq: others wait
 * in a barrier) or in rounds of disjoint groups (par). */
int lts_p2p_run(MPI_Comm comm, const lts_p2p_cfg_t *cfg);

/* All pairs i<j in tournament order (rounds of disjoint pairs); caller frees *out. */
int lts_all_pairs(int P, int **out, size_t *npairs);
/* All triplets (i; j<k), i not in {j,k}; caller frees *out. */
int lts_all_triplets(int P, int **out, size_t *n);

/* ---- collectives over the whole communicator ------------------------------------------ */

struct lts_coll_alg;
/* One descriptor per collective operation; row i is lts_coll_op_t i (algos.h). group_size 0:
 * all ranks of the communicator. */
extern const lts_registry_t lts_coll_op_registry;

/* Size convention: bcast, reduce, allreduce: size = the message (each rank's vector);
 * scatter, gather: the root's whole buffer, block size/P per rank; allgather: each rank's
 * whole result; alltoall: each rank's whole send buffer. Returns 1 if `bytes` is valid for op
 * on P ranks (those split into P blocks need bytes % P == 0). */
int lts_coll_size_ok(int op, size_t bytes, int P);

struct lts_clocksync_opts;
struct lts_clocksync_info;

typedef struct lts_coll_cfg {
    int op;                                  /* lts_coll_op_t */
    const struct lts_coll_alg *const *algs;  /* nalgs rows of lts_coll_registry(op) */
    size_t nalgs;
    int root;                                /* rank in comm */
    const size_t *sizes;
    size_t nsizes;
    lts_measure_cfg_t measure;               /* measure.timing: the method when `timings` is 0 */
    lts_point_cb on_point;                   /* called on the root for every point */
    void *ud;
    unsigned timings;        /* bit (1 << lts_timing_t) per method to run at every point; 0: measure.timing.
                              * A method is run only where lts_timing_applies() says */
    const char *clock_sync;  /* global timing: method of lts_clocksync_registry (NULL: "hca") */
    const struct lts_clocksync_opts *sync_opts;   /* NULL: defaults */
    double resync_s;         /* re-synchronise before a point when the last sync is older (<= 0: once) */
    void (*on_sync)(void *ud, const struct lts_clocksync_info *info);   /* rank 0, after every sync */
} lts_coll_cfg_t;

/* Time every (algorithm, size, timing method) with lts_measure on all of comm (collective over
 * comm). The communicator is renumbered so that `root` is rank 0: root timing is on the
 * collective's root (for rootless operations, on rank `root`). Points are reported by rank 0 of
 * comm. Returns LTS_ERANGE when a given start window is shorter than twice the clock
 * synchronisation's residual error, LTS_ENODATA when a point had no valid repetition. */
int lts_coll_run(MPI_Comm comm, const lts_coll_cfg_t *cfg);

#ifdef __cplusplus
}
#endif
#endif
