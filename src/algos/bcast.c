/* Broadcast algorithms (MPIBlib §3 measures linear and binomial bcast; trees as in MPICH's
 * MPIR_Bcast_intra_binomial). Return MPI error codes: they stand in for MPI_Bcast. */
#include "internal.h"
#include "latscope/peers.h"
#include <stdlib.h>

/* Flat tree: the root sends to every other rank (nonblocking, all in flight). */
int lts_bcast_linear(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    int me, P, rc;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (P == 1) return MPI_SUCCESS;
    if (me != root) return MPI_Recv(buf, count, dt, root, LTS_COLL_TAG, comm, MPI_STATUS_IGNORE);
    MPI_Request *req = malloc((size_t)(P - 1) * sizeof *req);
    if (!req) return MPI_ERR_NO_MEM;
    int k = 0;
    for (int r = 0; r < P; r++) {
        if (r == root) continue;
        if ((rc = MPI_Isend(buf, count, dt, r, LTS_COLL_TAG, comm, &req[k]))) {
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            free(req);
            return rc;
        }
        k++;
    }
    rc = MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc;
}

/* Binomial tree over relative ranks: receive once from the parent (v minus its lowest set
 * bit), then send to children v + 2^k, largest subtree first. log2(P) rounds. */
int lts_bcast_binomial(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    int me, P, rc;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    /* parent and children: latscope/peers.h, shared with the simulator (src/sim) */
    int v = lts_vrank(me, root, P), mask = lts_peers_binomial_mask(v, P);
    if (v && (rc = MPI_Recv(buf, count, dt, lts_real(v - mask, root, P), LTS_COLL_TAG, comm, MPI_STATUS_IGNORE)))
        return rc;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < P && (rc = MPI_Send(buf, count, dt, lts_real(v + mask, root, P), LTS_COLL_TAG, comm)))
            return rc;
    return MPI_SUCCESS;
}
