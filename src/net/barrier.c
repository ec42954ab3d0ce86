/* Barrier algorithms on the UDP layer (seed 002 §3), one registry row each: a schedule (what
 * this rank sends and waits for, in order) and its LogP cost (seed 002 §5.1.2), and the engine
 * that runs a schedule with timeouts and retransmission on request (docs/network.md). */
#include "net.h"

#include <stdlib.h>
#include <string.h>

#include <latscope/errors.h>
#include <latscope/registry.h>

/* Tags (steps within one barrier; < 64, one bit each in the receive marks). */
enum { TAG_ARRIVE = 0, TAG_TREE_REL = 32, TAG_PW_IN = 40, TAG_PW_OUT = 41, TAG_RELEASE = 63 };

static int add(lts_step_t *st, int *n, int op, int peer, int net, int tag) {
    if (*n >= LTS_NET_MAXSTEPS) return LTS_ERANGE;
    st[(*n)++] = (lts_step_t){ op, peer, net, tag };
    return 0;
}

/* Central (seed 002 §3.2.3, "Concurrent"): every rank tells rank 0; rank 0 releases each by
 * unicast (linear), or all at once by one multicast. Two networks: arrivals split by rank parity. */
static int central(int rank, int size, int mcast, int split, lts_step_t *st) {
    int n = 0;
    if (size == 1) return 0;
    if (rank != 0) {
        add(st, &n, LTS_ST_SEND, 0, split ? rank % 2 : 0, TAG_ARRIVE);
        add(st, &n, LTS_ST_RECV, 0, 0, TAG_RELEASE);
        return n;
    }
    for (int r = 1; r < size; r++) add(st, &n, LTS_ST_RECV, r, split ? r % 2 : 0, TAG_ARRIVE);
    if (mcast) add(st, &n, LTS_ST_MCAST, -1, 0, TAG_RELEASE);
    else
        for (int r = 1; r < size; r++) add(st, &n, LTS_ST_SEND, r, 0, TAG_RELEASE);
    return n;
}
static int s_linear(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return central(r, p, 0, 0, st); }
static int s_concurrent(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return central(r, p, 1, 0, st); }
static int s_concurrent2(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return central(r, p, 1, 1, st); }

/* k-nomial gather to rank 0 (seed 002 §3.2.1-2: the binary tree receives one child per phase,
 * log2 P phases; the "3-ary" tree two, log3 P phases), then the release: back down the tree by
 * unicast, or by one multicast from the root. split: child j of a phase sends on network (j-1)%2
 * (seed §3.3.1); rel_net: the network of the multicast release. */
static int knomial(int rank, int size, int k, int mcast, int split, int rel_net, lts_step_t *st) {
    int n = 0, phase = 0, parent = -1, parent_phase = 0, parent_net = 0;
    int kids[LTS_NET_MAXP], kid_net[LTS_NET_MAXP], nk = 0;
    for (int mask = 1; mask < size; mask *= k, phase++) {
        int digit = (rank / mask) % k;
        if (digit != 0) {
            parent = rank - digit * mask;
            parent_phase = phase;
            parent_net = split ? (digit - 1) % 2 : 0;
            add(st, &n, LTS_ST_SEND, parent, parent_net, TAG_ARRIVE + phase);
            break;
        }
        for (int j = 1; j < k; j++) {
            int c = rank + j * mask;
            if (c >= size) break;
            int net = split ? (j - 1) % 2 : 0;
            add(st, &n, LTS_ST_RECV, c, net, TAG_ARRIVE + phase);
            kids[nk] = c;
            kid_net[nk++] = net;
        }
    }
    if (mcast) {
        if (rank == 0) {
            if (size > 1) add(st, &n, LTS_ST_MCAST, -1, rel_net, TAG_RELEASE);
        } else
            add(st, &n, LTS_ST_RECV, 0, rel_net, TAG_RELEASE);
        return n;
    }
    (void)parent_phase;
    if (parent >= 0) add(st, &n, LTS_ST_RECV, parent, parent_net, TAG_TREE_REL);
    for (int i = nk - 1; i >= 0; i--)   /* the deepest subtrees first */
        add(st, &n, LTS_ST_SEND, kids[i], kid_net[i], TAG_TREE_REL);
    return n;
}
static int s_tree(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return knomial(r, p, b->k, 0, 0, 0, st); }
static int s_mtree(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return knomial(r, p, b->k, 1, 0, 0, st); }
static int s_mtree_split(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return knomial(r, p, b->k, 1, 1, 0, st); }
static int s_mtree_relnet(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return knomial(r, p, b->k, 1, 0, 1, st); }

