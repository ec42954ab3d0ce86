/* Assertion helper for the MPI test programs (algos-check, barrier-check, tune-check): every
 * failure is printed with its rank and a printf-style message and counted in `failures`; the
 * program decides how the ranks agree on the verdict. (check.h is the serial unit tests'.) */
#ifndef LTS_TEST_CHECK_MPI_H
#define LTS_TEST_CHECK_MPI_H
#include <stdio.h>

static int me, P, failures;   /* this rank, the ranks, failed checks on this rank */

#define CHECK(cond, ...)                                                 \
    do {                                                                 \
        if (!(cond)) {                                                   \
            failures++;                                                  \
            fprintf(stderr, "rank %d: %s:%d: ", me, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                \
            fputc('\n', stderr);                                         \
        }                                                                \
    } while (0)
#endif
