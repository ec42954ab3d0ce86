/* The results stream (docs/results-schema.md, schema "latscope.results/3"): JSON Lines, a
 * metadata record first, then one record per measured point, each flushed when complete. */
#ifndef LATSCOPE_RESULTS_H
#define LATSCOPE_RESULTS_H
#include <stdio.h>
#include "latscope/bench.h"
#include "latscope/json.h"
#include "latscope/version.h"   /* LTS_VERSION, generated from CMakeLists.txt */
#ifdef __cplusplus
extern "C" {
#endif

#define LTS_RESULTS_SCHEMA "latscope.results/3"

typedef struct lts_run_info {
    const char *tool;           /* "latscope-bench" */
    const char *bench;          /* "p2p" */
    const char *op;
    const char *mode;           /* "seq" / "par" */
    const char *timing;         /* "root" / "max" */
    const lts_timer_t *timer;
    const lts_rep_policy_t *policy;
    const char *sync;           /* the sync row the points use (auto resolved) */
    const char *sync_requested; /* --sync as given (NULL: same as sync) */
    unsigned long long seed;
    int argc;
    char **argv;
    const size_t *sizes;
    size_t nsizes;
    long reply_bytes;           /* < 0: same as the size */
    int window;
    const char *clock_sync;     /* global timing's method (NULL: "none", no sync) */
    double resync_s;            /* re-sync interval (<= 0: once) */
} lts_run_info_t;

/* Metadata record (collective over comm: gathers host names); written by rank 0 of comm. */
int lts_results_write_meta(FILE *f, MPI_Comm comm, const lts_run_info_t *info);

/* One point record. raw != 0 adds the samples. */
int lts_results_write_point(FILE *f, const lts_point_t *pt, const lts_run_info_t *info, int raw);

/* A clock-synchronisation record (type "clock_sync"): method, model, cost, residual error. */
struct lts_clocksync_info;
int lts_results_write_sync(FILE *f, const struct lts_clocksync_info *info);

#ifdef __cplusplus
}
#endif
#endif
