/* Gather algorithms: linear (the root receives each block) and binomial (MPICH's
 * MPIR_Gather_intra_binomial: subtrees are collected bottom-up, each subtree root forwards
 * one message). Return MPI error codes: they stand in for MPI_Gather. Packed blocks in
 * relative-rank order, as in scatter.c. */
#include "internal.h"
#include <limits.h>
#include <stdlib.h>

int lts_gather_linear(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                      int root, MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (me != root) return MPI_Send(sbuf, scount, stype, root, LTS_COLL_TAG, comm);
    MPI_Request *req = malloc((size_t)P * sizeof *req);
    if (!req) return MPI_ERR_NO_MEM;
    int k = 0;
    for (int r = 0; r < P && rc == MPI_SUCCESS; r++)
        if (r != root && (rc = MPI_Irecv(lts_block(rbuf, r, rcount, rtype), rcount, rtype, r, LTS_COLL_TAG, comm, &req[k])) == MPI_SUCCESS)
            k++;
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = lts_local_copy(sbuf, scount, stype, lts_block(rbuf, root, rcount, rtype), rcount, rtype, comm);
    int wrc = MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc ? rc : wrc;
}

int lts_gather_binomial(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS, tsz;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    int v = lts_vrank(me, root, P), sub = lts_binomial_subtree(v, P);
    int in_place = me == root && sbuf == MPI_IN_PLACE;
    MPI_Type_size(me == root ? rtype : stype, &tsz);
    size_t blk = (size_t)tsz * (size_t)(me == root ? rcount : scount);
    if ((double)blk * P > (double)INT_MAX) return MPI_ERR_COUNT;
    char *tmp = malloc((size_t)sub * blk + 1);
    if (!tmp) return MPI_ERR_NO_MEM;
    int pos = 0;
    if (in_place) rc = MPI_Pack(lts_block(rbuf, root, rcount, rtype), rcount, rtype, tmp, (int)(sub * blk), &pos, comm);
    else rc = MPI_Pack(sbuf, scount, stype, tmp, (int)(sub * blk), &pos, comm);
    if (rc == MPI_SUCCESS && (size_t)pos != blk) rc = MPI_ERR_TYPE;
    /* receive from children v + 1, v + 2, ... (smallest subtree first), then send up once */
    for (int mask = 1; mask < P && rc == MPI_SUCCESS; mask <<= 1) {
        if (v & mask) {
            rc = MPI_Send(tmp, (int)(sub * blk), MPI_PACKED, lts_real(v - mask, root, P), LTS_COLL_TAG, comm);
            break;
        }
        if (v + mask < P)
            rc = MPI_Recv(tmp + mask * blk, (int)(lts_binomial_subtree(v + mask, P) * blk), MPI_PACKED,
                          lts_real(v + mask, root, P), LTS_COLL_TAG, comm, MPI_STATUS_IGNORE);
    }
    if (v == 0)
        for (int w = 0; w < P && rc == MPI_SUCCESS; w++) {
            if (in_place && w == 0) continue;
            pos = (int)(w * blk);
            rc = MPI_Unpack(tmp, (int)(P * blk), &pos, lts_block(rbuf, lts_real(w, root, P), rcount, rtype), rcount,
                            rtype, comm);
        }
    free(tmp);
    return rc;
}
