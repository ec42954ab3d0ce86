/* Run-time selection of collective algorithms: MPIBlib's Opt_Scatter (seed 001 §4) as a library.
 *
 *   1. lts_tune() measures every candidate algorithm of one operation at every given size
 *      (lts_coll_run, the one driver) and keeps, per size, the eligible candidate with the
 *      smallest median (eligibility below, lts_tune_eligible). Adjacent sizes with the same
 *      winner merge into one range [lo, hi).
 *   2. The table is saved / loaded as JSON (schema "latscope.tune/1", docs/tune-format.md).
 *   3. lts_tune_use() installs a table; lts_scatter_tuned() (and the others) then compute the
 *      message size of the call, find its range by binary search and call that row: a drop-in
 *      replacement for the MPI call. Without an installed table they call the MPI library's own.
 *
 * Message size: the registry's convention (bench.h lts_coll_size_ok): bcast, reduce, allreduce:
 * count x type size; scatter, gather: the root's whole buffer (block x P); allgather: each
 * rank's whole result; alltoall: each rank's whole send buffer; barrier: 0.
 *
 * Ranges: between two measured sizes a < c whose winners differ, the boundary b is the
 * geometric midpoint rounded up: the smallest integer with b*b >= max(a,1)*c. Sizes below the
 * first measured size take the first winner (the first range starts at 0); sizes above the last
 * take the last winner (the last range is open: hi = LTS_TUNE_OPEN). Why geometric: sweeps are
 * geometric (x2, x4), so the midpoint in log size is the point equally far from both
 * measurements; an arithmetic midpoint would hand 3/4 of a x4 interval to the larger size. */