/* Dissemination (Hensgen, Finkel, Manber): round i, send to rank + 2^i, hear from rank - 2^i. */
static int s_dissemination(const lts_nbar_t *b, int rank, int size, lts_step_t *st) {
    int n = 0, i = 0;
    for (int d = 1; d < size; d *= 2, i++) {
        add(st, &n, LTS_ST_SEND, (rank + d) % size, 0, i);
        add(st, &n, LTS_ST_RECV, (rank - d + size) % size, 0, i);
    }
    return n;
}

/* Shuffle-exchange / pairwise exchange (seed 002 §3.1.1): log2 P rounds of two-rank barriers
 * with rank XOR 2^i; ranks beyond the largest power of two report to a partner first and are
 * released by it last. split: the pairs of a round alternate between the two networks. */
static int pairwise(int rank, int size, int split, lts_step_t *st) {
    int n = 0, p2 = 1;
    while (p2 * 2 <= size) p2 *= 2;
    if (rank >= p2) {
        add(st, &n, LTS_ST_SEND, rank - p2, 0, TAG_PW_IN);
        add(st, &n, LTS_ST_RECV, rank - p2, 0, TAG_PW_OUT);
        return n;
    }
    if (rank + p2 < size) add(st, &n, LTS_ST_RECV, rank + p2, 0, TAG_PW_IN);
    int i = 0;
    for (int mask = 1; mask < p2; mask *= 2, i++) {
        int partner = rank ^ mask;
        int net = split ? __builtin_popcount((unsigned)(rank & ~mask)) % 2 : 0;
        add(st, &n, LTS_ST_SEND, partner, net, i);
        add(st, &n, LTS_ST_RECV, partner, net, i);
    }
    if (rank + p2 < size) add(st, &n, LTS_ST_SEND, rank + p2, 0, TAG_PW_OUT);
    return n;
}
static int s_pairwise(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return pairwise(r, p, 0, st); }
static int s_pairwise2(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return pairwise(r, p, 1, st); }

static int s_null(const lts_nbar_t *b, int r, int p, lts_step_t *st) { return 0; }

#define HOP "(os + L + or)"
/* Costs: seed 002 §5.1.2's forms, with the gap where messages queue (max(or, g)); lg(P) =
 * ceil(log2 P), lgk(k, P) = phases of a k-nomial tree, ksum(k, P, a, b) = the sum over the root's
 * phases i of a + c_i b, c_i its children in phase i (k - 1 in a full tree: the seed's
 * (o_s + L + (k-1) o_r) log_k P; fewer in the last phase of a partial one), lgf(P) = floor(log2 P), npw2(P) = 1 when
 * P is not a power of two; os/or/L of unicast, osm/orm/Lm of a multicast. The two-network rows
 * cost what their one-network twins cost: the model charges the CPU per message, whichever NIC
 * it came through (seed 002 §5.2). */
