/* Generated schedules (docs/sim.md "Generated schedules"): latscope's own algorithms as
 * programs computed on demand from (rank, P, pc), with their peers from latscope/peers.h, the
 * functions src/algos/barrier.c and src/algos/bcast.c call themselves. Each program is the
 * sequence of MPI operations the C implementation issues, in its order (MPI_Sendrecv = post the
 * receive, send, wait), the same sequence python/latscope/models/barrier_sim.py simulates. */
#include "sim.h"
#include "latscope/errors.h"
#include "latscope/peers.h"
#include <stdio.h>
#include <string.h>

static void set(lts_sim_op_t *o, int kind, int peer, int tag, int64_t size) {
    o->kind = kind;
    o->peer = peer;
    o->tag = tag;
    o->size = size;
}

/* dissemination: per round j (d = 2^j < P): irecv from me - d, send to me + d, wait */
static void op_dissemination(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    uint32_t j = pc / 3;
    if (j >= 31 || (1L << j) >= p->P) { set(o, LTS_SIM_END, 0, 0, 0); return; }
    uint32_t step = pc % 3;
    if (step == 2) { set(o, LTS_SIM_WAIT, 0, 0, 0); return; }
    int to, from;
    lts_peers_dissemination(me, p->P, 1 << j, &to, &from);
    set(o, step ? LTS_SIM_SEND : LTS_SIM_IRECV, step ? to : from, (int)j, 0);
}

/* the same, a round at a time (lts_sim_prog_t.ops): from pc to the round's wait */
static int ops_dissemination(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o, int max) {
    uint32_t j = pc / 3, step = pc % 3;
    if (j >= 31 || (1L << j) >= p->P) { set(o, LTS_SIM_END, 0, 0, 0); return 1; }
    int to, from, n = 0;
    lts_peers_dissemination(me, p->P, 1 << j, &to, &from);
    if (step == 0 && max >= 3) {   /* a whole round, the usual call: straight-line stores */
        set(&o[0], LTS_SIM_IRECV, from, (int)j, 0);
        set(&o[1], LTS_SIM_SEND, to, (int)j, 0);
        set(&o[2], LTS_SIM_WAIT, 0, 0, 0);
        return 3;
    }
    for (; step < 3 && n < max; step++, n++)
        if (step == 2) set(&o[n], LTS_SIM_WAIT, 0, 0, 0);
        else set(&o[n], step ? LTS_SIM_SEND : LTS_SIM_IRECV, step ? to : from, (int)j, 0);
    return n;
}

/* linear (central counter): rank 0 posts P-1 receives, waits, then releases 1..P-1 in order;
 * the others send to 0 and wait for the release. Tags: 0 up, 1 down. */
static void op_linear(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    uint32_t P = (uint32_t)p->P;
    if (P == 1) { set(o, LTS_SIM_END, 0, 0, 0); return; }
    if (me) {
        if (pc == 0) set(o, LTS_SIM_SEND, 0, 0, 0);
        else if (pc == 1) set(o, LTS_SIM_IRECV, 0, 1, 0);
        else if (pc == 2) set(o, LTS_SIM_WAIT, 0, 0, 0);
        else set(o, LTS_SIM_END, 0, 0, 0);
        return;
    }
    if (pc < P - 1) set(o, LTS_SIM_IRECV, (int)pc + 1, 0, 0);
    else if (pc == P - 1) set(o, LTS_SIM_WAIT, 0, 0, 0);
    else if (pc < 2 * P - 1) set(o, LTS_SIM_SEND, (int)(pc - P + 1), 1, 0);
    else set(o, LTS_SIM_END, 0, 0, 0);
}

/* binomial broadcast from rank 0 of `size` bytes with tag `tag` (src/algos/bcast.c
 * lts_bcast_binomial, MPICH's MPIR_Bcast_intra_binomial): receive from the parent, then send to
 * the children, largest subtree first; the ops of rank me from its pc-th on (pc relative to the
 * broadcast's first). O(1) per call: the barrier rows released by MPI_Bcast use it too. */
static void bcast_op(int P, int me, uint32_t pc, int tag, int64_t size, lts_sim_op_t *o) {
    int mask = lts_peers_binomial_mask(me, P);
    if (me) {
        if (pc == 0) { set(o, LTS_SIM_IRECV, me - mask, tag, size); return; }
        if (pc == 1) { set(o, LTS_SIM_WAIT, 0, 0, 0); return; }
        pc -= 2;
    }
    int m = mask >> 1;
    while (m > 0 && me + m >= P) m >>= 1;   /* the largest child; every smaller one exists */
    if (pc >= 31 || (m >> pc) == 0) { set(o, LTS_SIM_END, 0, 0, 0); return; }
    set(o, LTS_SIM_SEND, me + (m >> pc), tag, size);
}

