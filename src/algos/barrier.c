/* Barrier algorithms (seed 002 §3 "fast barriers on Ethernet", generalised to any P and k; costs
 * in python/latscope/models/barrier.py and docs/barriers.md). All messages are empty; every
 * algorithm is correct on any communicator of any size and for back-to-back calls: messages
 * between one pair of ranks with one tag never overtake each other (MPI's non-overtaking rule),
 * and no rank can send the next barrier's message on a tag before its partner has consumed this
 * barrier's message on it (each algorithm waits for a message that depends on that).
 *
 * Extra state (two duplicated communicators for the two-network variants, a shared-memory
 * window for tree-shm and shm) is created collectively on the first call on a communicator and cached on
 * it with an attribute: never a per-call MPI_Comm_dup. It is freed when the communicator is
 * freed, and what is left is freed at MPI_Finalize (a delete callback on MPI_COMM_SELF, which
 * the standard runs first in MPI_Finalize while MPI is still fully usable). */
#include "internal.h"
#include "latscope/errors.h"
#include "latscope/hooks.h"
#include "latscope/peers.h"
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

/* tag offsets within LTS_BARRIER_TAG's range */
enum {
    T_DISS = 0x00,      /* + round (< 64) */
    T_PAIR = 0x40,      /* + round (< 64) */
    T_FOLD_IN = 0x80, T_FOLD_OUT, T_TREE_UP, T_TREE_DOWN, T_LIN_UP, T_LIN_DOWN, T_TOUR_UP, T_TOUR_DOWN,
    T_BIN_UP, T_BIN_DOWN, T_2NET_UP, T_SHM_UP, T_SHM_X_UP, T_SHM_X_DOWN
};
#define TAG(off) (LTS_BARRIER_TAG + (off))

static int send0(int to, int off, MPI_Comm c) { return MPI_Send(NULL, 0, MPI_BYTE, to, TAG(off), c); }
static int recv0(int from, int off, MPI_Comm c) { return MPI_Recv(NULL, 0, MPI_BYTE, from, TAG(off), c, MPI_STATUS_IGNORE); }

/* ---- dissemination (Hensgen, Finkel & Manber): ceil(log2 P) rounds; in round j rank r signals
 * r + 2^j and waits for r - 2^j (mod P). Seed 002 §5.1.2: (o_s + L + o_r) * ceil(log2 P). */
int lts_barrier_dissemination(MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    for (int j = 0, d = 1; d < P && rc == MPI_SUCCESS; j++, d <<= 1) {
        int to, from;
        lts_peers_dissemination(me, P, d, &to, &from);   /* shared with the simulator (src/sim) */
        rc = MPI_Sendrecv(NULL, 0, MPI_BYTE, to, TAG(T_DISS + j), NULL, 0, MPI_BYTE, from, TAG(T_DISS + j), comm,
                          MPI_STATUS_IGNORE);
    }
    return rc;
}

/* ---- pairwise exchange (shuffle exchange / recursive doubling, seed 002 §3.1.1): log2 P rounds
 * of two-party exchanges with partner r XOR 2^j. Non-powers of two: with P2 the largest power
 * of two <= P, the P - P2 extra ranks r >= P2 first fold into the core (r sends to r - P2), the
 * core of P2 ranks exchanges, then the core releases them (r - P2 sends back): log2 P2 + 2
 * rounds. */
int lts_barrier_pairwise(MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    int P2 = lts_peers_pairwise_core(P);   /* latscope/peers.h, shared with the simulator */
    if (me >= P2) {
        if ((rc = send0(me - P2, T_FOLD_IN, comm))) return rc;
        return recv0(me - P2, T_FOLD_OUT, comm);
    }
    if (me + P2 < P && (rc = recv0(me + P2, T_FOLD_IN, comm))) return rc;
    for (int j = 0, d = 1; d < P2 && rc == MPI_SUCCESS; j++, d <<= 1)
        rc = MPI_Sendrecv(NULL, 0, MPI_BYTE, me ^ d, TAG(T_PAIR + j), NULL, 0, MPI_BYTE, me ^ d, TAG(T_PAIR + j), comm,
                          MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && me + P2 < P) rc = send0(me + P2, T_FOLD_OUT, comm);
    return rc;
}

