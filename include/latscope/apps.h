/* Application twins of the LoGPC §5 models: real MPI programs with the communication patterns the
 * models describe, timed by the one driver (lts_measure), each run verified.
 *
 *   remap  all-to-all remap (LoGPC §5.1): every rank sends `messages` messages of `bytes` bytes to
 *          random destinations (a table drawn from the seed, the same on every rank) or to
 *          (i + p) mod P with p = 1..P-1 cycling; synchronous (request-reply, §5.1.1) or
 *          asynchronous (all sends nonblocking, then wait, §5.1.2/§5.1.3).
 *   dag    Diamond-DAG wavefront (LoGPC §5.2, eq. (15)): an n x n grid, cell (i, j) a function of
 *          its north and west neighbours; each rank owns a horizontal stripe of rows, cut into
 *          `blocks` column blocks; the last row of each block goes to the next rank.
 *   null   no work (tests the registry).
 *
 * One repetition (the value the driver records) is the whole remap / the whole wavefront. The
 * received data are checked between repetitions (untimed); a mismatch makes lts_app_run return
 * LTS_APP_EVERIFY with a message naming the rank, the message or cell, and the values. */
#ifndef LATSCOPE_APPS_H
#define LATSCOPE_APPS_H
#include <mpi.h>
#include <stddef.h>
#include "latscope/bench.h"
#include "latscope/json.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A run's received data did not match what was sent / the serial computation. */
#define LTS_APP_EVERIFY (-100)

typedef enum { LTS_REMAP_RANDOM = 0, LTS_REMAP_SHIFT = 1 } lts_remap_dest_t;
typedef enum { LTS_REMAP_SYNC = 0, LTS_REMAP_ASYNC = 1 } lts_remap_style_t;

/* Limits (bad input beyond them). */
#define LTS_APP_MAX_MESSAGES 1000000
#define LTS_APP_MAX_VOLUME_BYTES ((size_t)64 << 20)  /* remap: messages x size per rank; dag: value bytes x n */
#define LTS_APP_MAX_GRID 4096                        /* dag: rank 0 holds the whole serial grid (8 n^2 bytes) */

typedef struct lts_app_params {
    /* remap (LoGPC §5.1) */
    int messages;            /* sent by each rank per repetition */
    int dest;                /* lts_remap_dest_t */
    int style;               /* lts_remap_style_t */
    /* dag (LoGPC §5.2) */
    int grid;                /* n: the grid is n x n tasks */
    double task_work_s;      /* requested time of one task (calibrated integer work) */
    unsigned long long seed; /* destinations (remap), payloads, boundary values (dag) */
    int corrupt_rank;        /* testing the verifier: this rank damages one received value; -1: none */
} lts_app_params_t;

/* One measured point of a run: what the record says beyond the timing. */
typedef struct lts_app_point {
    const char *pattern;     /* "remap", "dag", "null" */
    const char *variant;     /* remap: "sync"/"async"; dag: "stripe" */
    size_t bytes;            /* remap: message size; dag: bytes per boundary value */
    int blocks;              /* dag: b; 0 otherwise */
    size_t block_bytes_max;  /* dag: largest block message (value bytes x ceil(n/b)) */
    int recv_min, recv_max;  /* remap: messages received per rank per repetition (over ranks) */
    long task_rounds;        /* dag: integer-mix rounds per task */
    double task_s;           /* dag: measured time of one task (calibration on rank 0) */
    double rr_rtt_s;         /* sync remap, P > 1: the contention-free request-reply round trip measured
                                with the twin's own calls before the repetitions (LoGPC §5.1.1's
                                2 (o_s + L + o_r)); NAN otherwise */
    double rr_handler_s;     /* sync remap, P > 1: a request handler's cost (its receive completing in
                                MPI_Waitany, the next receive posted, the reply sent), LoPC's
                                C_r ~ o_r + o_s, measured alike; NAN otherwise */
} lts_app_point_t;

/* A pattern: its descriptor (timed by lts_measure) plus what the run around it needs. The row
 * starts with the descriptor, whose first members are name and help (a registry row). */
struct lts_app_run_state;
typedef struct lts_app_pattern {
    lts_op_desc_t op;
    const char *(*variant)(const lts_app_params_t *p);   /* the records' "alg": remap sync/async, dag stripe */
    /* Bad input for P ranks: 0, or LTS_EINVAL with a message naming the value and what is
     * allowed. Pure: every rank reaches the same verdict. */
    int (*check)(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks, size_t nblocks,
                 int P, char *msg, size_t len);
    /* Once per run, collective over the communicator (tables, calibration, serial reference). */
    int (*setup)(struct lts_app_run_state *st);
    void (*teardown)(struct lts_app_run_state *st);
    int uses_blocks;         /* takes --blocks */
} lts_app_pattern_t;

extern const lts_registry_t lts_app_registry;

typedef struct lts_app_cfg {
    const lts_app_pattern_t *pattern;
    lts_app_params_t params;
    const size_t *sizes;     /* remap: message sizes; dag: bytes per boundary value */
    size_t nsizes;
    const int *blocks;       /* dag: block counts b (one point per size x b); NULL for remap */
    size_t nblocks;
    lts_measure_cfg_t measure;
    lts_point_cb on_point;   /* on rank 0 of comm, for every point; pt->app: what the pattern saw */
    void *ud;
    char *errmsg;            /* on LTS_APP_EVERIFY: the first failure (rank 0); may be NULL */
    size_t errlen;
} lts_app_cfg_t;

/* Run every point of cfg (collective over comm). Returns 0, an LTS_ error, or LTS_APP_EVERIFY. */
int lts_app_run(MPI_Comm comm, const lts_app_cfg_t *cfg);

/* Extra members for the results records, defined in src/bench/results.c: fn is called inside
 * each metadata (is_meta = 1) and point (0) record just before it closes; NULL: none (the
 * default, so p2p and coll records are unchanged). The application twins record their
 * pattern's parameters this way. */
typedef void (*lts_results_extra_fn)(lts_json_t *j, int is_meta, void *ud);
void lts_results_set_extra(lts_results_extra_fn fn, void *ud);

/* dag: the last point's stripe computation time in seconds (measured before the point's
 * repetitions, outside the driver's timing): the slowest rank's, and the last rank's (which packs
 * nothing); eq. (15)'s W for that block count. -1 before any dag point. */
double lts_app_dag_stripe_compute_s(void);
double lts_app_dag_stripe_last_s(void);

#ifdef __cplusplus
}
#endif
#endif
