/* liblatscope_inject.so: a PMPI interposition library that adds a delay drawn from a table at
 * the top of every send entry point and every collective (paper §3.1: "we choose to add the
 * latency to the top of the post_send method"). Loaded with LD_PRELOAD; no rebuild.
 *
 * Delay path: one LCG step (thread-local state), one table load, a busy-wait on the calibrated
 * cycle counter, relaxed atomic counters. No syscall, no lock, no sleep (paper §3.1). */
#include "table.h"
#include "latscope/algos.h"
#include "latscope/timer.h"
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

#define LTS_HIST_BINS 65   /* bin 0: 0 ns; bin i: [2^(i-1), 2^i) ns */

static int lts_on;                          /* injecting on this rank (set once at init) */
static unsigned char lts_enabled[LTS_INJECT_NCALLS];
static uint64_t lts_table[LTS_INJECT_TABLE_N]; /* ns */
static uint64_t lts_table_ticks[LTS_INJECT_TABLE_N]; /* same, in cycle-counter ticks */
static double lts_ns_per_tick;
static uint64_t lts_seed;
static int lts_rank = -1;
static atomic_uint lts_next_thread;
static char lts_log_prefix[4096];

/* Statistics for LATSCOPE_INJECT_LOG, one block per thread. Each block has a single writer (its
 * thread), so an update is a relaxed load and store -- plain moves, no locked instruction in the
 * delay path (six locked adds per call were most of the enabled path's cost). Blocks are linked
 * into a list when a thread first injects and summed at MPI_Finalize. */
typedef struct lts_stats {
    atomic_ullong count, sum_req_ns, sum_ach_ns;
    atomic_ullong hist_req[LTS_HIST_BINS], hist_ach[LTS_HIST_BINS];
    atomic_ullong calls[LTS_INJECT_NCALLS];
    struct lts_stats *next;
} lts_stats_t;
static lts_stats_t *lts_stats_list;
static pthread_mutex_t lts_stats_mu = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local uint64_t lts_rng;
static _Thread_local lts_stats_t *lts_my_stats;   /* NULL until this thread's first delay */

static inline int log2_bin(uint64_t ns) { return ns ? 64 - __builtin_clzll(ns) : 0; }
static inline void bump(atomic_ullong *x, uint64_t v) {
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + v, memory_order_relaxed);
}

/* First delay on a thread: its random stream and its statistics block. Out of the fast path. */
static __attribute__((noinline)) void lts_thread_init(void) {
    lts_rng = lts_inject_stream_init(lts_seed, lts_rank, atomic_fetch_add(&lts_next_thread, 1));
    static lts_stats_t fallback;   /* if calloc fails, such threads share one block (counts may race) */
    static int fallback_linked;
    lts_stats_t *b = calloc(1, sizeof *b);
    if (!b) b = &fallback;
    pthread_mutex_lock(&lts_stats_mu);
    if (b != &fallback || !fallback_linked) {
        b->next = lts_stats_list;
        lts_stats_list = b;
        fallback_linked |= b == &fallback;
    }
    pthread_mutex_unlock(&lts_stats_mu);
    lts_my_stats = b;
}

static inline void lts_delay(int call) {
    if (!lts_on || !lts_enabled[call]) return;
    if (__builtin_expect(lts_my_stats == NULL, 0)) lts_thread_init();
    unsigned idx = lts_inject_next_index(&lts_rng);
    uint64_t want = lts_table_ticks[idx], req = lts_table[idx], ach = 0;
    if (want) {   /* a zero entry costs no counter read */
        uint64_t t0 = lts_cycles(), t1;
        while ((t1 = lts_cycles()) - t0 < want) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        ach = (uint64_t)((double)(t1 - t0) * lts_ns_per_tick + 0.5);
    }
    lts_stats_t *st = lts_my_stats;
    bump(&st->count, 1);
    bump(&st->sum_req_ns, req);
    bump(&st->sum_ach_ns, ach);
    bump(&st->hist_req[log2_bin(req)], 1);
    bump(&st->hist_ach[log2_bin(ach)], 1);
    bump(&st->calls[call], 1);
}

