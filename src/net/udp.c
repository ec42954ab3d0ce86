/* The UDP messaging layer (net.h; docs/network.md "The messaging layer"). One unicast socket per
 * network, bound to the interface's address (it also sends the multicasts, out of that
 * interface), and one socket per network bound to the group, joined on that interface. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <latscope/errors.h>

#define LTS_NET_MAGIC 0x4c54534eu /* "LTSN" */

typedef struct peer_addr { uint32_t ip; uint16_t port; uint16_t pad; } peer_addr_t;

struct lts_net {
    int rank, size, nnets, busy;
    double timeout_s;
    int us[LTS_NET_MAXNETS], ms[LTS_NET_MAXNETS];
    struct pollfd pfd[2 * LTS_NET_MAXNETS];
    int npfd;
    peer_addr_t *peers;                /* [net * size + rank] */
    struct sockaddr_in group[LTS_NET_MAXNETS];
    uint32_t *seq_uc;                  /* next sequence number to [net][dst] */
    uint32_t seq_mc[LTS_NET_MAXNETS];
    uint32_t *exp_uc, *exp_mc;         /* next expected from [net][src] */
    lts_net_counters_t c;
};

uint64_t lts_net_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int lts_net_rank(const lts_net_t *n) { return n->rank; }
int lts_net_size(const lts_net_t *n) { return n->size; }
int lts_net_nnets(const lts_net_t *n) { return n->nnets; }
double lts_net_timeout(const lts_net_t *n) { return n->timeout_s; }
lts_net_counters_t *lts_net_counters(lts_net_t *n) { return &n->c; }

static int iface_addr(const char *name, uint32_t *ip) {
    struct ifaddrs *ifa, *p;
    int found = 0;
    if (getifaddrs(&ifa) != 0) return 0;
    for (p = ifa; p; p = p->ifa_next)
        if (p->ifa_addr && p->ifa_addr->sa_family == AF_INET && strcmp(p->ifa_name, name) == 0) {
            *ip = ((struct sockaddr_in *)p->ifa_addr)->sin_addr.s_addr;
            found = 1;
            break;
        }
    freeifaddrs(ifa);
    return found;
}

static int setup_local(lts_net_t *n, const lts_net_opts_t *o, peer_addr_t *mine, char *why, int whylen) {
    for (int k = 0; k < n->nnets; k++) {
        uint32_t ip;
        if (!iface_addr(o->iface[k], &ip)) {
            snprintf(why, (size_t)whylen, "interface '%s' has no IPv4 address on this node", o->iface[k]);
            return LTS_EINVAL;
        }
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = ip, .sin_port = 0 };
        n->us[k] = socket(AF_INET, SOCK_DGRAM, 0);
        if (n->us[k] < 0 || bind(n->us[k], (struct sockaddr *)&a, sizeof a) != 0) {
            snprintf(why, (size_t)whylen, "binding a UDP socket on %s: %s", o->iface[k], strerror(errno));
            return LTS_EIO;
        }
        socklen_t al = sizeof a;
        getsockname(n->us[k], (struct sockaddr *)&a, &al);
        mine[k].ip = ip;
        mine[k].port = a.sin_port;
        n->pfd[n->npfd++] = (struct pollfd){ .fd = n->us[k], .events = POLLIN };
        if (n->size == 1) continue;   /* nobody to multicast to */
        struct in_addr ifip = { .s_addr = ip };
        unsigned char ttl = 1, loop = 1;   /* loop: ranks sharing a node get the group's messages too */
        struct sockaddr_in g = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(o->mport + k)) };
        if (inet_pton(AF_INET, o->group[k], &g.sin_addr) != 1 || !IN_MULTICAST(ntohl(g.sin_addr.s_addr))) {
            snprintf(why, (size_t)whylen, "multicast group '%s': not an IPv4 multicast address (224.0.0.0/4)",
                     o->group[k]);
            return LTS_EINVAL;
        }
        n->group[k] = g;
        if (setsockopt(n->us[k], IPPROTO_IP, IP_MULTICAST_IF, &ifip, sizeof ifip) != 0 ||
            setsockopt(n->us[k], IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0 ||
            setsockopt(n->us[k], IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0) {
            snprintf(why, (size_t)whylen, "multicast options on %s: %s", o->iface[k], strerror(errno));
            return LTS_EIO;
        }
        int one = 1;
        struct ip_mreq mr = { .imr_multiaddr = g.sin_addr, .imr_interface = ifip };
        n->ms[k] = socket(AF_INET, SOCK_DGRAM, 0);
        if (n->ms[k] < 0 || setsockopt(n->ms[k], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            bind(n->ms[k], (struct sockaddr *)&g, sizeof g) != 0 ||
            setsockopt(n->ms[k], IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) != 0) {
            snprintf(why, (size_t)whylen, "joining %s on %s: %s", o->group[k], o->iface[k], strerror(errno));
            return LTS_EIO;
        }
        n->pfd[n->npfd++] = (struct pollfd){ .fd = n->ms[k], .events = POLLIN };
    }
    return 0;
}

int lts_net_open(lts_net_t **out, const lts_net_opts_t *o, MPI_Comm comm, char *why, int whylen) {
    lts_net_t *n = calloc(1, sizeof *n);
    if (!n) return LTS_ENOMEM;
    why[0] = '\0';
    MPI_Comm_rank(comm, &n->rank);
    MPI_Comm_size(comm, &n->size);
    n->nnets = o->nnets;
    n->busy = o->busy_poll;
    n->timeout_s = o->timeout_s;
    for (int k = 0; k < LTS_NET_MAXNETS; k++) n->us[k] = n->ms[k] = -1;
    int rc = (o->nnets < 1 || o->nnets > LTS_NET_MAXNETS || n->size > LTS_NET_MAXP) ? LTS_EINVAL : 0;
    if (rc) snprintf(why, (size_t)whylen, "%d networks for %d ranks: at most %d networks and %d ranks",
                     o->nnets, n->size, LTS_NET_MAXNETS, LTS_NET_MAXP);
    peer_addr_t mine[LTS_NET_MAXNETS] = { { 0 } };
    if (!rc) rc = setup_local(n, o, mine, why, whylen);
    /* one verdict for all: a rank whose interface is missing must not leave the others waiting */
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm);
    if (worst != 0) {
        if (rc == 0) snprintf(why, (size_t)whylen, "another rank could not open the network layer");
        lts_net_close(n);
        return worst;
    }
    size_t np = (size_t)n->size * LTS_NET_MAXNETS;
    n->peers = calloc(np, sizeof *n->peers);
    n->seq_uc = calloc(np, sizeof(uint32_t));
    n->exp_uc = calloc(np, sizeof(uint32_t));
    n->exp_mc = calloc(np, sizeof(uint32_t));
    peer_addr_t *all = calloc(np, sizeof *all);
    if (!n->peers || !n->seq_uc || !n->exp_uc || !n->exp_mc || !all) {
        free(all);
        lts_net_close(n);
        return LTS_ENOMEM;
    }
    MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm);
    for (int r = 0; r < n->size; r++)
        for (int k = 0; k < LTS_NET_MAXNETS; k++) n->peers[k * n->size + r] = all[r * LTS_NET_MAXNETS + k];
    free(all);
    *out = n;
    return 0;
}

