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
    int to, from;
    lts_peers_dissemination(me, p->P, 1 << j, &to, &from);
    switch (pc % 3) {
    case 0: set(o, LTS_SIM_IRECV, from, (int)j, 0); break;
    case 1: set(o, LTS_SIM_SEND, to, (int)j, 0); break;
    default: set(o, LTS_SIM_WAIT, 0, 0, 0); break;
    }
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

/* binomial broadcast from rank 0 of p->size bytes (src/algos/bcast.c lts_bcast_binomial):
 * receive from the parent, then send to the children, largest subtree first */
static void op_binomial_bcast(const lts_sim_prog_t *p, int me, uint32_t pc, lts_sim_op_t *o) {
    int mask = lts_peers_binomial_mask(me, p->P);
    if (me) {
        if (pc == 0) { set(o, LTS_SIM_IRECV, me - mask, 0, p->size); return; }
        if (pc == 1) { set(o, LTS_SIM_WAIT, 0, 0, 0); return; }
        pc -= 2;
    }
    int m = mask >> 1;
    while (m > 0 && me + m >= p->P) m >>= 1;   /* the largest child; every smaller one exists */
    if (pc >= 31 || (m >> pc) == 0) { set(o, LTS_SIM_END, 0, 0, 0); return; }
    set(o, LTS_SIM_SEND, me + (m >> pc), 0, p->size);
}

const lts_sim_algo_t lts_sim_algos[] = {
    {"dissemination", "barrier: ceil(log2 P) rounds, r signals r + 2^j (src/algos/barrier.c)", op_dissemination},
    {"linear", "barrier: central counter at rank 0, release by P - 1 sends", op_linear},
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
            return 0;
        }
    size_t n = (size_t)snprintf(err, errlen, "algorithm '%s': unknown; valid:", name);
    for (int i = 0; i < lts_sim_nalgos && n < errlen; i++)
        n += (size_t)snprintf(err + n, errlen - n, "%s %s", i ? "," : "", lts_sim_algos[i].name);
    return LTS_ENOTFOUND;
}