/* ---- k-nomial gather (seed 002 §3.2: "2分木", "3分木": in each phase a parent receives from k-1
 * others; ceil(log_k P) phases). In phase j (stride s = k^j) a rank v with v % (k s) == 0
 * receives from v + i s (i = 1..k-1, below P); any other rank sends to v - v % (k s) and is
 * done. Receives are posted up front so arrivals are processed back to back (the seed's
 * (o_s + L + (k-1) o_r) per phase). Children may be split over two communicators (the seed's
 * "with 2 networks": child i uses nets[(i-1) % 2]). Returns the parent (-1 at the root). */
/* Children of one rank: at most (k-1) per phase, at most P - 1 in all. */
static int max_children(int P, int k) {
    long n = 0;
    for (long s = 1; s < P; s *= k) n += k - 1;
    return (int)(n < P ? n : P - 1) + 1;
}

/* Children and their requests: on the stack up to 256, else on the heap. */
typedef struct kids {
    int n, stack_c[256];
    MPI_Request stack_r[256];
    int *c;
    MPI_Request *r;
} kids_t;

static int kids_init(kids_t *k, int cap) {
    k->n = 0;
    if (cap <= 256) { k->c = k->stack_c; k->r = k->stack_r; return MPI_SUCCESS; }
    k->c = malloc((size_t)cap * sizeof *k->c);
    k->r = malloc((size_t)cap * sizeof *k->r);
    return k->c && k->r ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void kids_free(kids_t *k) {
    if (k->c != k->stack_c) { free(k->c); free(k->r); }
}

static int knomial_gather(MPI_Comm nets[2], int k, int off, int *parent, kids_t *kd) {
    MPI_Comm comm = nets[0];
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if ((rc = kids_init(kd, max_children(P, k)))) return rc;
    *parent = -1;
    for (long s = 1; s < P; s *= k) {
        int par = lts_peers_knomial_parent(me, s, k);   /* latscope/peers.h, shared with the simulator */
        if (par >= 0) {
            long i = (me - par) / s;   /* which child of the parent, 1..k-1 */
            *parent = par;
            rc = MPI_Waitall(kd->n, kd->r, MPI_STATUSES_IGNORE);
            if (rc == MPI_SUCCESS) rc = send0(*parent, off, nets[(i - 1) % 2]);
            return rc;
        }
        for (long i = 1; i < k && me + i * s < P; i++) {
            kd->c[kd->n] = (int)(me + i * s);
            if ((rc = MPI_Irecv(NULL, 0, MPI_BYTE, kd->c[kd->n], TAG(off), nets[(i - 1) % 2], &kd->r[kd->n]))) return rc;
            kd->n++;
        }
    }
    return MPI_Waitall(kd->n, kd->r, MPI_STATUSES_IGNORE);
}

/* Release down the same k-nomial tree: a rank, once released, wakes the children it gathered
 * from, largest subtree (latest phase) first. */
static int knomial_release(MPI_Comm comm, int parent, const kids_t *kd, int off) {
    int rc = MPI_SUCCESS;
    if (parent >= 0 && (rc = recv0(parent, off, comm))) return rc;
    for (int i = kd->n - 1; i >= 0 && rc == MPI_SUCCESS; i--) rc = send0(kd->c[i], off, comm);
    return rc;
}

static int check_k(int k) { return k >= 2 && k <= LTS_BARRIER_K_MAX ? MPI_SUCCESS : MPI_ERR_ARG; }

/* One byte, not zero: an MPI may return from a zero-count broadcast without communicating. */
static int bcast_release(MPI_Comm comm) {
    char b = 0;
    return MPI_Bcast(&b, 1, MPI_BYTE, 0, comm);
}

/* Arrival up the k-nomial tree, then the release: down the same tree, or (by_bcast) the seed's
 * multicast exit (§3.2), one broadcast once the root has seen everyone arrive. */
static int tree_barrier(MPI_Comm comm, int k, int by_bcast) {
    int parent, rc;
    kids_t kd;
    MPI_Comm nets[2] = {comm, comm};
    if ((rc = check_k(k))) return rc;
    rc = knomial_gather(nets, k, T_TREE_UP, &parent, &kd);
    if (rc == MPI_SUCCESS && !by_bcast) rc = knomial_release(comm, parent, &kd, T_TREE_DOWN);
    kids_free(&kd);
    if (rc == MPI_SUCCESS && by_bcast) rc = bcast_release(comm);
    return rc;
}

int lts_barrier_tree(MPI_Comm comm, int k) { return tree_barrier(comm, k, 0); }
int lts_barrier_tree_bcast(MPI_Comm comm, int k) { return tree_barrier(comm, k, 1); }

/* ---- cached per-communicator state ------------------------------------------------------ */

typedef struct bstate {
    MPI_Comm owner;
    MPI_Comm net[2];          /* two duplicates of owner (two-network variants), or MPI_COMM_NULL */
    MPI_Comm node, leaders;   /* tree-shm: ranks sharing memory; node rank 0 of every node */
    MPI_Win win;
    volatile uint64_t *flag;  /* in node rank 0's segment: the number of releases so far */
    uint64_t gen;             /* releases this rank has seen */
    /* shm row: arrivals counter and release word on two more 64-byte lines of the same window
     * (own lines: the arrivals' fetch-adds must not bounce the line the waiters spin on, nor
     * tree-shm's flag) */
    volatile uint64_t *count, *rel;
    uint64_t rgen;            /* shm releases this rank has seen */
    int nn, one_node;         /* ranks on this rank's node; 1 when the whole communicator is one node */
    struct bstate *next;      /* every live state in creation order (for MPI_Finalize) */
} bstate_t;

static int keyval = MPI_KEYVAL_INVALID, self_keyval = MPI_KEYVAL_INVALID;
static bstate_t *states;

static void state_free(bstate_t *s) {
    for (int i = 0; i < 2; i++)
        if (s->net[i] != MPI_COMM_NULL) MPI_Comm_free(&s->net[i]);
    if (s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    if (s->node != MPI_COMM_NULL) MPI_Comm_free(&s->node);
    if (s->leaders != MPI_COMM_NULL) MPI_Comm_free(&s->leaders);
    for (bstate_t **p = &states; *p; p = &(*p)->next)
        if (*p == s) { *p = s->next; break; }
    free(s);
}

static int delete_cb(MPI_Comm comm, int kv, void *val, void *extra) {
    state_free(val);
    return MPI_SUCCESS;
}

/* MPI_Finalize: free what is left, oldest first (every rank created its states collectively in
 * the same order, so the collective frees inside match). */
static int self_delete_cb(MPI_Comm comm, int kv, void *val, void *extra) {
    while (states) MPI_Comm_delete_attr(states->owner, keyval);
    return MPI_SUCCESS;
}

static int get_state(MPI_Comm comm, bstate_t **out) {
    int rc, found;
    void *v;
    if (keyval == MPI_KEYVAL_INVALID) {
        if ((rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &keyval, NULL))) return rc;
        if ((rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_cb, &self_keyval, NULL))) return rc;
        if ((rc = MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL))) return rc;
    }
    if ((rc = MPI_Comm_get_attr(comm, keyval, &v, &found))) return rc;
    if (found) { *out = v; return MPI_SUCCESS; }
    bstate_t *s = calloc(1, sizeof *s);
    if (!s) return MPI_ERR_NO_MEM;
    s->owner = comm;
    s->net[0] = s->net[1] = s->node = s->leaders = MPI_COMM_NULL;
    s->win = MPI_WIN_NULL;
    if ((rc = MPI_Comm_set_attr(comm, keyval, s))) { free(s); return rc; }
    bstate_t **p = &states;
    while (*p) p = &(*p)->next;
    *p = s;
    *out = s;
    return MPI_SUCCESS;
}

