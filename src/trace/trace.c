/* liblatscope_trace.so: records each rank's MPI calls through PMPI, loaded with LD_PRELOAD like
 * the injector (docs/trace.md). `latscope trace goal` turns the record into a GOAL schedule
 * (Hoefler, Siebert & Lumsdaine, "Group Operation Assembly Language", ICPP 2009) that the
 * simulator replays (docs/sim.md).
 *
 * What is kept: for every call, its entry and exit on the rank's cycle counter, the peer (a rank
 * of MPI_COMM_WORLD), the tag, the bytes and, for nonblocking calls and the waits and tests that
 * complete them, the request. The time between one call's exit and the next call's entry is the
 * rank's computation. The exit is read after the record is written, so the tracer's own cost
 * lands inside the call, never in a computation gap.
 *
 * Blocking collectives run as rows of latscope's algorithm registry (src/algos), like the
 * injector's LATSCOPE_INJECT_COLL=messages (docs/delay-table.md): their point-to-point calls come
 * back through this library's wrappers, so the trace holds the messages that really ran, and
 * the schedule is the algorithm's own, not a second description of it. They run on a duplicate
 * of the caller's communicator, so their tags never meet the application's.
 *
 * Records are 48 bytes, buffered (64 KiB) and written with write(2): no lock, no syscall per
 * call. Format: docs/trace.md "Trace files". */
#include "latscope/algos.h"
#include "latscope/timer.h"
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TR_SEND = 1, TR_RECV, TR_ISEND, TR_IRECV, TR_WAIT, TR_NOP, TR_COLL, TR_END };

typedef struct {        /* one call; docs/trace.md "Trace files" */
    uint32_t kind;
    int32_t peer;       /* MPI_COMM_WORLD rank; -1 any source */
    int32_t tag;        /* -1 any tag */
    uint32_t comm;      /* 0: MPI_COMM_WORLD, else a number per communicator */
    uint64_t bytes;
    uint64_t req;       /* request (its bytes), 0 if none */
    uint64_t t0, t1;    /* cycle counter at entry and exit */
} tr_rec_t;
_Static_assert(sizeof(tr_rec_t) == 48, "trace record layout (docs/trace.md)");

typedef struct {
    char magic[8];      /* "LTSTRACE" */
    uint32_t version, header_bytes;
    int32_t rank, size;
    double ticks_per_s;
    uint64_t t_init;    /* MPI_Init's exit */
} tr_head_t;

#define TR_BUF 1365     /* records per write: 64 KiB */
static tr_rec_t tr_buf[TR_BUF];
static int tr_n, tr_fd = -1, tr_on, tr_rank;
static uint64_t tr_pseudo = 1ull << 63;   /* request keys for the halves of a sendrecv */
static _Thread_local int tr_inside;
static int tr_finalizing;       /* inside a collective run as latscope's row */

static void tr_flush(void) {
    size_t len = (size_t)tr_n * sizeof(tr_rec_t), off = 0;
    while (off < len) {
        ssize_t w = write(tr_fd, (char *)tr_buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            fprintf(stderr, "latscope-trace: rank %d: cannot write the trace (%s): it stops here\n", tr_rank,
                    strerror(errno));
            tr_on = 0;
            break;
        }
        off += (size_t)w;
    }
    tr_n = 0;
}

static inline void tr_put(uint32_t kind, int peer, int tag, uint32_t comm, uint64_t bytes, uint64_t req,
                          uint64_t t0, uint64_t t1) {
    tr_rec_t *r = &tr_buf[tr_n];
    r->kind = kind; r->peer = peer; r->tag = tag; r->comm = comm;
    r->bytes = bytes; r->req = req; r->t0 = t0; r->t1 = t1;
    if (++tr_n == TR_BUF) tr_flush();
}