/* A send to MPI_PROC_NULL or to oneself crosses no network: not delayed. */
static inline int lts_remote(int dest, MPI_Comm comm) {
    if (!lts_on || dest == MPI_PROC_NULL) return 0;
    int me, inter = 0;
    if (comm == MPI_COMM_WORLD) return dest != lts_rank;   /* no library call on the common case */
    if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) return 1;
    if (dest != me) return 1;
    PMPI_Comm_test_inter(comm, &inter);   /* in an intercommunicator dest is a remote rank */
    return inter;
}

/* Message mode: while a collective runs as latscope's point-to-point algorithm, its messages
 * are delayed (and counted) as that collective, whatever the sends' own selection says. */
static _Thread_local int lts_msgs_of = -1;

static inline void lts_p2p(int call, int dest, MPI_Comm comm) {
    if (__builtin_expect(lts_msgs_of >= 0, 0)) call = lts_msgs_of;
    if (lts_on && lts_enabled[call] && lts_remote(dest, comm)) lts_delay(call);
}

/* A collective over a one-rank intracommunicator sends nothing. */
static inline int lts_coll_sends(MPI_Comm comm) {
    if (!lts_on) return 0;
    int n = 2, inter = 0;
    PMPI_Comm_size(comm, &n);
    if (n == 1) PMPI_Comm_test_inter(comm, &inter);
    return n > 1 || inter;
}
static inline void lts_coll(int call, MPI_Comm comm) {
    if (lts_on && lts_enabled[call] && lts_coll_sends(comm)) lts_delay(call);
}

/* ---- LATSCOPE_INJECT_COLL=messages (docs/delay-table.md, "Per call or per message") ---------
 * The seed delays every work request, so every message inside a collective (seed 004 §3.1). In
 * this mode the blocking collectives below run as rows of latscope's algorithm registry
 * (src/algos), whose MPI_Send/MPI_Isend/MPI_Sendrecv calls come back through this library's
 * wrappers: a binomial bcast over P ranks is delayed ceil(log2 P) times on its critical path
 * instead of once. The algorithms run on a duplicate of the caller's communicator (cached as an
 * attribute, freed with it), so their tags never meet the application's messages. */
static const struct { lts_coll_op_t op; const char *alg; } lts_msg_rows[] = {
    {LTS_COLL_BARRIER, "dissemination"}, {LTS_COLL_BCAST, "binomial"},     {LTS_COLL_REDUCE, "binomial"},
    {LTS_COLL_ALLREDUCE, "reduce-bcast"}, {LTS_COLL_SCATTER, "binomial"},  {LTS_COLL_GATHER, "binomial"},
    {LTS_COLL_ALLGATHER, "gather-bcast"}, {LTS_COLL_ALLTOALL, "pairwise"},
};
static lts_coll_fn_t lts_msg_fn[LTS_COLL_NOPS];
static int lts_msgs_mode, lts_finalizing, lts_shadow_key = MPI_KEYVAL_INVALID;

static int lts_msgs_parse(const char *v, char *err, size_t errlen) {
    lts_msgs_mode = v && !strcmp(v, "messages");
    if (!v || !*v || lts_msgs_mode || !strcmp(v, "calls")) return 0;
    snprintf(err, errlen, "LATSCOPE_INJECT_COLL='%s': allowed are calls (one delay per collective call) and messages "
                          "(one per message of latscope's own algorithm)", v);
    return -1;
}

static int lts_shadow_free(MPI_Comm comm, int key, void *val, void *extra) {
    MPI_Comm *c = val;
    if (!lts_finalizing) PMPI_Comm_free(c);   /* at MPI_Finalize the library frees what is left */
    free(c);
    return MPI_SUCCESS;
}

static int lts_msgs_setup(char *err, size_t errlen) {
    for (size_t i = 0; i < sizeof lts_msg_rows / sizeof lts_msg_rows[0]; i++) {
        const lts_coll_alg_t *a = lts_coll_find(lts_msg_rows[i].op, lts_msg_rows[i].alg);
        if (!a) {
            snprintf(err, errlen, "algorithm '%s' is not in latscope's registry", lts_msg_rows[i].alg);
            return -1;
        }
        lts_msg_fn[lts_msg_rows[i].op] = a->fn;
    }
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, lts_shadow_free, &lts_shadow_key, NULL) != MPI_SUCCESS) {
        snprintf(err, errlen, "cannot create a communicator attribute key");
        return -1;
    }
    return 0;
}

