/* The tuned collectives (include/latscope/tune.h): installed decision tables and the drop-in
 * MPI calls that dispatch on them. Each call computes its message size in the registry's
 * convention, finds its range by binary search and calls that row: MPIBlib's Opt_Scatter
 * (seed 001 §4: "return impls[j](...)"), without a table the MPI library's own (the native row). */
#include "tune_internal.h"
#include "latscope/errors.h"
#include <stdlib.h>
#include <string.h>

#define MAX_INSTALLED 16

typedef struct installed {
    int used;
    lts_coll_op_t op;
    int P;
    size_t n;
    size_t *lo;                    /* range starts, ascending, lo[0] == 0 */
    const lts_coll_alg_t **alg;
} installed_t;

static installed_t slots[MAX_INSTALLED];
static const lts_coll_alg_t *native_rows[LTS_COLL_NOPS];

static const lts_coll_alg_t *native_row(lts_coll_op_t op) {
    if (!native_rows[op]) native_rows[op] = lts_coll_find(op, "native");
    return native_rows[op];
}

static void slot_free(installed_t *s) {
    free(s->lo);
    free(s->alg);
    memset(s, 0, sizeof *s);
}

void lts_tune_clear(lts_coll_op_t op) {
    for (int i = 0; i < MAX_INSTALLED; i++)
        if (slots[i].used && (op == LTS_COLL_NOPS || slots[i].op == op)) slot_free(&slots[i]);
}

int lts_tune_use(const lts_tune_table_t *t, MPI_Comm comm, char *msg, size_t msglen) {
    if (!t || (int)t->op < 0 || t->op >= LTS_COLL_NOPS || t->nranges == 0 || t->ranges[0].lo != 0) {
        lts_tune_msg(msg, msglen, "not a decision table (no ranges, or not starting at 0)");
        return LTS_EINVAL;
    }
    if (comm != MPI_COMM_NULL) {
        int P;
        MPI_Comm_size(comm, &P);
        if (P != t->ranks) {
            lts_tune_msg(msg, msglen, "the %s table was measured on %d ranks; this communicator has %d: tune on %d ranks "
                   "(latscope tune --np %d) or load a table made for them", lts_tune_op_name(t->op), t->ranks, P, P, P);
            return LTS_EINVAL;
        }
    }
    for (size_t r = 0; r < t->nranges; r++)
        if (!t->ranges[r].alg || t->ranges[r].alg->op != t->op || (r && t->ranges[r].lo <= t->ranges[r - 1].lo)) {
            lts_tune_msg(msg, msglen, "range %zu of the %s table: no algorithm of that operation, or not sorted", r,
                   lts_tune_op_name(t->op));
            return LTS_EINVAL;
        }
    installed_t s = {1, t->op, t->ranks, t->nranges, malloc(t->nranges * sizeof(size_t)),
                     malloc(t->nranges * sizeof(const lts_coll_alg_t *))};
    if (!s.lo || !s.alg) { slot_free(&s); lts_tune_msg(msg, msglen, "out of memory"); return LTS_ENOMEM; }
    for (size_t r = 0; r < t->nranges; r++) {
        s.lo[r] = t->ranges[r].lo;
        s.alg[r] = t->ranges[r].alg;
    }
    int free_i = -1;
    for (int i = 0; i < MAX_INSTALLED; i++) {
        if (slots[i].used && slots[i].op == t->op && slots[i].P == t->ranks) { free_i = i; break; }
        if (!slots[i].used && free_i < 0) free_i = i;
    }
    if (free_i < 0) {
        slot_free(&s);
        lts_tune_msg(msg, msglen, "%d tables are installed already: lts_tune_clear some first", MAX_INSTALLED);
        return LTS_ERANGE;
    }
    slot_free(&slots[free_i]);
    slots[free_i] = s;
    return LTS_OK;
}

const lts_coll_alg_t *lts_tune_choice(lts_coll_op_t op, int P, size_t bytes) {
    if ((int)op < 0 || op >= LTS_COLL_NOPS) return NULL;
    for (int i = 0; i < MAX_INSTALLED; i++) {
        const installed_t *s = &slots[i];
        if (!s->used || s->op != op || s->P != P) continue;
        size_t lo = 0, hi = s->n;   /* the last range starting at or below bytes */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->lo[mid] <= bytes) lo = mid;
            else hi = mid;
        }
        return s->alg[lo];
    }
    return native_row(op);
}

/* The installed choice for a call on comm moving count x type size bytes (x P with whole = 1),
 * the registry's convention of message size (tune.h). */
static const lts_coll_alg_t *pick(lts_coll_op_t op, MPI_Comm comm, int count, MPI_Datatype dt, int whole) {
    int P, tsz = 0;
    MPI_Comm_size(comm, &P);
    if (count > 0) MPI_Type_size(dt, &tsz);
    size_t b = count > 0 && tsz > 0 ? (size_t)count * (size_t)tsz * (size_t)(whole ? P : 1) : 0;
    return lts_tune_choice(op, P, b);
}

/* Scatter and gather: the root's whole buffer. The root's buffer arguments count only at the
 * root (MPI), so the other ranks use their own block x P, which matches by MPI's type-signature
 * rule: every rank computes the same size and takes the same branch. */
static const lts_coll_alg_t *pick_rooted(lts_coll_op_t op, MPI_Comm comm, int root, int rootcount, MPI_Datatype roottype,
                                         int count, MPI_Datatype dt) {
    int me;
    MPI_Comm_rank(comm, &me);
    return me == root ? pick(op, comm, rootcount, roottype, 1) : pick(op, comm, count, dt, 1);
}

int lts_barrier_tuned(MPI_Comm comm) {
    const lts_coll_alg_t *a = pick(LTS_COLL_BARRIER, comm, 0, MPI_BYTE, 0);
    return a->barrier_k ? a->barrier_k(comm, a->k) : a->fn.barrier(comm);
}

int lts_bcast_tuned(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    return pick(LTS_COLL_BCAST, comm, count, dt, 0)->fn.bcast(buf, count, dt, root, comm);
}

int lts_reduce_tuned(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
    return pick(LTS_COLL_REDUCE, comm, count, dt, 0)->fn.reduce(sbuf, rbuf, count, dt, op, root, comm);
}

int lts_allreduce_tuned(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    return pick(LTS_COLL_ALLREDUCE, comm, count, dt, 0)->fn.allreduce(sbuf, rbuf, count, dt, op, comm);
}

/* scatter: the root's send buffer */
int lts_scatter_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                      int root, MPI_Comm comm) {
    return pick_rooted(LTS_COLL_SCATTER, comm, root, scount, stype, rcount, rtype)
        ->fn.scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

/* gather: the root's receive buffer */
int lts_gather_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int root, MPI_Comm comm) {
    return pick_rooted(LTS_COLL_GATHER, comm, root, rcount, rtype, scount, stype)
        ->fn.gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

/* Allgather: each rank's whole result; alltoall: the whole send buffer. Both from the receive
 * arguments, which are significant on every rank even with MPI_IN_PLACE. */
int lts_allgather_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        MPI_Comm comm) {
    return pick(LTS_COLL_ALLGATHER, comm, rcount, rtype, 1)->fn.allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int lts_alltoall_tuned(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       MPI_Comm comm) {
    return pick(LTS_COLL_ALLTOALL, comm, rcount, rtype, 1)->fn.alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}