static uint64_t req_key(MPI_Request r) {   /* an int (MPICH) or a pointer (Open MPI) */
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static uint64_t tr_bytes(int count, MPI_Datatype dt) {
    int s = 0;
    if (count <= 0 || PMPI_Type_size(dt, &s) != MPI_SUCCESS || s < 0) return 0;
    return (uint64_t)count * (uint64_t)s;
}

/* The communicator's number and a peer's MPI_COMM_WORLD rank. A communicator congruent to
 * MPI_COMM_WORLD keeps ranks; others are translated through their group. The last one is
 * cached: a collective's messages all go through its duplicate. */
static MPI_Group tr_world_group = MPI_GROUP_NULL;
static MPI_Comm tr_last_comm = MPI_COMM_NULL;
static uint32_t tr_last_id, tr_next_id = 1;
static int tr_last_same;
static int tr_comm_key = MPI_KEYVAL_INVALID;

static uint32_t tr_comm(MPI_Comm comm, int *same) {
    if (comm == MPI_COMM_WORLD) { *same = 1; return 0; }
    if (comm != tr_last_comm) {
        int flag = 0, cmp = MPI_UNEQUAL;
        void *v = NULL;
        PMPI_Comm_get_attr(comm, tr_comm_key, &v, &flag);
        if (!flag) {
            v = (void *)(uintptr_t)tr_next_id++;
            PMPI_Comm_set_attr(comm, tr_comm_key, v);
        }
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
        tr_last_comm = comm;
        tr_last_id = (uint32_t)(uintptr_t)v;
        tr_last_same = cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
    }
    *same = tr_last_same;
    return tr_last_id;
}
static int tr_peer(MPI_Comm comm, int same, int peer) {
    if (same || peer < 0) return peer < 0 ? -1 : peer;   /* MPI_ANY_SOURCE, MPI_PROC_NULL */
    MPI_Group g;
    int w = -1;
    PMPI_Comm_group(comm, &g);
    PMPI_Group_translate_ranks(g, 1, &peer, tr_world_group, &w);
    PMPI_Group_free(&g);
    return w;
}

static void tr_p2p(uint32_t kind, int peer, int tag, int count, MPI_Datatype dt, MPI_Comm comm, uint64_t req,
                   uint64_t t0) {
    if (!tr_on || peer == MPI_PROC_NULL) return;
    int same;
    uint32_t id = tr_comm(comm, &same);
    int p = tr_peer(comm, same, peer);
    /* a message to oneself (an algorithm's local copy) crosses no network: left out, its time
     * stays in the computation gap, as the copy it is */
    if (p == tr_rank) return;
    uint64_t b = tr_bytes(count, dt);
    tr_put(kind, p, tag == MPI_ANY_TAG ? -1 : tag, id, b, req, t0, lts_cycles());
}
static void tr_nop(uint64_t t0) {
    if (tr_on) tr_put(TR_NOP, -1, 0, 0, 0, 0, t0, lts_cycles());
}

/* ---- set-up and end ---------------------------------------------------------------------- */
static int tr_setup_local(char *err, size_t errlen) {
    const char *dir = getenv("LATSCOPE_TRACE_DIR");
    if (!dir || !*dir) {
        snprintf(err, errlen, "LATSCOPE_TRACE_DIR is not set (the directory for the trace files)");
        return -1;
    }
    double tps = 0;
    int cal = -1;
    /* calibration rejects brackets stretched by preemption (ranks sharing cores): retry */
    for (int attempt = 0; attempt < 20 && cal != 0 && lts_cycles_available(); attempt++)
        cal = lts_cycles_calibrate(0.02, &tps);
    if (cal != 0 || tps <= 0) {
        snprintf(err, errlen, "no usable cycle counter on this machine");
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.%d.bin", dir, tr_rank);
    tr_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (tr_fd < 0) {
        snprintf(err, errlen, "cannot write %s (%s)", path, strerror(errno));
        return -1;
    }
    int size = 1;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    tr_head_t h = {{'L', 'T', 'S', 'T', 'R', 'A', 'C', 'E'}, 1, sizeof h, tr_rank, size, tps, 0};
    h.t_init = lts_cycles();
    if (write(tr_fd, &h, sizeof h) != (ssize_t)sizeof h) {
        snprintf(err, errlen, "cannot write %s (%s)", path, strerror(errno));
        return -1;
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &tr_world_group);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &tr_comm_key, NULL);
    return 0;
}

/* One verdict for the job: if a rank cannot trace, no rank runs on, and the lowest failing rank
 * says why (an MPI program must not hang because one rank failed). */
static void tr_setup(void) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &tr_rank);
    char err[4400] = "";
    int bad = tr_setup_local(err, sizeof err) ? tr_rank : -1, first = -1;
    int mine = bad < 0 ? 1 << 30 : bad;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first != 1 << 30) {
        if (tr_rank == first) {
            fprintf(stderr, "latscope-trace: error: rank %d: %s\n", tr_rank, err);
            fflush(stderr);
        }
        struct timespec ms = {0, 200000000};   /* let the launcher forward the line first */
        nanosleep(&ms, NULL);
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the first record's computation gap starts here, on every rank at once */
    PMPI_Barrier(MPI_COMM_WORLD);
    tr_on = 1;
    uint64_t t = lts_cycles();
    tr_put(TR_NOP, -1, 0, 0, 0, 0, t, t);
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) tr_setup();
    return rc;
}
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) tr_setup();
    return rc;
}
int MPI_Finalize(void) {
    if (tr_on) {
        uint64_t t = lts_cycles();
        tr_put(TR_END, -1, 0, 0, 0, 0, t, t);
        tr_flush();
        tr_on = 0;
    }
    tr_finalizing = 1;
    if (tr_fd >= 0) close(tr_fd);
    tr_fd = -1;
    return PMPI_Finalize();
}

