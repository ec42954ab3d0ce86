/* Collective algorithms: one registry per collective operation, each row an implementation
 * with the exact MPI signature (so any of them can stand in for the MPI call). Built-in rows:
 * `native` (the MPI library's own), `linear` and `binomial` for bcast, scatter and gather,
 * `binomial` reduce, `reduce-bcast` allreduce, `gather-bcast` allgather, `pairwise` alltoall, and
 * a `null` row per operation (moves nothing; tests the registry and the driver's own cost).
 * Users add their own implementations at run time with lts_coll_register() (flags 0) or
 * lts_coll_register_flags(). */
#ifndef LATSCOPE_ALGOS_H
#define LATSCOPE_ALGOS_H
#include <mpi.h>
#include "latscope/registry.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The collective operations: X(id, help) for each, in lts_coll_op_t order, the name being #id.
 * The one list of names and help: the operation registry (lts_coll_op_names, src/algos/registry.c)
 * and the measured operations (lts_coll_op_registry, src/bench/ops_coll.c) both expand it. */
#define LTS_COLL_OP_LIST(X)                                                                          \
    X(barrier, "MPI_Barrier")                                                                        \
    X(bcast, "MPI_Bcast: size = the message")                                                        \
    X(reduce, "MPI_Reduce (MPI_BOR on bytes): size = each rank's vector")                            \
    X(allreduce, "MPI_Allreduce (MPI_BOR on bytes): size = each rank's vector")                      \
    X(scatter, "MPI_Scatter: size = the root's whole buffer; each rank gets size/P")                 \
    X(gather, "MPI_Gather: size = the root's whole buffer; each rank sends size/P")                  \
    X(allgather, "MPI_Allgather: size = each rank's whole result; each contributes size/P")          \
    X(alltoall, "MPI_Alltoall: size = each rank's whole send buffer; size/P to each rank")

/* The collective operations, in LTS_COLL_OP_LIST's order. */
typedef enum {
    LTS_COLL_BARRIER = 0,
    LTS_COLL_BCAST,
    LTS_COLL_REDUCE,
    LTS_COLL_ALLREDUCE,
    LTS_COLL_SCATTER,
    LTS_COLL_GATHER,
    LTS_COLL_ALLGATHER,
    LTS_COLL_ALLTOALL,
    LTS_COLL_NOPS
} lts_coll_op_t;

typedef int (*lts_barrier_fn)(MPI_Comm comm);
typedef int (*lts_bcast_fn)(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
typedef int (*lts_reduce_fn)(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                             MPI_Comm comm);
typedef int (*lts_allreduce_fn)(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
typedef int (*lts_scatter_fn)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                              MPI_Datatype rtype, int root, MPI_Comm comm);
typedef lts_scatter_fn lts_gather_fn;
typedef int (*lts_allgather_fn)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                MPI_Datatype rtype, MPI_Comm comm);
typedef lts_allgather_fn lts_alltoall_fn;

/* One function pointer, typed per operation (the row's `op` says which member is valid). */
typedef union lts_coll_fn {
    lts_barrier_fn barrier;
    lts_bcast_fn bcast;
    lts_reduce_fn reduce;
    lts_allreduce_fn allreduce;
    lts_scatter_fn scatter;
    lts_gather_fn gather;
    lts_allgather_fn allgather;
    lts_alltoall_fn alltoall;
} lts_coll_fn_t;

/* A registry row (starts with the lts_reg_head_t fields). */
typedef struct lts_coll_alg {
    const char *name;     /* "native", "linear", "binomial", ... unique within its operation */
    const char *help;
    lts_coll_op_t op;
    lts_coll_fn_t fn;
    /* Parametrised rows (barrier "tree:k=3"): when barrier_k is set, the driver calls
     * barrier_k(comm, k) with the row's k instead of fn.barrier. */
    int k;
    int (*barrier_k)(MPI_Comm comm, int k);
    unsigned flags;       /* LTS_ALG_*: what the implementation allows measuring */
} lts_coll_alg_t;

/* lts_coll_alg_t.flags. TASKS: the root's message to each rank i is a task of its own, ended by
 * rank i's receipt (flat and binomial trees of bcast and scatter), so individual timing (bench.h)
 * can time root -> rank i alone (MPIBlib §2.1). A library's own implementation may pipeline or
 * split messages, so `native` never carries it. */
#define LTS_ALG_TASKS 0x1u

/* Name and help of each operation (row i is lts_coll_op_t i): "barrier", "bcast", ... */
extern const lts_registry_t lts_coll_op_names;

/* The algorithms of one operation, built-in rows first, then registered ones, in a registry
 * view usable with lts_reg_find / lts_reg_select ("native,binomial", "-linear"). NULL for an
 * operation out of range. The view stays valid; its count grows on registration. */
const lts_registry_t *lts_coll_registry(lts_coll_op_t op);