void lts_net_close(lts_net_t *n) {
    if (!n) return;
    for (int k = 0; k < LTS_NET_MAXNETS; k++) {
        if (n->us[k] >= 0) close(n->us[k]);
        if (n->ms[k] >= 0) close(n->ms[k]);
    }
    free(n->peers);
    free(n->seq_uc);
    free(n->exp_uc);
    free(n->exp_mc);
    free(n);
}

static int xmit(lts_net_t *n, int net, const struct sockaddr_in *to, lts_msg_t *m) {
    for (;;) {
        ssize_t s = sendto(n->us[net], m, sizeof *m, 0, (const struct sockaddr *)to, sizeof *to);
        if (s == (ssize_t)sizeof *m) return 0;
        /* a full queue (the rate limit) is back-pressure, not an error */
        if (s < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)) continue;
        return LTS_EIO;
    }
}

int lts_net_send(lts_net_t *n, int dst, int net, int type, uint32_t epoch, uint32_t tag) {
    if (dst < 0 || dst >= n->size || net < 0 || net >= n->nnets) return LTS_EINVAL;
    const peer_addr_t *p = &n->peers[net * n->size + dst];
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = p->ip, .sin_port = p->port };
    lts_msg_t m = { .magic = LTS_NET_MAGIC, .type = (uint16_t)type, .net = (uint8_t)net, .mcast = 0,
                    .src = (uint32_t)n->rank, .epoch = epoch, .tag = tag,
                    .seq = n->seq_uc[net * n->size + dst]++ };
    n->c.sent++;
    return xmit(n, net, &to, &m);
}

int lts_net_mcast(lts_net_t *n, int net, int type, uint32_t epoch, uint32_t tag) {
    if (net < 0 || net >= n->nnets) return LTS_EINVAL;
    if (n->size == 1) return 0;
    lts_msg_t m = { .magic = LTS_NET_MAGIC, .type = (uint16_t)type, .net = (uint8_t)net, .mcast = 1,
                    .src = (uint32_t)n->rank, .epoch = epoch, .tag = tag, .seq = n->seq_mc[net]++ };
    n->c.mcast_sent++;
    return xmit(n, net, &n->group[net], &m);
}

/* 1: a valid message from another rank; 0: nothing (or a datagram to ignore) */
static int take(lts_net_t *n, int fd, lts_msg_t *m) {
    ssize_t r = recv(fd, m, sizeof *m, MSG_DONTWAIT);
    if (r != (ssize_t)sizeof *m || m->magic != LTS_NET_MAGIC || m->src >= (uint32_t)n->size ||
        m->net >= (uint8_t)n->nnets)
        return 0;
    if (m->src == (uint32_t)n->rank) return 0;   /* our own multicast, looped back */
    n->c.received++;
    uint32_t *exp = (m->mcast ? n->exp_mc : n->exp_uc) + m->net * n->size + m->src;
    if (m->seq > *exp) n->c.lost += m->seq - *exp;   /* a gap: datagrams that never came */
    if (m->seq >= *exp) *exp = m->seq + 1;
    return 1;
}

int lts_net_try(lts_net_t *n, lts_msg_t *m) {
    for (int i = 0; i < n->npfd; i++)
        if (take(n, n->pfd[i].fd, m)) return 1;
    return 0;
}

int lts_net_recv(lts_net_t *n, double timeout_s, lts_msg_t *m) {
    uint64_t end = lts_net_now_ns() + (timeout_s > 0 ? (uint64_t)(timeout_s * 1e9) : 0);
    for (;;) {
        if (lts_net_try(n, m)) return 1;
        uint64_t now = lts_net_now_ns();
        if (now >= end) return 0;
        if (n->busy) continue;
        uint64_t left = end - now;
        struct timespec ts = { .tv_sec = (time_t)(left / 1000000000u), .tv_nsec = (long)(left % 1000000000u) };
        int r = ppoll(n->pfd, (nfds_t)n->npfd, &ts, NULL);
        if (r < 0 && errno != EINTR) return LTS_EIO;
    }
}