static int get_nets(MPI_Comm comm, MPI_Comm nets[2]) {
    bstate_t *s;
    int rc = get_state(comm, &s);
    if (rc) return rc;
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++)
        if (s->net[i] == MPI_COMM_NULL) rc = MPI_Comm_dup(comm, &s->net[i]);
    nets[0] = s->net[0];
    nets[1] = s->net[1];
    return rc;
}

/* ---- the seed's two-network variants (§3.3): on one machine both "networks" are the same
 * network (two communicators over the same shared memory); the variant then only shows what
 * splitting the receives over two message queues costs. */
int lts_barrier_tree_2net(MPI_Comm comm, int k) {
    int parent, rc;
    kids_t kd;
    MPI_Comm nets[2];
    if ((rc = check_k(k)) || (rc = get_nets(comm, nets))) return rc;
    rc = knomial_gather(nets, k, T_2NET_UP, &parent, &kd);
    kids_free(&kd);
    return rc ? rc : bcast_release(nets[0]);
}

/* ---- central counter (seed 002 §3.2.3 "Concurrent"): everyone signals rank 0, which counts P-1
 * arrivals (any order) and releases everyone. */
static int linear_gather(MPI_Comm nets[2]) {
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(nets[0], &me);
    MPI_Comm_size(nets[0], &P);
    if (me) return send0(0, T_LIN_UP, nets[me % 2]);
    for (int i = 1; i < P && rc == MPI_SUCCESS; i++) {
        /* two networks: the next arrival may come on either; probe both without spinning on one */
        if (nets[0] == nets[1]) { rc = MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG(T_LIN_UP), nets[0], MPI_STATUS_IGNORE); continue; }
        for (int got = 0; !got && rc == MPI_SUCCESS;)
            for (int q = 0; q < 2 && !got && rc == MPI_SUCCESS; q++) {
                rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG(T_LIN_UP), nets[q], &got, MPI_STATUS_IGNORE);
                if (got && rc == MPI_SUCCESS)
                    rc = MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG(T_LIN_UP), nets[q], MPI_STATUS_IGNORE);
            }
    }
    return rc;
}