const lts_nbar_t lts_nbar_rows[] = {
    { "linear", "central: arrivals to rank 0, unicast release to each (seed 3.2.3 without multicast)", 1, 0,
      "(P > 1) * (os + L + (P - 1) * max(or, g) + (P - 2) * max(os, g) + os + L + or)", s_linear },
    { "concurrent", "central: arrivals to rank 0, one multicast release (seed 3.2.3)", 1, 0,
      "(P > 1) * (os + L + (P - 1) * max(or, g) + osm + Lm + orm)", s_concurrent },
    { "tree2", "binomial gather, release back down the tree (unicast)", 1, 2,
      "ksum(2, P, os + L, max(or, g)) + ksum(2, P, os + L + or - max(os, g), max(os, g))", s_tree },
    { "tree4", "4-nomial gather, release back down the tree (unicast)", 1, 4,
      "ksum(4, P, os + L, max(or, g)) + ksum(4, P, os + L + or - max(os, g), max(os, g))", s_tree },
    { "mtree2", "binomial gather, multicast release (seed 3.2.1)", 1, 2,
      "ksum(2, P, os + L, max(or, g)) + (P > 1) * (osm + Lm + orm)", s_mtree },
    { "mtree3", "3-nomial gather (two children a phase), multicast release (seed 3.2.2)", 1, 3,
      "ksum(3, P, os + L, max(or, g)) + (P > 1) * (osm + Lm + orm)", s_mtree },
    { "mtree4", "4-nomial gather, multicast release (seed 5.1.2's 4-ary tree)", 1, 4,
      "ksum(4, P, os + L, max(or, g)) + (P > 1) * (osm + Lm + orm)", s_mtree },
    { "dissemination", "ceil(log2 P) rounds: send to rank+2^i, receive from rank-2^i", 1, 0,
      "lg(P) * " HOP, s_dissemination },
    { "pairwise", "shuffle-exchange: log2 P rounds of pairwise exchange (seed 3.1.1)", 1, 0,
      "(lgf(P) + 2 * npw2(P)) * " HOP, s_pairwise },
    { "concurrent-2net", "concurrent, arrivals split over two networks by rank parity (seed 3.3.2)", 2, 0,
      "(P > 1) * (os + L + (P - 1) * max(or, g) + osm + Lm + orm)", s_concurrent2 },
    { "mtree3-2net", "mtree3, a parent's two children on different networks (seed 3.3.1)", 2, 3,
      "ksum(3, P, os + L, max(or, g)) + (P > 1) * (osm + Lm + orm)", s_mtree_split },
    { "mtree2-2net", "binomial gather on network 0, multicast release on network 1", 2, 2,
      "ksum(2, P, os + L, max(or, g)) + (P > 1) * (osm + Lm + orm)", s_mtree_relnet },
    { "pairwise-2net", "pairwise, the pairs of each round alternating between two networks", 2, 0,
      "(lgf(P) + 2 * npw2(P)) * " HOP, s_pairwise2 },
    { "null", "no synchronisation at all: the fake row that the correctness check must reject", 1, 0, "0",
      s_null },
};
const int lts_nbar_count = (int)(sizeof lts_nbar_rows / sizeof lts_nbar_rows[0]);
_Static_assert(sizeof lts_nbar_rows / sizeof lts_nbar_rows[0] <= LTS_REGISTRY_MAX, "registry too large");

const lts_nbar_t *lts_nbar_find(const char *name) {
    for (int i = 0; i < lts_nbar_count; i++)
        if (strcmp(lts_nbar_rows[i].name, name) == 0) return &lts_nbar_rows[i];
    return NULL;
}

/* ---- the engine ---------------------------------------------------------------------------- */
typedef struct mark { uint32_t epoch; uint64_t bits; } mark_t;
typedef struct sent { int dst, net, tag; } sent_t;
typedef struct hist { uint32_t epoch; int n; sent_t s[LTS_NET_MAXSTEPS]; } hist_t;

struct lts_nbar_state {
    lts_net_t *net;
    int size;
    mark_t *marks;       /* [src * 4 + epoch % 4]: a peer is at most one barrier ahead or behind */
    hist_t hist[2];      /* what this rank sent in barriers epoch and epoch - 1 */
    uint32_t epoch;
};

int lts_nbar_state_new(lts_nbar_state_t **out, lts_net_t *n) {
    lts_nbar_state_t *s = calloc(1, sizeof *s);
    if (!s) return LTS_ENOMEM;
    s->net = n;
    s->size = lts_net_size(n);
    s->marks = calloc((size_t)s->size * 4, sizeof *s->marks);
    if (!s->marks) {
        free(s);
        return LTS_ENOMEM;
    }
    for (int i = 0; i < s->size * 4; i++) s->marks[i].epoch = UINT32_MAX;
    s->hist[0].epoch = s->hist[1].epoch = UINT32_MAX;
    *out = s;
    return 0;
}

