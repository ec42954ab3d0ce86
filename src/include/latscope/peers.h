/* Who talks to whom in latscope's collective algorithms, as pure functions of (rank, P, round):
 * the one definition that the MPI implementations (src/algos/barrier.c, src/algos/bcast.c) and
 * the simulator's generated schedules (src/sim/programs.c, docs/sim.md) both call, so a
 * simulated schedule is the C algorithm's schedule, not a second copy of it. */
#ifndef LATSCOPE_PEERS_H
#define LATSCOPE_PEERS_H

/* Dissemination (Hensgen, Finkel & Manber; seed 002 §5.1.2): in the round with distance
 * d = 2^j (d < P), rank `me` signals me + d and waits for me - d (mod P). */
static inline void lts_peers_dissemination(int me, int P, int d, int *to, int *from) {
    /* 0 <= me < P and 0 < d < P: one wrap at most, no division (the simulator calls this once
     * per operation of every rank: two divisions were a tenth of a 2^20-rank run) */
    long t = (long)me + d, f = (long)me - d;
    *to = (int)(t >= P ? t - P : t);
    *from = (int)(f < 0 ? f + P : f);
}

/* Binomial tree over relative ranks v (root 0, MPICH's MPIR_Bcast_intra_binomial): v receives
 * from its parent v - m, m its lowest set bit; the root's m is the first power of two >= P.
 * The children are v + m' for m' = m/2, m/4, ..., 1 with v + m' < P, largest subtree first. */
static inline int lts_peers_binomial_mask(int v, int P) {
    int mask = 1;
    while (mask < P) {
        if (v & mask) return mask;
        mask <<= 1;
    }
    return mask;
}

/* Pairwise exchange (seed 002 §3.1.1): the core is the largest power of two P2 <= P; rank r >= P2
 * folds into r - P2, core ranks exchange with r XOR 2^j (2^j < P2). */
static inline int lts_peers_pairwise_core(int P) {
    int P2 = 1;
    while (P2 <= P / 2) P2 *= 2;
    return P2;
}

/* Binomial fan-in/fan-out barrier: the span of rank r's subtree is its lowest set bit (P for the
 * root); its parent is r - span, its children r + 2^i for 2^i < span, r + 2^i < P. */
static inline int lts_peers_binomial_span(int me, int P) { return me ? (me & -me) : P; }

/* k-nomial gather (seed 002 §3.2), phase with stride s = k^j: a rank with me % (k s) != 0 sends
 * to its parent me - me % (k s) and leaves the gather (returned); the others (-1) receive from
 * me + i s, i = 1..k-1, below P. */
static inline int lts_peers_knomial_parent(int me, long s, int k) {
    long span = s * k;
    return me % span ? (int)(me - me % span) : -1;
}

#endif