/* ---- point-to-point ------------------------------------------------------------------------ */
#define TR_BSEND(name)                                                                               \
    int MPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {  \
        uint64_t t0 = lts_cycles();                                                                 \
        int rc = PMPI_##name(buf, count, dt, dest, tag, comm);                                       \
        tr_p2p(TR_SEND, dest, tag, count, dt, comm, 0, t0);                                         \
        return rc;                                                                                  \
    }
TR_BSEND(Send)
TR_BSEND(Ssend)
TR_BSEND(Rsend)
TR_BSEND(Bsend)

#define TR_ISEND(name)                                                                               \
    int MPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,   \
                   MPI_Request *req) {                                                              \
        uint64_t t0 = lts_cycles();                                                                 \
        int rc = PMPI_##name(buf, count, dt, dest, tag, comm, req);                                  \
        if (rc == MPI_SUCCESS) tr_p2p(TR_ISEND, dest, tag, count, dt, comm, req_key(*req), t0);    \
        return rc;                                                                                  \
    }
TR_ISEND(Isend)
TR_ISEND(Issend)
TR_ISEND(Irsend)
TR_ISEND(Ibsend)

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    uint64_t t0 = lts_cycles();
    MPI_Status st;
    if (status == MPI_STATUS_IGNORE) status = &st;
    int rc = PMPI_Recv(buf, count, dt, source, tag, comm, status);
    if (rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
        int n = 0;   /* what arrived, from whom: the schedule replays the match that happened */
        PMPI_Get_count(status, MPI_BYTE, &n);
        tr_p2p(TR_RECV, status->MPI_SOURCE, status->MPI_TAG, n, MPI_BYTE, comm, 0, t0);
    }
    return rc;
}
int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req) {
    uint64_t t0 = lts_cycles();
    int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, req);
    if (rc == MPI_SUCCESS) tr_p2p(TR_IRECV, source, tag, count, dt, comm, req_key(*req), t0);
    return rc;
}

/* A sendrecv is a send and a receive started together and both waited for: four records with
 * the call's times, under request keys of their own. */
