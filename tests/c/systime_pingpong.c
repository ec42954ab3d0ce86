/* An MPI ping-pong between ranks 0 and 1 for tests/python/test_systime.py: 100 warm-up round
 * trips, then ITERS timed ones inside one lts_systime_start/stop window, so the interposer counts
 * only the timed loop (not MPI_Init's connection set-up). Rank 0 prints one JSON line for rank 0
 * and one for rank 1: rank, iters, the median round trip (s), and per class (send_like, recv_like, wait, all) the
 * calls and ns lts_systime_read() reports for the window. Without the interposer: exit 3.
 *   mpiexec -n 2 systime-pingpong [ITERS [BYTES]] */
#include "latscope/systime.h"
#include "standalone.h"
#include <stdio.h>

int main(int argc, char **argv) {
    int me, P;
    lts_sa_init(&argc, &argv, &me, &P);
    int iters = lts_sa_arg(argc, argv, 1, 1000), bytes = lts_sa_arg(argc, argv, 2, 20);
    lts_systime_start_fn start = lts_systime_lookup_start();
    lts_systime_stop_fn stop = lts_systime_lookup_stop();
    lts_systime_read_fn rd = lts_systime_lookup_read();
    int bad = P < 2 || iters < 1 || bytes < 0 ? 2 : (!start || !stop || !rd) ? 3 : 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);   /* one verdict for all ranks */
    if (any) {
        if (me == 0)
            fprintf(stderr, any == 2 ? "systime-pingpong: usage: mpiexec -n 2 systime-pingpong [ITERS>=1 [BYTES>=0]]\n"
                                     : "systime-pingpong: liblatscope_systime.so is not preloaded\n");
        MPI_Finalize();
        return any;
    }
    char *buf = calloc((size_t)bytes + 1, 1);
    double *t = malloc(sizeof *t * (size_t)iters);
    if (!buf || !t) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = -100; i < iters; i++) {
        if (i == 0) start();
        double t0 = lts_sa_now(CLOCK_MONOTONIC_RAW);
        lts_sa_pingpong(me, buf, buf, bytes, 0);
        if (i >= 0) t[i] = lts_sa_now(CLOCK_MONOTONIC_RAW) - t0;
    }
    stop();
    /* rank 1's figures travel to rank 0, which prints both lines: two ranks writing to one
     * forwarded stdout can interleave inside a line */
    static const char *const cls[] = {"send_like", "recv_like", "wait", "all"};
    double v[9];
    lts_sa_sort(t, (size_t)iters);
    v[0] = t[iters / 2];
    for (int k = 0; k < 4; k++) {
        unsigned long long c = 0, ns = 0;
        rd(cls[k], &c, &ns);
        v[1 + 2 * k] = (double)c;
        v[2 + 2 * k] = (double)ns;
    }
    if (me == 1) MPI_Send(v, 9, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    for (int r = 0; me == 0 && r < 2; r++) {
        if (r == 1) MPI_Recv(v, 9, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("{\"rank\": %d, \"iters\": %d, \"rtt_median_s\": %.9g", r, iters, v[0]);
        for (int k = 0; k < 4; k++)
            printf(", \"%s\": {\"calls\": %.0f, \"ns\": %.0f}", cls[k], v[1 + 2 * k], v[2 + 2 * k]);
        printf("}\n");
    }
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