#ifndef LATSCOPE_TUNE_H
#define LATSCOPE_TUNE_H
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include "latscope/algos.h"
#include "latscope/bench.h"
#ifdef __cplusplus
extern "C" {
#endif

#define LTS_TUNE_SCHEMA "latscope.tune/1"
#define LTS_TUNE_OPEN ((size_t)-1)       /* hi of the last range: no upper bound */
#define LTS_TUNE_MAX_CANDIDATES 32

/* One measured size: the median of every candidate there (seconds; NaN = not measured), and why
 * a candidate was not ranked there (set_aside: NULL when every candidate was ranked; else ncand
 * entries, NULL for a ranked candidate, else a malloc'd reason). */
typedef struct lts_tune_point {
    size_t size_bytes;
    double *median_s;                     /* ncand entries, in the table's candidate order */
    char **set_aside;
} lts_tune_point_t;

/* What selection needs to know of one measured point (one candidate at one size): the record's
 * fields of the same names (docs/results-schema.md). NaN / 0 where unknown. */
typedef struct lts_tune_obs {
    double median_s;                      /* NaN: not measured */
    double ci_lo_s, ci_hi_s;              /* the record's confidence interval; NaN: undefined */
    double rel_err;                       /* achieved relative CI half-width; NaN: undefined */
    long reps_valid;                      /* repetitions kept */
    long reps_total;
    long negative;                        /* root timing: kept samples below zero */
    int stop_reason;                      /* lts_stop_reason_t (reps.h) */
} lts_tune_obs_t;

/* Eligibility (docs/tune-format.md "Which candidates are ranked"; python latscope.selection is
 * the same rule). A point is *valid* when its median is finite and > 0, the lower end of its CI
 * (where defined) is > 0, and reps_valid >= 1. A valid point is *converged* when stop_reason is
 * converged or fixed, or rel_err <= rel_err_target (max_reps / budget). A valid point that did
 * not converge is still ranked when its CI is disjoint from the CI of every other valid point at
 * that size (a point without a CI counts as its median). The winner is the ranked point with the
 * smallest median; ties go to the earlier candidate.
 * lts_tune_invalid: 0 when *o is valid, else 1 with the reason in why (may be NULL). */
int lts_tune_invalid(const lts_tune_obs_t *o, char *why, size_t len);
/* 1 when *o (valid) counts as converged for rel_err_target (NaN: only converged/fixed count). */
int lts_tune_converged(const lts_tune_obs_t *o, double rel_err_target);

/* Sizes in [lo, hi) use `alg`. points: the measured sizes inside the range (provenance). */
typedef struct lts_tune_range {
    size_t lo, hi;                        /* hi == LTS_TUNE_OPEN for the last range */
    const lts_coll_alg_t *alg;            /* a row of lts_coll_registry(op) */
    size_t npoints;
    lts_tune_point_t *points;
} lts_tune_range_t;

/* A decision table for one operation on communicators of `ranks` ranks. */
typedef struct lts_tune_table {
    lts_coll_op_t op;
    int ranks;
    size_t ncand;
    const lts_coll_alg_t **cand;          /* the candidates, in the order given */
    size_t nranges;
    lts_tune_range_t *ranges;             /* sorted, contiguous: ranges[0].lo == 0 */
    char timer[32];                       /* timer name ("monotonic") */
    char timing[32];                      /* timing method ("root", "max", ...) */
    char statistic[16];                   /* what was compared: "median" */
    char mpi_library[256];                /* first line of MPI_Get_library_version */
    char utc_time[32];                    /* when it was measured, "YYYY-MM-DDTHH:MM:SSZ" */
    char version[32];                     /* latscope version that measured it */
} lts_tune_table_t;

/* Optional settings of lts_tune_ex (zero-initialise; set fields by name). */
typedef struct lts_tune_opts {
    int root;                /* the root used while measuring (default 0) */
    lts_point_cb on_point;   /* also called (on rank 0 of comm) for every measured point */
    void *ud;
    char *msg;               /* rank 0: on LTS_ENOELIGIBLE, the size and every candidate's reason */
    size_t msglen;
} lts_tune_opts_t;

/* Collective over comm. Measures every candidate selected by alg_spec ("native,linear,binomial",
 * "all,-linear": the registry grammar) at every size (any order, duplicates dropped; each must
 * suit the operation on comm's size, e.g. scatter: multiples of P), with mcfg's timer, timing
 * and repetition policy, at root 0. Every rank gets the same table in *out (rank 0's measured
 * points are broadcast and every rank makes the same decision from them), to free with lts_tune_free. Returns 0, LTS_EINVAL (bad op/sizes/spec),
 * LTS_ENOTFOUND (unknown algorithm in alg_spec), LTS_ENOELIGIBLE (a size where no candidate is
 * eligible; opts->msg on rank 0 names it), an error of lts_coll_run, or LTS_EMPI when the ranks'
 * tables differ (a check: each rank decides from the same broadcast points); the same code on every
 * rank. Eligibility uses mcfg->policy.rel_err as the target and the records' statistics
 * (lts_summarize with the policy's confidence and stop rule). */
int lts_tune(MPI_Comm comm, lts_coll_op_t op, const char *alg_spec, const size_t *sizes, size_t n,
             const lts_measure_cfg_t *mcfg, lts_tune_table_t **out);
int lts_tune_ex(MPI_Comm comm, lts_coll_op_t op, const char *alg_spec, const size_t *sizes, size_t n,
                const lts_measure_cfg_t *mcfg, const lts_tune_opts_t *opts, lts_tune_table_t **out);

/* Build a table from measured points without MPI (what lts_tune does on rank 0):
 * obs[c * nsizes + s] is candidate c at sizes[s] (sizes strictly increasing), judged by the
 * eligibility rule above with rel_err_target. Candidates set aside are recorded in the points'
 * set_aside. mpi_library, utc_time, timer and timing are left for the caller (lts_tune fills
 * them). Returns 0, LTS_EINVAL, LTS_ERANGE, LTS_ENOMEM, or LTS_ENOELIGIBLE when no candidate is
 * eligible at some size, with msg naming the size and every candidate's reason. */
int lts_tune_decide_obs(lts_coll_op_t op, int ranks, const lts_coll_alg_t *const *cand, size_t ncand,
                        const size_t *sizes, size_t nsizes, const lts_tune_obs_t *obs, double rel_err_target,
                        lts_tune_table_t **out, char *msg, size_t msglen);
/* The same from medians alone (median_s[c * nsizes + s]): each counts as one converged point
 * without a CI, so only rule "finite and > 0" applies; LTS_ENOELIGIBLE as above. */
int lts_tune_decide(lts_coll_op_t op, int ranks, const lts_coll_alg_t *const *cand, size_t ncand,
                    const size_t *sizes, size_t nsizes, const double *median_s, lts_tune_table_t **out);

void lts_tune_free(lts_tune_table_t *t);

/* The row chosen for a message of `bytes` (binary search; no allocation). */
const lts_coll_alg_t *lts_tune_lookup(const lts_tune_table_t *t, size_t bytes);

/* JSON (docs/tune-format.md). Writing is deterministic: loading a saved table and saving it
 * again gives the same bytes. lts_tune_to_json: a malloc'd NUL-terminated text. */
int lts_tune_to_json(const lts_tune_table_t *t, char **text);
int lts_tune_write(const lts_tune_table_t *t, FILE *f);
int lts_tune_save(const lts_tune_table_t *t, const char *path);

/* Strict loading: a wrong schema, an unknown operation or algorithm (algorithms registered with
 * lts_coll_register must be registered before loading), ranges that do not start at 0, are not
 * sorted and contiguous, or a missing / unknown / mistyped field -> LTS_EINVAL with a message
 * naming the field and what is allowed (LTS_EIO: the file cannot be read). */
int lts_tune_parse(const char *text, size_t len, lts_tune_table_t **out, char *msg, size_t msglen);
int lts_tune_load(const char *path, lts_tune_table_t **out, char *msg, size_t msglen);

/* Install t (copied: the caller keeps and frees its own) for its operation on communicators of
 * t->ranks ranks, replacing a table installed before for the same operation and size; tables
 * for other sizes stay installed. comm is the communicator the caller means to use it on: if its
 * size is not t->ranks -> LTS_EINVAL with a message (a table measured on other P says nothing
 * about this one). MPI_COMM_NULL skips that check. Not thread-safe; install identically on every
 * rank (dispatch must agree across ranks). Returns 0, LTS_EINVAL, LTS_ERANGE (too many
 * installed), LTS_ENOMEM. */
int lts_tune_use(const lts_tune_table_t *t, MPI_Comm comm, char *msg, size_t msglen);
/* Remove the tables of op (LTS_COLL_NOPS: of every operation). */
void lts_tune_clear(lts_coll_op_t op);
/* The row the tuned call would use on a communicator of P ranks for `bytes`: the installed
 * table's choice, or the native row when none is installed for (op, P). */
const lts_coll_alg_t *lts_tune_choice(lts_coll_op_t op, int P, size_t bytes);

/* Tuned collectives: the MPI signatures; each calls the installed table's choice for the
 * message size (see above), else the MPI library's own. Return MPI error codes. */
int lts_barrier_tuned(MPI_Comm comm);
int lts_bcast_tuned(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int lts_reduce_tuned(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm);
int lts_allreduce_tuned(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int lts_scatter_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                      int root, MPI_Comm comm);
int lts_gather_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int root, MPI_Comm comm);
int lts_allgather_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        MPI_Comm comm);
int lts_alltoall_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif
