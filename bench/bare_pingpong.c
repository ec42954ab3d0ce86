#define _GNU_SOURCE
/* The reference loop for bench/p2p_overhead.py: a bare MPI_Send/MPI_Recv ping-pong between
 * ranks 0 and 1, each iteration timed with clock_gettime(CLOCK_MONOTONIC_RAW); prints the
 * median one-way latency (RTT/2) in seconds. Deliberately free of latscope code. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int iters = argc > 1 ? atoi(argv[1]) : 10000, bytes = argc > 2 ? atoi(argv[2]) : 8;
    if (P < 2 || iters < 1 || bytes < 0) {
        if (me == 0) fprintf(stderr, "usage: mpiexec -n 2 bare-pingpong ITERS BYTES\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)bytes + 1, 1);
    double *t = malloc(sizeof *t * (size_t)iters);
    for (int i = -100; i < iters; i++) {
        double t0 = now();
        if (me == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == 1) {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0) t[i] = (now() - t0) / 2;
    }
    if (me == 0) {
        qsort(t, (size_t)iters, sizeof *t, cmp);
        printf("%.12g\n", iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]));
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
