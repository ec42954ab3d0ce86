/* Assertion helper for the MPI test programs (algos-check, barrier-check, tune-check): every
 * failure is printed with its rank and a printf-style message and counted in `failures`; the
 * ranks agree on the verdict with check_mpi_finish, or as the program decides (tune-check).
 * (check.h is the serial unit tests'.) */
#ifndef LTS_TEST_CHECK_MPI_H
#define LTS_TEST_CHECK_MPI_H
#include <mpi.h>
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

/* The end of a check program: the failures of every rank summed, "PROG: N failure(s)" on
 * standard error or "ok" on standard output (rank 0), MPI_Finalize; exit status 1 or 0. */
static inline int check_mpi_finish(const char *prog) {
    int any = 0;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        if (any) fprintf(stderr, "%s: %d failure(s)\n", prog, any);
        else printf("ok\n");
    }
    MPI_Finalize();
    return any ? 1 : 0;
}
#endif
