/* The latency budget's ladder of same-clock ping-pongs (docs/budget.md; seed 000 §4.2: every
 * interval starts and stops on one clock, the rest is deduced by differences). Each rung is an
 * operation descriptor timed by the one driver (lts_measure, via lts_p2p_run) between ranks 0
 * and 1 of a pair: rank 0 sends, rank 1 echoes, rank 0's clock times the round trip, the value is
 * half of it (one-way latency, as the seed's 86 us = 172 us / 2). */
#ifndef LATSCOPE_BUDGET_H
#define LATSCOPE_BUDGET_H
#include "latscope/bench.h"
#ifdef __cplusplus
extern "C" {
#endif

/* One registry row per rung (lts_budget_registry). */
typedef struct lts_budget_rung {
    const char *name;
    const char *help;
    /* The launch environment the rung needs (the caller starts one launch per class):
     *   local      two ranks on one host, MPI on shared memory
     *   mpi-tcp    two ranks on one host, MPI forced onto its TCP path on loopback
     *   netns      rank 0 and rank 1 in two network namespaces joined by a veth pair, MPI on
     *              shared memory (the rung's own sockets cross the veth: --addrs)
     *   netns-tcp  the same namespaces, MPI forced onto TCP across the veth */
    const char *launch;
    const char *mech;      /* flag, futex, pipe, unix, udp, tcp, mpi */
    int blocking;          /* 1: the receiver sleeps in the kernel; 0: it busy-polls */
    double delay_s;        /* synthetic rungs: busy-wait of the responder before it replies */
    int in_default;        /* part of the default ladder */
} lts_budget_rung_t;

extern const lts_registry_t lts_budget_registry;

/* The descriptor of rung `name` (LTS_ENOTFOUND if unknown). */
int lts_budget_op(const char *name, lts_op_desc_t *op);

/* The IPv4 addresses rank 0 and rank 1 bind their sockets to (default 127.0.0.1 both); the
 * namespace rungs get the two ends of the veth pair. Returns LTS_EINVAL for a bad address. */
int lts_budget_set_addrs(const char *addr0, const char *addr1);

#ifdef __cplusplus
}
#endif
#endif
