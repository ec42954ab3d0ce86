#ifndef _GNU_SOURCE   /* also given by the build (lts_program) */
#define _GNU_SOURCE
#endif
/* The reference loop for bench/p2p_overhead.py: a bare MPI_Send/MPI_Recv ping-pong between
 * ranks 0 and 1, each iteration timed with clock_gettime(CLOCK_MONOTONIC_RAW); prints the
 * median one-way latency (RTT/2) in seconds. Deliberately free of latscope code. */
#include "standalone.h"
#include <stdio.h>

int main(int argc, char **argv) {
    int me, P;
    lts_sa_init(&argc, &argv, &me, &P);
    int iters = lts_sa_arg(argc, argv, 1, 10000), bytes = lts_sa_arg(argc, argv, 2, 8);
    if (P < 2 || iters < 1 || bytes < 0) {
        if (me == 0) fprintf(stderr, "usage: mpiexec -n 2 bare-pingpong ITERS BYTES\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)bytes + 1, 1);
    double *t = malloc(sizeof *t * (size_t)iters);
    for (int i = -100; i < iters; i++) {
        double t0 = lts_sa_now(CLOCK_MONOTONIC_RAW);
        lts_sa_pingpong(me, buf, buf, bytes, 0);
        if (i >= 0) t[i] = (lts_sa_now(CLOCK_MONOTONIC_RAW) - t0) / 2;
    }
    if (me == 0) printf("%.12g\n", lts_sa_median(t, (size_t)iters));
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
