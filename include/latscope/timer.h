/* Timers chosen at run time by name (--timer wtime|monotonic|tsc). Each returns seconds since
 * the timer's own epoch as a double; resolution and per-call overhead are measured when opened. */
#ifndef LATSCOPE_TIMER_H
#define LATSCOPE_TIMER_H
#include <stdint.h>
#include "latscope/registry.h"
#ifdef __cplusplus
extern "C" {
#endif

struct lts_timer;

typedef struct lts_timer_desc {
    const char *name;
    const char *help;
    int (*init)(struct lts_timer *t);            /* calibrate; LTS_ENOTSUP if unavailable */
    double (*now)(const struct lts_timer *t);    /* seconds since t's epoch */
} lts_timer_desc_t;

typedef struct lts_timer {
    const lts_timer_desc_t *desc;
    double resolution_s;    /* smallest nonzero step seen between consecutive reads */
    double overhead_s;      /* median cost of one read */
    double ticks_per_s;     /* cycle counter frequency (tsc only; 0 otherwise) */
    uint64_t epoch_ticks;   /* tsc only */
    double epoch_s;         /* wtime / monotonic */
    /* Test hook (clock-sync tests): reported time = (1 + skew_drift) * t + skew_offset_s. */
    double skew_offset_s;
    double skew_drift;
} lts_timer_t;

/* The timer registry (read-only). */
extern const lts_registry_t lts_timer_registry;

/* Open a timer by name: calibrates it, then measures resolution and overhead. */
int lts_timer_open(const char *name, lts_timer_t *t);

static inline double lts_timer_now(const lts_timer_t *t) { return t->desc->now(t); }

/* Raw cycle counter access, shared by the tsc timer and the injector's busy-wait.
 * lts_cycles_available() is 0 on architectures without a usable counter. */
static inline uint64_t lts_cycles(void) {
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    /* lfence keeps earlier instructions from drifting past the read */
    __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#else
    return 0;
#endif
}
int lts_cycles_available(void);

/* Cycle-counter frequency, measured against CLOCK_MONOTONIC_RAW over ~calib_s seconds
 * (aarch64: the architected frequency register). */
int lts_cycles_calibrate(double calib_s, double *ticks_per_s);

#ifdef __cplusplus
}
#endif
#endif
