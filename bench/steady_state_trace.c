#ifndef _GNU_SOURCE   /* also given by the build (lts_program) */
#define _GNU_SOURCE
#endif
/* Per-sample traces for bench/steady_state_trace.py (what happens when latscope's
 * adaptive run misses the long-run median). In ONE launch, per message size, latscope's default
 * `pingpong` (the `auto` sync row: back to back, the `monotonic` timer) runs for a fixed N
 * repetitions after its default warm-up, and rank 0 writes one line per repetition:
 *     i  t_s  sample_s  cpu0  cpu1
 * t_s: seconds since the run began, when the repetition's receive was posted (its prepare(),
 * outside the timed part); cpu0/cpu1: the core each rank ran on then (sched_getcpu). The trace is
 * then the stop rule's input: latscope's adaptive rule (lts_rep_ctl, the library's own code) is
 * replayed on it from every START-th repetition on, and rank 0 prints one line per replay:
 *     #replay start reps_used median_s discarded stop_reason
 * so where an adaptive run would stop, and in which state, is known for every start point of a
 * trace whose states are seen whole. Output: TRACE_PREFIX<size>.txt per size.
 * With SPLICE > 0 (and two sizes or more), TRACE_PREFIXsplice.txt: the rule replayed likewise on a
 * state change made of real samples, SPLICE of the first size's trace and then the second's.
 * With BLOCK > 0 (and two sizes or more), TRACE_PREFIXblocks.txt: the rule replayed from every
 * START-th sample below BLOCK + BLOCK2 on states that alternate, made of real samples: BLOCK of the
 * first size's trace, BLOCK2 (default BLOCK) of the second's, and so on (N in all; each trace read
 * in order): sub-levels longer than a stop after min_reps would see, shorter than the run.
 * Then, with PROBE_SEGMENTS > 0, TRACE_PREFIXprobe.txt: per segment, the medians of three things
 * measured one after the other, to tell which of them moves with the ping-pong's state:
 *     seg  t_s  mpi_8B_s  c2c_s  spin_s  mpi_jitter_s
 * mpi_8B_s: RTT/2 of OSU's blocking 8-byte round trip (1000 of them); mpi_jitter_s: the same
 * with rank 0 waiting a pseudo-random 0-1 us before each (untimed), so that where in the
 * partner's polling loop each message arrives is drawn afresh every time; c2c_s: half the round trip
 * of one cache line bounced between the two ranks through an MPI shared-memory window, no MPI call
 * (500): the cost of moving a line between the two cores, which is where the host puts the two
 * virtual CPUs; spin_s: a fixed loop of 2000 dependent integer steps on rank 0 (200): the core's
 * clock frequency. */
#include "standalone.h"
#include "steady_state.h"
#include <sched.h>
#include <stdio.h>
#include <string.h>

static const lts_op_desc_t *g_op;
static double *g_t;
static int *g_cpu;
static long g_k, g_cap;
static double g_t0;

/* the wrapped op's prepare: stamp the repetition (untimed), then post its receive as usual */
static int traced_prepare(lts_op_ctx_t *c) {
    if (g_k < g_cap) {
        g_t[g_k] = lts_sa_now(CLOCK_MONOTONIC) - g_t0;
        g_cpu[g_k] = sched_getcpu();
    }
    g_k++;
    return g_op->prepare ? g_op->prepare(c) : LTS_OK;
}

/* half the round trip of a cache line bounced between ranks 0 and 1 (rank 0 writes i, rank 1
 * answers -i), no MPI call inside: the inter-core transfer cost alone */
static double c2c_half_rtt(int me, volatile long *line, long i) {
    double t0 = lts_sa_now(CLOCK_MONOTONIC);
    if (me == 0) {
        line[0] = i;
        while (line[8] != -i) {}
    } else {
        while (line[0] != i) {}
        line[8] = -i;
    }
    return (lts_sa_now(CLOCK_MONOTONIC) - t0) / 2;
}

static double spin_once(void) {
    volatile unsigned long x = 1;
    double t0 = lts_sa_now(CLOCK_MONOTONIC);
    for (int k = 0; k < 2000; k++) x = x * 2862933555777941757UL + 3037000493UL;
    return lts_sa_now(CLOCK_MONOTONIC) - t0;
}

