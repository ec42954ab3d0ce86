/* The MPI library's own collectives, and the `null` rows (move nothing: test the registry and
 * time the driver's own cost), behind the registry's typed signatures. */
#include "internal.h"

static int native_barrier(MPI_Comm c) { return MPI_Barrier(c); }
static int native_bcast(void *b, int n, MPI_Datatype t, int r, MPI_Comm c) { return MPI_Bcast(b, n, t, r, c); }
static int native_reduce(const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, int r, MPI_Comm c) {
    return MPI_Reduce(s, b, n, t, o, r, c);
}
static int native_allreduce(const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
    return MPI_Allreduce(s, b, n, t, o, c);
}
static int native_scatter(const void *s, int sn, MPI_Datatype st, void *b, int rn, MPI_Datatype rt, int r, MPI_Comm c) {
    return MPI_Scatter(s, sn, st, b, rn, rt, r, c);
}
static int native_gather(const void *s, int sn, MPI_Datatype st, void *b, int rn, MPI_Datatype rt, int r, MPI_Comm c) {
    return MPI_Gather(s, sn, st, b, rn, rt, r, c);
}
static int native_allgather(const void *s, int sn, MPI_Datatype st, void *b, int rn, MPI_Datatype rt, MPI_Comm c) {
    return MPI_Allgather(s, sn, st, b, rn, rt, c);
}
static int native_alltoall(const void *s, int sn, MPI_Datatype st, void *b, int rn, MPI_Datatype rt, MPI_Comm c) {
    return MPI_Alltoall(s, sn, st, b, rn, rt, c);
}

static int null_barrier(MPI_Comm c) { return MPI_SUCCESS; }
/* parametrised barrier rows at their default k, for callers that use fn.barrier directly */
static int tree_k4(MPI_Comm c) { return lts_barrier_tree(c, 4); }
static int tree_bcast_k4(MPI_Comm c) { return lts_barrier_tree_bcast(c, 4); }
static int tree_shm_k4(MPI_Comm c) { return lts_barrier_tree_shm(c, 4); }
static int tree_2net_k3(MPI_Comm c) { return lts_barrier_tree_2net(c, 3); }
static int null_bcast(void *b, int n, MPI_Datatype t, int r, MPI_Comm c) { return MPI_SUCCESS; }
static int null_reduce(const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, int r, MPI_Comm c) { return MPI_SUCCESS; }
static int null_allreduce(const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) { return MPI_SUCCESS; }
static int null_rooted(const void *s, int sn, MPI_Datatype st, void *b, int rn, MPI_Datatype rt, int r, MPI_Comm c) {
    return MPI_SUCCESS;
}
static int null_all(const void *s, int sn, MPI_Datatype st, void *b, int rn, MPI_Datatype rt, MPI_Comm c) {
    return MPI_SUCCESS;
}

