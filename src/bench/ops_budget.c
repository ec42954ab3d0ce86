/* The latency budget's rungs (include/latscope/budget.h, docs/budget.md): same-clock ping-pongs
 * between ranks 0 and 1 over a shared-memory cache line, a futex, a pipe, UNIX-domain, UDP and TCP
 * sockets, and MPI. Each rung is one operation descriptor timed by lts_measure; its channel is set
 * up in init (names and ports exchanged over MPI) and torn down in fini. Seed 000 §4.2: the
 * interval starts and stops on rank 0's clock; components are differences of rungs (Python side).
 *
 * Busy-polling rungs spin on a non-blocking descriptor (every spin one system call) or on the
 * flag; blocking rungs sleep in read()/recv()/FUTEX_WAIT, so their difference is the cost of
 * going to sleep and being woken (the seed's interrupt overhead, §4.2.2). */
#include "latscope/budget.h"
#include "latscope/errors.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const lts_budget_rung_t rungs[] = {
    {"flag", "shared-memory cache-line flag, busy-polled: the hardware floor on a node", "local", "flag", 0, 0, 1},
    {"flag-block", "the same flag with a futex wake-up: the receiver sleeps in FUTEX_WAIT unless the message beats it",
     "local", "futex", 1, 0, 1},
    {"pipe-poll", "a pair of named pipes (FIFOs), non-blocking read spun", "local", "pipe", 0, 0, 1},
    {"pipe-block", "a pair of named pipes (FIFOs), blocking read", "local", "pipe", 1, 0, 1},
    {"unix-poll", "UNIX-domain stream socket, non-blocking recv spun", "local", "unix", 0, 0, 1},
    {"unix-block", "UNIX-domain stream socket, blocking recv", "local", "unix", 1, 0, 1},
    {"udp-poll", "UDP on loopback, non-blocking recv spun", "local", "udp", 0, 0, 1},
    {"udp-block", "UDP on loopback, blocking recv", "local", "udp", 1, 0, 1},
    {"tcp-poll", "TCP on loopback (TCP_NODELAY), non-blocking recv spun", "local", "tcp", 0, 0, 1},
    {"tcp-block", "TCP on loopback (TCP_NODELAY), blocking recv", "local", "tcp", 1, 0, 1},
    {"mpi-shm", "MPI_Send/MPI_Recv, the MPI on shared memory", "local", "mpi", 0, 0, 1},
    {"mpi-tcp", "MPI_Send/MPI_Recv, the MPI forced onto its TCP path on loopback", "mpi-tcp", "mpi", 0, 0, 1},
    {"udp-veth-poll", "UDP across a veth pair between two network namespaces, spun", "netns", "udp", 0, 0, 1},
    {"udp-veth-block", "UDP across a veth pair between two network namespaces, blocking", "netns", "udp", 1, 0, 1},
    {"tcp-veth-poll", "TCP across a veth pair between two network namespaces, spun", "netns", "tcp", 0, 0, 1},
    {"tcp-veth-block", "TCP across a veth pair between two network namespaces, blocking", "netns", "tcp", 1, 0, 1},
    {"mpi-veth", "MPI_Send/MPI_Recv, the MPI on TCP across the veth pair", "netns-tcp", "mpi", 0, 0, 1},
    {"flag-delay", "synthetic (tests): the flag rung with a 5 us busy-wait of the responder before each reply",
     "local", "flag", 0, 5e-6, 0},
};
enum { NRUNGS = sizeof rungs / sizeof rungs[0] };
_Static_assert(NRUNGS <= LTS_REGISTRY_MAX, "budget registry too large");
const lts_registry_t lts_budget_registry = LTS_REGISTRY("budget rung", rungs);

enum { TAG = 0x4c42 };

static struct in_addr addrs[2] = {{0}, {0}};
static int addrs_set = 0;

int lts_budget_set_addrs(const char *addr0, const char *addr1) {
    struct in_addr a[2];
    if (inet_pton(AF_INET, addr0, &a[0]) != 1 || inet_pton(AF_INET, addr1, &a[1]) != 1) return LTS_EINVAL;
    addrs[0] = a[0];
    addrs[1] = a[1];
    addrs_set = 1;
    return LTS_OK;
}
static struct in_addr addr_of(int rank) {
    if (!addrs_set) {
        struct in_addr lo;
        lo.s_addr = htonl(INADDR_LOOPBACK);
        return lo;
    }
    return addrs[rank];
}

/* One direction of the shared-memory channel: the sequence word alone on its cache line (so the
 * spinning reader's line holds nothing the writer touches between messages), the payload after. */
