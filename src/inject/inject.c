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

/* The busy-wait: the counter read in a loop, with a pause while more than LTS_SPIN_FINE ticks
 * remain (it frees the core's pipeline for a sibling and costs ~60 ns on recent Intel cores),
 * then without, so the exit overshoots by one counter read (~10 ns) rather than one pause.
 * Returns the ticks spun; 0 for want == 0 (no read). */
#define LTS_SPIN_FINE 256
static inline uint64_t lts_spin(uint64_t want) {
    if (!want) return 0;
    uint64_t t0 = lts_cycles(), t1;
    while ((t1 = lts_cycles()) - t0 + LTS_SPIN_FINE < want) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    while ((t1 = lts_cycles()) - t0 < want) {}
    return t1 - t0;
}

/* What one delayed call costs beyond the ticks it spins: the first counter read and the exit's
 * overshoot. Measured at set-up as the median, over 101 waits of 1 us, of the time around the
 * spin less its request and less the cost of the two reads around it (the same pair with
 * nothing between), in ticks; subtracted from each wait. */
static uint64_t lts_path_ticks;
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
static uint64_t lts_path_calibrate(double tps) {
    enum { N = 101 };
    uint64_t want = (uint64_t)(1e-6 * tps + 0.5), bare[N], around[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = lts_cycles(), b = lts_cycles();
        bare[i] = b - a;
    }
    for (int i = 0; i < N; i++) {
        uint64_t a = lts_cycles();
        (void)lts_spin(want);
        uint64_t b = lts_cycles();
        around[i] = b - a;
    }
    qsort(bare, N, sizeof bare[0], cmp_u64);
    qsort(around, N, sizeof around[0], cmp_u64);
    uint64_t extra = around[N / 2] - bare[N / 2];
    return extra > want ? extra - want : 0;
}

static inline void lts_delay(int call) {
    if (!lts_on || !lts_enabled[call]) return;
    if (__builtin_expect(lts_my_stats == NULL, 0)) lts_thread_init();
    unsigned idx = lts_inject_next_index(&lts_rng);
    uint64_t want = lts_table_ticks[idx], req = lts_table[idx], ach = 0;
    if (want) {   /* a zero entry costs no counter read */
        /* the wait is shortened by the path's own calibrated cost, so the call is held for the
         * requested time; achieved = the spin plus that cost (docs/delay-table.md) */
        uint64_t spun = lts_spin(want > lts_path_ticks ? want - lts_path_ticks : 0);
        ach = (uint64_t)((double)(spun + lts_path_ticks) * lts_ns_per_tick + 0.5);
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
 * this mode the blocking collectives (generated wrappers, end of file) run as rows of latscope's
 * algorithm registry (src/algos), whose MPI_Send/MPI_Isend/MPI_Sendrecv calls come back through
 * this library's wrappers: a binomial bcast over P ranks is delayed ceil(log2 P) times on its
 * critical path instead of once. The algorithms run on a duplicate of the caller's communicator (cached as an
 * attribute, freed with it), so their tags never meet the application's messages. */
static const struct { lts_coll_op_t op; const char *alg; } lts_msg_rows[] = {
    {LTS_COLL_BARRIER, "dissemination"}, {LTS_COLL_BCAST, "binomial"},     {LTS_COLL_REDUCE, "binomial"},
    {LTS_COLL_ALLREDUCE, "reduce-bcast"}, {LTS_COLL_SCATTER, "binomial"},  {LTS_COLL_GATHER, "binomial"},
    {LTS_COLL_ALLGATHER, "gather-bcast"}, {LTS_COLL_ALLTOALL, "pairwise"},
};
/* the generated blocking wrappers run every operation of LTS_COLL_OP_LIST as messages */
_Static_assert(sizeof lts_msg_rows / sizeof lts_msg_rows[0] == LTS_COLL_NOPS, "one message row per operation");
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
    lts_path_ticks = lts_path_calibrate(tps);
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
               "\"ticks_per_s\": %.1f, \"path_ns\": %.1f, "
               "\"hist_rule\": \"bin 0: 0 ns; bin i: [2^(i-1), 2^i) ns\", ",
            lts_rank, (unsigned long long)lts_seed, count, req, ach, 1e9 / lts_ns_per_tick,
            (double)lts_path_ticks * lts_ns_per_tick);
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

/* ---- persistent requests ------------------------------------------------------------------ */
#define CALL(x) LTS_CALL_##x

/* Persistent sends and collectives (their MPI_X_init wrappers are generated) are delayed when
 * started; *_init only records that the request sends somewhere, and as which call. */
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

/* ---- the wrappers of every send-like and collective call of the standard, generated at build
 * time from the MPI Forum's machine-readable standard (src/inject/gen_wrappers.py, which says
 * which calls and how each is delayed): sends delayed by lts_p2p, collectives by lts_coll (the
 * blocking ones latscope has algorithms for first try LTS_AS_MESSAGES), persistent ones through
 * pset_add; a function this MPI does not declare is left out. ------------------------------- */
#include "wrappers_gen.inc"