#define NATIVE "the MPI library's own implementation"
#define NULLH "moves nothing: tests the registry; times the driver's own cost (never in \"all\")"
/* THE built-in table: every algorithm of every collective, one row each. */
const lts_coll_alg_t lts_coll_builtin[] = {
    {"native", NATIVE, LTS_COLL_BARRIER, {.barrier = native_barrier}},
    {"null", NULLH, LTS_COLL_BARRIER, {.barrier = null_barrier}},
    /* barrier algorithms (barrier.c; seed 002 §3; costs in docs/barriers.md). Rows with
     * barrier_k take "NAME:k=K" (K >= 2); .k is the default. */
    {"dissemination", "ceil(log2 P) rounds: r signals r+2^j, waits for r-2^j (any P)", LTS_COLL_BARRIER,
     {.barrier = lts_barrier_dissemination}},
    {"pairwise", "pairwise/shuffle exchange with r^2^j; extra ranks of a non-power of two fold in before, out after",
     LTS_COLL_BARRIER, {.barrier = lts_barrier_pairwise}},
    {"tree", "k-nomial gather (k-1 receives per phase), release down the same tree (:k=K, default 4)",
     LTS_COLL_BARRIER, {.barrier = tree_k4}, 4, lts_barrier_tree},
    {"tree-bcast", "k-nomial gather, release by MPI_Bcast (the seed's multicast exit) (:k=K, default 4)",
     LTS_COLL_BARRIER, {.barrier = tree_bcast_k4}, 4, lts_barrier_tree_bcast},
    {"tree-shm", "k-nomial gather per node and across node leaders, release by a flag in an MPI-3 shared window (:k=K)",
     LTS_COLL_BARRIER, {.barrier = tree_shm_k4}, 4, lts_barrier_tree_shm},
    {"tree-2net", "k-nomial gather, children split over two duplicated communicators, MPI_Bcast release (:k=K, "
     "default 3 as the seed); on one machine both are the same network", LTS_COLL_BARRIER, {.barrier = tree_2net_k3}, 3, lts_barrier_tree_2net},
    {"binomial", "binomial fan-in to rank 0, fan-out down the same tree (pre-posted receives)", LTS_COLL_BARRIER,
     {.barrier = lts_barrier_binomial}},
    {"linear", "central counter: all signal rank 0 (any order), which releases each rank", LTS_COLL_BARRIER,
     {.barrier = lts_barrier_linear}},
    {"linear-bcast", "the seed's Concurrent: all signal rank 0, release by MPI_Bcast", LTS_COLL_BARRIER,
     {.barrier = lts_barrier_linear_bcast}},
    {"linear-2net", "Concurrent with 2 networks: odd/even ranks signal on two duplicated communicators; on one "
     "machine both are the same network", LTS_COLL_BARRIER, {.barrier = lts_barrier_linear_2net}},
    {"tournament", "static tournament: round-by-round matches up, the winners wake the losers down", LTS_COLL_BARRIER,
     {.barrier = lts_barrier_tournament}},
    {"shm", "all in an MPI-3 shared window: atomic arrival counter, last arriver bumps a release word; node "
     "leaders run dissemination across nodes", LTS_COLL_BARRIER, {.barrier = lts_barrier_shm}},
    {"native", NATIVE, LTS_COLL_BCAST, {.bcast = native_bcast}},
    {"linear", "flat tree: the root sends to each rank in turn (nonblocking)", LTS_COLL_BCAST,
     {.bcast = lts_bcast_linear}, .flags = LTS_ALG_TASKS},
    {"binomial", "binomial tree: ceil(log2 P) rounds, each rank receives once", LTS_COLL_BCAST,
     {.bcast = lts_bcast_binomial}, .flags = LTS_ALG_TASKS},
    {"null", NULLH, LTS_COLL_BCAST, {.bcast = null_bcast}},
    {"native", NATIVE, LTS_COLL_REDUCE, {.reduce = native_reduce}},
    {"binomial", "binomial tree in rank order (any op): ceil(log2 P) rounds, then rank 0 forwards to the root",
     LTS_COLL_REDUCE, {.reduce = lts_reduce_binomial}},
    {"null", NULLH, LTS_COLL_REDUCE, {.reduce = null_reduce}},
    {"native", NATIVE, LTS_COLL_ALLREDUCE, {.allreduce = native_allreduce}},
    {"reduce-bcast", "binomial reduce to rank 0, then binomial bcast: 2 ceil(log2 P) rounds", LTS_COLL_ALLREDUCE,
     {.allreduce = lts_allreduce_reduce_bcast}},
    {"null", NULLH, LTS_COLL_ALLREDUCE, {.allreduce = null_allreduce}},
    {"native", NATIVE, LTS_COLL_SCATTER, {.scatter = native_scatter}},
    {"linear", "flat tree: the root sends each rank its block (nonblocking)", LTS_COLL_SCATTER,
     {.scatter = lts_scatter_linear}, .flags = LTS_ALG_TASKS},
    {"binomial", "binomial tree: subtree roots forward their subtree's blocks", LTS_COLL_SCATTER,
     {.scatter = lts_scatter_binomial}, .flags = LTS_ALG_TASKS},
    {"null", NULLH, LTS_COLL_SCATTER, {.scatter = null_rooted}},
    {"native", NATIVE, LTS_COLL_GATHER, {.gather = native_gather}},
    {"linear", "flat tree: the root receives each rank's block (nonblocking)", LTS_COLL_GATHER,
     {.gather = lts_gather_linear}},
    {"binomial", "binomial tree: subtrees collected bottom-up, one message per subtree", LTS_COLL_GATHER,
     {.gather = lts_gather_binomial}},
    {"null", NULLH, LTS_COLL_GATHER, {.gather = null_rooted}},
    {"native", NATIVE, LTS_COLL_ALLGATHER, {.allgather = native_allgather}},
    {"gather-bcast", "binomial gather to rank 0, then binomial bcast of the result: 2 ceil(log2 P) rounds",
     LTS_COLL_ALLGATHER, {.allgather = lts_allgather_gather_bcast}},
    {"null", NULLH, LTS_COLL_ALLGATHER, {.allgather = null_all}},
    {"native", NATIVE, LTS_COLL_ALLTOALL, {.alltoall = native_alltoall}},
    {"pairwise", "pairwise exchange: step s sends to r+s, receives from r-s (P-1 rounds)", LTS_COLL_ALLTOALL,
     {.alltoall = lts_alltoall_pairwise}},
    {"null", NULLH, LTS_COLL_ALLTOALL, {.alltoall = null_all}},
};
const size_t lts_coll_builtin_count = sizeof(lts_coll_builtin) / sizeof(lts_coll_builtin[0]);
_Static_assert(sizeof(lts_coll_builtin) / sizeof(lts_coll_builtin[0]) <= LTS_REGISTRY_MAX * LTS_COLL_NOPS,
               "collective algorithm table too large");
