/* Reduction algorithms built from point-to-point messages (the injector's
 * message mode runs MPI_Reduce and MPI_Allreduce as these, so each internal message is delayed).
 * Return MPI error codes: they stand in for MPI_Reduce / MPI_Allreduce. */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

/* A buffer for `count` elements of dt (true extent: lb may be non-zero), NULL on failure. */
static void *typed_alloc(int count, MPI_Datatype dt, void **raw) {
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(dt, &lb, &ext);
    MPI_Type_get_true_extent(dt, &tlb, &text);
    size_t n = count > 0 ? (size_t)text + (size_t)(count - 1) * (size_t)ext : 0;
    *raw = malloc(n + 1);
    return *raw ? (char *)*raw - tlb : NULL;
}

/* Binomial tree over ranks in their own order (MPICH's MPIR_Reduce_intra_binomial for a
 * non-commutative op): in round j, rank r with bit j set sends its partial result for ranks
 * [r, r + 2^j) to r - 2^j, which combines it on the right (lower ranks stay on the left, so any
 * associative op is right). Rank 0 ends with the result and, when it is not the root, forwards it:
 * ceil(log2 P) rounds, plus one message for a root other than 0. */
int lts_reduce_binomial(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;   /* in place: only meaningful at the root */
    if (count == 0) return MPI_SUCCESS;
    if (P == 1) return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : lts_local_copy(in, count, dt, rbuf, count, dt, comm);
    void *araw, *traw;
    char *acc = typed_alloc(count, dt, &araw), *tmp = typed_alloc(count, dt, &traw);
    if (!acc || !tmp) { free(araw); free(traw); return MPI_ERR_NO_MEM; }
    rc = lts_local_copy(in, count, dt, acc, count, dt, comm);
    for (int mask = 1; mask < P && rc == MPI_SUCCESS; mask <<= 1) {
        if (me & mask) {
            rc = MPI_Send(acc, count, dt, me - mask, LTS_COLL_TAG, comm);
            break;
        }
        if (me + mask < P) {
            rc = MPI_Recv(tmp, count, dt, me + mask, LTS_COLL_TAG, comm, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS) rc = MPI_Reduce_local(acc, tmp, count, dt, op);   /* tmp = acc op tmp */
            char *t = acc;
            acc = tmp;
            tmp = t;
        }
    }
    if (rc == MPI_SUCCESS && me == 0 && root == 0) rc = lts_local_copy(acc, count, dt, rbuf, count, dt, comm);
    else if (rc == MPI_SUCCESS && me == 0) rc = MPI_Send(acc, count, dt, root, LTS_COLL_TAG + 2, comm);
    else if (rc == MPI_SUCCESS && me == root) rc = MPI_Recv(rbuf, count, dt, 0, LTS_COLL_TAG + 2, comm, MPI_STATUS_IGNORE);
    free(araw);
    free(traw);
    return rc;
}

/* Reduce to rank 0, then binomial broadcast: 2 ceil(log2 P) rounds, right for any op. */
int lts_allreduce_reduce_bcast(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    int me, rc;
    MPI_Comm_rank(comm, &me);
    if (sbuf == MPI_IN_PLACE && me != 0) sbuf = rbuf;   /* reduce's in place is the root's only */
    if ((rc = lts_reduce_binomial(sbuf, rbuf, count, dt, op, 0, comm))) return rc;
    return lts_bcast_binomial(rbuf, count, dt, 0, comm);
}
