/* liblatscope_systime.so: an LD_PRELOAD interposer on libc's socket, read/write and polling
 * calls. Each wrapper reads the cycle counter before and after the real call (dlsym RTLD_NEXT)
 * and adds the call and its ticks to this thread's counters, so a budget can split an MPI
 * call's time into user-space library work and time inside system calls (seed 000 §5-6 splits
 * "MPI send" and "MPI receive" off the driver and the wire the same way).
 * Interface and output: include/latscope/systime.h, docs/budget.md "Inside the MPI call".
 *
 * Fast path: one TLS load, two counter reads, two plain stores into a block only this thread
 * writes. No lock, no locked instruction, no syscall. Windows (lts_systime_start/stop) never
 * write other threads' blocks: they take snapshots of the sum and report differences. */
#include "latscope/systime.h"
#include "latscope/timer.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* One row per wrapped call: its name (the JSON key and the dlsym name) and its class. */
enum { SEND_LIKE, RECV_LIKE, WAIT };
static const char *const class_names[] = {"send_like", "recv_like", "wait"};
#define CALLS(X)                                                                                    \
    X(send, SEND_LIKE) X(recv, RECV_LIKE) X(sendto, SEND_LIKE) X(recvfrom, RECV_LIKE)                 \
    X(sendmsg, SEND_LIKE) X(recvmsg, RECV_LIKE) X(read, RECV_LIKE) X(write, SEND_LIKE)               \
    X(readv, RECV_LIKE) X(writev, SEND_LIKE) X(poll, WAIT) X(ppoll, WAIT) X(select, WAIT)            \
    X(epoll_wait, WAIT) X(epoll_pwait, WAIT)
#define ENUM(n, c) C_##n,
enum { CALLS(ENUM) NCALLS };
#define ROW(n, c) {#n, c},
static const struct { const char *name; int cls; } rows[] = {CALLS(ROW)};
_Static_assert(sizeof(rows) / sizeof(rows[0]) == NCALLS, "one row per wrapped call");

typedef struct blk {
    atomic_ullong calls[NCALLS], ticks[NCALLS];
    struct blk *next;
} blk_t;

typedef struct { unsigned long long calls[NCALLS], ticks[NCALLS]; } snap_t;

static _Atomic(blk_t *) blocks;              /* every thread's block, pushed lock-free */
static _Thread_local blk_t *mine;
static void *real[NCALLS];

/* Calibration by two points, at load and at exit (or read): the whole process lifetime is the
 * baseline, so no 20 ms calibration loop is added to every process started under the
 * interposer (the launcher's included). */
static uint64_t tsc0;
static double mono0;
static pid_t pid0;

/* Windows: only the thread calling start/stop touches these. */
static int win_open, win_count;
static snap_t win_base, win_sum;
static uint64_t win_tsc0, win_ticks;

static inline void bump(atomic_ullong *x, uint64_t v) {
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + v, memory_order_relaxed);
}

static double mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A (counter, monotonic) pair read close together: the tightest of a few brackets. */
static void stamp(uint64_t *tsc, double *mono) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = lts_cycles();
        double m = mono_now();
        uint64_t b = lts_cycles();
        if (b - a < best) { best = b - a; *tsc = a + (b - a) / 2; *mono = m; }
    }
}

static double tsc_hz(void) {
    uint64_t t;
    double m;
    stamp(&t, &m);
    while (m - mono0 < 2e-3) stamp(&t, &m);   /* at least 2 ms of baseline: error < 1e-4 */
    return (double)(t - tsc0) / (m - mono0);
}

static void resolve(void) {
    for (int i = 0; i < NCALLS; i++)
        if (!real[i]) real[i] = dlsym(RTLD_NEXT, rows[i].name);
}

static __attribute__((noinline)) blk_t *thread_block(void) {
    static blk_t fallback;   /* if calloc fails, such threads share one block (counts may race) */
    static atomic_int fallback_linked;
    blk_t *b = calloc(1, sizeof *b);
    if (!b) {
        b = &fallback;
        if (atomic_exchange(&fallback_linked, 1)) { mine = b; return b; }
    }
    b->next = atomic_load(&blocks);
    while (!atomic_compare_exchange_weak(&blocks, &b->next, b)) {}
    mine = b;
    return b;
}

