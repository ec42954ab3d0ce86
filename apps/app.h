/* What every latscope program does with bad input (docs/architecture.md "C: one driver,
 * descriptors and registries"): each rank parses the same arguments, the first error is the one
 * kept (fail), every rank learns the verdict, rank 0 prints it, all exit EXIT_USAGE. */
#ifndef LATSCOPE_APPS_APP_H
#define LATSCOPE_APPS_APP_H
#include <stdarg.h>
#include <stdio.h>

#define EXIT_USAGE 2

typedef struct app {
    int me, P;
    char err[1024];
    int have_err;
} app_t;

static inline void fail(app_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void fail(app_t *a, const char *fmt, ...) {
    if (a->have_err) return;   /* the first error is the one reported */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->err, sizeof a->err, fmt, ap);
    va_end(ap);
    a->have_err = 1;
}

#endif