static void op_binomial_bcast(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    bcast_op(p->P, me, pc, 0, p->size, o);
}

enum { TAG_FOLD_IN = 64, TAG_FOLD_OUT, TAG_BIN_UP, TAG_BIN_DOWN, TAG_TOUR_UP, TAG_TOUR_DOWN, TAG_TREE_UP, TAG_TREE_DOWN,
       TAG_BCAST, FLAG_RELEASE };

/* linear gather, then MPI_Bcast (src/algos/barrier.c linear-bcast; linear-2net on one machine,
 * whose MPI_Iprobe polling costs what a receive does here: barrier_sim's poll_s unset) */
static void op_linear_bcast(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    uint32_t P = (uint32_t)p->P;
    if (me) {
        if (pc == 0) set(o, LTS_SIM_SEND, 0, 0, 0);
        else bcast_op(p->P, me, pc - 1, TAG_BCAST, 0, o);
        return;
    }
    if (P == 1) set(o, LTS_SIM_END, 0, 0, 0);
    else if (pc < P - 1) set(o, LTS_SIM_IRECV, (int)pc + 1, 0, 0);
    else if (pc == P - 1) set(o, LTS_SIM_WAIT, 0, 0, 0);
    else bcast_op(p->P, me, pc - P, TAG_BCAST, 0, o);
}

/* Rows whose operations are simplest written as the C algorithm's loops: the loop runs with an
 * emitter that keeps only the pc-th operation (O(operations of one rank) per call, no storage). */
typedef struct emit { uint32_t n, want; lts_sim_op_t *out; } emit_t;
static void E(emit_t *e, int kind, int peer, int tag) {
    if (e->n++ == e->want) set(e->out, kind, peer, tag, 0);
}
static void E_recv(emit_t *e, int from, int tag) { E(e, LTS_SIM_IRECV, from, tag); E(e, LTS_SIM_WAIT, 0, 0); }

/* src/algos/barrier.c lts_barrier_pairwise */
static void emit_pairwise(emit_t *e, int me, int P) {
    int P2 = lts_peers_pairwise_core(P);
    if (me >= P2) {
        E(e, LTS_SIM_SEND, me - P2, TAG_FOLD_IN);
        E_recv(e, me - P2, TAG_FOLD_OUT);
        return;
    }
    if (me + P2 < P) E_recv(e, me + P2, TAG_FOLD_IN);
    for (int j = 0, d = 1; d < P2; j++, d <<= 1) {   /* MPI_Sendrecv: post, send, wait */
        E(e, LTS_SIM_IRECV, me ^ d, j);
        E(e, LTS_SIM_SEND, me ^ d, j);
        E(e, LTS_SIM_WAIT, 0, 0);
    }
    if (me + P2 < P) E(e, LTS_SIM_SEND, me + P2, TAG_FOLD_OUT);
}

/* src/algos/barrier.c lts_barrier_binomial */
static void emit_binomial(emit_t *e, int me, int P) {
    int low = lts_peers_binomial_span(me, P), n = 0;
    for (int d = 1; d < low && me + d < P; d <<= 1, n++) E(e, LTS_SIM_IRECV, me + d, TAG_BIN_UP);
    if (n) E(e, LTS_SIM_WAIT, 0, 0);
    if (me) {
        E(e, LTS_SIM_SEND, me - low, TAG_BIN_UP);
        E_recv(e, me - low, TAG_BIN_DOWN);
    }
    for (int d = 1; d < low && me + d < P; d <<= 1) E(e, LTS_SIM_SEND, me + d, TAG_BIN_DOWN);
}

/* src/algos/barrier.c lts_barrier_tournament */
static void emit_tournament(emit_t *e, int me, int P) {
    int d = 1;
    for (; d < P; d <<= 1) {
        if (me & d) {   /* lost this round */
            E(e, LTS_SIM_SEND, me - d, TAG_TOUR_UP);
            E_recv(e, me - d, TAG_TOUR_DOWN);
            break;
        }
        if (me + d < P) E_recv(e, me + d, TAG_TOUR_UP);
    }
    for (d >>= 1; d >= 1; d >>= 1)
        if (me + d < P) E(e, LTS_SIM_SEND, me + d, TAG_TOUR_DOWN);
}