static void tr_sendrecv(int dest, int stag, int scount, MPI_Datatype st, int source, int rtag, int rcount,
                        MPI_Datatype rt, MPI_Comm comm, uint64_t t0) {
    if (!tr_on) return;
    uint64_t ks = tr_pseudo++, kr = tr_pseudo++;
    tr_p2p(TR_ISEND, dest, stag, scount, st, comm, ks, t0);
    tr_p2p(TR_IRECV, source, rtag, rcount, rt, comm, kr, t0);
    uint64_t t1 = lts_cycles();
    tr_put(TR_WAIT, -1, 0, 0, 0, ks, t0, t1);
    tr_put(TR_WAIT, -1, 0, 0, 0, kr, t0, lts_cycles());
}
int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rt, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    uint64_t t0 = lts_cycles();
    int rc = PMPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, source, rtag, comm, status);
    if (rc == MPI_SUCCESS) tr_sendrecv(dest, stag, scount, st, source, rtag, rcount, rt, comm, t0);
    return rc;
}
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status *status) {
    uint64_t t0 = lts_cycles();
    int rc = PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, status);
    if (rc == MPI_SUCCESS) tr_sendrecv(dest, stag, count, dt, source, rtag, count, dt, comm, t0);
    return rc;
}

/* ---- completion: one TR_WAIT per request completed ------------------------------------------ */
static void tr_done(const uint64_t *keys, int n, const int *which, int nwhich, uint64_t t0) {
    if (!tr_on) return;
    uint64_t t1 = lts_cycles();
    for (int i = 0; i < nwhich; i++) {
        int j = which ? which[i] : i;
        if (j >= 0 && j < n && keys[j]) tr_put(TR_WAIT, -1, 0, 0, 0, keys[j], t0, t1);
    }
    if (!nwhich) tr_put(TR_NOP, -1, 0, 0, 0, 0, t0, t1);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    uint64_t t0 = lts_cycles(), k = *req == MPI_REQUEST_NULL ? 0 : req_key(*req);
    int rc = PMPI_Wait(req, status);
    /* a persistent request stays allocated (its start is not traced): no completion recorded */
    tr_done(&k, 1, NULL, k && *req == MPI_REQUEST_NULL, t0);
    return rc;
}
int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    uint64_t t0 = lts_cycles(), k = *req == MPI_REQUEST_NULL ? 0 : req_key(*req);
    int rc = PMPI_Test(req, flag, status);
    tr_done(&k, 1, NULL, *flag && *req == MPI_REQUEST_NULL, t0);
    return rc;
}

/* keys of an array of requests, before the call frees them */
#define TR_KEYS(n, reqs)                                                                 \
    uint64_t kst_[64], *keys = (n) <= 64 ? kst_ : malloc(sizeof(uint64_t) * (size_t)(n)); \
    if (keys)                                                                            \
        for (int i_ = 0; i_ < (n); i_++)                                                 \
            keys[i_] = (reqs)[i_] == MPI_REQUEST_NULL ? 0 : req_key((reqs)[i_]);
#define TR_KEYS_FREE() if (keys != kst_) free(keys)

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status st[]) {
    uint64_t t0 = lts_cycles();
    TR_KEYS(n, reqs);
    int rc = PMPI_Waitall(n, reqs, st);
    if (keys) tr_done(keys, n, NULL, n, t0);
    TR_KEYS_FREE();
    return rc;
}
int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[]) {
    uint64_t t0 = lts_cycles();
    TR_KEYS(n, reqs);
    int rc = PMPI_Testall(n, reqs, flag, st);
    if (keys) tr_done(keys, n, NULL, *flag ? n : 0, t0);
    TR_KEYS_FREE();
    return rc;
}
int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st) {
    uint64_t t0 = lts_cycles();
    TR_KEYS(n, reqs);
    int rc = PMPI_Waitany(n, reqs, idx, st);
    if (keys) tr_done(keys, n, idx, *idx != MPI_UNDEFINED, t0);
    TR_KEYS_FREE();
    return rc;
}
int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st) {
    uint64_t t0 = lts_cycles();
    TR_KEYS(n, reqs);
    int rc = PMPI_Testany(n, reqs, idx, flag, st);
    if (keys) tr_done(keys, n, idx, *flag && *idx != MPI_UNDEFINED, t0);
    TR_KEYS_FREE();
    return rc;
}
int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[]) {
    uint64_t t0 = lts_cycles();
    TR_KEYS(n, reqs);
    int rc = PMPI_Waitsome(n, reqs, outcount, idx, st);
    if (keys) tr_done(keys, n, idx, *outcount == MPI_UNDEFINED ? 0 : *outcount, t0);
    TR_KEYS_FREE();
    return rc;
}
int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[]) {
    uint64_t t0 = lts_cycles();
    TR_KEYS(n, reqs);
    int rc = PMPI_Testsome(n, reqs, outcount, idx, st);
    if (keys) tr_done(keys, n, idx, *outcount == MPI_UNDEFINED ? 0 : *outcount, t0);
    TR_KEYS_FREE();
    return rc;
}
/* time in a probe is the library's, not the rank's computation */
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *st) {
    uint64_t t0 = lts_cycles();
    int rc = PMPI_Probe(source, tag, comm, st);
    tr_nop(t0);
    return rc;
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *st) {
    uint64_t t0 = lts_cycles();
    int rc = PMPI_Iprobe(source, tag, comm, flag, st);
    tr_nop(t0);
    return rc;
}