/* 1 and *shadow set: run collective `call` as messages on *shadow. 0: the per-call path (mode
 * off, call not selected, nothing to send, an intercommunicator, or already inside one). */
static int lts_msgs_begin(int call, MPI_Comm comm, MPI_Comm *shadow) {
    if (!lts_msgs_mode || !lts_on || !lts_enabled[call] || lts_msgs_of >= 0) return 0;
    int inter = 0, flag = 0, n = 1;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_size(comm, &n);
    if (inter || n < 2) return 0;
    MPI_Comm *c = NULL;
    if (PMPI_Comm_get_attr(comm, lts_shadow_key, &c, &flag) != MPI_SUCCESS) return 0;
    if (!flag) {   /* first collective on comm: every member is here, so the dup is matched */
        if (!(c = malloc(sizeof *c))) return 0;
        if (PMPI_Comm_dup(comm, c) != MPI_SUCCESS) { free(c); return 0; }
        PMPI_Comm_set_attr(comm, lts_shadow_key, c);
    }
    *shadow = *c;
    lts_msgs_of = call;
    return 1;
}
#define LTS_AS_MESSAGES(name, OP, member, args)                                  \
    do {                                                                         \
        MPI_Comm shadow;                                                         \
        if (lts_msgs_begin(CALL(name), comm, &shadow)) {                         \
            int rc_ = lts_msg_fn[OP].member args;                                \
            lts_msgs_of = -1;                                                    \
            return rc_;                                                          \
        }                                                                        \
    } while (0)

/* ---- persistent sends: remember which requests send to a remote rank ------------------- */
/* MPI_Request is an int (MPICH) or a pointer (Open MPI): keyed by its bytes. */
#define LTS_PSET 4096
static uint64_t lts_pset[LTS_PSET];
static unsigned char lts_pset_used[LTS_PSET];
static short lts_pset_call[LTS_PSET];   /* the call a start is delayed as */
static atomic_int lts_pset_n;   /* read without the lock as a fast "none" check */
static pthread_mutex_t lts_pset_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t req_key(MPI_Request r) {
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}
static int pset_find(uint64_t k) {   /* caller holds the lock; slot or -1 */
    unsigned h = (unsigned)(lts_inject_splitmix64(k) & (LTS_PSET - 1));
    for (int i = 0; i < LTS_PSET; i++, h = (h + 1) & (LTS_PSET - 1)) {
        if (lts_pset_used[h] == 0) return -1;
        if (lts_pset_used[h] == 1 && lts_pset[h] == k) return (int)h;
    }
    return -1;
}
static void pset_add(MPI_Request r, int call) {
    uint64_t k = req_key(r);
    pthread_mutex_lock(&lts_pset_mu);
    if (pset_find(k) < 0 && lts_pset_n < LTS_PSET * 3 / 4) {
        unsigned h = (unsigned)(lts_inject_splitmix64(k) & (LTS_PSET - 1));
        while (lts_pset_used[h] == 1) h = (h + 1) & (LTS_PSET - 1);
        lts_pset[h] = k;
        lts_pset_call[h] = (short)call;
        lts_pset_used[h] = 1;
        lts_pset_n++;
    }
    pthread_mutex_unlock(&lts_pset_mu);
}
static int pset_call(MPI_Request r) {   /* the call to delay a start as, or -1 */
    if (lts_pset_n == 0) return -1;
    pthread_mutex_lock(&lts_pset_mu);
    int s = pset_find(req_key(r));
    int c = s >= 0 ? lts_pset_call[s] : -1;
    pthread_mutex_unlock(&lts_pset_mu);
    return c;
}
static void pset_del(MPI_Request r) {
    if (lts_pset_n == 0) return;
    pthread_mutex_lock(&lts_pset_mu);
    int s = pset_find(req_key(r));
    if (s >= 0) { lts_pset_used[s] = 2; lts_pset_n--; }   /* tombstone keeps probe chains intact */
    pthread_mutex_unlock(&lts_pset_mu);
}