void lts_nbar_state_free(lts_nbar_state_t *s) {
    if (!s) return;
    free(s->marks);
    free(s);
}

void lts_nbar_handle(lts_nbar_state_t *s, const lts_msg_t *m) {
    lts_net_counters_t *c = lts_net_counters(s->net);
    if (m->type == LTS_MSG_REQ) {
        const hist_t *h = &s->hist[m->epoch % 2];
        if (h->epoch != m->epoch) return;   /* not sent yet: it will be, when this rank gets there */
        for (int i = 0; i < h->n; i++)
            if (h->s[i].tag == (int)m->tag && (h->s[i].dst == (int)m->src || h->s[i].dst == LTS_NET_MCAST)) {
                if (lts_net_send(s->net, (int)m->src, h->s[i].net, LTS_MSG_DATA, m->epoch, m->tag) == 0)
                    c->retransmissions++;
                return;
            }
        return;
    }
    if (m->type != LTS_MSG_DATA || m->tag >= 64) return;
    mark_t *k = &s->marks[m->src * 4 + m->epoch % 4];
    if (k->epoch != m->epoch) {
        /* an older barrier's retransmission must not wipe a newer one's marks */
        if (k->epoch != UINT32_MAX && (int32_t)(m->epoch - k->epoch) < 0) {
            c->duplicates++;
            return;
        }
        k->epoch = m->epoch;
        k->bits = 0;
    }
    uint64_t bit = (uint64_t)1 << m->tag;
    if (k->bits & bit) c->duplicates++;
    k->bits |= bit;
}

static int have(const lts_nbar_state_t *s, int src, uint32_t epoch, int tag) {
    const mark_t *k = &s->marks[src * 4 + epoch % 4];
    return k->epoch == epoch && (k->bits >> tag & 1);
}

int lts_nbar_run(lts_nbar_state_t *s, const lts_step_t *st, int nst, uint32_t epoch, double deadline_s) {
    lts_net_t *n = s->net;
    lts_net_counters_t *c = lts_net_counters(n);
    hist_t *h = &s->hist[epoch % 2];
    h->epoch = epoch;
    h->n = 0;
    s->epoch = epoch;
    for (int i = 0; i < nst; i++) {
        const lts_step_t *x = &st[i];
        int rc = 0;
        if (x->op == LTS_ST_SEND || x->op == LTS_ST_MCAST) {
            h->s[h->n++] = (sent_t){ x->op == LTS_ST_MCAST ? LTS_NET_MCAST : x->peer, x->net, x->tag };
            rc = x->op == LTS_ST_SEND ? lts_net_send(n, x->peer, x->net, LTS_MSG_DATA, epoch, (uint32_t)x->tag)
                                      : lts_net_mcast(n, x->net, LTS_MSG_DATA, epoch, (uint32_t)x->tag);
            if (rc) return rc;
            continue;
        }
        uint64_t give_up = lts_net_now_ns() + (uint64_t)(deadline_s * 1e9);
        double wait = lts_net_timeout(n);
        while (!have(s, x->peer, epoch, x->tag)) {
            lts_msg_t m;
            rc = lts_net_recv(n, wait, &m);
            if (rc < 0) return rc;
            if (rc == 1) {
                lts_nbar_handle(s, &m);
                continue;
            }
            c->timeouts++;
            if (lts_net_now_ns() > give_up) return LTS_EIO;
            /* the expected message is late or lost: ask its sender again (it keeps what it sent) */
            c->requests++;
            rc = lts_net_send(n, x->peer, x->net, LTS_MSG_REQ, epoch, (uint32_t)x->tag);
            if (rc) return rc;
        }
    }
    return 0;
}

int lts_nbar_drain(lts_nbar_state_t *s, MPI_Comm comm) {
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    while (!done) {
        lts_msg_t m;
        int rc = lts_net_recv(s->net, 0.0005, &m);
        if (rc < 0) return rc;
        if (rc == 1) lts_nbar_handle(s, &m);
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
    return 0;
}
