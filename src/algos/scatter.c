/* Scatter algorithms: linear (the root sends each block) and binomial (MPICH's
 * MPIR_Scatter_intra_binomial: each subtree root forwards its subtree's blocks). Return MPI
 * error codes: they stand in for MPI_Scatter. Intermediate ranks hold blocks in MPI_Pack
 * format in relative-rank order, so any datatype works (homogeneous: a block packs to
 * count x type size bytes). */
#include "internal.h"
#include <limits.h>
#include <stdlib.h>

int lts_scatter_linear(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       int root, MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (me != root) return MPI_Recv(rbuf, rcount, rtype, root, LTS_COLL_TAG, comm, MPI_STATUS_IGNORE);
    MPI_Request *req = malloc((size_t)P * sizeof *req);
    if (!req) return MPI_ERR_NO_MEM;
    int k = 0;
    for (int r = 0; r < P && rc == MPI_SUCCESS; r++)
        if (r != root && (rc = MPI_Isend(lts_block(sbuf, r, scount, stype), scount, stype, r, LTS_COLL_TAG, comm, &req[k])) == MPI_SUCCESS)
            k++;
    if (rc == MPI_SUCCESS && rbuf != MPI_IN_PLACE)
        rc = lts_local_copy(lts_block(sbuf, root, scount, stype), scount, stype, rbuf, rcount, rtype, comm);
    int wrc = MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc ? rc : wrc;
}

int lts_scatter_binomial(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, int root, MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS, tsz;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    int v = lts_vrank(me, root, P), sub = lts_binomial_subtree(v, P);
    MPI_Type_size(me == root ? stype : rtype, &tsz);
    size_t blk = (size_t)tsz * (size_t)(me == root ? scount : rcount);
    if ((double)blk * P > (double)INT_MAX) return MPI_ERR_COUNT;
    char *tmp = malloc((size_t)sub * blk + 1);
    if (!tmp) return MPI_ERR_NO_MEM;
    int mask = 1;
    if (v == 0) {
        for (int w = 0; w < P && rc == MPI_SUCCESS; w++) {
            int pos = (int)(w * blk);
            rc = MPI_Pack(lts_block(sbuf, lts_real(w, root, P), scount, stype), scount, stype, tmp, (int)(P * blk), &pos, comm);
            if (rc == MPI_SUCCESS && (size_t)pos != (w + 1) * blk) rc = MPI_ERR_TYPE;
        }
        while (mask < P) mask <<= 1;
    } else {
        while (!(v & mask)) mask <<= 1;
        rc = MPI_Recv(tmp, (int)(sub * blk), MPI_PACKED, lts_real(v - mask, root, P), LTS_COLL_TAG, comm, MPI_STATUS_IGNORE);
    }
    /* children v + m (m below v's lowest bit), largest subtree first */
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (v + mask < P)
            rc = MPI_Send(tmp + mask * blk, (int)(lts_binomial_subtree(v + mask, P) * blk), MPI_PACKED,
                          lts_real(v + mask, root, P), LTS_COLL_TAG, comm);
    if (rc == MPI_SUCCESS && rbuf != MPI_IN_PLACE) {
        int pos = 0;
        rc = MPI_Unpack(tmp, (int)blk, &pos, rbuf, rcount, rtype, comm);
    }
    free(tmp);
    return rc;
}