int lts_barrier_linear(MPI_Comm comm) {
    int me, P, rc;
    MPI_Comm nets[2] = {comm, comm};
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if ((rc = linear_gather(nets))) return rc;
    if (me) return recv0(0, T_LIN_DOWN, comm);
    for (int i = 1; i < P && rc == MPI_SUCCESS; i++) rc = send0(i, T_LIN_DOWN, comm);
    return rc;
}

int lts_barrier_linear_bcast(MPI_Comm comm) {
    MPI_Comm nets[2] = {comm, comm};
    int rc = linear_gather(nets);
    return rc ? rc : bcast_release(comm);
}

/* "Concurrent with 2 networks" (§3.3.2): odd ranks signal on one duplicate, even on the other */
int lts_barrier_linear_2net(MPI_Comm comm) {
    MPI_Comm nets[2];
    int rc = get_nets(comm, nets);
    if (rc || (rc = linear_gather(nets))) return rc;
    return bcast_release(nets[0]);
}

/* ---- binomial tree: fan-in to rank 0 (children v + 2^j for 2^j below v's lowest set bit),
 * then fan-out down the same tree; receives pre-posted, sends nonblocking. */
int lts_barrier_binomial(MPI_Comm comm) {
    int me, P, n = 0, rc = MPI_SUCCESS, children[64];
    MPI_Request req[64];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    int low = lts_peers_binomial_span(me, P);   /* subtree span of me (latscope/peers.h) */
    for (int d = 1; d < low && me + d < P; d <<= 1) {
        children[n] = me + d;
        if ((rc = MPI_Irecv(NULL, 0, MPI_BYTE, me + d, TAG(T_BIN_UP), comm, &req[n]))) return rc;
        n++;
    }
    if ((rc = MPI_Waitall(n, req, MPI_STATUSES_IGNORE))) return rc;
    if (me) {
        int parent = me - low;
        if ((rc = send0(parent, T_BIN_UP, comm)) || (rc = recv0(parent, T_BIN_DOWN, comm))) return rc;
    }
    for (int i = 0; i < n; i++)
        if ((rc = MPI_Isend(NULL, 0, MPI_BYTE, children[i], TAG(T_BIN_DOWN), comm, &req[i]))) return rc;
    return MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

/* ---- static tournament (Hensgen, Finkel & Manber; Mellor-Crummey & Scott): in round j ranks
 * v and v + 2^j (v % 2^(j+1) == 0) play; the loser v + 2^j tells the winner it arrived and
 * waits; the champion (rank 0) then wakes the losers it beat in reverse round order, and so on
 * down. Same messages as the binomial tree, played round by round with blocking calls. */
int lts_barrier_tournament(MPI_Comm comm) {
    int me, P, rc = MPI_SUCCESS, j = 0, d = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    for (; d < P; j++, d <<= 1) {
        if (me & d) {  /* lost round j */
            if ((rc = send0(me - d, T_TOUR_UP, comm)) || (rc = recv0(me - d, T_TOUR_DOWN, comm))) return rc;
            break;
        }
        if (me + d < P && (rc = recv0(me + d, T_TOUR_UP, comm))) return rc;
    }
    /* wake the ranks beaten in rounds below the one this rank lost (or all, for the champion) */
    for (d >>= 1; d >= 1; d >>= 1)
        if (me + d < P && (rc = send0(me + d, T_TOUR_DOWN, comm))) return rc;
    return rc;
}

/* ---- tree-shm: release through a flag in an MPI-3 shared-memory window. Ranks of one node
 * (MPI_Comm_split_type SHARED) gather to their node leader by the k-nomial tree; the leaders
 * run a tree barrier among themselves (tree gather + tree release across nodes); each leader
 * then bumps the flag its node spins on. The flag is a 64-bit count of releases: a rank
 * leaves barrier number g when the flag reaches g + 1, so there is nothing to reset. */
static int get_shm(MPI_Comm comm, bstate_t **out) {
    bstate_t *s;
    int rc = get_state(comm, &s);
    if (rc) return rc;
    if (s->win == MPI_WIN_NULL) {
        int me, nme, P;
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &P);
        /* Test hook (tests only): shm_node_size = m makes "nodes" of m consecutive ranks, so the
         * cross-node (leaders) paths run on one machine (include/latscope/hooks.h). */
        int m = lts_test_hooks()->shm_node_size;
        rc = m >= 1 ? MPI_Comm_split(comm, me / m, me, &s->node)
                    : MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &s->node);
        if (rc) return rc;
        MPI_Comm_rank(s->node, &nme);
        MPI_Comm_size(s->node, &s->nn);
        s->one_node = s->nn == P;
        if ((rc = MPI_Comm_split(comm, nme == 0 ? 0 : MPI_UNDEFINED, me, &s->leaders))) return rc;
        void *base;
        /* three 64-byte lines (tree-shm flag, shm counter, shm release word) and room to align */
        if ((rc = MPI_Win_allocate_shared(nme == 0 ? 4 * 64 : 0, 1, MPI_INFO_NULL, s->node, &base, &s->win))) return rc;
        MPI_Aint sz;
        int du;
        if ((rc = MPI_Win_shared_query(s->win, 0, &sz, &du, &base))) return rc;
        /* the first 64-byte boundary in the segment, as node rank 0 sees it: each process maps
         * the segment at its own address, so the offset is decided once and broadcast rather
         * than assuming every mapping has the same alignment */
        int off = (int)((64 - ((uintptr_t)base & 63)) & 63);
        if ((rc = MPI_Bcast(&off, 1, MPI_INT, 0, s->node))) return rc;
        volatile uint64_t *line = (volatile uint64_t *)((char *)base + off);
        s->flag = line;
        s->count = line + 8;
        s->rel = line + 16;
        if (nme == 0) {
            *s->flag = 0;
            *s->count = 0;
            *s->rel = 0;
        }
        /* passive-target epoch for the window's life (unified model: loads and stores below
         * use C11-style atomics on the shared line); the barrier orders the initial store */
        if ((rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win))) return rc;
        if ((rc = MPI_Win_sync(s->win)) || (rc = MPI_Barrier(s->node))) return rc;
        s->gen = s->rgen = 0;
    }
    *out = s;
    return MPI_SUCCESS;
}

