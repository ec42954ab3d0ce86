#include "latscope/timer.h"
#include "latscope/errors.h"
#include "latscope/util.h"
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono_raw(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double skewed(const lts_timer_t *t, double s) {
    return s + t->skew_drift * s + t->skew_offset_s;
}

/* --- wtime: MPI_Wtime ------------------------------------------------------------- */
static int wtime_init(lts_timer_t *t) { t->epoch_s = MPI_Wtime(); return LTS_OK; }
static double wtime_now(const lts_timer_t *t) { return skewed(t, MPI_Wtime() - t->epoch_s); }

/* --- monotonic: clock_gettime(CLOCK_MONOTONIC_RAW), immune to NTP slewing ---------- */
static int mono_init(lts_timer_t *t) { t->epoch_s = mono_raw(); return LTS_OK; }
static double mono_now(const lts_timer_t *t) { return skewed(t, mono_raw() - t->epoch_s); }

/* --- tsc: the cycle counter, calibrated against the monotonic clock ---------------- */
int lts_cycles_available(void) {
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

/* One reading of the monotonic clock placed on the counter's axis: the tightest of several
 * brackets (counter, clock, counter), its midpoint. A bracket is widened by a preemption, an
 * interrupt or a first call's page fault between its reads; the tightest of eight rarely is. */
typedef struct { double m; double mid; uint64_t width; } lts_bracket_t;
static lts_bracket_t tight_bracket(void) {
    lts_bracket_t best = {0, 0, UINT64_MAX};
    for (int i = 0; i < 8; i++) {
        uint64_t a = lts_cycles(); double m = mono_raw(); uint64_t b = lts_cycles();
        if (b - a < best.width) best = (lts_bracket_t){m, ((double)a + (double)b) / 2.0, b - a};
    }
    return best;
}

int lts_cycles_calibrate(double calib_s, double *ticks_per_s) {
    if (!lts_cycles_available()) return LTS_ENOTSUP;
#if defined(__aarch64__)
    uint64_t f;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
    if (f) { *ticks_per_s = (double)f; return LTS_OK; }
#endif
    /* The slope between two clock readings, each the tightest of eight brackets, so that neither
     * end is biased by a stretched bracket: with brackets of ~100 ticks the frequency is good to
     * ~1e-6 over 20 ms, where taking the first bracket of a cold call was off by 3e-5 (30 ns over
     * a 1 ms busy-wait, docs/delay-table.md "How the delay is timed"). The clock is warmed first
     * (the vDSO's first call faults its page in). On a busy machine a window can still be
     * preempted between its ends (harmless: the slope needs only the ends) or at an end: retry,
     * and keep the tightest pair seen. */
    for (int i = 0; i < 16; i++) (void)mono_raw();
    double best = -1.0;
    uint64_t best_width = UINT64_MAX;
    for (int attempt = 0; attempt < 50; attempt++) {
        lts_bracket_t a = tight_bracket();
        double end = a.m + calib_s;
        while (mono_raw() < end) {}
        lts_bracket_t b = tight_bracket();
        double f = (b.mid - a.mid) / (b.m - a.m);
        uint64_t width = a.width + b.width;
        if (f > 0 && width < best_width) { best = f; best_width = width; }
        if (width <= 2000) break;   /* both ends within ~0.5 us: an error below 3e-5 at 20 ms */
    }
    if (best <= 0) return LTS_ENOTSUP;
    *ticks_per_s = best;
    return LTS_OK;
}

static int tsc_init(lts_timer_t *t) {
    int rc = lts_cycles_calibrate(0.02, &t->ticks_per_s);
    if (rc) return rc;
    t->epoch_ticks = lts_cycles();
    return LTS_OK;
}
static double tsc_now(const lts_timer_t *t) {
    return skewed(t, (double)(lts_cycles() - t->epoch_ticks) / t->ticks_per_s);
}

/* --- null: always 0; exists to test the registry and the driver's overhead ---------- */
static int null_init(lts_timer_t *t) { (void)t; return LTS_OK; }
static double null_now(const lts_timer_t *t) { (void)t; return 0.0; }

static const lts_timer_desc_t timers[] = {
    {"wtime", "MPI_Wtime()", wtime_init, wtime_now},
    {"monotonic", "clock_gettime(CLOCK_MONOTONIC_RAW)", mono_init, mono_now},
    {"tsc", "cycle counter (rdtsc / cntvct) calibrated against CLOCK_MONOTONIC_RAW", tsc_init, tsc_now},
    {"null", "always 0 (tests only)", null_init, null_now},
};
_Static_assert(sizeof(timers) / sizeof(timers[0]) <= LTS_REGISTRY_MAX, "timer registry too large");
const lts_registry_t lts_timer_registry = LTS_REGISTRY("timer", timers);

int lts_timer_open(const char *name, lts_timer_t *t) {
    int idx = lts_reg_find(&lts_timer_registry, name);
    if (idx < 0) return LTS_ENOTFOUND;
    memset(t, 0, sizeof *t);
    t->desc = &timers[idx];
    int rc = t->desc->init(t);
    if (rc) return rc;
    /* Resolution: smallest positive step between consecutive reads. Overhead: median over
     * 31 batches of the mean cost of 200 back-to-back reads. */
    double res = 0;
    for (int i = 0; i < 20000; i++) {
        double a = lts_timer_now(t), b = lts_timer_now(t);
        double d = b - a;
        if (d > 0 && (res == 0 || d < res)) res = d;
    }
    double batch[31];
    for (int k = 0; k < 31; k++) {
        double a = lts_timer_now(t);
        for (int i = 0; i < 200; i++) (void)lts_timer_now(t);
        batch[k] = (lts_timer_now(t) - a) / 201.0;
    }
    qsort(batch, 31, sizeof batch[0], lts_cmp_double);
    t->resolution_s = res;
    t->overhead_s = batch[15];
    return LTS_OK;
}