/* src/algos/barrier.c knomial_gather: in phase j, stride s = k^j, a rank v with v % (k s) == 0
 * receives from v + i s, i = 1..k-1; any other rank sends to v - v % (k s). Returns the parent
 * (-1 at the root), *levels the phases in which me received. */
static int emit_knomial_gather(emit_t *e, int me, int P, int k, int *levels) {
    long s = 1;
    int parent = -1, nk = 0;
    *levels = 0;
    for (; s < P; s *= k, ++*levels) {
        if ((parent = lts_peers_knomial_parent(me, s, k)) >= 0) break;
        for (long i = 1; i < k && me + i * s < P; i++, nk++) E(e, LTS_SIM_IRECV, (int)(me + i * s), TAG_TREE_UP);
    }
    if (nk) E(e, LTS_SIM_WAIT, 0, 0);
    if (parent >= 0) E(e, LTS_SIM_SEND, parent, TAG_TREE_UP);
    return parent;
}

/* src/algos/barrier.c lts_barrier_tree: the k-nomial gather, then the release down the same
 * tree, the latest phase's children first */
static void emit_tree(emit_t *e, int me, int P, int k) {
    int levels, parent = emit_knomial_gather(e, me, P, k, &levels);
    if (parent >= 0) E_recv(e, parent, TAG_TREE_DOWN);
    for (int j = levels - 1; j >= 0; j--) {
        long sj = 1;
        for (int q = 0; q < j; q++) sj *= k;
        for (long i = k - 1; i >= 1; i--)
            if (me + i * sj < P) E(e, LTS_SIM_SEND, (int)(me + i * sj), TAG_TREE_DOWN);
    }
}

/* src/algos/barrier.c tree-bcast (and tree-2net: on one machine both networks are one): the
 * k-nomial gather, then MPI_Bcast from rank 0 (bcast_op, after the gather's operations) */
static void op_tree_bcast(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    emit_t e = {0, pc, o};
    int levels;
    set(o, LTS_SIM_END, 0, 0, 0);
    emit_knomial_gather(&e, me, p->P, p->k, &levels);
    if (pc >= e.n) bcast_op(p->P, me, pc - e.n, TAG_BCAST, 0, o);
}

/* src/algos/barrier.c tree-shm: the k-nomial gather to the node leader (rank 0), which stores
 * the release flag the others spin on (seen L after the store: barrier_sim's flag_s default) */
static void emit_tree_shm(emit_t *e, int me, int P, int k) {
    int levels, parent = emit_knomial_gather(e, me, P, k, &levels);
    E(e, parent < 0 ? LTS_SIM_FLAG_SET : LTS_SIM_FLAG_WAIT, 0, FLAG_RELEASE);
}

#define EMITTED(name)                                                                          \
    static void op_##name(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {   \
        emit_t e = {0, pc, o};                                                                 \
        set(o, LTS_SIM_END, 0, 0, 0);                                                          \
        emit_##name(&e, me, p->P);                                                             \
    }
EMITTED(pairwise)
EMITTED(binomial)
EMITTED(tournament)

static void op_tree(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    emit_t e = {0, pc, o};
    set(o, LTS_SIM_END, 0, 0, 0);
    emit_tree(&e, me, p->P, p->k);
}

static void op_tree_shm(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    emit_t e = {0, pc, o};
    set(o, LTS_SIM_END, 0, 0, 0);
    emit_tree_shm(&e, me, p->P, p->k);
}

const lts_sim_algo_t lts_sim_algos[] = {
    {"dissemination", "barrier: ceil(log2 P) rounds, r signals r + 2^j (src/algos/barrier.c)", op_dissemination, 0,
     ops_dissemination},
    {"linear", "barrier: central counter at rank 0, release by P - 1 sends", op_linear},
    {"pairwise", "barrier: pairwise exchange with r XOR 2^j, surplus ranks folded in and out", op_pairwise},
    {"binomial", "barrier: binomial fan-in to rank 0, then fan-out", op_binomial},
    {"tournament", "barrier: static-winner rounds up, wake-up tree down", op_tournament},
    {"tree", "barrier: k-nomial gather to rank 0 (--k, default 4), release down the same tree", op_tree},
    {"tree-bcast", "barrier: k-nomial gather to rank 0 (--k), release by MPI_Bcast (binomial)", op_tree_bcast},
    {"tree-2net", "barrier: tree-bcast's schedule (on one machine the two networks are one)", op_tree_bcast},
    {"tree-shm", "barrier: k-nomial gather to rank 0 (--k), release by a shared-memory flag (seen L later)",
     op_tree_shm, 1},
    {"linear-bcast", "barrier: linear gather at rank 0, release by MPI_Bcast (binomial)", op_linear_bcast},
    {"linear-2net", "barrier: linear-bcast's schedule (polling costs a receive's o_r)", op_linear_bcast},
    {"binomial-bcast", "broadcast of --size bytes from rank 0, binomial tree (src/algos/bcast.c)", op_binomial_bcast},
};
const int lts_sim_nalgos = (int)(sizeof lts_sim_algos / sizeof lts_sim_algos[0]);