static inline void account(int c, uint64_t t0) {
    uint64_t t1 = lts_cycles();
    blk_t *b = mine;
    if (__builtin_expect(b == NULL, 0)) b = thread_block();
    bump(&b->calls[c], 1);
    bump(&b->ticks[c], t1 - t0);
}

/* Each wrapper: the real call between two counter reads; errno as the real call left it. */
#define WRAP(ret, name, params, args)                                         \
    EXPORT ret name params {                                                 \
        if (__builtin_expect(real[C_##name] == NULL, 0)) resolve();         \
        uint64_t t0 = lts_cycles();                                          \
        ret ret_ = ((ret(*) params)real[C_##name]) args;                     \
        int e_ = errno;                                                      \
        account(C_##name, t0);                                               \
        errno = e_;                                                          \
        return ret_;                                                         \
    }
WRAP(ssize_t, send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
WRAP(ssize_t, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
WRAP(ssize_t, sendto, (int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tl),
     (fd, buf, n, flags, to, tl))
WRAP(ssize_t, recvfrom, (int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fl),
     (fd, buf, n, flags, from, fl))
WRAP(ssize_t, sendmsg, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
WRAP(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))
WRAP(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, readv, (int fd, const struct iovec *iov, int n), (fd, iov, n))
WRAP(ssize_t, writev, (int fd, const struct iovec *iov, int n), (fd, iov, n))
WRAP(int, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout))
WRAP(int, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask), (fds, n, ts, mask))
WRAP(int, select, (int n, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv), (n, rd, wr, ex, tv))
WRAP(int, epoll_wait, (int fd, struct epoll_event *ev, int n, int timeout), (fd, ev, n, timeout))
WRAP(int, epoll_pwait, (int fd, struct epoll_event *ev, int n, int timeout, const sigset_t *mask),
     (fd, ev, n, timeout, mask))

static void sum(snap_t *s) {
    memset(s, 0, sizeof *s);
    for (blk_t *b = atomic_load(&blocks); b; b = b->next)
        for (int i = 0; i < NCALLS; i++) {
            s->calls[i] += atomic_load_explicit(&b->calls[i], memory_order_relaxed);
            s->ticks[i] += atomic_load_explicit(&b->ticks[i], memory_order_relaxed);
        }
}

/* What is reported: the windows' sum once a window was opened, else the whole process. */
static void reported(snap_t *s, uint64_t *span_ticks) {
    uint64_t now = lts_cycles();
    sum(s);
    if (!win_count) { *span_ticks = now - tsc0; return; }
    snap_t out = win_sum;
    *span_ticks = win_ticks;
    if (win_open) {
        for (int i = 0; i < NCALLS; i++) {
            out.calls[i] += s->calls[i] - win_base.calls[i];
            out.ticks[i] += s->ticks[i] - win_base.ticks[i];
        }
        *span_ticks += now - win_tsc0;
    }
    *s = out;
}

EXPORT int lts_systime_start(void) {
    if (win_open) return -1;
    sum(&win_base);
    win_tsc0 = lts_cycles();
    win_open = 1;
    win_count++;
    return 0;
}

EXPORT int lts_systime_stop(void) {
    if (!win_open) return -1;
    uint64_t now = lts_cycles();
    snap_t s;
    sum(&s);
    for (int i = 0; i < NCALLS; i++) {
        win_sum.calls[i] += s.calls[i] - win_base.calls[i];
        win_sum.ticks[i] += s.ticks[i] - win_base.ticks[i];
    }
    win_ticks += now - win_tsc0;
    win_open = 0;
    return 0;
}

EXPORT int lts_systime_read(const char *call, unsigned long long *calls, unsigned long long *ns) {
    if (!call) return -1;
    int cls = -1, one = -1, all = !strcmp(call, "all");
    for (int k = 0; k < 3; k++)
        if (!strcmp(call, class_names[k])) cls = k;
    for (int i = 0; i < NCALLS; i++)
        if (!strcmp(call, rows[i].name)) one = i;
    if (!all && cls < 0 && one < 0) return -1;
    snap_t s;
    uint64_t span;
    reported(&s, &span);
    double ns_per_tick = 1e9 / tsc_hz();
    unsigned long long c = 0, t = 0;
    for (int i = 0; i < NCALLS; i++)
        if (all || i == one || rows[i].cls == cls) { c += s.calls[i]; t += s.ticks[i]; }
    if (calls) *calls = c;
    if (ns) *ns = (unsigned long long)((double)t * ns_per_tick + 0.5);
    return 0;
}

/* After fork the child starts afresh: its parent's counts are not its own. Only the forking
 * thread exists in the child, so resetting the blocks races with nobody. */
static void after_fork_child(void) {
    for (blk_t *b = atomic_load(&blocks); b; b = b->next)
        for (int i = 0; i < NCALLS; i++) {
            atomic_store(&b->calls[i], 0);
            atomic_store(&b->ticks[i], 0);
        }
    stamp(&tsc0, &mono0);
    pid0 = getpid();
    win_open = win_count = 0;
    win_ticks = 0;
    memset(&win_sum, 0, sizeof win_sum);
}

static __attribute__((constructor)) void lts_systime_init(void) {
    resolve();
    stamp(&tsc0, &mono0);
    pid0 = getpid();
    pthread_atfork(NULL, NULL, after_fork_child);
}

static const char *rank_env(void) {
    static const char *const vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 10) return v;
    }
    return NULL;
}

#define APPEND(...)                                                                      \
    do {                                                                                 \
        if (len < sizeof line) len += (size_t)snprintf(line + len, sizeof line - len, __VA_ARGS__); \
    } while (0)

/* At exit: one JSON line appended to $LATSCOPE_SYSTIME_OUT with a single write, so lines of
 * concurrent processes do not interleave (O_APPEND). The real write, not the wrapper. */
static __attribute__((destructor)) void lts_systime_fini(void) {
    const char *path = getenv("LATSCOPE_SYSTIME_OUT");
    if (!path || !*path) return;
    if (win_open) lts_systime_stop();
    snap_t s;
    uint64_t span;
    reported(&s, &span);
    double hz = tsc_hz(), ns_per_tick = 1e9 / hz;
    char exe[64] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(exe, sizeof exe, f)) exe[strcspn(exe, "\n\"\\")] = '\0';
        fclose(f);
    }
    const char *rank = rank_env();
    static char line[4096];
    size_t len = 0;
    APPEND("{\"format\": \"latscope.systime/1\", \"pid\": %ld, \"rank\": %s, \"exe\": \"%s\", \"tsc_hz\": %.1f, "
           "\"window\": \"%s\", \"windows\": %d, \"span_ns\": %.0f, \"calls\": {",
           (long)pid0, rank ? rank : "null", exe, hz, win_count ? "start-stop" : "process", win_count,
           (double)span * ns_per_tick);
    unsigned long long cc[3] = {0}, ct[3] = {0};
    for (int i = 0; i < NCALLS; i++) {
        APPEND("%s\"%s\": {\"calls\": %llu, \"ns\": %.0f}", i ? ", " : "", rows[i].name, s.calls[i],
               (double)s.ticks[i] * ns_per_tick);
        cc[rows[i].cls] += s.calls[i];
        ct[rows[i].cls] += s.ticks[i];
    }
    APPEND("}");
    for (int k = 0; k < 3; k++)
        APPEND(", \"%s\": {\"calls\": %llu, \"ns\": %.0f}", class_names[k], cc[k], (double)ct[k] * ns_per_tick);
    APPEND("}\n");
    if (len >= sizeof line) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t (*w)(int, const void *, size_t) = (ssize_t(*)(int, const void *, size_t))real[C_write];
    if (w) (void)w(fd, line, len);
    close(fd);
}
