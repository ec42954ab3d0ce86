#ifndef _GNU_SOURCE   /* also given by the build (lts_program) */
#define _GNU_SOURCE
#endif
/* The reference run for bench/steady_state.py: in ONE launch (a launch can sit in a slower state
 * for its whole life, so they must share it), per message size, ALTERNATIONS times:
 *   - OSU's osu_latency loop: blocking MPI_Send/MPI_Recv ping-pong, `skip` untimed iterations,
 *     then ITERS timed ones (each timed, so the long-run median is known, not only OSU's mean);
 *   - latscope's defaults: lts_measure on the `pingpong` descriptor with lts_rep_policy_default,
 *     the `auto` sync row and the `monotonic` timer, exactly what `latscope-bench p2p` does
 *     when given no repetition options;
 *   - the same latscope operation for as many repetitions as OSU's loop (its own long run);
 * both long runs in two halves, one before and one after the latscope run (see main).
 * Rank 0 prints one JSON object per size: the medians pooled over the launch and, per latscope
 * run, the medians of the OSU loop and of the long run around it (osu_medians_s,
 * latscope_long_medians_s). */
#include "standalone.h"
#include "steady_state.h"
#include <stdio.h>
#include <string.h>

/* osu_latency's loop (OSU 7: page-aligned s_buf and r_buf, skip 100 below 8 KiB, 10 above);
 * each iteration's RTT/2 into t. */
static void osu_loop(int me, char *sb, char *rb, int bytes, int skip, int iters, double *t) {
    for (int i = -skip; i < iters; i++) {
        double t0 = lts_sa_now(CLOCK_MONOTONIC);
        lts_sa_pingpong(me, sb, rb, bytes, 1);
        if (i >= 0) t[i] = (lts_sa_now(CLOCK_MONOTONIC) - t0) / 2;
    }
}

/* latscope's own operation for a fixed count: samples into lt on rank 0 (a part of its long run) */
static void long_run(const lts_op_desc_t *op, lts_op_ctx_t *ctx, const lts_measure_cfg_t *cfg, int count, int me,
                     double *lt) {
    lts_measure_cfg_t fixed = *cfg;
    fixed.policy.min_reps = fixed.policy.max_reps = count;
    lts_measurement_t m;
    if (lts_measure(op, ctx, &fixed, &m)) MPI_Abort(MPI_COMM_WORLD, 1);
    if (me == 0) memcpy(lt, m.samples, (size_t)count * sizeof *lt);
    lts_measurement_free(&m);
}