/* ---- blocking collectives as latscope's rows ---------------------------------------------- */
/* The injector's message-mode rows (src/inject/inject.c, lts_msg_rows): a trace replayed under a
 * table then holds the messages the injector delays. */
static const char *const tr_rows[LTS_COLL_NOPS] = {
    [LTS_COLL_BARRIER] = "dissemination", [LTS_COLL_BCAST] = "binomial",     [LTS_COLL_REDUCE] = "binomial",
    [LTS_COLL_ALLREDUCE] = "reduce-bcast", [LTS_COLL_SCATTER] = "binomial",  [LTS_COLL_GATHER] = "binomial",
    [LTS_COLL_ALLGATHER] = "gather-bcast", [LTS_COLL_ALLTOALL] = "pairwise",
};
static int tr_shadow_key = MPI_KEYVAL_INVALID;

static int tr_shadow_free(MPI_Comm comm, int key, void *val, void *extra) {
    MPI_Comm *c = val;
    if (!tr_finalizing) PMPI_Comm_free(c);
    free(c);
    return MPI_SUCCESS;
}

/* The row's function and the duplicate to run it on; NULL: run the library's own (not traced
 * as messages: an intercommunicator, one rank, or no row). */
static int tr_shadow_of(MPI_Comm comm, MPI_Comm *shadow);
static const lts_coll_alg_t *tr_coll_begin(lts_coll_op_t op, MPI_Comm comm, MPI_Comm *shadow) {
    if (!tr_on || tr_inside) return NULL;
    int inter = 0, n = 1;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_size(comm, &n);
    const lts_coll_alg_t *a = lts_coll_find(op, tr_rows[op]);
    if (inter || n < 2 || !a) return NULL;
    return tr_shadow_of(comm, shadow) ? a : NULL;
}

/* The duplicate of comm the replayed collectives run on (made at the first collective on comm,
 * where every member is present, so the dup is matched); sets tr_inside. 0: none (leave the call
 * to the MPI library). */