int lts_sim_prog_init(lts_sim_prog_t *p, const char *name, int P, int k, int64_t size, char *err, size_t errlen) {
    for (int i = 0; i < lts_sim_nalgos; i++)
        if (!strcmp(lts_sim_algos[i].name, name)) {
            if (P < 1 || P > (1 << 30)) {
                snprintf(err, errlen, "P = %d: must be 1..%d", P, 1 << 30);
                return LTS_EINVAL;
            }
            if (size < 0) {
                snprintf(err, errlen, "size = %lld: must be >= 0 bytes", (long long)size);
                return LTS_EINVAL;
            }
            p->name = lts_sim_algos[i].name;
            p->P = P;
            p->k = k;
            p->size = size;
            p->op = lts_sim_algos[i].op;
            p->shm_flag = lts_sim_algos[i].shm_flag;
            p->ops = lts_sim_algos[i].ops;
            return 0;
        }
    size_t n = (size_t)snprintf(err, errlen, "algorithm '%s': unknown; valid:", name);
    for (int i = 0; i < lts_sim_nalgos && n < errlen; i++)
        n += (size_t)snprintf(err + n, errlen - n, "%s %s", i ? "," : "", lts_sim_algos[i].name);
    return LTS_ENOTFOUND;
}

int lts_sim_prog_write_goal(const lts_sim_prog_t *p, FILE *f) {
    for (int r = 0; r < p->P; r++)   /* first, before any text: GOAL has no store (tree-shm's flag) */
        for (uint32_t pc = 0;; pc++) {
            lts_sim_op_t op;
            p->op(p, r, pc, &op);
            if (op.kind == LTS_SIM_END) break;
            if (op.kind == LTS_SIM_FLAG_SET || op.kind == LTS_SIM_FLAG_WAIT) return LTS_ENOTSUP;
        }
    fprintf(f, "// %s, P = %d (generated by latscope-sim, docs/sim.md)\nnum_ranks %d\n", p->name, p->P, p->P);
    for (int r = 0; r < p->P; r++) {
        fprintf(f, "rank %d {\n", r);
        /* lcpu: the last send/calc; the receives in [covered, waited) were waited for and are not yet
         * required by a send/calc */
        long lcpu = -1, covered = 0, waited = 0, prev = -1;
        for (uint32_t pc = 0;; pc++) {
            lts_sim_op_t op;
            p->op(p, r, pc, &op);
            if (op.kind == LTS_SIM_END) break;
            if (op.kind == LTS_SIM_WAIT) {
                waited = (long)pc;
                continue;
            }
            if (op.kind == LTS_SIM_IRECV) {
                fprintf(f, "l%u: recv %lldb from %d tag %d\n", pc, (long long)op.size, op.peer, op.tag);
                if (prev >= 0) fprintf(f, "l%u irequires l%ld\n", pc, prev);
            } else {
                if (op.kind == LTS_SIM_SEND)
                    fprintf(f, "l%u: send %lldb to %d tag %d\n", pc, (long long)op.size, op.peer, op.tag);
                else
                    fprintf(f, "l%u: calc %lld\n", pc, (long long)op.size);
                if (lcpu >= 0) fprintf(f, "l%u requires l%ld\n", pc, lcpu);
                for (long q = covered; q < waited; q++) {
                    lts_sim_op_t rq;
                    p->op(p, r, (uint32_t)q, &rq);
                    if (rq.kind == LTS_SIM_IRECV) fprintf(f, "l%u requires l%ld\n", pc, q);
                }
                covered = waited;
                lcpu = (long)pc;
            }
            prev = (long)pc;
        }
        fprintf(f, "}\n");
    }
    return ferror(f) ? LTS_EIO : 0;
}