typedef struct {
    _Alignas(64) _Atomic uint32_t seq;
    char pad[60];
} line_t;

typedef struct {
    const lts_budget_rung_t *r;
    int rfd, wfd;            /* descriptors this rank reads and writes (may be the same socket) */
    int stream;              /* 1: a read may return part of a message */
    line_t *dir[2];          /* flag: dir[0] rank 0 -> 1, dir[1] rank 1 -> 0; payload follows each */
    void *map;
    size_t map_len;
    uint32_t seq;
} bstate_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- channel setup: every MPI call is made on both ranks whatever happened locally, and the
 * outcome is agreed before any call that would wait for the partner (accept) -------------------- */

static int agree(MPI_Comm comm, int rc) {
    int g = rc;
    if (MPI_Allreduce(&rc, &g, 1, MPI_INT, MPI_MIN, comm)) return LTS_EMPI;
    return g;
}

static void unique_name(char *buf, size_t n, const char *prefix, const char *suffix) {
    static unsigned counter;
    snprintf(buf, n, "%slatscope-budget-%ld-%u%s", prefix, (long)getpid(), counter++, suffix);
}

static int setup_flag(lts_op_ctx_t *c, bstate_t *s) {
    char name[96] = "";
    int rc = LTS_OK, fd = -1;
    size_t dirlen = (sizeof(line_t) + c->bytes + 63) / 64 * 64;
    s->map_len = 2 * dirlen;
    if (c->rank == 0) {
        unique_name(name, sizeof name, "/", "");
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)s->map_len)) rc = LTS_EIO;
    }
    if (MPI_Bcast(name, sizeof name, MPI_CHAR, 0, c->comm) || MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm)) return LTS_EMPI;
    if (rc == LTS_OK && c->rank == 1 && (fd = shm_open(name, O_RDWR, 0600)) < 0) rc = LTS_EIO;
    if (rc == LTS_OK) {
        s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s->map == MAP_FAILED) { s->map = NULL; rc = LTS_EIO; }
    }
    if (fd >= 0) close(fd);
    rc = agree(c->comm, rc);
    /* both have mapped it (or failed): the name is no longer needed */
    if (c->rank == 0 && name[0]) shm_unlink(name);
    if (rc) return rc;
    s->dir[0] = (line_t *)s->map;
    s->dir[1] = (line_t *)((char *)s->map + dirlen);
    return LTS_OK;
}

static int setup_pipe(lts_op_ctx_t *c, bstate_t *s) {
    char base[96] = "", pa[112], pb[112];
    int rc = LTS_OK;
    if (c->rank == 0) {
        unique_name(base, sizeof base, "/tmp/", "");
        snprintf(pa, sizeof pa, "%s.a", base);
        snprintf(pb, sizeof pb, "%s.b", base);
        if (mkfifo(pa, 0600) || mkfifo(pb, 0600)) rc = LTS_EIO;
    }
    if (MPI_Bcast(base, sizeof base, MPI_CHAR, 0, c->comm) || MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm)) return LTS_EMPI;
    snprintf(pa, sizeof pa, "%s.a", base);
    snprintf(pb, sizeof pb, "%s.b", base);
    if (rc == LTS_OK) {
        /* O_RDWR never blocks on a FIFO (Linux), so neither side waits for the other's open */
        s->wfd = open(c->rank == 0 ? pa : pb, O_RDWR);
        s->rfd = open(c->rank == 0 ? pb : pa, O_RDWR);
        if (s->wfd < 0 || s->rfd < 0) rc = LTS_EIO;
    }
    rc = agree(c->comm, rc);
    if (c->rank == 0 && base[0]) { unlink(pa); unlink(pb); }
    s->stream = 1;
    return rc;
}

static int setup_unix(lts_op_ctx_t *c, bstate_t *s) {
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    char path[96] = "";
    int rc = LTS_OK, lfd = -1;
    if (c->rank == 1) {
        unique_name(path, sizeof path, "/tmp/", ".sock");
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 1)) rc = LTS_EIO;
    }
    if (MPI_Bcast(path, sizeof path, MPI_CHAR, 1, c->comm) || MPI_Bcast(&rc, 1, MPI_INT, 1, c->comm)) return LTS_EMPI;
    if (rc == LTS_OK && c->rank == 0) {
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        s->rfd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (s->rfd < 0 || connect(s->rfd, (struct sockaddr *)&sa, sizeof sa)) rc = LTS_EIO;
    }
    rc = agree(c->comm, rc);
    if (c->rank == 1) {
        if (rc == LTS_OK && (s->rfd = accept(lfd, NULL, NULL)) < 0) rc = LTS_EIO;
        if (lfd >= 0) close(lfd);
        if (path[0]) unlink(path);
    }
    s->wfd = s->rfd;
    s->stream = 1;
    return agree(c->comm, rc);
}

