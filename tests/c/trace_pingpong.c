/* trace-pingpong: the program `latscope trace` is tested with and bench/sim_vs_real.py compares
 * against its simulation (docs/trace.md). Ranks 0 and 1 exchange ITERS messages of SIZE bytes,
 * with WORK_NS of computation on each side per round trip; mode "blocking" uses MPI_Send/Recv,
 * "nonblocking" MPI_Irecv/Isend/Waitall (both sides post the receive first), "allreduce" adds an
 * MPI_Allreduce of one double per round trip on every rank. Other ranks only join the
 * collectives. Rank 0 prints one JSON line: the loop's time between two barriers (seconds), and
 * the median time of an iteration on its clock (from one iteration's end to the next's; a shared
 * machine's stalls, which a replay cannot know, move a median little).
 *
 *   trace-pingpong [ITERS [SIZE [WORK_NS [blocking|nonblocking|allreduce]]]]
 *
 * Bad arguments: one line on rank 0, exit 2 on every rank (each rank parses the same argv). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* computation: spin on the clock, so the trace sees a gap of a known length */
static void work(double s) {
    if (s <= 0) return;
    double t0 = now();
    while (now() - t0 < s) {
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    long bytes = argc > 2 ? strtol(argv[2], NULL, 10) : 8;
    long work_ns = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    const char *mode = argc > 4 ? argv[4] : "blocking";
    int nb = !strcmp(mode, "nonblocking"), ar = !strcmp(mode, "allreduce");
    if (iters < 1 || bytes < 0 || bytes > (1 << 26) || work_ns < 0 || (!nb && !ar && strcmp(mode, "blocking"))) {
        if (rank == 0)
            fprintf(stderr, "trace-pingpong: error: ITERS >= 1, 0 <= SIZE <= 2^26, WORK_NS >= 0, mode blocking, "
                            "nonblocking or allreduce (got %s %s %s %s)\n", argc > 1 ? argv[1] : "-",
                    argc > 2 ? argv[2] : "-", argc > 3 ? argv[3] : "-", mode);
        MPI_Finalize();
        return 2;
    }
    char *sb = calloc((size_t)bytes + 1, 1), *rb = calloc((size_t)bytes + 1, 1);
    int peer = rank == 0 ? 1 : 0, active = size >= 2 && rank < 2;
    double w = work_ns * 1e-9, x = 1, y = 0;
    double *ends = calloc((size_t)iters + 1, sizeof *ends);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    ends[0] = t0;
    for (long i = 0; i < iters; i++) {
        if (active && nb) {
            MPI_Request r[2];
            MPI_Irecv(rb, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[0]);
            if (rank == 1) MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            work(w);
            MPI_Isend(sb, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[1]);
            if (rank == 0) MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            else MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        } else if (active && rank == 0) {
            work(w);
            MPI_Send(sb, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rb, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (active) {
            MPI_Recv(rb, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            work(w);
            MPI_Send(sb, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        if (ar) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ends[i + 1] = MPI_Wtime();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    for (long i = 0; i < iters; i++) ends[i] = ends[i + 1] - ends[i];
    qsort(ends, (size_t)iters, sizeof *ends, cmp);
    double med = iters % 2 ? ends[iters / 2] : 0.5 * (ends[iters / 2 - 1] + ends[iters / 2]);
    if (rank == 0)
        printf("{\"program\": \"trace-pingpong\", \"mode\": \"%s\", \"ranks\": %d, \"iters\": %ld, \"bytes\": %ld, "
               "\"work_ns\": %ld, \"loop_s\": %.9g, \"iter_median_s\": %.9g}\n", mode, size, iters, bytes, work_ns,
               t, med);
    free(ends);
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