int lts_barrier_tree_shm(MPI_Comm comm, int k) {
    bstate_t *s;
    int rc, parent;
    kids_t kd;
    if ((rc = check_k(k)) || (rc = get_shm(comm, &s))) return rc;
    MPI_Comm node[2] = {s->node, s->node};
    rc = knomial_gather(node, k, T_SHM_UP, &parent, &kd);
    kids_free(&kd);
    if (rc) return rc;
    uint64_t want = s->gen + 1;
    if (parent < 0) {   /* node leader */
        if (s->leaders != MPI_COMM_NULL) {
            int L;
            MPI_Comm_size(s->leaders, &L);
            if (L > 1) {
                MPI_Comm lc[2] = {s->leaders, s->leaders};
                int lp;
                kids_t lk;
                rc = knomial_gather(lc, k, T_SHM_X_UP, &lp, &lk);
                if (rc == MPI_SUCCESS) rc = knomial_release(s->leaders, lp, &lk, T_SHM_X_DOWN);
                kids_free(&lk);
                if (rc) return rc;
            }
        }
        __atomic_store_n(s->flag, want, __ATOMIC_RELEASE);
    } else {
        /* spin on the shared line; yield now and then so an oversubscribed leader gets the core, but
         * rarely: a yield costs more than the line transfer (the flag op in ops_logp.c waits alike) */
        for (unsigned spins = 0; __atomic_load_n(s->flag, __ATOMIC_ACQUIRE) < want; spins++)
            if ((spins & 4095) == 4095) sched_yield();
    }
    s->gen = want;
    return MPI_SUCCESS;
}