static int setup_inet(lts_op_ctx_t *c, bstate_t *s, int tcp) {
    struct sockaddr_in me, peer;
    socklen_t len = sizeof me;
    memset(&me, 0, sizeof me);
    me.sin_family = AF_INET;
    me.sin_addr = addr_of(c->rank);
    int rc = LTS_OK, fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0), one = 1;
    int port = 0, ports[2] = {0, 0};
    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) || getsockname(fd, (struct sockaddr *)&me, &len))
        rc = LTS_EIO;
    else
        port = ntohs(me.sin_port);
    if (rc == LTS_OK && tcp && c->rank == 1 && listen(fd, 1)) rc = LTS_EIO;
    if (MPI_Allgather(&port, 1, MPI_INT, ports, 1, MPI_INT, c->comm)) { if (fd >= 0) close(fd); return LTS_EMPI; }
    rc = agree(c->comm, rc);
    if (rc) { if (fd >= 0) close(fd); return rc; }
    memset(&peer, 0, sizeof peer);
    peer.sin_family = AF_INET;
    peer.sin_addr = addr_of(1 - c->rank);
    peer.sin_port = htons((uint16_t)ports[1 - c->rank]);
    if (!tcp) {
        if (connect(fd, (struct sockaddr *)&peer, sizeof peer)) rc = LTS_EIO;
        s->rfd = s->wfd = fd;
        return agree(c->comm, rc);
    }
    if (c->rank == 0) {
        if (connect(fd, (struct sockaddr *)&peer, sizeof peer)) rc = LTS_EIO;
        s->rfd = fd;
    }
    rc = agree(c->comm, rc);
    if (c->rank == 1) {
        if (rc == LTS_OK && (s->rfd = accept(fd, NULL, NULL)) < 0) rc = LTS_EIO;
        close(fd);
    }
    /* Nagle would hold the reply back for the ACK of the previous segment */
    if (s->rfd >= 0 && setsockopt(s->rfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) rc = LTS_EIO;
    s->wfd = s->rfd;
    s->stream = 1;
    return agree(c->comm, rc);
}

static int budget_init_row(lts_op_ctx_t *c, size_t row) {
    const lts_budget_rung_t *r = &rungs[row];
    bstate_t *s = calloc(1, sizeof *s);
    if (!s) return LTS_ENOMEM;
    s->r = r;
    s->rfd = s->wfd = -1;
    c->state = s;
    if (c->size != 2) return LTS_EINVAL;
    if (!strcmp(r->mech, "udp") && c->bytes > 65507) return LTS_EINVAL;
    int rc = LTS_OK;
    if (!strcmp(r->mech, "flag") || !strcmp(r->mech, "futex")) rc = setup_flag(c, s);
    else if (!strcmp(r->mech, "pipe")) rc = setup_pipe(c, s);
    else if (!strcmp(r->mech, "unix")) rc = setup_unix(c, s);
    else if (!strcmp(r->mech, "udp")) rc = setup_inet(c, s, 0);
    else if (!strcmp(r->mech, "tcp")) rc = setup_inet(c, s, 1);
    if (rc == LTS_OK && !r->blocking && s->rfd >= 0) {
        int fl = fcntl(s->rfd, F_GETFL);
        if (fl < 0 || fcntl(s->rfd, F_SETFL, fl | O_NONBLOCK)) rc = LTS_EIO;
    }
    return rc;
}

/* lts_op_desc_t carries no user data: one init per row, generated (the table above is the data) */
#define ROW_INIT(i) static int init_##i(lts_op_ctx_t *c) { return budget_init_row(c, i); }
ROW_INIT(0) ROW_INIT(1) ROW_INIT(2) ROW_INIT(3) ROW_INIT(4) ROW_INIT(5) ROW_INIT(6) ROW_INIT(7) ROW_INIT(8)
ROW_INIT(9) ROW_INIT(10) ROW_INIT(11) ROW_INIT(12) ROW_INIT(13) ROW_INIT(14) ROW_INIT(15) ROW_INIT(16) ROW_INIT(17)
static int (*const row_init[])(lts_op_ctx_t *) = {init_0, init_1, init_2, init_3, init_4, init_5, init_6,
    init_7, init_8, init_9, init_10, init_11, init_12, init_13, init_14, init_15, init_16, init_17};
_Static_assert(sizeof row_init / sizeof row_init[0] == NRUNGS, "one init per rung: add a ROW_INIT");