/* The row of `op` named `name` (a ":params" suffix is ignored), or NULL. */
const lts_coll_alg_t *lts_coll_find(lts_coll_op_t op, const char *name);

/* Operation number for a name ("bcast"), or LTS_ENOTFOUND. */
int lts_coll_op_find(const char *name);

/* Add a user-supplied implementation with the operation's MPI signature, e.g.
 *   lts_coll_register(LTS_COLL_BCAST, "mine", "my pipelined bcast", (lts_coll_fn_t){.bcast = my_bcast});
 * The name is copied. It must be non-empty, of letters, digits, '_' and '.', not "all", and not
 * already taken within the operation. Returns 0, LTS_EINVAL (bad op/name/NULL function),
 * LTS_ERANGE (table full) or LTS_ENOMEM. Not thread-safe: register before benchmarking, and do
 * it identically on every rank (selection by name must agree across ranks). */
int lts_coll_register(lts_coll_op_t op, const char *name, const char *help, lts_coll_fn_t fn);
/* The same with the row's LTS_ALG_* flags (e.g. LTS_ALG_TASKS for a tree whose root -> rank i
 * messages are separate tasks, so --timing individual applies). */
int lts_coll_register_flags(lts_coll_op_t op, const char *name, const char *help, lts_coll_fn_t fn, unsigned flags);

/* Built-in implementations (usable directly). Correct for any communicator size, any root,
 * count 0. Point-to-point tags used: LTS_COLL_TAG. */
#define LTS_COLL_TAG 0x4c54
int lts_bcast_linear(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int lts_bcast_binomial(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int lts_scatter_linear(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       int root, MPI_Comm comm);
int lts_scatter_binomial(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, int root, MPI_Comm comm);
int lts_gather_linear(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                      int root, MPI_Comm comm);
int lts_gather_binomial(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm);
/* src/algos/reduce.c, alltoall.c (the injector's message mode, docs/delay-table.md); tag
 * LTS_COLL_TAG + 2 for the reduce's forward from rank 0 to another root. */
int lts_reduce_binomial(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm);
int lts_allreduce_reduce_bcast(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int lts_allgather_gather_bcast(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                               MPI_Datatype rtype, MPI_Comm comm);
int lts_alltoall_pairwise(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                          MPI_Comm comm);

/* ---- barrier algorithms (src/algos/barrier.c; docs/barriers.md) ------------------------------
 * Point-to-point tags: LTS_BARRIER_TAG .. LTS_BARRIER_TAG + 0xff (distinct from the other
 * algorithms' LTS_COLL_TAG, LTS_COLL_TAG + 1). Each is a barrier on any communicator of any size;
 * state a variant needs (two duplicated communicators, a shared-memory window) is created on the
 * first call on a communicator, cached on it as an attribute, and freed with it (or at
 * MPI_Finalize). k: the tree arity, >= 2. */
#define LTS_BARRIER_TAG (LTS_COLL_TAG + 0x100)
#define LTS_BARRIER_K_MAX 4096
int lts_barrier_dissemination(MPI_Comm comm);
int lts_barrier_pairwise(MPI_Comm comm);
int lts_barrier_tree(MPI_Comm comm, int k);        /* k-nomial gather, release down the same tree */
int lts_barrier_tree_bcast(MPI_Comm comm, int k);  /* k-nomial gather, release by MPI_Bcast */
int lts_barrier_tree_shm(MPI_Comm comm, int k);    /* gather per node + across node leaders, release by a flag */
int lts_barrier_tree_2net(MPI_Comm comm, int k);   /* children split over two duplicated comms, MPI_Bcast release */
int lts_barrier_binomial(MPI_Comm comm);
int lts_barrier_linear(MPI_Comm comm);
int lts_barrier_linear_bcast(MPI_Comm comm);
int lts_barrier_linear_2net(MPI_Comm comm);
int lts_barrier_tournament(MPI_Comm comm);
int lts_barrier_shm(MPI_Comm comm);          /* counter + release word in a shared window; leaders: dissemination */

/* Selection with parameters: `spec` in the include/exclude grammar ("all", "a,b,-c"), each name
 * optionally with parameters "name:k=3" (rows with barrier_k take k, 2..LTS_BARRIER_K_MAX; a
 * parametrised row given without k gets its default). "-tree" drops every tree instance,
 * "-tree:k=3" that one. *rows (malloc'd array, caller frees the array only) receives *n rows in
 * selection order; rows with parameters are instances named canonically ("tree:k=3"), kept for
 * the life of the process. Returns 0; LTS_ENOTFOUND for an unknown name (bad = the name);
 * LTS_EINVAL for a bad parameter or an empty item (bad = what is wrong and what is allowed);
 * LTS_ERANGE when too many distinct instances were made; LTS_ENOMEM. *n may be 0. */
int lts_coll_select(lts_coll_op_t op, const char *spec, const lts_coll_alg_t ***rows, size_t *n, char *bad,
                    size_t badlen);

#ifdef __cplusplus
}
#endif
#endif