/* ---- shm: the whole barrier in shared memory, no MPI message on one node (seed 002 §3: the
 * release through shared memory is the seed's idea, as in tree-shm; here the gather is too).
 * Arrival is the classic central counter with a sense/generation word (Mellor-Crummey & Scott
 * 1991, "sense-reversing centralized barrier"): each rank fetch-adds the counter line; the last
 * arriver resets the counter and then bumps the 64-bit release word (a generation count, so
 * there is no sense to flip, nothing to reset between barriers, and no ABA: a rank leaves barrier
 * number g when the word reaches g + 1, and nobody can start barrier g + 1's release before every
 * rank arrived at it). The others spin on the release word with acquire loads. Reset before
 * release: a rank touches the counter again only after its acquire load saw the bump, so it
 * sees the reset. The fetch-adds are acq_rel and the bump a release store, so what any rank
 * wrote before the barrier is visible to every rank after it.
 * Cost on one node: one atomic on a shared line per rank, serialised (P line transfers), plus
 * one transfer of the release line to the waiters: no LogP o_s/o_r at all (no model in LogP).
 * Several nodes: the node leader (node rank 0) waits until the node's other nn - 1 ranks have
 * arrived, resets the counter, runs the dissemination barrier with the other leaders (one MPI
 * message per round, (o_s + L + o_r) * ceil(log2 nodes)), then releases its node.
 * A flat counter suits the few cores of one node; at tens of ranks per node a tree of counters
 * (combining tree) would spread the contention over several lines. */
static void wait_at_least(volatile uint64_t *w, uint64_t v) {
    /* yield now and then (rarely: see the flag op in ops_logp.c) so an oversubscribed rank that has
     * yet to arrive gets the core */
    for (unsigned spins = 0; __atomic_load_n(w, __ATOMIC_ACQUIRE) < v; spins++)
        if ((spins & 4095) == 4095) sched_yield();
}

int lts_barrier_shm(MPI_Comm comm) {
    bstate_t *s;
    int rc;
    if ((rc = get_shm(comm, &s))) return rc;
    uint64_t want = s->rgen + 1;
    s->rgen = want;
    if (s->one_node) {
        if (__atomic_fetch_add(s->count, 1, __ATOMIC_ACQ_REL) == (uint64_t)s->nn - 1) {
            __atomic_store_n(s->count, 0, __ATOMIC_RELAXED);
            __atomic_store_n(s->rel, want, __ATOMIC_RELEASE);
        } else
            wait_at_least(s->rel, want);
        return MPI_SUCCESS;
    }
    if (s->leaders == MPI_COMM_NULL) {   /* not a node leader */
        __atomic_fetch_add(s->count, 1, __ATOMIC_ACQ_REL);
        wait_at_least(s->rel, want);
        return MPI_SUCCESS;
    }
    wait_at_least(s->count, (uint64_t)s->nn - 1);
    __atomic_store_n(s->count, 0, __ATOMIC_RELAXED);
    if ((rc = lts_barrier_dissemination(s->leaders))) return rc;
    __atomic_store_n(s->rel, want, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}