static void probe(int me, int segs, const char *prefix) {
    MPI_Comm node;
    MPI_Win win;
    long *base;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Win_allocate_shared(me == 0 ? 4096 : 0, 1, MPI_INFO_NULL, node, &base, &win);
    MPI_Aint sz;
    int du;
    MPI_Win_shared_query(win, 0, &sz, &du, &base);
    volatile long *line = (volatile long *)base;   /* [0]: rank 0's line, [8]: rank 1's (64 B apart) */
    if (me == 0) { line[0] = 0; line[8] = 0; }
    MPI_Barrier(MPI_COMM_WORLD);
    char *sb = lts_buffer_alloc(8), *rb = lts_buffer_alloc(8);
    double *a = malloc(sizeof *a * 1000), *j = malloc(sizeof *j * 1000), *b = malloc(sizeof *b * 500), *c = malloc(sizeof *c * 200);
    FILE *f = NULL;
    if (me == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%sprobe.txt", prefix);
        if (!(f = fopen(path, "w"))) { fprintf(stderr, "steady-state-trace: cannot write %s\n", path); MPI_Abort(MPI_COMM_WORLD, 1); }
        fprintf(f, "# seg t_s mpi_8B_s c2c_s spin_s mpi_jitter_s\n");
    }
    long tick = 1;
    double t0 = lts_sa_now(CLOCK_MONOTONIC);
    for (int s = 0; s < segs; s++) {
        double ts = lts_sa_now(CLOCK_MONOTONIC) - t0;
        for (int i = 0; i < 1000; i++) {
            double u = lts_sa_now(CLOCK_MONOTONIC);
            lts_sa_pingpong(me, sb, rb, 8, 1);
            a[i] = (lts_sa_now(CLOCK_MONOTONIC) - u) / 2;
        }
        unsigned long rng = 88172645463325252UL + (unsigned long)s;
        for (int i = 0; i < 1000; i++) {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;   /* xorshift64 */
            if (me == 0) {
                double until = lts_sa_now(CLOCK_MONOTONIC) + 1e-6 * (double)(rng % 1000) / 1000.0;
                while (lts_sa_now(CLOCK_MONOTONIC) < until) {}
            }
            double u = lts_sa_now(CLOCK_MONOTONIC);
            lts_sa_pingpong(me, sb, rb, 8, 1);
            j[i] = (lts_sa_now(CLOCK_MONOTONIC) - u) / 2;
        }
        for (int i = 0; i < 500; i++) b[i] = c2c_half_rtt(me, line, tick++);
        if (me == 0) for (int i = 0; i < 200; i++) c[i] = spin_once();
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            fprintf(f, "%d %.6f %.6e %.6e %.6e %.6e\n", s, ts, lts_sa_median(a, 1000), lts_sa_median(b, 500),
                    lts_sa_median(c, 200), lts_sa_median(j, 1000));
    }
    if (f) fclose(f);
    free(a); free(j); free(b); free(c); free(sb); free(rb);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* The adaptive rule (the library's lts_rep_ctl, as lts_measure uses it) replayed on x[0..n) from
 * every `every`-th sample below `starts`: one "#replay" line each. */
static void replay(FILE *f, const double *x, long n, const lts_rep_policy_t *pol, int every, long starts) {
    for (long st = 0; st < starts && st + pol->min_reps <= n; st += every) {
        lts_rep_ctl_t c;
        if (lts_rep_ctl_init(&c, pol)) MPI_Abort(MPI_COMM_WORLD, 1);
        c.ci_batch = lts_rep_ci_batch_len(pol, 1);   /* as lts_measure sets it: back to back */
        lts_stop_reason_t why = LTS_STOP_CONTINUE;
        long i = st;
        while (why == LTS_STOP_CONTINUE && i < n) {
            lts_rep_add(&c, x[i++]);
            why = lts_rep_decide(&c, 0.0);
        }
        lts_summary_t sum;
        lts_summarize(c.samples, c.n, pol->confidence, pol->rule, &sum);
        fprintf(f, "#replay %ld %ld %.6e %zu %s\n", st, i - st, sum.median, c.discarded,
                why == LTS_STOP_CONTINUE ? "end_of_trace" : lts_stop_reason_name(why));
        lts_rep_ctl_free(&c);
    }
}

int main(int argc, char **argv) {
    int me, P;
    lts_sa_init(&argc, &argv, &me, &P);
    size_t *sizes = NULL, nsizes = 0;
    char msg[256] = "";
    int n = lts_sa_arg(argc, argv, 3, 100000), every = lts_sa_arg(argc, argv, 4, 50), segs = lts_sa_arg(argc, argv, 5, 0),
        splice = lts_sa_arg(argc, argv, 6, 0), block = lts_sa_arg(argc, argv, 7, 0),
        block2 = lts_sa_arg(argc, argv, 8, block);
    if (P != 2 || argc < 3 || lts_parse_sizes(argv[1], &sizes, &nsizes, msg, sizeof msg) || n < 1000 || every < 1 ||
        segs < 0 || splice < 0 || splice >= n || (splice && nsizes < 2) || block < 0 || block2 < 0 || block + block2 > n ||
        (block && (nsizes < 2 || block2 < 1))) {
        if (me == 0 && msg[0]) fprintf(stderr, "%s\n", msg);   /* the sizes' own message */
        if (me == 0)
            fprintf(stderr, "usage: mpiexec -n 2 steady-state-trace SIZES TRACE_PREFIX [N=100000 >= 1000] [START=50] "
                            "[PROBE_SEGMENTS=0] [SPLICE=0 < N, 2+ sizes] [BLOCK=0 BLOCK2=BLOCK: sum <= N, 2+ sizes]\n");
        MPI_Finalize();
        return 2;
    }
    lts_timer_t timer;
    lts_measure_cfg_t cfg;
    g_op = lts_ss_default_pingpong(&timer, &cfg);
    lts_op_desc_t op = *g_op;
    op.prepare = traced_prepare;
    lts_rep_policy_t adaptive = cfg.policy;
    cfg.policy.min_reps = cfg.policy.max_reps = n;

    size_t maxb = 1;
    for (size_t s = 0; s < nsizes; s++) if (sizes[s] > maxb) maxb = sizes[s];
    char *sbuf = lts_buffer_alloc(maxb), *rbuf = lts_buffer_alloc(maxb);
    g_cap = (long)n + adaptive.warmup + 2;
    g_t = malloc(sizeof *g_t * (size_t)g_cap);
    g_cpu = malloc(sizeof *g_cpu * (size_t)g_cap);
    int *cpu1 = malloc(sizeof *cpu1 * (size_t)g_cap);
    double *kept[2] = {NULL, NULL};
    if (!sbuf || !rbuf || !g_t || !g_cpu || !cpu1) MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t s = 0; s < nsizes; s++) {
        lts_op_ctx_t ctx;
        lts_ss_ctx(&ctx, me, sizes[s], sbuf, rbuf);
        g_k = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        g_t0 = lts_sa_now(CLOCK_MONOTONIC);
        lts_measurement_t m;
        if (lts_measure(&op, &ctx, &cfg, &m)) MPI_Abort(MPI_COMM_WORLD, 1);
        /* the prepare calls of the warm-up come first: the timed repetitions are the last n + 1
         * (the driver posts one receive past the last repetition and cancels it) */
        long first = g_k - (long)n - 1;
        if (first < 0) first = 0;
        if (me == 1) MPI_Send(g_cpu + first, n, MPI_INT, 0, 7, MPI_COMM_WORLD);
        if (me == 0) {
            MPI_Recv(cpu1, n, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            char path[4096];
            snprintf(path, sizeof path, "%s%zu.txt", argv[2], sizes[s]);
            FILE *f = fopen(path, "w");
            if (!f) { fprintf(stderr, "steady-state-trace: cannot write %s\n", path); MPI_Abort(MPI_COMM_WORLD, 1); }
            fprintf(f, "# size %zu n %d warmup %d\n", sizes[s], n, adaptive.warmup);
            for (long i = 0; i < n && i < (long)m.n; i++)
                fprintf(f, "%ld %.9f %.6e %d %d\n", i, g_t[first + i], m.samples[i], g_cpu[first + i], cpu1[i]);
            replay(f, m.samples, (long)m.n, &adaptive, every, (long)m.n);
            if (s < 2 && (splice || block)) {   /* kept for the splice and blocks below */
                kept[s] = malloc(sizeof *kept[s] * m.n);
                if (!kept[s]) MPI_Abort(MPI_COMM_WORLD, 1);
                memcpy(kept[s], m.samples, sizeof *kept[s] * m.n);
            }
            fclose(f);
        }
        lts_measurement_free(&m);
    }
    if (me == 0 && splice) {
        /* a state change made of real samples: SPLICE repetitions of the first size, then the
         * second size's trace from its start; the rule replayed from every start in the first part */
        double *x = malloc(sizeof *x * ((size_t)n + (size_t)splice));
        char path[4096];
        snprintf(path, sizeof path, "%ssplice.txt", argv[2]);
        FILE *f = fopen(path, "w");
        if (!x || !f) { fprintf(stderr, "steady-state-trace: cannot write %s\n", path); MPI_Abort(MPI_COMM_WORLD, 1); }
        memcpy(x, kept[0], sizeof *x * (size_t)splice);
        memcpy(x + splice, kept[1], sizeof *x * (size_t)n);
        fprintf(f, "# splice %d of size %zu, then size %zu\n", splice, sizes[0], sizes[1]);
        replay(f, x, (long)n + splice, &adaptive, every, splice);
        fclose(f);
        free(x);
    }
    if (me == 0 && block) {
        double *x = malloc(sizeof *x * (size_t)n);
        char path[4096];
        snprintf(path, sizeof path, "%sblocks.txt", argv[2]);
        FILE *f = fopen(path, "w");
        if (!x || !f) { fprintf(stderr, "steady-state-trace: cannot write %s\n", path); MPI_Abort(MPI_COMM_WORLD, 1); }
        long period = (long)block + block2;
        for (long i = 0; i < n; i++) {
            long k = i / period, r = i % period;
            x[i] = r < block ? kept[0][k * block + r] : kept[1][k * block2 + r - block];
        }
        fprintf(f, "# blocks of %d of size %zu and %d of size %zu alternating\n", block, sizes[0], block2, sizes[1]);
        replay(f, x, (long)n, &adaptive, every, period);
        fclose(f);
        free(x);
    }
    free(kept[0]);
    free(kept[1]);
    if (segs) probe(me, segs, argv[2]);
    free(g_t);
    free(g_cpu);
    free(cpu1);
    free(sbuf);
    free(rbuf);
    free(sizes);
    MPI_Finalize();
    return 0;
}
