/* Pure parts of the latency injector (no MPI): the delay-table parser (docs/delay-table.md),
 * the seed parser, the per-rank LCG streams, and the LATSCOPE_INJECT_RANKS / _CALLS grammars.
 * Every parser returns 0 or a negative code and writes a one-line message naming the bad
 * input (file and line, or the bad token and what is allowed) into err. */
#ifndef LTS_INJECT_TABLE_H
#define LTS_INJECT_TABLE_H
#include <stddef.h>
#include <stdint.h>

#define LTS_INJECT_TABLE_N 4096         /* indexed by the low 12 bits of the LCG output */
#define LTS_INJECT_TABLE_LINES 512
#define LTS_INJECT_TABLE_COLS 8
#define LTS_INJECT_TABLE_MAGIC "# latscope-delay-table 1"
#define LTS_INJECT_ERRLEN 1536   /* room for the list of valid call names */

/* Parse a delay table held in memory (name is used in messages only). Delays in ns. */
int lts_inject_table_parse(const char *text, size_t len, const char *name,
                           uint64_t table[LTS_INJECT_TABLE_N], char *err, size_t errlen);
/* Read and parse a delay-table file. */
int lts_inject_table_load(const char *path, uint64_t table[LTS_INJECT_TABLE_N], char *err, size_t errlen);

/* LATSCOPE_INJECT_SEED: the integer itself, or a path to a file holding one integer (paper §3.1). */
int lts_inject_seed_parse(const char *spec, uint64_t *seed, char *err, size_t errlen);

/* Random streams. A rank's (and thread's) stream state is splitmix64(seed ^ rank ^ thread
 * mix); each draw is one step of a 64-bit LCG (constant time, 8 bytes of state, paper §3.1). */
uint64_t lts_inject_splitmix64(uint64_t x);
uint64_t lts_inject_stream_init(uint64_t seed, int rank, unsigned thread);
static inline unsigned lts_inject_next_index(uint64_t *state) {
    /* Knuth MMIX constants. The state's own low bits have short periods (bit k repeats every
     * 2^(k+1) steps), so the output is the upper half of the state, as in drand48, and the
     * index is the low 12 bits of that output (no division, paper §3.1). */
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(*state >> 32) & (LTS_INJECT_TABLE_N - 1);
}

/* LATSCOPE_INJECT_RANKS: "0,3-5". Sets sel[r] = 1 for the listed ranks below nranks;
 * a rank >= nranks is an error (it would silently target nothing). */
int lts_inject_ranks_parse(const char *spec, int nranks, unsigned char *sel, char *err, size_t errlen);

/* The calls that can be delayed: one row each (name, group), in this one list; the enum of
 * indices and the name table are both generated from it. A call's large-count (_c) variant and,
 * for collectives, its persistent form (MPI_X_init, delayed at MPI_Start) go by the same name.
 * Every name exists whatever the MPI provides, so LATSCOPE_INJECT_CALLS means the same everywhere. */
enum { LTS_INJ_P2P = 1, LTS_INJ_COLL = 2 };
#define LTS_INJECT_CALL_LIST(X) \
    X(send, P2P) X(isend, P2P) X(ssend, P2P) X(issend, P2P) X(bsend, P2P) X(ibsend, P2P) \
    X(rsend, P2P) X(irsend, P2P) X(start, P2P) X(startall, P2P) X(sendrecv, P2P) \
    X(sendrecv_replace, P2P) X(isendrecv, P2P) X(isendrecv_replace, P2P) \
    X(barrier, COLL) X(bcast, COLL) X(reduce, COLL) X(allreduce, COLL) X(gather, COLL) \
    X(gatherv, COLL) X(scatter, COLL) X(scatterv, COLL) X(allgather, COLL) X(allgatherv, COLL) \
    X(alltoall, COLL) X(alltoallv, COLL) X(alltoallw, COLL) X(reduce_scatter, COLL) \
    X(reduce_scatter_block, COLL) X(scan, COLL) X(exscan, COLL) \
    X(ibarrier, COLL) X(ibcast, COLL) X(ireduce, COLL) X(iallreduce, COLL) X(igather, COLL) \
    X(igatherv, COLL) X(iscatter, COLL) X(iscatterv, COLL) X(iallgather, COLL) \
    X(iallgatherv, COLL) X(ialltoall, COLL) X(ialltoallv, COLL) X(ialltoallw, COLL) \
    X(ireduce_scatter, COLL) X(ireduce_scatter_block, COLL) X(iscan, COLL) X(iexscan, COLL) \
    X(neighbor_allgather, COLL) X(neighbor_allgatherv, COLL) X(neighbor_alltoall, COLL) \
    X(neighbor_alltoallv, COLL) X(neighbor_alltoallw, COLL) X(ineighbor_allgather, COLL) \
    X(ineighbor_allgatherv, COLL) X(ineighbor_alltoall, COLL) X(ineighbor_alltoallv, COLL) \
    X(ineighbor_alltoallw, COLL)
#define LTS_INJ_ENUM_(n, g) LTS_CALL_##n,
enum { LTS_INJECT_CALL_LIST(LTS_INJ_ENUM_) LTS_INJECT_NCALLS };
#undef LTS_INJ_ENUM_
typedef struct lts_inject_call {
    const char *name;
    int group;
} lts_inject_call_t;
extern const lts_inject_call_t lts_inject_calls[LTS_INJECT_NCALLS];
int lts_inject_call_index(const char *name);   /* -1 if unknown */

/* LATSCOPE_INJECT_CALLS: include/exclude grammar over group names (p2p, coll, all) and call
 * names, applied left to right. If the first token is an exclusion, the start is "all"; else
 * the start is "none". NULL or empty spec → all. */
int lts_inject_calls_parse(const char *spec, unsigned char *enabled /* [LTS_INJECT_NCALLS] */,
                           char *err, size_t errlen);

#endif