/* ---- set-up at MPI_Init / MPI_Init_thread ----------------------------------------------- */
static int lts_setup_local(int rank, int size, char *err, size_t errlen) {
    const char *tpath = getenv("LATSCOPE_INJECT_TABLE");
    if (!tpath || !*tpath) {
        snprintf(err, errlen, "LATSCOPE_INJECT_TABLE is not set (path to a delay table, docs/delay-table.md)");
        return -1;
    }
    if (lts_inject_table_load(tpath, lts_table, err, errlen)) return -1;
    if (lts_inject_seed_parse(getenv("LATSCOPE_INJECT_SEED"), &lts_seed, err, errlen)) return -1;
    if (lts_inject_calls_parse(getenv("LATSCOPE_INJECT_CALLS"), lts_enabled, err, errlen)) return -1;
    if (lts_msgs_parse(getenv("LATSCOPE_INJECT_COLL"), err, errlen)) return -1;
    if (lts_msgs_mode && lts_msgs_setup(err, errlen)) return -1;
    const char *rs = getenv("LATSCOPE_INJECT_RANKS");
    int mine = 1;
    if (rs) {
        unsigned char *sel = calloc((size_t)size, 1);
        if (!sel) { snprintf(err, errlen, "out of memory"); return -1; }
        int rc = lts_inject_ranks_parse(rs, size, sel, err, errlen);
        mine = sel[rank];
        free(sel);
        if (rc) return -1;
    }
    /* Calibration rejects brackets stretched by preemption (common when ranks share cores):
     * retry rather than run uninjected. */
    double tps = 0;
    int cal = -1;
    for (int attempt = 0; attempt < 20 && cal != 0 && lts_cycles_available(); attempt++)
        cal = lts_cycles_calibrate(0.02, &tps);
    if (cal != 0 || tps <= 0) {
        snprintf(err, errlen, "no usable cycle counter on this machine (the busy-wait needs one)");
        return -1;
    }
    lts_ns_per_tick = 1e9 / tps;
    for (int i = 0; i < LTS_INJECT_TABLE_N; i++) lts_table_ticks[i] = (uint64_t)((double)lts_table[i] * tps / 1e9 + 0.5);
    const char *lp = getenv("LATSCOPE_INJECT_LOG");
    if (lp && *lp) snprintf(lts_log_prefix, sizeof lts_log_prefix, "%s", lp);
    return mine ? 1 : 0;
}

/* Wait (at most 2 s) until whoever reads this process's stderr (the launcher's forwarder, through
 * a pipe, a socket or a pty) has taken what was written to it. PMPI_Abort tears the job down at
 * once, and a forwarder killed with the message still in the pipe drops it: the strict-mode error
 * once reached the user as an empty stderr. Unread bytes: FIONREAD on a pipe, TIOCOUTQ on a
 * socket or terminal; anything else (a file) needs no wait. */
static void drain_stderr(void) {
    struct stat st;
    if (fstat(2, &st) != 0) return;
    for (int i = 0; i < 2000; i++) {
        int left = 0;
        if (S_ISFIFO(st.st_mode)) {
            if (ioctl(2, FIONREAD, &left) != 0) return;
        } else if (S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)) {
#ifdef TIOCOUTQ
            if (ioctl(2, TIOCOUTQ, &left) != 0) return;
#else
            return;
#endif
        } else {
            return;
        }
        if (left <= 0) return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

static void lts_setup(void) {
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    lts_rank = rank;
    char err[LTS_INJECT_ERRLEN] = "";
    int r = lts_setup_local(rank, size, err, sizeof err);
    /* One verdict for the whole job: if any rank failed, no rank injects, and the lowest
     * failing rank reports (rank 0 when all see the same environment). */
    int bad = r < 0 ? rank : size, first_bad = size;
    PMPI_Allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const char *strict = getenv("LATSCOPE_INJECT_STRICT");
    int is_strict = strict && *strict && strcmp(strict, "0") != 0;
    if (first_bad < size) {
        if (rank == first_bad) {
            fprintf(stderr, "latscope-inject: %s: rank %d: %s; %s\n", is_strict ? "error" : "warning", rank, err,
                    is_strict ? "aborting (LATSCOPE_INJECT_STRICT=1)" : "running uninjected");
            fflush(stderr);
            if (is_strict) drain_stderr();
        }
        lts_on = 0;
        if (is_strict) {
            PMPI_Barrier(MPI_COMM_WORLD);   /* the reporting rank has let its message out */
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
        return;
    }
    lts_on = r == 1;
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) lts_setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) lts_setup();
    return rc;
}

