/* When does a blocking receive return? (docs/barriers.md "Blocking waits".) Rank 0 enters
 * MPI_Recv at t0; rank 1 sends a 0-byte message d after t0 (d = 0, 0.25, ... 4 us), synchronised
 * through a flag in an MPI-3 shared window and timed on CLOCK_MONOTONIC, one clock for both
 * processes of one host. Prints the median of (return - t0) per d over 600 repetitions, each after
 * 30 us of work as in seed 002's barrier loop (§4.3). With the argument "poll" rank 0 polls
 * (MPI_Iprobe until seen, then MPI_Recv) instead. MPICH here: the blocking receive returns on a
 * grid (1.48, 2.13, 2.77, ... us: a step per sched_yield), the polling one ~0.4 us after the send.
 * Usage: mpiexec -n 2 build/bin/blocking-wait [recv|poll]; exit 2 on bad input. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 600
#define WORK_S 30e-6

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static void spin(double s) {
    for (double e = now() + s; now() < e;) {}
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *mode = argc > 1 ? argv[1] : "recv";
    /* every rank sees the same argv and the same node size: all agree on bad input */
    if (strcmp(mode, "recv") && strcmp(mode, "poll")) {
        if (me == 0) fprintf(stderr, "blocking-wait: mode '%s': unknown; valid: recv, poll\n", mode);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (world != 2 || n != 2) {
        if (me == 0) fprintf(stderr, "blocking-wait: needs 2 ranks on one node (got %d ranks, %d on this node)\n", world, n);
        MPI_Comm_free(&node);
        MPI_Finalize();
        return 2;
    }
    int poll = !strcmp(mode, "poll");
    MPI_Win win;
    void *base;
    MPI_Aint sz;
    int du;
    MPI_Win_allocate_shared(me == 0 ? 256 : 0, 1, MPI_INFO_NULL, node, &base, &win);
    MPI_Win_shared_query(win, 0, &sz, &du, &base);
    /* rank 0's mapping decides the aligned line (each process maps the segment at its own address) */
    int off = (int)((64 - ((uintptr_t)base & 63)) & 63);
    MPI_Bcast(&off, 1, MPI_INT, 0, node);
    volatile uint64_t *go = (volatile uint64_t *)((char *)base + off);
    volatile double *t0p = (volatile double *)(go + 8);   /* next 64-byte line */
    if (me == 0) *go = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    static double res[REPS];
    uint64_t seq = 0;
    for (int k = 0; k <= 16; k++) {
        double d = k * 0.25e-6;
        for (int i = 0; i < REPS; i++) {
            seq++;
            if (me == 0) {
                spin(WORK_S);
                double t0 = now();
                *t0p = t0;
                __atomic_store_n(go, seq, __ATOMIC_RELEASE);
                if (poll)
                    for (int got = 0; !got;) MPI_Iprobe(1, 1, node, &got, MPI_STATUS_IGNORE);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, node, MPI_STATUS_IGNORE);
                res[i] = now() - t0;
            } else {
                while (__atomic_load_n(go, __ATOMIC_ACQUIRE) < seq) {}
                double t0 = *t0p;
                while (now() < t0 + d) {}
                MPI_Send(NULL, 0, MPI_BYTE, 0, 1, node);
            }
        }
        if (me == 0) {
            qsort(res, REPS, sizeof res[0], cmpd);
            printf("%s d = %4.0f ns: returns %5.0f ns after the call, %5.0f ns after the send\n", mode, d * 1e9,
                   res[REPS / 2] * 1e9, (res[REPS / 2] - d) * 1e9);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
