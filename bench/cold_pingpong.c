/* The cold ping-pong of docs/trace.md "Parameters from the program's messages": OSU's blocking
 * round trip between ranks 0 and 1 (page-aligned buffers), each rank reading and writing SWEEP
 * bytes of its own memory (one byte per 64-byte line) before it sends, as a program's computation
 * between its messages does: MPI's queues and the buffers are then out of the caches. The hop is
 * half of (rank 0's round trip less rank 1's sweep, timed on rank 1 and sent to rank 0 at the
 * end); rank 0's sweep comes before its clock starts. Prints one JSON object: the hop's median,
 * p10 and p90 and the sweep's median, in seconds. Links MPI only (bench/standalone.h).
 * usage: mpiexec -n 2 cold-pingpong ITERS BYTES SWEEP_BYTES */
#include "standalone.h"
#include <stdio.h>
#include <string.h>

static volatile unsigned char sink;

/* one read-modify-write per cache line: the line is fetched and dirtied, so what the caches held
 * before (MPI's state among it) is evicted, as far as SWEEP reaches */
static void sweep(unsigned char *m, size_t n) {
    unsigned char s = 0;
    for (size_t i = 0; i < n; i += 64) {
        m[i]++;
        s ^= m[i];
    }
    sink ^= s;
}

int main(int argc, char **argv) {
    int me, P;
    lts_sa_init(&argc, &argv, &me, &P);
    int iters = lts_sa_arg(argc, argv, 1, 2000), bytes = lts_sa_arg(argc, argv, 2, 8);
    long sw = argc > 3 ? atol(argv[3]) : 1L << 20;
    if (P != 2 || iters < 10 || bytes < 0 || sw < 0) {
        if (me == 0)
            fprintf(stderr, "usage: mpiexec -n 2 cold-pingpong ITERS BYTES SWEEP_BYTES (ITERS >= 10; got %d ranks, "
                            "ITERS %d, BYTES %d, SWEEP %ld)\n", P, iters, bytes, sw);
        MPI_Finalize();
        return 2;
    }
    size_t bufsz = ((size_t)bytes + 4096) / 4096 * 4096;
    unsigned char *sb = aligned_alloc(4096, bufsz), *rb = aligned_alloc(4096, bufsz);
    unsigned char *m = sw ? malloc((size_t)sw) : NULL;
    double *t = malloc(sizeof *t * (size_t)iters), *s = malloc(sizeof *s * (size_t)iters);
    if (!sb || !rb || (sw && !m) || !t || !s) {
        fprintf(stderr, "cold-pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(sb, 1, bufsz);
    memset(rb, 1, bufsz);
    if (m) memset(m, 1, (size_t)sw);
    for (int i = -50; i < iters; i++) {   /* 50 untimed round trips first */
        if (me == 0) {
            if (m) sweep(m, (size_t)sw);
            double t0 = lts_sa_now(CLOCK_MONOTONIC_RAW);
            lts_sa_pingpong(me, sb, rb, bytes, 1);
            if (i >= 0) t[i] = lts_sa_now(CLOCK_MONOTONIC_RAW) - t0;
        } else {
            MPI_Recv(rb, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double s0 = lts_sa_now(CLOCK_MONOTONIC_RAW);
            if (m) sweep(m, (size_t)sw);
            if (i >= 0) s[i] = lts_sa_now(CLOCK_MONOTONIC_RAW) - s0;
            MPI_Send(sb, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (me == 1) {
        MPI_Send(s, iters, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    } else {
        MPI_Recv(s, iters, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < iters; i++) t[i] = (t[i] - s[i]) / 2;
        lts_sa_sort(t, (size_t)iters);
        printf("{\"bytes\": %d, \"sweep_bytes\": %ld, \"iters\": %d, \"hop_median_s\": %.6e, \"hop_p10_s\": %.6e, "
               "\"hop_p90_s\": %.6e, \"sweep_median_s\": %.6e}\n",
               bytes, sw, iters, lts_sa_median(t, (size_t)iters), t[iters / 10], t[iters * 9 / 10],
               lts_sa_median(s, (size_t)iters));
    }
    free(sb);
    free(rb);
    free(m);
    free(t);
    free(s);
    MPI_Finalize();
    return 0;
}