static void json_hist(FILE *f, const char *key, const unsigned long long *h) {
    int last = 0;
    for (int i = 0; i < LTS_HIST_BINS; i++)
        if (h[i]) last = i;
    fprintf(f, "\"%s\": [", key);
    for (int i = 0; i <= last; i++) fprintf(f, "%s%llu", i ? ", " : "", h[i]);
    fprintf(f, "]");
}

static void lts_write_log(void) {
    if (!lts_on || !lts_log_prefix[0]) return;
    /* the sum over the threads' blocks */
    unsigned long long count = 0, req = 0, ach = 0, hreq[LTS_HIST_BINS] = {0}, hach[LTS_HIST_BINS] = {0},
                       calls[LTS_INJECT_NCALLS] = {0};
    pthread_mutex_lock(&lts_stats_mu);
    for (lts_stats_t *b = lts_stats_list; b; b = b->next) {
        count += atomic_load(&b->count);
        req += atomic_load(&b->sum_req_ns);
        ach += atomic_load(&b->sum_ach_ns);
        for (int i = 0; i < LTS_HIST_BINS; i++) {
            hreq[i] += atomic_load(&b->hist_req[i]);
            hach[i] += atomic_load(&b->hist_ach[i]);
        }
        for (int i = 0; i < LTS_INJECT_NCALLS; i++) calls[i] += atomic_load(&b->calls[i]);
    }
    pthread_mutex_unlock(&lts_stats_mu);
    char path[4200];
    snprintf(path, sizeof path, "%s.%d.json", lts_log_prefix, lts_rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "latscope-inject: warning: rank %d: cannot write %s\n", lts_rank, path);
        return;
    }
    fprintf(f, "{\"format\": \"latscope.inject-log/1\", \"rank\": %d, \"seed\": %llu, \"count\": %llu, "
               "\"requested_ns_sum\": %llu, \"achieved_ns_sum\": %llu, "
               "\"hist_rule\": \"bin 0: 0 ns; bin i: [2^(i-1), 2^i) ns\", ",
            lts_rank, (unsigned long long)lts_seed, count, req, ach);
    json_hist(f, "requested_hist_log2_ns", hreq);
    fprintf(f, ", ");
    json_hist(f, "achieved_hist_log2_ns", hach);
    fprintf(f, ", \"calls\": {");
    int first = 1;
    for (int i = 0; i < LTS_INJECT_NCALLS; i++) {
        if (!calls[i]) continue;
        fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", lts_inject_calls[i].name, calls[i]);
        first = 0;
    }
    fprintf(f, "}}\n");
    fclose(f);
}

int MPI_Finalize(void) {
    lts_write_log();
    lts_on = 0;
    lts_finalizing = 1;
    return PMPI_Finalize();
}

/* ---- point-to-point sends ------------------------------------------------------------------ */
#define CALL(x) LTS_CALL_##x

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    lts_p2p(CALL(send), dest, comm);
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    lts_p2p(CALL(isend), dest, comm);
    return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    lts_p2p(CALL(ssend), dest, comm);
    return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
}
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    lts_p2p(CALL(issend), dest, comm);
    return PMPI_Issend(buf, count, datatype, dest, tag, comm, request);
}
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    lts_p2p(CALL(bsend), dest, comm);
    return PMPI_Bsend(buf, count, datatype, dest, tag, comm);
}
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    lts_p2p(CALL(ibsend), dest, comm);
    return PMPI_Ibsend(buf, count, datatype, dest, tag, comm, request);
}
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    lts_p2p(CALL(rsend), dest, comm);
    return PMPI_Rsend(buf, count, datatype, dest, tag, comm);
}
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    lts_p2p(CALL(irsend), dest, comm);
    return PMPI_Irsend(buf, count, datatype, dest, tag, comm, request);
}
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    lts_p2p(CALL(sendrecv), dest, comm);
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
}
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status) {
    lts_p2p(CALL(sendrecv_replace), dest, comm);
    return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

/* Persistent sends (and persistent collectives, wrappers_gen.inc) are delayed when started;
 * *_init only records that the request sends somewhere, and as which call. */
#define LTS_PERSIST(NAME)                                                                            \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, \
                   MPI_Request *request) {                                                          \
        int rc = PMPI_##NAME(buf, count, datatype, dest, tag, comm, request);                       \
        if (rc == MPI_SUCCESS && lts_remote(dest, comm)) pset_add(*request, CALL(start));          \
        return rc;                                                                                  \
    }
