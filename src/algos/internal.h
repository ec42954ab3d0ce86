/* Helpers shared by the algorithm families (not public). */
#ifndef LTS_ALGOS_INTERNAL_H
#define LTS_ALGOS_INTERNAL_H
#include "latscope/algos.h"

/* Relative rank: the root is 0, the others follow it cyclically, so every tree below is the
 * same for any root. */
static inline int lts_vrank(int rank, int root, int P) { return (rank - root + P) % P; }
static inline int lts_real(int vrank, int root, int P) { return (vrank + root) % P; }

/* Number of ranks in the binomial subtree rooted at relative rank v: children of v are
 * v + 2^k for 2^k below v's lowest set bit (below P for the root). */
static inline int lts_binomial_subtree(int v, int P) {
    if (v == 0) return P;
    int low = v & -v;
    return low < P - v ? low : P - v;
}

/* Copy a typed block to another typed block of the same signature on this rank. */
static inline int lts_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm) {
    int me;
    MPI_Comm_rank(comm, &me);
    return MPI_Sendrecv(src, scount, stype, me, LTS_COLL_TAG + 1, dst, rcount, rtype, me, LTS_COLL_TAG + 1, comm,
                        MPI_STATUS_IGNORE);
}

/* Address of block i of `count` elements of `dt` in buf. */
static inline char *lts_block(const void *buf, int i, int count, MPI_Datatype dt) {
    MPI_Aint lb, ext;
    MPI_Type_get_extent(dt, &lb, &ext);
    return (char *)buf + (MPI_Aint)i * count * ext;
}
#endif
