/* A stand-alone MPI program that latscope did not write, for the study of programs of
 * one's own (docs/your-application.md): an integer-sort-like exchange (MPI_Alltoallv of counts
 * and keys, an MPI_Allreduce check, a ring of MPI_Sendrecv) timed with MPI_Wtime and reported in
 * the style of a known benchmark, so that no latscope format is involved.
 *
 *   intsort --style npb|lulesh|free|none|json [--iters N] [--keys N] [--fail-verify] [--hang] [--crash]
 *
 * npb:    " Time in seconds =   0.02" and " Verification    =   SUCCESSFUL" (UNSUCCESSFUL, exit 0)
 * lulesh: "Elapsed time         =       0.02 (s)"
 * free:   "solve: 12.3 ms on 2 ranks"
 * none:   no time at all ("done")
 * json:   {"loop_s": T, "verification": "passed"} (bench/sim_vs_real.py reads it)
 * --hang: every rank sleeps (a run that never ends); --crash: rank 1 dies of SIGSEGV mid-run. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *style = "npb";
    int iters = 200, keys = 64, fail = 0, hang = 0, crash = 0;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--style") && i + 1 < argc) style = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--keys") && i + 1 < argc) keys = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fail-verify")) fail = 1;
        else if (!strcmp(argv[i], "--hang")) hang = 1;
        else if (!strcmp(argv[i], "--crash")) crash = 1;
        else {
            if (rank == 0) fprintf(stderr, "intsort: unknown argument '%s'\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (iters < 1 || keys < 1) {
        if (rank == 0) fprintf(stderr, "intsort: --iters and --keys must be >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (hang) {
        for (;;) sleep(60);
    }
    int *scount = calloc((size_t)size, sizeof(int)), *rcount = calloc((size_t)size, sizeof(int));
    int *sdisp = calloc((size_t)size, sizeof(int)), *rdisp = calloc((size_t)size, sizeof(int));
    int *sbuf = malloc((size_t)keys * sizeof(int)), *rbuf = malloc((size_t)keys * (size_t)size * sizeof(int));
    unsigned seed = 12345u + (unsigned)rank;
    long long checksum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        for (int p = 0; p < size; p++) scount[p] = 0;
        for (int k = 0; k < keys; k++) {
            seed = seed * 1103515245u + 12345u;
            sbuf[k] = (int)(seed >> 8) % (1 << 16);
        }
        /* bucket keys by destination: a counting sort by the key's top bits */
        for (int k = 0; k < keys; k++) scount[sbuf[k] * size >> 16]++;
        int *tmp = malloc((size_t)keys * sizeof(int)), *pos = calloc((size_t)size, sizeof(int));
        for (int p = 1; p < size; p++) sdisp[p] = sdisp[p - 1] + scount[p - 1];
        for (int k = 0; k < keys; k++) { int p = sbuf[k] * size >> 16; tmp[sdisp[p] + pos[p]++] = sbuf[k]; }
        memcpy(sbuf, tmp, (size_t)keys * sizeof(int));
        free(tmp);
        free(pos);
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
        for (int p = 1; p < size; p++) rdisp[p] = rdisp[p - 1] + rcount[p - 1];
        MPI_Alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT, MPI_COMM_WORLD);
        int got = rdisp[size - 1] + rcount[size - 1];
        long long local = 0;
        for (int k = 0; k < got; k++) local += rbuf[k];
        int token = it, back = -1;
        MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &back, 1, MPI_INT, (rank + size - 1) % size, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (back != it) local = -1;
        checksum += local;
        if (crash && rank == 1 && it == iters / 2) raise(SIGSEGV);
    }
    /* verification: the keys received sum to the keys sent, over all ranks */
    long long sent = 0, total[2], mine[2];
    seed = 12345u + (unsigned)rank;
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < keys; k++) { seed = seed * 1103515245u + 12345u; sent += (int)(seed >> 8) % (1 << 16); }
    mine[0] = checksum;
    mine[1] = sent;
    MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int ok = total[0] == total[1] && !fail;
    if (rank == 0) {
        if (!strcmp(style, "npb")) {
            printf("\n\n IS Benchmark Completed\n Class           =                        S\n");
            printf(" Size            =                 %8d\n Iterations      =                 %8d\n", keys * size, iters);
            printf(" Time in seconds =                 %8.4f\n Total processes =                 %8d\n", tmax, size);
            printf(" Verification    =               %s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
        } else if (!strcmp(style, "lulesh")) {
            printf("Run completed:\n   Problem size        =  %d\n   MPI tasks           =  %d\n", keys, size);
            printf("   Iteration count     =  %d\n   Final Origin Energy =  %e\n", iters, (double)total[0]);
            printf("\nElapsed time         = %10.6f (s)\n", tmax);
        } else if (!strcmp(style, "free")) {
            printf("sorted %lld keys\nsolve: %.3f ms on %d ranks%s\n", total[1] ? (long long)keys * size * iters : 0,
                   tmax * 1e3, size, ok ? "" : " (check FAILED)");
        } else if (!strcmp(style, "json")) {
            printf("{\"loop_s\": %.9f, \"verification\": \"%s\"}\n", tmax, ok ? "passed" : "failed");
        } else {
            printf("done\n");
        }
        fflush(stdout);
    }
    free(scount); free(rcount); free(sdisp); free(rdisp); free(sbuf); free(rbuf);
    MPI_Finalize();
    /* LULESH-like programs say "bad" by their exit status */
    return (!ok && !strcmp(style, "lulesh")) ? 1 : 0;
}
