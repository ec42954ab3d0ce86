/* inject-probe: the MPI program the injector's tests run. A ping-pong between ranks 0 and 1
 * (timing the round trip and each rank's MPI_Send call), a few collectives, and one pass over
 * every other wrapped entry point, all with checksummed contents. Rank 0 prints one JSON line.
 *   inject-probe [iters] [coll_iters]      (any np >= 1; the ping-pong needs np >= 2)
 * The baseline is measured in the same launch, through the PMPI_ entry points, which the
 * injector does not see: every timed MPI_ iteration is followed by the same iteration through
 * PMPI_ (the base_* figures), so both see the same machine. Baselines from a separate launch
 * moved by 3.5 us (minimum half round trip 1.4 us in one launch, 5.0 us in the next) beside a
 * CPU-bound process, more than the tests' tolerance. */
#include "standalone.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* the upper middle value for even n: what this probe has always printed */
static double median(double *v, int n) { lts_sa_sort(v, (size_t)n); return n ? v[n / 2] : 0; }
static double minimum(double *v, int n) { return lts_sa_min(v, (size_t)n); }

#define PAY 64
static void fill(unsigned *b, int n, unsigned key) { for (int i = 0; i < n; i++) b[i] = key * 2654435761u + (unsigned)i; }
static int good(const unsigned *b, int n, unsigned key) {
    for (int i = 0; i < n; i++) if (b[i] != key * 2654435761u + (unsigned)i) return 0;
    return 1;
}

