/* Small helpers shared by the library's own sources. Private: src/include/ is the library's
 * private include root, searched after include/ and never installed (docs/architecture.md,
 * "Headers"). */
#ifndef LATSCOPE_UTIL_H
#define LATSCOPE_UTIL_H
#include <mpi.h>
#include "latscope/errors.h"
#include "latscope/timer.h"

/* An MPI return code as a library one: library functions return LTS_* codes, never MPI's. */
static inline int lts_chk(int mpi_rc) { return mpi_rc == MPI_SUCCESS ? LTS_OK : LTS_EMPI; }

/* Busy-wait `seconds` on timer t (NULL: MPI_Wtime). A sleep would give the core away and come
 * back a scheduler tick late; the waits here (dummy work, test costs, a late arrival) are
 * microseconds. */
static inline void lts_spin(const lts_timer_t *t, double seconds) {
    if (seconds <= 0) return;
    double until = (t ? lts_timer_now(t) : MPI_Wtime()) + seconds;
    while ((t ? lts_timer_now(t) : MPI_Wtime()) < until) {
    }
}

/* qsort order of doubles (ascending; no NaN expected). */
static inline int lts_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
