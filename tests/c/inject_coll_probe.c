/* inject-coll-probe: MPI_Bcast of 64 ints from rank 0, timed as the job sees it: after an
 * undelayed PMPI_Barrier each rank times its MPI_Bcast, and the iteration's time is the largest
 * over the ranks (PMPI_Allreduce MAX: the critical path's end, with the barrier's exit skew).
 * Every timed MPI_Bcast is followed by the same through PMPI_Bcast, which the injector does not
 * see: the baseline of the same launch. Contents checked. Rank 0 prints one JSON line:
 *   {"np", "iters", "bcast_max_median_us", "bcast_max_min_us", "base_bcast_max_median_us",
 *    "base_bcast_max_min_us", "bad"}
 * Then DUPS times: MPI_Comm_dup, an MPI_Bcast on the copy, MPI_Comm_free (in message mode each
 * copy gets a shadow communicator, which must be freed with it: MPICH has about 2,000 context ids).
 *   inject-coll-probe [iters [dups]]      (any np >= 1) */
#include "standalone.h"
#include <stdio.h>

#define PAY 64

int main(int argc, char **argv) {
    int rank, size;
    lts_sa_init(&argc, &argv, &rank, &size);
    int iters = lts_sa_arg(argc, argv, 1, 50), dups = lts_sa_arg(argc, argv, 2, 0);
    if (iters < 1 || dups < 0) {   /* every rank sees the same argv: the same verdict */
        if (rank == 0) fprintf(stderr, "inject-coll-probe: iters must be >= 1 and dups >= 0\n");
        MPI_Finalize();
        return 2;
    }
    double *t[2] = {malloc(sizeof(double) * (size_t)iters), malloc(sizeof(double) * (size_t)iters)};
    int bad = 0, buf[PAY];
    for (int i = -iters / 10 - 1; i < iters; i++)
        for (int b = 0; b < 2; b++) {
            int key = 2 * i + b + 1000;
            for (int k = 0; k < PAY; k++) buf[k] = rank == 0 ? key * 31 + k : -1;
            PMPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            b ? PMPI_Bcast(buf, PAY, MPI_INT, 0, MPI_COMM_WORLD) : MPI_Bcast(buf, PAY, MPI_INT, 0, MPI_COMM_WORLD);
            double d = MPI_Wtime() - t0, dmax = 0;
            for (int k = 0; k < PAY; k++) bad += buf[k] != key * 31 + k;
            PMPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (i >= 0) t[b][i] = dmax;
        }
    for (int i = 0; i < dups; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        buf[0] = rank == 0 ? i : -1;
        MPI_Bcast(buf, 1, MPI_INT, 0, c);
        bad += buf[0] != i;
        MPI_Comm_free(&c);
    }
    int all_bad = 0;
    PMPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int b = 0; b < 2; b++) lts_sa_sort(t[b], (size_t)iters);
        printf("{\"np\": %d, \"iters\": %d, \"bcast_max_median_us\": %.3f, \"bcast_max_min_us\": %.3f, "
               "\"base_bcast_max_median_us\": %.3f, \"base_bcast_max_min_us\": %.3f, \"bad\": %d}\n", size, iters,
               t[0][iters / 2] * 1e6, t[0][0] * 1e6, t[1][iters / 2] * 1e6, t[1][0] * 1e6, all_bad);
    }
    free(t[0]);
    free(t[1]);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
