/* All-to-all family from point-to-point messages (the injector's message mode
 * runs MPI_Allgather and MPI_Alltoall as these). Return MPI error codes. */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

/* Binomial gather to rank 0, then binomial broadcast of the whole result: 2 ceil(log2 P) rounds. */
int lts_allgather_gather_bcast(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                               MPI_Datatype rtype, MPI_Comm comm) {
    int me, P, rc;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (sbuf == MPI_IN_PLACE && me != 0) {   /* this rank's block already sits in rbuf */
        sbuf = lts_block(rbuf, me, rcount, rtype);
        scount = rcount;
        stype = rtype;
    }
    if ((rc = lts_gather_binomial(sbuf, scount, stype, rbuf, rcount, rtype, 0, comm))) return rc;
    if ((double)rcount * P > 2147483647.0) return MPI_ERR_COUNT;
    return lts_bcast_binomial(rbuf, rcount * P, rtype, 0, comm);
}

/* Pairwise exchange: in step s = 1 .. P-1 rank r sends block r+s to r+s and receives block r-s
 * from r-s (mod P), one MPI_Sendrecv each: P-1 rounds, every message on the critical path. */
int lts_alltoall_pairwise(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    void *copy = NULL;
    if (sbuf == MPI_IN_PLACE) {   /* send from a copy of rbuf, as if it were the send buffer */
        MPI_Aint lb, ext, tlb, text;
        MPI_Type_get_extent(rtype, &lb, &ext);
        MPI_Type_get_true_extent(rtype, &tlb, &text);
        size_t n = (size_t)rcount * (size_t)P;
        size_t bytes = n ? (size_t)text + (n - 1) * (size_t)ext : 0;
        if (!(copy = malloc(bytes + 1))) return MPI_ERR_NO_MEM;
        memcpy(copy, (char *)rbuf + tlb, bytes);
        sbuf = (char *)copy - tlb;
        scount = rcount;
        stype = rtype;
    }
    for (int s = 0; s < P && rc == MPI_SUCCESS; s++) {
        int to = (me + s) % P, from = (me - s + P) % P;
        rc = MPI_Sendrecv(lts_block(sbuf, to, scount, stype), scount, stype, to, LTS_COLL_TAG,
                          lts_block(rbuf, from, rcount, rtype), rcount, rtype, from, LTS_COLL_TAG, comm,
                          MPI_STATUS_IGNORE);
    }
    free(copy);
    return rc;
}