static int tr_shadow_of(MPI_Comm comm, MPI_Comm *shadow) {
    int flag = 0;
    if (tr_shadow_key == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tr_shadow_free, &tr_shadow_key, NULL) != MPI_SUCCESS)
        return 0;
    MPI_Comm *c = NULL;
    if (PMPI_Comm_get_attr(comm, tr_shadow_key, &c, &flag) != MPI_SUCCESS) return 0;
    if (!flag) {   /* first collective on comm: every member is here, so the dup is matched */
        if (!(c = malloc(sizeof *c))) return 0;
        if (PMPI_Comm_dup(comm, c) != MPI_SUCCESS) { free(c); return 0; }
        PMPI_Comm_set_attr(comm, tr_shadow_key, c);
    }
    *shadow = *c;
    tr_inside = 1;
    return 1;
}
#define TR_COLL(OP, member, args, pargs)                                 \
    do {                                                                 \
        MPI_Comm shadow;                                                 \
        uint64_t e_ = lts_cycles();                                      \
        const lts_coll_alg_t *a_ = tr_coll_begin(OP, comm, &shadow);     \
        if (a_) {   /* the set-up (a first call's dup) is not computation */ \
            tr_nop(e_);                                                  \
            int rc_ = a_->fn.member args;                                \
            tr_inside = 0;                                               \
            return rc_;                                                  \
        }                                                                \
        uint64_t t0_ = lts_cycles();                                     \
        int rc_ = pargs;                                                 \
        if (tr_on && !tr_inside) tr_put(TR_COLL, -1, OP, 0, 0, 0, t0_, lts_cycles()); \
        return rc_;                                                      \
    } while (0)

int MPI_Barrier(MPI_Comm comm) {
    TR_COLL(LTS_COLL_BARRIER, barrier, (shadow), PMPI_Barrier(comm));
}
int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    TR_COLL(LTS_COLL_BCAST, bcast, (buf, count, dt, root, shadow), PMPI_Bcast(buf, count, dt, root, comm));
}
int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
    TR_COLL(LTS_COLL_REDUCE, reduce, (s, r, count, dt, op, root, shadow), PMPI_Reduce(s, r, count, dt, op, root, comm));
}
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    TR_COLL(LTS_COLL_ALLREDUCE, allreduce, (s, r, count, dt, op, shadow), PMPI_Allreduce(s, r, count, dt, op, comm));
}
int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
    TR_COLL(LTS_COLL_SCATTER, scatter, (s, sc, st, r, rc, rt, root, shadow),
            PMPI_Scatter(s, sc, st, r, rc, rt, root, comm));
}
int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
    TR_COLL(LTS_COLL_GATHER, gather, (s, sc, st, r, rc, rt, root, shadow),
            PMPI_Gather(s, sc, st, r, rc, rt, root, comm));
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm) {
    TR_COLL(LTS_COLL_ALLGATHER, allgather, (s, sc, st, r, rc, rt, shadow), PMPI_Allgather(s, sc, st, r, rc, rt, comm));
}
int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm) {
    TR_COLL(LTS_COLL_ALLTOALL, alltoall, (s, sc, st, r, rc, rt, shadow), PMPI_Alltoall(s, sc, st, r, rc, rt, comm));
}

/* ---- collectives latscope has no row for: their time is recorded (TR_COLL, tag = the number
 * below, after LTS_COLL_NOPS), and `latscope trace goal` replays each as a computation of that
 * length (docs/trace.md "Collectives"). The list matches COLL_NAMES in python/latscope/trace.py. */
enum { TR_ALLGATHERV = LTS_COLL_NOPS, TR_GATHERV, TR_SCATTERV, TR_ALLTOALLV, TR_REDUCE_SCATTER,
       TR_REDUCE_SCATTER_BLOCK, TR_SCAN, TR_EXSCAN };
#define TR_OTHER_B(id, bytes, call)                                                             \
    do {                                                                                        \
        uint64_t t0_ = lts_cycles();                                                            \
        int rc_ = call;                                                                         \
        if (tr_on && !tr_inside) tr_put(TR_COLL, -1, id, 0, (bytes), 0, t0_, lts_cycles());    \
        return rc_;                                                                             \
    } while (0)
