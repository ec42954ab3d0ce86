/* lts_measure's state of one measurement, as the timing methods' hooks see it (private to
 * src/bench: driver.c runs the loop, timing.c holds the rows; bench.h describes the hooks). */
#ifndef LTS_BENCH_TIMING_H
#define LTS_BENCH_TIMING_H
#include "latscope/bench.h"

typedef struct lts_timing_run {
    const lts_op_desc_t *op;
    lts_op_ctx_t *ctx;
    const lts_measure_cfg_t *cfg;
    lts_measurement_t *out;
    int ncorr;          /* repetitions of a correction measurement */
    double corr;        /* correct: subtracted from every scaled sample (s) */
    double agreed;      /* the maximum over ranks of what `announce` gave at the last stop-sync */
    /* the methods' own */
    int confirmed;      /* root: completion confirmed by empty messages */
    double window;      /* global: lead time of each common start (s) */
    double late_s;      /* global: test hook, this rank reaches every common start this late */
    double *own;        /* local: this rank's kept times (freed by lts_measure) */
    size_t nown, capown;
} lts_timing_run_t;

#endif