int main(int argc, char **argv) {
    int rank, size;
    lts_sa_init(&argc, &argv, &rank, &size);
    int iters = lts_sa_arg(argc, argv, 1, 1000), citers = lts_sa_arg(argc, argv, 2, 200);
    if (iters < 1 || citers < 1) {
        if (rank == 0) fprintf(stderr, "inject-probe: iters and coll_iters must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bad = 0;
    unsigned buf[PAY], rbuf[PAY];
    /* [0]: through MPI_ (what the injector delays); [1]: the same through PMPI_ (the baseline) */
    double *rtt[2], *sendt[2];
    for (int b = 0; b < 2; b++) {
        rtt[b] = malloc(sizeof(double) * (size_t)iters);
        sendt[b] = malloc(sizeof(double) * (size_t)iters);
    }
    int warm = iters / 10 + 1;
    /* ---- ping-pong 0 <-> 1 ---- */
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        for (int i = -warm; i < iters; i++) {
            for (int b = 0; b < 2; b++) {
                int (*snd)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = b ? PMPI_Send : MPI_Send;
                int (*rcv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = b ? PMPI_Recv : MPI_Recv;
                unsigned k0 = (unsigned)(i + warm) * 4u + 2u * (unsigned)b;
                fill(buf, PAY, k0 + (unsigned)rank);
                if (rank == 0) {
                    double t0 = MPI_Wtime();
                    snd(buf, PAY, MPI_UNSIGNED, peer, 1, MPI_COMM_WORLD);
                    double t1 = MPI_Wtime();
                    rcv(rbuf, PAY, MPI_UNSIGNED, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    double t2 = MPI_Wtime();
                    if (i >= 0) { rtt[b][i] = t2 - t0; sendt[b][i] = t1 - t0; }
                    bad += !good(rbuf, PAY, k0 + 1u);
                } else {
                    rcv(rbuf, PAY, MPI_UNSIGNED, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    bad += !good(rbuf, PAY, k0);
                    double t0 = MPI_Wtime();
                    snd(buf, PAY, MPI_UNSIGNED, peer, 1, MPI_COMM_WORLD);
                    if (i >= 0) sendt[b][i] = MPI_Wtime() - t0;
                }
            }
        }
    }
    /* per rank: min and median of the send call, through MPI_ then PMPI_ */
    /* the gather fills 4 entries per rank: at np 3 and more a fixed [8] overflowed (ASan) */
    double send_stats[4] = {0, 0, 0, 0}, *all_send = calloc((size_t)4 * (size_t)size, sizeof(double));
    if (size >= 2 && rank < 2)
        for (int b = 0; b < 2; b++) {
            send_stats[2 * b] = minimum(sendt[b], iters) * 1e6;
            send_stats[2 * b + 1] = median(sendt[b], iters) * 1e6;
        }
    MPI_Gather(send_stats, 4, MPI_DOUBLE, rank == 0 ? all_send : NULL, 4, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);   /* only the first two ranks' entries are read */
    /* ---- collectives, timed, each iteration through MPI_ then PMPI_ ---- */
    double *ct[2] = {malloc(sizeof(double) * (size_t)citers), malloc(sizeof(double) * (size_t)citers)};
    double coll_med[2][3], coll_min[2][3];
    int *vals = malloc(sizeof(int) * (size_t)size * PAY), *vals2 = malloc(sizeof(int) * (size_t)size * PAY);
    for (int which = 0; which < 3; which++) {
        for (int i = -citers / 10 - 1; i < citers; i++) {
            /* MPI_ first in even iterations, PMPI_ first in odd ones: the first call of a pair
             * absorbs the ranks' skew (beside CPU-bound processes, every time), and an order kept
             * fixed would charge it to one path: the excluded barrier's medians differed by
             * 6.4 us, the delayed one's minima by 1.6 ms */
            for (int k = 0; k < 2; k++) {
                int b = (i & 1) ? 1 - k : k;
                double t0 = MPI_Wtime();
                if (which == 0) {
                    b ? PMPI_Barrier(MPI_COMM_WORLD) : MPI_Barrier(MPI_COMM_WORLD);
                } else if (which == 1) {
                    int x = rank + i + b, s = 0;
                    b ? PMPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                      : MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                    bad += s != size * (size - 1) / 2 + size * (i + b);
                } else {
                    if (rank == 0) fill(buf, PAY, 2u * (unsigned)i + (unsigned)b + 77u);
                    b ? PMPI_Bcast(buf, PAY, MPI_UNSIGNED, 0, MPI_COMM_WORLD) : MPI_Bcast(buf, PAY, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
                    bad += !good(buf, PAY, 2u * (unsigned)i + (unsigned)b + 77u);
                }
                if (i >= 0) ct[b][i] = MPI_Wtime() - t0;
            }
        }
        for (int b = 0; b < 2; b++) {
            coll_min[b][which] = minimum(ct[b], citers) * 1e6;   /* before the sort in median() */
            coll_med[b][which] = median(ct[b], citers) * 1e6;
        }
    }
    /* ---- one pass over every other wrapped entry point, contents checked ---- */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request rq[4];
    {
        static const int modes = 4;   /* isend, ssend, issend, rsend(after a posted recv) */
        for (int m = 0; m < modes; m++) {
            fill(buf, PAY, 1000u + (unsigned)(m * 64 + rank));
            MPI_Irecv(rbuf, PAY, MPI_UNSIGNED, left, 10 + m, MPI_COMM_WORLD, &rq[0]);
            MPI_Barrier(MPI_COMM_WORLD);   /* the receive is posted before any rsend */
            if (m == 0) { MPI_Isend(buf, PAY, MPI_UNSIGNED, right, 10 + m, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); }
            if (m == 1) { if (size == 1) { MPI_Isend(buf, PAY, MPI_UNSIGNED, right, 10 + m, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); } else MPI_Ssend(buf, PAY, MPI_UNSIGNED, right, 10 + m, MPI_COMM_WORLD); }
            if (m == 2) { MPI_Issend(buf, PAY, MPI_UNSIGNED, right, 10 + m, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); }
            if (m == 3) { MPI_Irsend(buf, PAY, MPI_UNSIGNED, right, 10 + m, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); }
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            bad += !good(rbuf, PAY, 1000u + (unsigned)(m * 64 + left));
        }
        /* bsend / ibsend */
        int bsz = 4 * (PAY * (int)sizeof(unsigned) + MPI_BSEND_OVERHEAD);
        void *bb = malloc((size_t)bsz);
        MPI_Buffer_attach(bb, bsz);
        fill(buf, PAY, 2000u + (unsigned)rank);
        MPI_Irecv(rbuf, PAY, MPI_UNSIGNED, left, 20, MPI_COMM_WORLD, &rq[0]);
        MPI_Bsend(buf, PAY, MPI_UNSIGNED, right, 20, MPI_COMM_WORLD);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 2000u + (unsigned)left);
        MPI_Irecv(rbuf, PAY, MPI_UNSIGNED, left, 21, MPI_COMM_WORLD, &rq[0]);
        MPI_Ibsend(buf, PAY, MPI_UNSIGNED, right, 21, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        bad += !good(rbuf, PAY, 2000u + (unsigned)left);
        MPI_Buffer_detach(&bb, &bsz);
        free(bb);
        /* sendrecv, sendrecv_replace */
        MPI_Sendrecv(buf, PAY, MPI_UNSIGNED, right, 22, rbuf, PAY, MPI_UNSIGNED, left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 2000u + (unsigned)left);
        memcpy(rbuf, buf, sizeof buf);
        MPI_Sendrecv_replace(rbuf, PAY, MPI_UNSIGNED, right, 23, left, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 2000u + (unsigned)left);
        /* persistent: start and startall, twice each */
        MPI_Send_init(buf, PAY, MPI_UNSIGNED, right, 24, MPI_COMM_WORLD, &rq[1]);
        MPI_Recv_init(rbuf, PAY, MPI_UNSIGNED, left, 24, MPI_COMM_WORLD, &rq[0]);
        for (int r = 0; r < 2; r++) {
            MPI_Start(&rq[0]);
            MPI_Start(&rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            bad += !good(rbuf, PAY, 2000u + (unsigned)left);
            MPI_Startall(2, rq);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            bad += !good(rbuf, PAY, 2000u + (unsigned)left);
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
    }
    {   /* the rest of the collectives, blocking and nonblocking */
        int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
        MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)size);
        for (int r = 0; r < size; r++) { cnt[r] = 1; dsp[r] = r; ty[r] = MPI_INT; }
        int *bdsp = malloc(sizeof(int) * (size_t)size);
        for (int r = 0; r < size; r++) bdsp[r] = r * (int)sizeof(int);
        for (int nb = 0; nb < 2; nb++) {
            MPI_Request q;
#define RUN(blocking, nonblocking) do { if (nb) { nonblocking; MPI_Wait(&q, MPI_STATUS_IGNORE); } else { blocking; } } while (0)
            int x = rank + 1, y = -1, z = -1;
            for (int r = 0; r < size; r++) vals[r] = rank * 100 + r;
            RUN(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_Ireduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &q));
            if (rank == 0) bad += y != size * (size + 1) / 2;
            RUN(MPI_Gather(&x, 1, MPI_INT, vals2, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_Igather(&x, 1, MPI_INT, vals2, 1, MPI_INT, 0, MPI_COMM_WORLD, &q));
            if (rank == 0) for (int r = 0; r < size; r++) bad += vals2[r] != r + 1;
            RUN(MPI_Gatherv(&x, 1, MPI_INT, vals2, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD), MPI_Igatherv(&x, 1, MPI_INT, vals2, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD, &q));
            if (rank == 0) for (int r = 0; r < size; r++) bad += vals2[r] != r + 1;
            RUN(MPI_Scatter(vals, 1, MPI_INT, &z, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_Iscatter(vals, 1, MPI_INT, &z, 1, MPI_INT, 0, MPI_COMM_WORLD, &q));
            bad += z != rank;
            RUN(MPI_Scatterv(vals, cnt, dsp, MPI_INT, &z, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_Iscatterv(vals, cnt, dsp, MPI_INT, &z, 1, MPI_INT, 0, MPI_COMM_WORLD, &q));
            bad += z != rank;
            RUN(MPI_Allgather(&x, 1, MPI_INT, vals2, 1, MPI_INT, MPI_COMM_WORLD), MPI_Iallgather(&x, 1, MPI_INT, vals2, 1, MPI_INT, MPI_COMM_WORLD, &q));
            for (int r = 0; r < size; r++) bad += vals2[r] != r + 1;
            RUN(MPI_Allgatherv(&x, 1, MPI_INT, vals2, cnt, dsp, MPI_INT, MPI_COMM_WORLD), MPI_Iallgatherv(&x, 1, MPI_INT, vals2, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &q));
            for (int r = 0; r < size; r++) bad += vals2[r] != r + 1;
            RUN(MPI_Alltoall(vals, 1, MPI_INT, vals2, 1, MPI_INT, MPI_COMM_WORLD), MPI_Ialltoall(vals, 1, MPI_INT, vals2, 1, MPI_INT, MPI_COMM_WORLD, &q));
            for (int r = 0; r < size; r++) bad += vals2[r] != r * 100 + rank;
            RUN(MPI_Alltoallv(vals, cnt, dsp, MPI_INT, vals2, cnt, dsp, MPI_INT, MPI_COMM_WORLD), MPI_Ialltoallv(vals, cnt, dsp, MPI_INT, vals2, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &q));
            for (int r = 0; r < size; r++) bad += vals2[r] != r * 100 + rank;
            RUN(MPI_Alltoallw(vals, cnt, bdsp, ty, vals2, cnt, bdsp, ty, MPI_COMM_WORLD), MPI_Ialltoallw(vals, cnt, bdsp, ty, vals2, cnt, bdsp, ty, MPI_COMM_WORLD, &q));
            for (int r = 0; r < size; r++) bad += vals2[r] != r * 100 + rank;
            for (int r = 0; r < size; r++) vals[r] = r + 1;
            RUN(MPI_Reduce_scatter(vals, &z, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_Ireduce_scatter(vals, &z, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
            bad += z != size * (rank + 1);
            RUN(MPI_Reduce_scatter_block(vals, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_Ireduce_scatter_block(vals, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
            bad += z != size * (rank + 1);
            RUN(MPI_Scan(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_Iscan(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
            bad += z != (rank + 1) * (rank + 2) / 2;
            z = 0;
            RUN(MPI_Exscan(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_Iexscan(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
            if (rank > 0) bad += z != rank * (rank + 1) / 2;
            if (nb) {
                MPI_Ibarrier(MPI_COMM_WORLD, &q); MPI_Wait(&q, MPI_STATUS_IGNORE);
                y = rank == 0 ? 4242 : 0;
                MPI_Ibcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD, &q); MPI_Wait(&q, MPI_STATUS_IGNORE);
                bad += y != 4242;
                MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q); MPI_Wait(&q, MPI_STATUS_IGNORE);
                bad += y != size * (size + 1) / 2;
            }
#undef RUN
        }
        free(cnt); free(dsp); free(ty); free(bdsp);
    }
    /* MPI-3/4 entry points, where the MPI has them (the same feature macros as the injector);
     * rank 0 reports how many of each call it made, by the injector's call names */
    int x_send = 0, x_isend = 0, x_allreduce = 0, x_barrier = 0, x_isendrecv = 0, x_isendrecv_replace = 0,
        x_neighbor_allgather = 0, x_ineighbor_alltoall = 0;
#ifdef LTS_HAVE_ISENDRECV
    {
        MPI_Request q;
        fill(buf, PAY, 3000u + (unsigned)rank);
        MPI_Isendrecv(buf, PAY, MPI_UNSIGNED, right, 40, rbuf, PAY, MPI_UNSIGNED, left, 40, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 3000u + (unsigned)left);
        memcpy(rbuf, buf, sizeof buf);
        MPI_Isendrecv_replace(rbuf, PAY, MPI_UNSIGNED, right, 41, left, 41, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 3000u + (unsigned)left);
        x_isendrecv = x_isendrecv_replace = size > 1;
    }
#endif
#ifdef LTS_HAVE_LARGE_COUNT
    {
        MPI_Request q[2];
        fill(buf, PAY, 4000u + (unsigned)rank);
        MPI_Irecv_c(rbuf, PAY, MPI_UNSIGNED, left, 42, MPI_COMM_WORLD, &q[0]);
        MPI_Isend_c(buf, PAY, MPI_UNSIGNED, right, 42, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        bad += !good(rbuf, PAY, 4000u + (unsigned)left);
        MPI_Irecv_c(rbuf, PAY, MPI_UNSIGNED, left, 43, MPI_COMM_WORLD, &q[0]);
        MPI_Send_c(buf, PAY, MPI_UNSIGNED, right, 43, MPI_COMM_WORLD);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 4000u + (unsigned)left);
        int x = rank + 1, y = 0;
        MPI_Allreduce_c(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        bad += y != size * (size + 1) / 2;
        x_send += size > 1;
        x_isend += size > 1;
        x_allreduce += size > 1;
    }
#endif
#ifdef LTS_HAVE_NEIGHBOR
    {
        MPI_Comm ring;
        int dims = size, periods = 1;
        MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring);
        int me = rank, nb[2] = {-1, -1};
        MPI_Neighbor_allgather(&me, 1, MPI_INT, nb, 1, MPI_INT, ring);   /* order: source -1, then +1 */
        bad += nb[0] != left || nb[1] != right;
        int out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-1, -1};
        MPI_Request q;
        MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (left != right) bad += in[0] != left * 10 + 1 || in[1] != right * 10;
        else bad += (in[0] + in[1]) != left * 20 + 1 || (in[0] - in[1]) * (in[0] - in[1]) != 1;   /* both from one
            rank: which arrives in which slot is not the same in every MPI */
        MPI_Comm_free(&ring);
        x_neighbor_allgather = x_ineighbor_alltoall = size > 1;
    }
#endif
#ifdef LTS_HAVE_PERSISTENT_COLL
    {
        MPI_Request q;
        int x = rank + 1, y = 0;
        MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        for (int r = 0; r < 2; r++) {
            y = 0;
            MPI_Start(&q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            bad += y != size * (size + 1) / 2;
        }
        MPI_Request_free(&q);
        MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Startall(1, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
        x_allreduce += size > 1 ? 2 : 0;
        x_barrier += size > 1;
    }
#endif
    /* send to MPI_PROC_NULL and to self: never delayed */
    MPI_Send(buf, PAY, MPI_UNSIGNED, MPI_PROC_NULL, 30, MPI_COMM_WORLD);
    {
        MPI_Request q;
        fill(buf, PAY, 5000u);
        MPI_Irecv(rbuf, PAY, MPI_UNSIGNED, rank, 31, MPI_COMM_WORLD, &q);
        MPI_Send(buf, PAY, MPI_UNSIGNED, rank, 31, MPI_COMM_WORLD);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        bad += !good(rbuf, PAY, 5000u);
    }
    int total_bad = 0;
    MPI_Reduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"np\": %d, \"iters\": %d, \"coll_iters\": %d, \"checksum_errors\": %d, ", size, iters, citers, total_bad);
        if (size >= 2) {
            for (int b = 0; b < 2; b++) {
                for (int i = 0; i < iters; i++) rtt[b][i] /= 2;
                printf("\"%shalf_rtt_min_us\": %.3f, \"%shalf_rtt_median_us\": %.3f, ", b ? "base_" : "",
                       minimum(rtt[b], iters) * 1e6, b ? "base_" : "", median(rtt[b], iters) * 1e6);
            }
            printf("\"send_call_us\": [");
            for (int r = 0; r < 2; r++)
                printf("%s{\"rank\": %d, \"min\": %.3f, \"median\": %.3f, \"base_min\": %.3f, \"base_median\": %.3f}",
                       r ? ", " : "", r, all_send[4 * r], all_send[4 * r + 1], all_send[4 * r + 2], all_send[4 * r + 3]);
            printf("], ");
        } else {
            printf("\"half_rtt_min_us\": null, \"half_rtt_median_us\": null, \"base_half_rtt_min_us\": null, "
                   "\"base_half_rtt_median_us\": null, \"send_call_us\": null, ");
        }
        for (int b = 0; b < 2; b++)
            printf("\"%sbarrier_median_us\": %.3f, \"%sallreduce_median_us\": %.3f, \"%sbcast_median_us\": %.3f, ",
                   b ? "base_" : "", coll_med[b][0], b ? "base_" : "", coll_med[b][1], b ? "base_" : "", coll_med[b][2]);
        /* minima too: load only adds time, so a minimum is where an injected delay (or its
         * absence) shows beside a busy process; medians of the MPI_/PMPI_ pair differ there by an
         * order effect (the first call of a pair absorbs the ranks' skew: +6.4 us at a median) */
        for (int b = 0; b < 2; b++)
            printf("\"%sbarrier_min_us\": %.3f, \"%sallreduce_min_us\": %.3f, \"%sbcast_min_us\": %.3f, ",
                   b ? "base_" : "", coll_min[b][0], b ? "base_" : "", coll_min[b][1], b ? "base_" : "", coll_min[b][2]);
        printf("\"extra_calls\": {\"send\": %d, \"isend\": %d, \"allreduce\": %d, \"barrier\": %d, \"isendrecv\": %d, "
               "\"isendrecv_replace\": %d, \"neighbor_allgather\": %d, \"ineighbor_alltoall\": %d}}\n", x_send, x_isend,
               x_allreduce, x_barrier, x_isendrecv, x_isendrecv_replace, x_neighbor_allgather, x_ineighbor_alltoall);
    }
    for (int b = 0; b < 2; b++) { free(rtt[b]); free(sendt[b]); free(ct[b]); }
    free(vals); free(vals2); free(all_send);
    MPI_Finalize();
    return total_bad && rank == 0 ? 1 : 0;
}
