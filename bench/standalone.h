/* The shared part of the standalone MPI programs: bench/bare_pingpong.c, bench/steady_state.c,
 * bench/inject_overhead.c and the probes of tests/c (systime_pingpong.c, inject_probe.c,
 * inject_coll_probe.c). They link MPI only, or use liblatscope only outside what they time, so that
 * what they measure is the MPI library and whatever LD_PRELOAD puts in front of it
 * (docs/architecture.md, "bench/"). Everything here is static inline and calls no latscope
 * function: bare-pingpong's timed loop stays a bare loop of MPI calls and clock reads, the
 * harness-overhead baseline of bench/p2p_overhead.py. */
#ifndef LTS_BENCH_STANDALONE_H
#define LTS_BENCH_STANDALONE_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* clockid_t, CLOCK_MONOTONIC_RAW: so this header comes first in its includer */
#endif
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

/* MPI_Init, then this process's rank in MPI_COMM_WORLD and the number of ranks. */
static inline void lts_sa_init(int *argc, char ***argv, int *me, int *np) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, np);
}

/* Positional argument i as an int, dflt when there are fewer arguments (atoi: the callers check
 * the range, on every rank, so all reach the same verdict). */
static inline int lts_sa_arg(int argc, char **argv, int i, int dflt) { return argc > i ? atoi(argv[i]) : dflt; }

/* Seconds on clock `id` (CLOCK_MONOTONIC_RAW: not slewed by NTP while a loop runs). */
static inline double lts_sa_now(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int lts_sa_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline void lts_sa_sort(double *x, size_t n) { qsort(x, n, sizeof *x, lts_sa_cmp_double); }

/* Sorts x; its median, the mean of the two middle values when n is even (n >= 1). */
static inline double lts_sa_median(double *x, size_t n) {
    lts_sa_sort(x, n);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static inline double lts_sa_min(const double *x, size_t n) {
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] < m) m = x[i];
    return m;
}

/* One blocking round trip of OSU's osu_latency loop between ranks 0 and 1: rank 0 sends sb and
 * receives into rb, rank 1 the reverse; other ranks do nothing. */
static inline void lts_sa_pingpong(int me, void *sb, void *rb, int bytes, int tag) {
    if (me == 0) {
        MPI_Send(sb, bytes, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        MPI_Recv(rb, bytes, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == 1) {
        MPI_Recv(rb, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sb, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
    }
}

#endif