LTS_PERSIST(Send_init)
LTS_PERSIST(Bsend_init)
LTS_PERSIST(Ssend_init)
LTS_PERSIST(Rsend_init)

int MPI_Request_free(MPI_Request *request) {
    if (request) pset_del(*request);
    return PMPI_Request_free(request);
}
int MPI_Start(MPI_Request *request) {
    if (lts_on && request) {
        int c = pset_call(*request);
        if (c >= 0) lts_delay(c);
    }
    return PMPI_Start(request);
}
int MPI_Startall(int count, MPI_Request array_of_requests[]) {
    if (lts_on && array_of_requests)
        for (int i = 0; i < count; i++) {   /* one delay per send or collective started, as for MPI_Start */
            int c = pset_call(array_of_requests[i]);
            if (c >= 0) lts_delay(c == CALL(start) ? CALL(startall) : c);
        }
    return PMPI_Startall(count, array_of_requests);
}

/* ---- collectives: the library's own point-to-point inside them never reaches PMPI --------- */
int MPI_Barrier(MPI_Comm comm) {
    LTS_AS_MESSAGES(barrier, LTS_COLL_BARRIER, barrier, (shadow));
    lts_coll(CALL(barrier), comm);
    return PMPI_Barrier(comm);
}
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    LTS_AS_MESSAGES(bcast, LTS_COLL_BCAST, bcast, (buffer, count, datatype, root, shadow));
    lts_coll(CALL(bcast), comm);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
    LTS_AS_MESSAGES(reduce, LTS_COLL_REDUCE, reduce, (sendbuf, recvbuf, count, datatype, op, root, shadow));
    lts_coll(CALL(reduce), comm);
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    LTS_AS_MESSAGES(allreduce, LTS_COLL_ALLREDUCE, allreduce, (sendbuf, recvbuf, count, datatype, op, shadow));
    lts_coll(CALL(allreduce), comm);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    LTS_AS_MESSAGES(gather, LTS_COLL_GATHER, gather,
                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, shadow));
    lts_coll(CALL(gather), comm);
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    lts_coll(CALL(gatherv), comm);
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    LTS_AS_MESSAGES(scatter, LTS_COLL_SCATTER, scatter,
                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, shadow));
    lts_coll(CALL(scatter), comm);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    lts_coll(CALL(scatterv), comm);
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    LTS_AS_MESSAGES(allgather, LTS_COLL_ALLGATHER, allgather,
                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, shadow));
    lts_coll(CALL(allgather), comm);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    lts_coll(CALL(allgatherv), comm);
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    LTS_AS_MESSAGES(alltoall, LTS_COLL_ALLTOALL, alltoall,
                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, shadow));
    lts_coll(CALL(alltoall), comm);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    lts_coll(CALL(alltoallv), comm);
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm) {
    lts_coll(CALL(alltoallw), comm);
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
    lts_coll(CALL(reduce_scatter), comm);
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
    lts_coll(CALL(reduce_scatter_block), comm);
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    lts_coll(CALL(scan), comm);
    return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
}
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    lts_coll(CALL(exscan), comm);
    return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
}

/* nonblocking collectives */
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ibarrier), comm);
    return PMPI_Ibarrier(comm, request);
}
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ibcast), comm);
    return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
}
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ireduce), comm);
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request) {
    lts_coll(CALL(iallreduce), comm);
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(igather), comm);
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(igatherv), comm);
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
}
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(iscatter), comm);
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request) {
    lts_coll(CALL(iscatterv), comm);
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(iallgather), comm);
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(iallgatherv), comm);
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ialltoall), comm);
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request) {
    lts_coll(CALL(ialltoallv), comm);
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
}
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ialltoallw), comm);
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                           request);
}
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ireduce_scatter), comm);
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request) {
    lts_coll(CALL(ireduce_scatter_block), comm);
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request) {
    lts_coll(CALL(iscan), comm);
    return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request *request) {
    lts_coll(CALL(iexscan), comm);
    return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* ---- MPI-3/4 entry points, generated: large-count (_c) variants, MPI_Isendrecv(_replace),
 * neighbourhood and persistent collectives; each group where the MPI declares it ----------- */
#include "wrappers_gen.inc"