int main(int argc, char **argv) {
    int me, P;
    lts_sa_init(&argc, &argv, &me, &P);
    size_t *sizes = NULL, nsizes = 0;
    char msg[256] = "";
    int reps = lts_sa_arg(argc, argv, 2, 2), iters = lts_sa_arg(argc, argv, 3, 10000);
    if (P != 2 || argc < 2 || lts_parse_sizes(argv[1], &sizes, &nsizes, msg, sizeof msg) || reps < 1 || reps > 64 || iters < 2) {
        if (me == 0 && msg[0]) fprintf(stderr, "%s\n", msg);   /* the sizes' own message */
        if (me == 0) fprintf(stderr, "usage: mpiexec -n 2 steady-state SIZES [ALTERNATIONS=2, 1..64] [OSU_ITERS=10000, >= 2]\n");
        MPI_Finalize();
        return 2;
    }
    lts_timer_t timer;
    lts_measure_cfg_t cfg;
    const lts_op_desc_t *op = lts_ss_default_pingpong(&timer, &cfg);

    size_t maxb = 1;
    for (size_t s = 0; s < nsizes; s++) if (sizes[s] > maxb) maxb = sizes[s];
    char *sbuf = lts_buffer_alloc(maxb), *rbuf = lts_buffer_alloc(maxb);
    double *t = malloc(sizeof *t * (size_t)iters * (size_t)reps), *lt = malloc(sizeof *lt * (size_t)iters * (size_t)reps);
    for (size_t s = 0; s < nsizes; s++) {
        int bytes = (int)sizes[s], skip = bytes > 8192 ? 10 : 100;
        double lmed[64];
        long ltotal[64], ldisc[64];
        int lstat[64];
        const char *lstop[64];
        for (int k = 0; k < reps && k < 64; k++) {
            /* Each latscope run sits in the middle of its two references: half of the OSU loop
             * and half of latscope's long run before it, the other halves after it, in the
             * mirrored order (k even: OSU, long, RUN, long, OSU; k odd: long, OSU, RUN, OSU, long),
             * so both references span the run's moment symmetrically. The launch's state moves
             * on a scale of 20 ms to seconds (docs/measurement.md "Steady state"): a reference
             * taken before or after the run alone, or pooled over the launch, can sit in another
             * state than the run whatever the stop rule does. */
            const int osu_out = k % 2 == 0, half = iters / 2;
            double *tk = t + (size_t)k * (size_t)iters, *lk = lt + (size_t)k * (size_t)iters;
            lts_op_ctx_t ctx;
            lts_ss_ctx(&ctx, me, sizes[s], sbuf, rbuf);
            if (osu_out) osu_loop(me, sbuf, rbuf, bytes, skip, half, tk);
            long_run(op, &ctx, &cfg, half, me, lk);
            if (!osu_out) osu_loop(me, sbuf, rbuf, bytes, skip, half, tk);
            lts_measurement_t m;
            if (lts_measure(op, &ctx, &cfg, &m)) MPI_Abort(MPI_COMM_WORLD, 1);
            if (me == 0) {
                lts_summary_t sum;
                lts_summarize(m.samples, m.n, cfg.policy.confidence, cfg.policy.rule, &sum);
                lmed[k] = sum.median;
                ltotal[k] = m.reps_total;
                ldisc[k] = m.discarded;
                lstat[k] = m.stationary;
                lstop[k] = lts_stop_reason_name((lts_stop_reason_t)m.stop_reason);
            }
            lts_measurement_free(&m);
            if (!osu_out) osu_loop(me, sbuf, rbuf, bytes, skip, iters - half, tk + half);
            long_run(op, &ctx, &cfg, iters - half, me, lk + half);
            if (osu_out) osu_loop(me, sbuf, rbuf, bytes, skip, iters - half, tk + half);
        }
        if (me == 0) {
            size_t n = (size_t)iters * (size_t)reps;
            /* each run's two references, the halves around it (sorting a block in place leaves
             * the pooled samples) */
            double omed[64], bmed[64], before[64], after[64];
            const size_t half = (size_t)iters / 2;
            for (int k = 0; k < reps && k < 64; k++) {
                /* the long run's half before the latscope run and the half after it, apart: a
                 * reference whose halves disagree moved while the run was measured */
                lts_summary_t h;
                lts_summarize(lt + (size_t)k * (size_t)iters, half, 0.95, LTS_STOP_MEDIAN, &h);
                before[k] = h.median;
                lts_summarize(lt + (size_t)k * (size_t)iters + half, (size_t)iters - half, 0.95, LTS_STOP_MEDIAN, &h);
                after[k] = h.median;
                omed[k] = lts_sa_median(t + (size_t)k * (size_t)iters, (size_t)iters);
                bmed[k] = lts_sa_median(lt + (size_t)k * (size_t)iters, (size_t)iters);
            }
            double mean = 0;
            for (size_t i = 0; i < n; i++) mean += t[i];
            printf("{\"size_bytes\":%d,\"osu_iters\":%d,\"osu_skip\":%d,\"osu_mean_s\":%.6e,\"osu_median_s\":%.6e,"
                   "\"latscope_long_median_s\":%.6e,\"latscope_warmup\":%d,\"latscope\":[", bytes, iters, skip,
                   mean / (double)n, lts_sa_median(t, n), lts_sa_median(lt, n), cfg.policy.warmup);
            for (int k = 0; k < reps && k < 64; k++)
                printf("%s{\"median_s\":%.6e,\"reps_total\":%ld,\"warmup_discarded\":%ld,\"stationary\":%s,"
                       "\"order\":\"%s\",\"stop_reason\":\"%s\"}", k ? "," : "", lmed[k], ltotal[k], ldisc[k],
                       lstat[k] ? "true" : "false", k % 2 == 0 ? "osu_outside" : "latscope_outside",
                       lstop[k]);
            printf("],\"osu_medians_s\":[");
            for (int k = 0; k < reps && k < 64; k++) printf("%s%.6e", k ? "," : "", omed[k]);
            printf("],\"latscope_long_medians_s\":[");
            for (int k = 0; k < reps && k < 64; k++) printf("%s%.6e", k ? "," : "", bmed[k]);
            printf("],\"latscope_long_halves_s\":[");
            for (int k = 0; k < reps && k < 64; k++) printf("%s[%.6e,%.6e]", k ? "," : "", before[k], after[k]);
            printf("]}\n");
            fflush(stdout);
        }
    }
    free(t);
    free(lt);
    free(sbuf);
    free(rbuf);
    free(sizes);
    MPI_Finalize();
    return 0;
}
