/* A user-level messaging layer over UDP (docs/network.md), standing in for the seed's VIA-style
 * library (seed 002 §2): unicast and IP multicast datagrams on one or two networks, receive by
 * blocking (poll) or by busy polling, per-message sequence numbers, and timeouts with
 * retransmission on request so that a lost datagram never hangs a barrier. Addresses are
 * exchanged through MPI once (lts_net_open); after that every message is UDP. */
#ifndef LTS_NET_H
#define LTS_NET_H
#include <stdint.h>
#include <mpi.h>

#define LTS_NET_MAXNETS 2
#define LTS_NET_MAXP 64
#define LTS_NET_MCAST (-1)       /* destination of a multicast in the history */

enum { LTS_MSG_DATA = 1, LTS_MSG_REQ = 2 };

typedef struct lts_net_opts {
    int nnets;                              /* 1 or 2 */
    const char *iface[LTS_NET_MAXNETS];     /* interface names, e.g. lts0, lts1 */
    const char *group[LTS_NET_MAXNETS];     /* multicast groups, e.g. 239.255.77.1 */
    int mport;                              /* multicast UDP port (network k uses mport + k) */
    int busy_poll;                          /* 1: spin on nonblocking receives; 0: block in poll() */
    double timeout_s;                       /* wait this long for an expected message, then ask again */
} lts_net_opts_t;

typedef struct lts_msg {
    uint32_t magic;
    uint16_t type;       /* LTS_MSG_* */
    uint8_t net;         /* the network it was sent on */
    uint8_t mcast;       /* 1: sent to the group */
    uint32_t src;
    uint32_t epoch;      /* barrier number */
    uint32_t tag;        /* step within the barrier */
    uint32_t seq;        /* per (sender, stream) sequence number: gaps are losses */
} lts_msg_t;

/* Counters, each rank's own; reported per algorithm (differences around a run). */
typedef struct lts_net_counters {
    uint64_t sent, mcast_sent, received, duplicates, lost, timeouts, requests, retransmissions;
} lts_net_counters_t;

typedef struct lts_net lts_net_t;

/* Collective over comm: finds each interface's IPv4 address, binds the sockets, joins the groups,
 * exchanges (address, port) with MPI_Allgather. 0 or a negative LTS_E* code (every rank the same
 * verdict: the result is agreed by an allreduce). why: a message for the user. */
int lts_net_open(lts_net_t **out, const lts_net_opts_t *o, MPI_Comm comm, char *why, int whylen);
void lts_net_close(lts_net_t *n);
int lts_net_rank(const lts_net_t *n);
int lts_net_size(const lts_net_t *n);
int lts_net_nnets(const lts_net_t *n);
double lts_net_timeout(const lts_net_t *n);
lts_net_counters_t *lts_net_counters(lts_net_t *n);

/* One datagram (a header only: barrier messages carry no payload). */
int lts_net_send(lts_net_t *n, int dst, int net, int type, uint32_t epoch, uint32_t tag);
int lts_net_mcast(lts_net_t *n, int net, int type, uint32_t epoch, uint32_t tag);
/* Receive one datagram within timeout_s: 1 received (into m), 0 timed out, <0 error. Counts
 * sequence gaps as losses. */
int lts_net_recv(lts_net_t *n, double timeout_s, lts_msg_t *m);
/* One receive with no wait, for timing the receive overhead: 1, 0 (nothing there), <0. */
int lts_net_try(lts_net_t *n, lts_msg_t *m);

uint64_t lts_net_now_ns(void);

/* ---- barriers on the layer (barrier.c) ---------------------------------------------------- */
enum { LTS_ST_SEND, LTS_ST_MCAST, LTS_ST_RECV };
typedef struct lts_step { int op, peer, net, tag; } lts_step_t;
#define LTS_NET_MAXSTEPS 160

typedef struct lts_nbar {
    const char *name, *help;
    int nets;             /* networks needed */
    int k;                /* tree fan-in (k-nomial), 0 where none */
    const char *cost;     /* LogP cost: an expression in P, os, or, L, g, osm, orm, Lm (docs/network.md) */
    int (*schedule)(const struct lts_nbar *b, int rank, int size, lts_step_t *st);
} lts_nbar_t;

extern const lts_nbar_t lts_nbar_rows[];
extern const int lts_nbar_count;
const lts_nbar_t *lts_nbar_find(const char *name);

/* The barrier engine: runs one schedule as barrier number `epoch`. Served while waiting:
 * requests for messages this rank sent in this or the previous barrier. Gives up (LTS_EIO)
 * after deadline_s without progress. */
typedef struct lts_nbar_state lts_nbar_state_t;
int lts_nbar_state_new(lts_nbar_state_t **out, lts_net_t *n);
void lts_nbar_state_free(lts_nbar_state_t *s);
int lts_nbar_run(lts_nbar_state_t *s, const lts_step_t *st, int nst, uint32_t epoch, double deadline_s);
/* After the last barrier: keep answering requests until every rank is done (MPI_Ibarrier). */
int lts_nbar_drain(lts_nbar_state_t *s, MPI_Comm comm);
/* Hand a message received outside a barrier (the logp phase) to the engine. */
void lts_nbar_handle(lts_nbar_state_t *s, const lts_msg_t *m);

#endif