#define TR_OTHER(id, call) TR_OTHER_B(id, 0, call)
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int dis[], MPI_Datatype rt,
                   MPI_Comm comm) {
    /* bytes: this rank's block, so that `trace goal` can replay the call as messages (docs/trace.md
     * "Collectives"); in place, the block is already in r at this rank's place */
    int me = 0;
    if (s == MPI_IN_PLACE) PMPI_Comm_rank(comm, &me);
    TR_OTHER_B(TR_ALLGATHERV, s == MPI_IN_PLACE ? tr_bytes(rc[me], rt) : tr_bytes(sc, st),
               PMPI_Allgatherv(s, sc, st, r, rc, dis, rt, comm));
}
int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int dis[], MPI_Datatype rt,
                int root, MPI_Comm comm) {
    TR_OTHER(TR_GATHERV, PMPI_Gatherv(s, sc, st, r, rc, dis, rt, root, comm));
}
int MPI_Scatterv(const void *s, const int sc[], const int dis[], MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
    TR_OTHER(TR_SCATTERV, PMPI_Scatterv(s, sc, dis, st, r, rc, rt, root, comm));
}
/* MPI_Alltoallv as messages (LATSCOPE_TRACE_ALLTOALLV=pairwise, the default): the pairwise
 * exchange, step k = 1 .. P-1 sending to r + k the block for it and receiving from r - k, each
 * step an MPI_Sendrecv through the tracer's own wrapper, so the trace holds the messages (MPICH's
 * algorithm for large blocks; at 2 ranks every algorithm is this one exchange). The own block is
 * a local copy (PMPI, not recorded: its time stays in the gap). `computation`: the library's own
 * call, replayed as a computation of its time (docs/trace.md "Collectives"). */
#define TR_A2AV_TAG 32001
static int tr_a2av_pairwise(void) {
    static int mode = -1;
    if (mode < 0) {
        const char *e = getenv("LATSCOPE_TRACE_ALLTOALLV");
        mode = !(e && !strcmp(e, "computation"));
    }
    return mode;
}
int MPI_Alltoallv(const void *s, const int sc[], const int sd[], MPI_Datatype st, void *r, const int rc[],
                  const int rd[], MPI_Datatype rt, MPI_Comm comm) {
    uint64_t e_ = lts_cycles();
    int inter = 1, n = 0;
    MPI_Comm shadow;
    if (tr_on && !tr_inside && s != MPI_IN_PLACE && tr_a2av_pairwise() && PMPI_Comm_test_inter(comm, &inter) == 0 &&
        !inter && PMPI_Comm_size(comm, &n) == 0 && n >= 2 && tr_shadow_of(comm, &shadow)) {
        tr_nop(e_);
        int me = 0, rc_ = MPI_SUCCESS;
        MPI_Aint lb, sx, rx;
        PMPI_Comm_rank(shadow, &me);
        PMPI_Type_get_extent(st, &lb, &sx);
        PMPI_Type_get_extent(rt, &lb, &rx);
        const char *sb = s;
        char *rb = r;
        rc_ = PMPI_Sendrecv(sb + (MPI_Aint)sd[me] * sx, sc[me], st, me, TR_A2AV_TAG, rb + (MPI_Aint)rd[me] * rx, rc[me],
                            rt, me, TR_A2AV_TAG, shadow, MPI_STATUS_IGNORE);
        for (int k = 1; k < n && rc_ == MPI_SUCCESS; k++) {
            int to = (me + k) % n, from = (me - k + n) % n;
            rc_ = MPI_Sendrecv(sb + (MPI_Aint)sd[to] * sx, sc[to], st, to, TR_A2AV_TAG, rb + (MPI_Aint)rd[from] * rx,
                               rc[from], rt, from, TR_A2AV_TAG, shadow, MPI_STATUS_IGNORE);
        }
        tr_inside = 0;
        return rc_;
    }
    TR_OTHER(TR_ALLTOALLV, PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, comm));
}
int MPI_Reduce_scatter(const void *s, void *r, const int rc[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    TR_OTHER(TR_REDUCE_SCATTER, PMPI_Reduce_scatter(s, r, rc, dt, op, comm));
}
int MPI_Reduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    TR_OTHER(TR_REDUCE_SCATTER_BLOCK, PMPI_Reduce_scatter_block(s, r, rc, dt, op, comm));
}
int MPI_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    TR_OTHER(TR_SCAN, PMPI_Scan(s, r, count, dt, op, comm));
}
int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    TR_OTHER(TR_EXSCAN, PMPI_Exscan(s, r, count, dt, op, comm));
}