/* ---- one message each way ---------------------------------------------------------------- */

static int fd_send(bstate_t *s, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = write(s->wfd, p, n);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return LTS_EIO;
        }
        p += w;
        n -= (size_t)w;
    }
    return LTS_OK;
}

static int fd_recv(bstate_t *s, void *buf, size_t n) {
    char *p = buf;
    while (n) {
        ssize_t r = read(s->rfd, p, n);
        if (r < 0) {
            /* a polling rung spins here: every turn is one read() that finds nothing */
            if (errno == EINTR || errno == EAGAIN) continue;
            return LTS_EIO;
        }
        if (r == 0) return LTS_EIO;
        if (!s->stream) return LTS_OK;   /* a datagram is whole */
        p += r;
        n -= (size_t)r;
    }
    return LTS_OK;
}

static void flag_send(bstate_t *s, int d, const void *buf, size_t n, uint32_t seq) {
    line_t *l = s->dir[d];
    memcpy(l + 1, buf, n);
    atomic_store_explicit(&l->seq, seq, memory_order_release);
    if (!strcmp(s->r->mech, "futex"))
        syscall(SYS_futex, (uint32_t *)&l->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void flag_recv(bstate_t *s, int d, void *buf, size_t n, uint32_t seq) {
    line_t *l = s->dir[d];
    uint32_t v;
    if (!strcmp(s->r->mech, "futex")) {
        /* sleep until woken: FUTEX_WAIT returns at once if the word already moved on */
        while ((v = atomic_load_explicit(&l->seq, memory_order_acquire)) != seq)
            syscall(SYS_futex, (uint32_t *)&l->seq, FUTEX_WAIT, v, NULL, NULL, 0);
    } else {
        for (unsigned spins = 0; atomic_load_explicit(&l->seq, memory_order_acquire) != seq; spins++)
            /* rarely: a yield costs more than the line transfer; only an oversubscribed partner needs it */
            if ((spins & 4095) == 4095) sched_yield();
    }
    memcpy(buf, l + 1, n);
}

static int one_way(lts_op_ctx_t *c, bstate_t *s, int sending, int d) {
    const char *m = s->r->mech;
    if (!strcmp(m, "mpi")) {
        int peer = 1 - c->rank;
        return (sending ? MPI_Send(c->sbuf, (int)c->bytes, MPI_BYTE, peer, TAG, c->comm)
                        : MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, peer, TAG, c->comm, MPI_STATUS_IGNORE))
                   ? LTS_EMPI : LTS_OK;
    }
    if (!strcmp(m, "flag") || !strcmp(m, "futex")) {
        if (sending) flag_send(s, d, c->sbuf, c->bytes, s->seq);
        else flag_recv(s, d, c->rbuf, c->bytes, s->seq);
        return LTS_OK;
    }
    return sending ? fd_send(s, c->sbuf, c->bytes) : fd_recv(s, c->rbuf, c->bytes);
}

static int budget_run(lts_op_ctx_t *c) {
    bstate_t *s = c->state;
    int rc;
    s->seq++;
    if (c->rank == 0) {
        if ((rc = one_way(c, s, 1, 0))) return rc;
        return one_way(c, s, 0, 1);
    }
    if ((rc = one_way(c, s, 0, 0))) return rc;
    if (s->r->delay_s > 0) {
        /* the synthetic rung's known cost, inside one side: busy, never asleep */
        double until = now_s() + s->r->delay_s;
        while (now_s() < until) {
        }
    }
    return one_way(c, s, 1, 1);
}

static void budget_fini(lts_op_ctx_t *c) {
    bstate_t *s = c->state;
    if (!s) return;
    if (s->rfd >= 0) close(s->rfd);
    if (s->wfd >= 0 && s->wfd != s->rfd) close(s->wfd);
    if (s->map) munmap(s->map, s->map_len);
    free(s);
    c->state = NULL;
}

int lts_budget_op(const char *name, lts_op_desc_t *op) {
    int i = lts_reg_find(&lts_budget_registry, name);
    if (i < 0) return LTS_ENOTFOUND;
    memset(op, 0, sizeof *op);
    op->name = rungs[i].name;
    op->help = rungs[i].help;
    op->group_size = 2;
    op->scale = 0.5;   /* one-way latency = RTT / 2 (seed 000 §5.1) */
    op->metric = "latency";
    op->init = row_init[i];
    op->run = budget_run;
    op->fini = budget_fini;
    op->self_isolating = 1;   /* rank 0's clock stops after rank 1's reply: back to back */
    return LTS_OK;
}
