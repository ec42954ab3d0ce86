/* inject-overhead: what the injector adds to one MPI_Send, for bench/inject_overhead.py.
 * Rank 0 alternates MPI_Send (through whatever LD_PRELOAD put in front of the MPI library) and
 * PMPI_Send (the library itself, never wrapped) to rank 1, timing each call, so both kinds see
 * the same machine state, interleaved call by call. After each call it waits until SPACING ns
 * have passed since the call began: the receiver is always ready, so a delayed send does not
 * find an emptier queue than an undelayed one (without spacing, the delay would hide the cost
 * of back-pressure and the difference would come out below the delay).
 *   inject-overhead N SPACING_NS [SIZE]     (np >= 2; ranks above 1 only join Init/Finalize)
 * Rank 0 prints one JSON line: medians and minima of both kinds and the median of the per-pair
 * differences (wrapped - unwrapped), in ns. The minima are what a loaded core leaves alone (a
 * preemption only adds): the difference of the minima is the tests' measure of the delay. */
#include "standalone.h"
#include <stdio.h>

/* whole nanoseconds kept exact (lts_sa_now's seconds would round them away at this uptime) */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    int rank, size;
    lts_sa_init(&argc, &argv, &rank, &size);
    long n = argc > 1 ? atol(argv[1]) : 5000;
    double spacing = argc > 2 ? atof(argv[2]) : 3000;
    int bytes = lts_sa_arg(argc, argv, 3, 1);
    if (size < 2 || n < 10 || spacing < 0 || bytes < 0 || bytes > 1024) {
        if (rank == 0) fprintf(stderr, "usage: inject-overhead N>=10 SPACING_NS [SIZE<=1024] at np >= 2\n");
        MPI_Finalize();
        return 2;
    }
    char buf[1024] = {0};
    const long warm = 200;
    double *w = malloc(sizeof(double) * (size_t)n), *u = malloc(sizeof(double) * (size_t)n),
           *d = malloc(sizeof(double) * (size_t)n);
    if (rank == 0) {
        for (long i = -warm; i < n; i++) {
            double t0 = now_ns();
            MPI_Send(buf, bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
            double t1 = now_ns();
            while (now_ns() - t0 < spacing) {}
            double t2 = now_ns();
            PMPI_Send(buf, bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
            double t3 = now_ns();
            while (now_ns() - t2 < spacing) {}
            if (i >= 0) { w[i] = t1 - t0; u[i] = t3 - t2; d[i] = w[i] - u[i]; }
        }
        double mw = lts_sa_median(w, (size_t)n), mu = lts_sa_median(u, (size_t)n), md = lts_sa_median(d, (size_t)n);
        double minw = w[0], minu = u[0];
        for (long i = 1; i < n; i++) {
            if (w[i] < minw) minw = w[i];
            if (u[i] < minu) minu = u[i];
        }
        printf("{\"pairs\": %ld, \"spacing_ns\": %.0f, \"size_bytes\": %d, \"wrapped_median_ns\": %.2f, "
               "\"unwrapped_median_ns\": %.2f, \"diff_median_ns\": %.2f, \"wrapped_min_ns\": %.2f, "
               "\"unwrapped_min_ns\": %.2f}\n", n, spacing, bytes, mw, mu, md, minw, minu);
    } else if (rank == 1) {
        for (long i = 0; i < 2 * (n + warm); i++) MPI_Recv(buf, bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(w); free(u); free(d);
    MPI_Finalize();
    return 0;
}
