/* Application twins (apps.h): the LoGPC §5 patterns as operation descriptors timed by the one
 * driver. One repetition is the whole remap or the whole wavefront; what arrived is checked in
 * prepare()/fini(), outside the timed region, and the receive buffers are poisoned before the
 * next repetition so that stale data can never pass for new. */
#include "latscope/apps.h"
#include "latscope/errors.h"
#include "latscope/timer.h"
#include "latscope/util.h"
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_REQ = 0x4150, TAG_REP = 0x4151, TAG_DAG = 0x4152, TAG_RR_REQ = 0x4153, TAG_RR_REP = 0x4154 };
#define POISON 0xEE

typedef struct lts_app_run_state {
    MPI_Comm comm;                 /* a duplicate: the pattern's messages never meet the driver's */
    int me, P;
    const lts_app_params_t *p;
    const lts_timer_t *timer;
    size_t bytes;                  /* the current point: message size / bytes per boundary value */
    int blocks;
    /* remap: destination table (P rows of `messages`, row = source), the same on every rank */
    int *dest;
    int nin;                       /* messages this rank receives per repetition */
    int *in_src, *in_seq;          /* who sends each of them, ordered by (source, seq) */
    int nsrc;                      /* ranks that send to this one; their slots: */
    int *src_rank, *src_off, *src_cnt, *src_done;   /* in_src[src_off[q] .. + src_cnt[q]) == src_rank[q] */
    int recv_min, recv_max;
    double rr_rtt_s;               /* sync remap: the contention-free request-reply round trip (NAN: none) */
    double rr_handler_s;           /* sync remap: a request handler's cost, o_r + o_s (NAN: none) */
    unsigned char *sbuf, *rbuf, *pbuf;   /* requests sent, requests received, replies received */
    MPI_Request *req, *sreq;
    MPI_Status *in_st, *rep_st;
    /* dag */
    long rounds;
    double task_s;
    int row0, nrows;
    uint64_t *ref;                 /* this rank's stripe of the serial grid, computed on rank 0 */
    uint64_t *grid;
    unsigned char *dag_in, *dag_out;
    size_t slot;                   /* bytes of one block message slot */
    /* verification */
    int pending;                   /* a repetition ran and has not been checked */
    int failed;
    char msg[400];
} lts_app_run_state_t;


static void fail_verify(lts_app_run_state_t *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_verify(lts_app_run_state_t *st, const char *fmt, ...) {
    if (st->failed) return;   /* the first mismatch is the one reported */
    st->failed = 1;
    int k = snprintf(st->msg, sizeof st->msg, "rank %d: ", st->me);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg + k, sizeof st->msg - (size_t)k, fmt, ap);
    va_end(ap);
}

/* splitmix64's finaliser: payload words, destinations and boundary values all derive from it. */
static inline uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- all-to-all remap (LoGPC §5.1) ------------------------------------------------------- */

/* Message `seq` of rank `src`: word t of its payload is mix64(key + t). */
static uint64_t payload_key(uint64_t seed, int src, int seq) {
    return mix64(seed ^ mix64(((uint64_t)(unsigned)src << 32) ^ (uint64_t)(unsigned)seq));
}

static void payload_fill(unsigned char *buf, size_t B, uint64_t key) {
    for (size_t t = 0; 8 * t < B; t++) {
        uint64_t w = mix64(key + t);
        size_t n = B - 8 * t < 8 ? B - 8 * t : 8;
        memcpy(buf + 8 * t, &w, n);
    }
}

/* Index of the first wrong byte, or B. */
static size_t payload_check(const unsigned char *buf, size_t B, uint64_t key, unsigned *got, unsigned *want) {
    for (size_t t = 0; 8 * t < B; t++) {
        uint64_t w = mix64(key + t);
        size_t n = B - 8 * t < 8 ? B - 8 * t : 8;
        if (memcmp(buf + 8 * t, &w, n)) {
            const unsigned char *e = (const unsigned char *)&w;
            for (size_t i = 0; i < n; i++)
                if (buf[8 * t + i] != e[i]) {
                    *got = buf[8 * t + i];
                    *want = e[i];
                    return 8 * t + i;
                }
        }
    }
    return B;
}

static size_t slot_of(size_t i, size_t B) { return i * B; }

static const char *remap_variant(const lts_app_params_t *p) { return p->style == LTS_REMAP_SYNC ? "sync" : "async"; }

static int remap_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks,
                       size_t nblocks, int P, char *msg, size_t len) {
    (void)blocks; (void)nblocks; (void)P;
    if (p->messages < 1 || p->messages > LTS_APP_MAX_MESSAGES) {
        snprintf(msg, len, "--messages %d: must be in [1, %d]", p->messages, LTS_APP_MAX_MESSAGES);
        return LTS_EINVAL;
    }
    for (size_t s = 0; s < nsizes; s++) {
        if (sizes[s] > (size_t)INT_MAX || (double)sizes[s] * p->messages > (double)LTS_APP_MAX_VOLUME_BYTES) {
            snprintf(msg, len, "--sizes %zu B x --messages %d: each rank's %s must stay within %zu MiB per repetition "
                     "(each message has its own buffer so that every one can be verified); lower one of them",
                     sizes[s], p->messages, "messages", LTS_APP_MAX_VOLUME_BYTES >> 20);
            return LTS_EINVAL;
        }
    }
    return LTS_OK;
}

/* The destination table: message k of rank s goes to dest[s * n + k]. Random: a stream drawn
 * from the seed on every rank alike, never the sender itself when P > 1 (LoGPC §5.1 "a randomly
 * chosen destination"); shift: (s + p) mod P with p = 1 .. P-1 cycling. With one rank every
 * message goes to the rank itself (an MPI self-send), so the pattern is defined at P = 1. */
static int remap_setup(lts_app_run_state_t *st) {
    const int P = st->P, n = st->p->messages;
    st->dest = malloc((size_t)P * (size_t)n * sizeof *st->dest);
    int *cnt = calloc((size_t)P, sizeof *cnt);
    if (!st->dest || !cnt) { free(cnt); return LTS_ENOMEM; }
    uint64_t state = mix64(st->p->seed ^ 0x52454d4150ull);
    for (int s = 0; s < P; s++)
        for (int k = 0; k < n; k++) {
            int d = 0;
            if (P > 1) {
                int p = st->p->dest == LTS_REMAP_SHIFT ? 1 + k % (P - 1) : 1 + (int)((state = mix64(state)) % (uint64_t)(P - 1));
                d = (s + p) % P;
            }
            st->dest[(size_t)s * n + k] = d;
            cnt[d]++;
        }
    st->nin = cnt[st->me];
    st->recv_min = INT_MAX;
    st->recv_max = 0;
    for (int r = 0; r < P; r++) {
        if (cnt[r] < st->recv_min) st->recv_min = cnt[r];
        if (cnt[r] > st->recv_max) st->recv_max = cnt[r];
    }
    free(cnt);
    st->in_src = malloc(((size_t)st->nin + 1) * sizeof *st->in_src);
    st->in_seq = malloc(((size_t)st->nin + 1) * sizeof *st->in_seq);
    if (!st->in_src || !st->in_seq) return LTS_ENOMEM;
    /* ordered by source, then sequence: MPI keeps messages of one source in order, so the i-th
     * receive posted for source s gets s's i-th message to this rank */
    st->src_rank = malloc(((size_t)P + 1) * sizeof *st->src_rank);
    st->src_off = malloc(((size_t)P + 1) * sizeof *st->src_off);
    st->src_cnt = malloc(((size_t)P + 1) * sizeof *st->src_cnt);
    st->src_done = malloc(((size_t)P + 1) * sizeof *st->src_done);
    if (!st->src_rank || !st->src_off || !st->src_cnt || !st->src_done) return LTS_ENOMEM;
    int i = 0;
    st->nsrc = 0;
    for (int s = 0; s < P; s++) {
        int first = i;
        for (int k = 0; k < n; k++)
            if (st->dest[(size_t)s * n + k] == st->me) { st->in_src[i] = s; st->in_seq[i++] = k; }
        if (i > first) {
            st->src_rank[st->nsrc] = s;
            st->src_off[st->nsrc] = first;
            st->src_cnt[st->nsrc++] = i - first;
        }
    }
    return LTS_OK;
}

static void remap_teardown(lts_app_run_state_t *st) {
    free(st->dest);
    free(st->in_src);
    free(st->in_seq);
    free(st->src_rank);
    free(st->src_off);
    free(st->src_cnt);
    free(st->src_done);
    st->dest = st->in_src = st->in_seq = st->src_rank = st->src_off = st->src_cnt = st->src_done = NULL;
}

static void remap_free(lts_app_run_state_t *st) {
    free(st->sbuf); free(st->rbuf); free(st->pbuf);
    free(st->req); free(st->sreq);
    free(st->in_st); free(st->rep_st);
    st->sbuf = st->rbuf = st->pbuf = NULL;
    st->req = st->sreq = NULL;
    st->in_st = st->rep_st = NULL;
}

/* LoGPC §5.1.1's contention-free round trip 2 (o_s + L + o_r) for this message size, measured the
 * way the sync remap waits: one requester (rank 0) and one server (rank 1), no other traffic, the
 * twin's own calls (requester: MPI_Irecv of the reply, MPI_Isend, MPI_Waitany over [reply, server
 * slot], MPI_Wait of the send; server: MPI_Waitany, MPI_Irecv of the next request, MPI_Send of the
 * reply). Why not the round trip of `latscope-bench logp`: that one waits in MPI_Recv/MPI_Wait,
 * which in MPICH 5 call sched_yield while they wait, and MPI_Waitany does not; on this shared
 * machine a yield hands the core to another process, so the blocking round trip was 2.3-2.6 us
 * against 0.5-0.6 us polled (docs/apps.md). Median over passes of K round trips back to back (the
 * twin's repetitions are trains too); untimed by the driver, run before the repetitions, never
 * derived from the remap's timings. The buffers are the twin's (sbuf sends, pbuf receives), and
 * pbuf is poisoned afterwards. Other ranks only take part in the barrier and the broadcast. */
static int remap_time_rr(lts_app_run_state_t *st) {
    enum { K = 32, PASSES = 15 };
    const int B = (int)st->bytes;
    double per[PASSES], v = NAN;
    for (int pass = 0; pass < PASSES; pass++) {
        if (MPI_Barrier(st->comm)) return LTS_EMPI;
        MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, s;
        int idx;
        if (st->me == 0) {
            double t0 = lts_timer_now(st->timer);
            for (int k = 0; k < K; k++) {
                if (MPI_Irecv(st->pbuf, B, MPI_BYTE, 1, TAG_RR_REP, st->comm, &r[0]) ||
                    MPI_Isend(st->sbuf, B, MPI_BYTE, 1, TAG_RR_REQ, st->comm, &s) ||
                    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE) || MPI_Wait(&s, MPI_STATUS_IGNORE))
                    return LTS_EMPI;
            }
            per[pass] = (lts_timer_now(st->timer) - t0) / K;
        } else if (st->me == 1) {
            /* requests land in two alternating slots: the next one's receive is posted (as the
             * twin does) while this one is echoed from its own slot */
            if (MPI_Irecv(st->pbuf, B, MPI_BYTE, 0, TAG_RR_REQ, st->comm, &r[1])) return LTS_EMPI;
            for (int k = 0; k < K; k++) {
                unsigned char *cur = st->pbuf + (size_t)(k % 2) * st->bytes, *nxt = st->pbuf + (size_t)((k + 1) % 2) * st->bytes;
                if (MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE)) return LTS_EMPI;
                if (k + 1 < K && MPI_Irecv(nxt, B, MPI_BYTE, 0, TAG_RR_REQ, st->comm, &r[1])) return LTS_EMPI;
                if (MPI_Send(cur, B, MPI_BYTE, 0, TAG_RR_REP, st->comm)) return LTS_EMPI;
            }
        }
    }
    if (st->me == 0) {
        qsort(per, PASSES, sizeof *per, lts_cmp_double);
        v = per[PASSES / 2];
    }
    if (MPI_Bcast(&v, 1, MPI_DOUBLE, 0, st->comm)) return LTS_EMPI;
    st->rr_rtt_s = v;
    /* The handler's cost, LoPC's C_r ~ o_r + o_s (LoGPC §5.1.1), with the same calls: the server
     * lets each request arrive first (a busy-wait of D after its previous reply, no MPI call; the
     * requester sends at once, so the request is queued well within D, netgauge's "delay before
     * receiving"), then times MPI_Waitany (the receive completes: o_r), MPI_Irecv of the next
     * request and MPI_Send of the reply (o_s). logp's o_r is timed in MPI_Recv, which yields too. */
    const double D = 5e-6;
    v = NAN;
    for (int pass = 0; pass < PASSES; pass++) {
        if (MPI_Barrier(st->comm)) return LTS_EMPI;
        MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, s;
        int idx;
        if (st->me == 0) {
            for (int k = 0; k < K; k++)
                if (MPI_Irecv(st->pbuf, B, MPI_BYTE, 1, TAG_RR_REP, st->comm, &r[0]) ||
                    MPI_Isend(st->sbuf, B, MPI_BYTE, 1, TAG_RR_REQ, st->comm, &s) ||
                    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE) || MPI_Wait(&s, MPI_STATUS_IGNORE))
                    return LTS_EMPI;
        } else if (st->me == 1) {
            double sum = 0, last = lts_timer_now(st->timer);
            if (MPI_Irecv(st->pbuf, B, MPI_BYTE, 0, TAG_RR_REQ, st->comm, &r[1])) return LTS_EMPI;
            for (int k = 0; k < K; k++) {
                unsigned char *cur = st->pbuf + (size_t)(k % 2) * st->bytes, *nxt = st->pbuf + (size_t)((k + 1) % 2) * st->bytes;
                while (lts_timer_now(st->timer) - last < D) { }
                double t0 = lts_timer_now(st->timer);
                if (MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE)) return LTS_EMPI;
                if (k + 1 < K && MPI_Irecv(nxt, B, MPI_BYTE, 0, TAG_RR_REQ, st->comm, &r[1])) return LTS_EMPI;
                if (MPI_Send(cur, B, MPI_BYTE, 0, TAG_RR_REP, st->comm)) return LTS_EMPI;
                last = lts_timer_now(st->timer);
                sum += last - t0;
            }
            per[pass] = sum / K;
        }
    }
    if (st->me == 1) {
        qsort(per, PASSES, sizeof *per, lts_cmp_double);
        v = per[PASSES / 2];
    }
    if (MPI_Bcast(&v, 1, MPI_DOUBLE, 1, st->comm)) return LTS_EMPI;
    st->rr_handler_s = v;
    memset(st->pbuf, POISON, (size_t)st->p->messages * st->bytes);
    return LTS_OK;
}

static int remap_init(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    const size_t n = (size_t)st->p->messages, B = st->bytes, nin = (size_t)st->nin;
    /* page-aligned: the same placement in every launch (docs/measurement.md, "Buffers") */
    st->sbuf = lts_buffer_alloc(n * B + 1);
    st->rbuf = lts_buffer_alloc(nin * B + 1);
    st->pbuf = lts_buffer_alloc((n + 1) * B + 1);   /* at least two slots: remap_time_rr's server alternates */
    st->req = malloc((nin + n + 1) * sizeof *st->req);
    st->sreq = malloc((n + 1) * sizeof *st->sreq);
    st->in_st = malloc((nin + n + 1) * sizeof *st->in_st);
    st->rep_st = malloc((n + 1) * sizeof *st->rep_st);
    int ok = st->sbuf && st->rbuf && st->pbuf && st->req && st->sreq && st->in_st && st->rep_st, all_ok;
    /* every rank must know before the collective microbenchmark below */
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, st->comm)) all_ok = 0;
    if (!all_ok) {
        remap_free(st);
        return LTS_ENOMEM;
    }
    /* the payloads are written once, untimed: sending does not include making the data */
    for (size_t k = 0; k < n; k++) payload_fill(st->sbuf + slot_of(k, B), B, payload_key(st->p->seed, st->me, (int)k));
    st->pending = 0;
    st->rr_rtt_s = st->rr_handler_s = NAN;
    if (st->p->style == LTS_REMAP_SYNC && st->P > 1) return remap_time_rr(st);
    return LTS_OK;
}

/* LoGPC §5.1.2/§5.1.3: every rank posts its receives, sends its n messages without waiting,
 * then waits for all of them. */
static int remap_async_run(lts_app_run_state_t *st) {
    const int n = st->p->messages, nin = st->nin, B = (int)st->bytes;
    const int *dest = st->dest + (size_t)st->me * (size_t)n;
    for (int i = 0; i < nin; i++)
        if (MPI_Irecv(st->rbuf + slot_of((size_t)i, st->bytes), B, MPI_BYTE, st->in_src[i], TAG_REQ, st->comm, &st->req[i]))
            return LTS_EMPI;
    for (int k = 0; k < n; k++)
        if (MPI_Isend(st->sbuf + slot_of((size_t)k, st->bytes), B, MPI_BYTE, dest[k], TAG_REQ, st->comm, &st->req[nin + k]))
            return LTS_EMPI;
    return lts_chk(MPI_Waitall(nin + n, st->req, st->in_st));
}

/* LoGPC §5.1.1: a request-reply pair per message; the next request leaves only when the reply
 * to this one has arrived. While waiting, the rank serves the requests that reach it, as a
 * message handler does: receive, then send the reply (the queueing LoPC's C_r models). The reply
 * echoes the request, so the requester checks the data both ways.
 * Posted receives: the own reply, and one per rank that still owes this rank a request (MPI keeps
 * one source's messages in order, so a request of the next repetition — warm-up repetitions are
 * not separated by a barrier — can never be taken for one of this repetition). Not one per
 * message: MPI_Waitany scans its whole array on every poll, and a slot per message made each
 * round trip slower the more messages there were (1.0 us at n = 1, 2.6 us at n = 64, 8 B). */
static int remap_sync_run(lts_app_run_state_t *st) {
    const int n = st->p->messages, B = (int)st->bytes, ns = st->nsrc;
    const int *dest = st->dest + (size_t)st->me * (size_t)n;
    MPI_Request *r = st->req;   /* [0] the own reply, [1 + q] the next request from src_rank[q] */
    for (int q = 0; q < ns; q++) {
        st->src_done[q] = 0;
        if (MPI_Irecv(st->rbuf + slot_of((size_t)st->src_off[q], st->bytes), B, MPI_BYTE, st->src_rank[q], TAG_REQ,
                      st->comm, &r[1 + q])) return LTS_EMPI;
    }
    int k = 0;
    if (MPI_Irecv(st->pbuf, B, MPI_BYTE, dest[0], TAG_REP, st->comm, &r[0])) return LTS_EMPI;
    if (MPI_Isend(st->sbuf, B, MPI_BYTE, dest[0], TAG_REQ, st->comm, &st->sreq[0])) return LTS_EMPI;
    for (;;) {
        int idx;
        MPI_Status s;
        if (MPI_Waitany(ns + 1, r, &idx, &s)) return LTS_EMPI;
        if (idx == MPI_UNDEFINED) break;   /* own requests answered, every request served */
        if (idx == 0) {
            st->rep_st[k] = s;
            /* the reply came, so the request was delivered: its send completes at once */
            if (MPI_Wait(&st->sreq[k], MPI_STATUS_IGNORE)) return LTS_EMPI;
            if (++k < n) {
                if (MPI_Irecv(st->pbuf + slot_of((size_t)k, st->bytes), B, MPI_BYTE, dest[k], TAG_REP, st->comm, &r[0]))
                    return LTS_EMPI;
                if (MPI_Isend(st->sbuf + slot_of((size_t)k, st->bytes), B, MPI_BYTE, dest[k], TAG_REQ, st->comm,
                              &st->sreq[k])) return LTS_EMPI;
            }
        } else {
            const int q = idx - 1, i = st->src_off[q] + st->src_done[q]++;
            st->in_st[i] = s;
            if (st->src_done[q] < st->src_cnt[q] &&
                MPI_Irecv(st->rbuf + slot_of((size_t)i + 1, st->bytes), B, MPI_BYTE, st->src_rank[q], TAG_REQ, st->comm,
                          &r[idx])) return LTS_EMPI;
            /* the requester has posted the receive for this reply before sending its request,
             * so a blocking send cannot wait on anyone who is not polling */
            if (MPI_Send(st->rbuf + slot_of((size_t)i, st->bytes), B, MPI_BYTE, st->src_rank[q], TAG_REP, st->comm))
                return LTS_EMPI;
        }
    }
    return LTS_OK;
}

static int remap_run(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    int rc = st->p->style == LTS_REMAP_SYNC ? remap_sync_run(st) : remap_async_run(st);
    st->pending = 1;
    return rc;
}

static void check_status(lts_app_run_state_t *st, const MPI_Status *s, int src, const char *what, int seq) {
    int count = -1;
    MPI_Get_count(s, MPI_BYTE, &count);
    if (s->MPI_SOURCE != src || count != (int)st->bytes)
        fail_verify(st, "remap %s %d: from rank %d with %d bytes, expected rank %d with %zu bytes", what, seq,
                    s->MPI_SOURCE, count, src, st->bytes);
}

/* Every message arrived once, from its sender, with its bytes (sync: every reply echoes its
 * request); then the buffers are poisoned for the next repetition. Slot i holds the i-th expected
 * message in (source, sequence) order in both styles. */
static void remap_verify(lts_app_run_state_t *st) {
    if (!st->pending) return;
    st->pending = 0;
    const size_t B = st->bytes;
    const int n = st->p->messages;
    if (st->p->corrupt_rank == st->me && st->nin > 0 && B > 0) st->rbuf[B / 2] ^= 0x10;
    unsigned got = 0, want = 0;
    for (int i = 0; i < st->nin && !st->failed; i++) {
        check_status(st, &st->in_st[i], st->in_src[i], "message", i);
        size_t at = payload_check(st->rbuf + slot_of((size_t)i, B), B, payload_key(st->p->seed, st->in_src[i], st->in_seq[i]),
                                  &got, &want);
        if (at < B)
            fail_verify(st, "remap message %d received (seq %d of rank %d, %zu B): byte %zu is 0x%02x, expected 0x%02x", i,
                        st->in_seq[i], st->in_src[i], B, at, got, want);
    }
    if (st->p->style == LTS_REMAP_SYNC) {
        const int *dest = st->dest + (size_t)st->me * (size_t)n;
        for (int k = 0; k < n && !st->failed; k++) {
            check_status(st, &st->rep_st[k], dest[k], "reply", k);
            size_t at = payload_check(st->pbuf + slot_of((size_t)k, B), B, payload_key(st->p->seed, st->me, k), &got, &want);
            if (at < B)
                fail_verify(st, "remap reply %d from rank %d (%zu B) does not echo the request: byte %zu is 0x%02x, "
                            "expected 0x%02x", k, dest[k], B, at, got, want);
        }
    }
    memset(st->rbuf, POISON, (size_t)st->nin * B);
    memset(st->pbuf, POISON, (size_t)n * B);
}

static int remap_prepare(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    remap_verify(st);
    return LTS_OK;
}

static void remap_fini(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    remap_verify(st);
    remap_free(st);
}

/* ---- Diamond DAG wavefront (LoGPC §5.2, eq. (15)) ---------------------------------------- */

/* One task: cell (i, j) from its north and west neighbours, then `rounds` rounds of an integer
 * mix (a dependent chain of multiplies the compiler cannot shorten) as the task's work. */
static inline uint64_t dag_cell(uint64_t north, uint64_t west, uint64_t i, uint64_t j, long rounds) {
    uint64_t x = north * 0x9E3779B97F4A7C15ull + (west ^ (west >> 29)) + ((i << 32) | j);
    x ^= x >> 31;
    for (long r = 0; r < rounds; r++) x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ull + (uint64_t)r;
    return x;
}
static inline uint64_t dag_north(uint64_t seed, uint64_t j) { return mix64(seed ^ 0x4e4f525448ull ^ (j << 20)); }
static inline uint64_t dag_west(uint64_t seed, uint64_t i) { return mix64(seed ^ 0x57455354ull ^ (i << 21)); }
/* padding bytes of a boundary value wider than 8 bytes (the "message size per element") */
static inline unsigned char dag_pad(uint64_t v) { return (unsigned char)(v ^ (v >> 8) ^ 0x5a); }

/* rows of rank r / columns of block c: n split into parts that differ by at most one */
static int part_start(int n, int parts, int k) { return k * (n / parts) + (k < n % parts ? k : n % parts); }

static const char *dag_variant(const lts_app_params_t *p) { (void)p; return "stripe"; }

static int dag_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks, size_t nblocks,
                     int P, char *msg, size_t len) {
    const int n = p->grid;
    if (n < 1 || n > LTS_APP_MAX_GRID) {
        snprintf(msg, len, "--grid %d: must be in [1, %d] (rank 0 keeps the whole n x n serial grid to check the result)",
                 n, LTS_APP_MAX_GRID);
        return LTS_EINVAL;
    }
    if (n < P) {
        snprintf(msg, len, "--grid %d: must be at least the number of ranks (%d): every rank owns a stripe of one row "
                 "or more", n, P);
        return LTS_EINVAL;
    }
    if (!(p->task_work_s >= 0) || p->task_work_s > 1.0) {
        snprintf(msg, len, "--task-work %g s: must be in [0, 1 s]", p->task_work_s);
        return LTS_EINVAL;
    }
    for (size_t b = 0; b < nblocks; b++)
        if (blocks[b] < 1 || blocks[b] > n) {
            snprintf(msg, len, "--blocks %d: must be in [1, n = %d] (b blocks of n/b columns each)", blocks[b], n);
            return LTS_EINVAL;
        }
    for (size_t s = 0; s < nsizes; s++)
        if (sizes[s] < 8 || (double)sizes[s] * n > (double)LTS_APP_MAX_VOLUME_BYTES) {
            snprintf(msg, len, "--sizes %zu B: the bytes sent per boundary value must be in [8, %zu] for --grid %d "
                     "(8: the 64-bit cell value; more: padding; value bytes x n <= %zu MiB)", sizes[s],
                     LTS_APP_MAX_VOLUME_BYTES / (size_t)n, n, LTS_APP_MAX_VOLUME_BYTES >> 20);
            return LTS_EINVAL;
        }
    return LTS_OK;
}

/* Seconds per task with `rounds`: the fastest of a few passes over a row of m cells. */
static double dag_time_task(const lts_timer_t *tm, long rounds, int m) {
    double best = INFINITY;
    volatile uint64_t sink = 0;
    for (int trial = 0; trial < 5; trial++) {
        uint64_t w = 1;
        double t0 = lts_timer_now(tm);
        for (int j = 0; j < m; j++) w = dag_cell(w, (uint64_t)j, 3, (uint64_t)j, rounds);
        double t = lts_timer_now(tm) - t0;
        sink += w;
        if (t < best) best = t;
    }
    (void)sink;
    return best / m;
}

/* Rounds per task so that one task takes --task-work (calibrated on rank 0 and broadcast: the
 * result must be the same computation on every rank and in the serial check). */
static void dag_calibrate(const lts_timer_t *tm, double work_s, long *rounds, double *task_s) {
    int m = work_s > 0 ? (int)fmin(4096.0, fmax(16.0, 2e-3 / work_s)) : 4096;
    double base = dag_time_task(tm, 0, m);
    long r = 0;
    if (work_s > base) {
        const long R1 = 2000;
        double per = (dag_time_task(tm, R1, (int)fmax(16.0, m / 4.0)) - base) / R1;
        if (per > 0) r = lround((work_s - base) / per);
    }
    *rounds = r;
    *task_s = r ? dag_time_task(tm, r, m) : base;
}

static void dag_compute_serial(uint64_t *g, int n, uint64_t seed, long rounds) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            uint64_t north = i ? g[(size_t)(i - 1) * n + j] : dag_north(seed, (uint64_t)j);
            uint64_t west = j ? g[(size_t)i * n + j - 1] : dag_west(seed, (uint64_t)i);
            g[(size_t)i * n + j] = dag_cell(north, west, (uint64_t)i, (uint64_t)j, rounds);
        }
}

static int dag_setup(lts_app_run_state_t *st) {
    const int n = st->p->grid, P = st->P;
    st->row0 = part_start(n, P, st->me);
    st->nrows = part_start(n, P, st->me + 1) - st->row0;
    double cal[2] = {0, 0};
    if (st->me == 0) {
        long r;
        dag_calibrate(st->timer, st->p->task_work_s, &r, &cal[1]);
        cal[0] = (double)r;
    }
    if (MPI_Bcast(cal, 2, MPI_DOUBLE, 0, st->comm)) return LTS_EMPI;
    st->rounds = (long)cal[0];
    st->task_s = cal[1];
    /* The serial computation on rank 0; each rank gets its stripe of it to check against. */
    uint64_t *full = NULL;
    int *counts = NULL, *displs = NULL, ok = 1, all_ok;
    st->ref = malloc(((size_t)st->nrows * n + 1) * sizeof *st->ref);
    if (!st->ref) ok = 0;
    if (st->me == 0) {
        full = malloc((size_t)n * n * sizeof *full);
        counts = malloc((size_t)P * sizeof *counts);
        displs = malloc((size_t)P * sizeof *displs);
        if (!full || !counts || !displs) ok = 0;
        else {
            dag_compute_serial(full, n, st->p->seed, st->rounds);
            for (int r = 0; r < P; r++) {
                displs[r] = part_start(n, P, r) * n;
                counts[r] = (part_start(n, P, r + 1) - part_start(n, P, r)) * n;
            }
        }
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, st->comm);
    int rc = LTS_ENOMEM;
    if (all_ok)
        rc = lts_chk(MPI_Scatterv(full, counts, displs, MPI_UINT64_T, st->ref, st->nrows * n, MPI_UINT64_T, 0, st->comm));
    free(full);
    free(counts);
    free(displs);
    return rc;
}

static void dag_teardown(lts_app_run_state_t *st) {
    free(st->ref);
    st->ref = NULL;
}

static void dag_free(lts_app_run_state_t *st) {
    free(st->grid); free(st->dag_in); free(st->dag_out); free(st->req);
    st->grid = NULL; st->dag_in = st->dag_out = NULL; st->req = NULL;
}

static int dag_time_stripe(lts_app_run_state_t *st);

static int dag_init(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    const int n = st->p->grid, b = st->blocks;
    st->slot = st->bytes * (size_t)((n + b - 1) / b);
    st->grid = malloc(((size_t)st->nrows * n + 1) * sizeof *st->grid);
    st->dag_in = malloc(st->slot * (size_t)b + 1);
    st->dag_out = malloc(st->slot * (size_t)b + 1);
    st->req = malloc(2 * (size_t)b * sizeof *st->req);
    if (!st->grid || !st->dag_in || !st->dag_out || !st->req) { dag_free(st); return LTS_ENOMEM; }
    st->pending = 0;
    return dag_time_stripe(st);
}

/* Block k of this rank's stripe (rows [row0, row0 + nrows), columns [c0, c1)), its north
 * inputs for the first row in `above` (rank > 0). */
static void dag_block(lts_app_run_state_t *st, int k, const unsigned char *above, int corrupt) {
    const int n = st->p->grid, b = st->blocks, me = st->me;
    const int c0 = part_start(n, b, k), c1 = part_start(n, b, k + 1);
    const size_t vb = st->bytes;
    const uint64_t seed = st->p->seed;
    for (int ii = 0; ii < st->nrows; ii++) {
        const uint64_t i = (uint64_t)(st->row0 + ii);
        uint64_t *row = st->grid + (size_t)ii * n;
        for (int j = c0; j < c1; j++) {
            uint64_t north;
            if (ii) north = row[j - n];
            else if (me > 0) memcpy(&north, above + (size_t)(j - c0) * vb, 8);
            else north = dag_north(seed, (uint64_t)j);
            /* testing the verifier: a damaged input to this rank's first task */
            if (corrupt && ii == 0 && j == 0) north ^= 1;
            uint64_t west = j ? row[j - 1] : dag_west(seed, i);
            row[j] = dag_cell(north, west, i, (uint64_t)j, st->rounds);
        }
    }
}

/* Pack block k's last row for the rank below (the aggregation cost alpha n/b in eq. (15)'s W). */
static unsigned char *dag_pack(lts_app_run_state_t *st, int k) {
    const int n = st->p->grid, b = st->blocks;
    const int c0 = part_start(n, b, k), c1 = part_start(n, b, k + 1);
    const size_t vb = st->bytes;
    unsigned char *out = st->dag_out + (size_t)k * st->slot;
    const uint64_t *bottom = st->grid + (size_t)(st->nrows - 1) * n;
    for (int j = c0; j < c1; j++) {
        unsigned char *e = out + (size_t)(j - c0) * vb;
        memcpy(e, &bottom[j], 8);
        if (vb > 8) memset(e + 8, dag_pad(bottom[j]), vb - 8);
    }
    return out;
}

/* The computation of the stripe alone, as the run does it for this b (every block computed and
 * packed, no message): the fastest of a few passes, the slowest rank's value. This measures eq.
 * (15)'s W = w_a + alpha n / b for this block shape directly, so the per-block costs of the loop
 * and the packing and the cache behaviour of blocks n/b columns wide are in it (the calibrated
 * task_s is one task in a tight loop over a row); it is a microbenchmark of the computation,
 * untimed by the driver and run before the repetitions, never derived from the DAG's timings. */
static double last_stripe_s = -1.0, last_stripe_last_s = -1.0;
double lts_app_dag_stripe_compute_s(void) { return last_stripe_s; }
/* the last rank's (it packs nothing: its W is the computation alone) */
double lts_app_dag_stripe_last_s(void) { return last_stripe_last_s; }

static int dag_time_stripe(lts_app_run_state_t *st) {
    const int b = st->blocks, last = st->me == st->P - 1;
    memset(st->dag_in, 0, st->slot * (size_t)b);
    double best = INFINITY;
    for (int pass = 0; pass < 5; pass++) {
        double t0 = lts_timer_now(st->timer);
        for (int k = 0; k < b; k++) {
            dag_block(st, k, st->dag_in + (size_t)k * st->slot, 0);
            if (!last) (void)dag_pack(st, k);
        }
        double t = lts_timer_now(st->timer) - t0;
        if (t < best) best = t;
        if (pass >= 1 && best * (pass + 1) > 0.1) break;   /* long stripes: two passes are enough */
    }
    double all, lastv = best;
    if (MPI_Allreduce(&best, &all, 1, MPI_DOUBLE, MPI_MAX, st->comm)) return LTS_EMPI;
    if (MPI_Bcast(&lastv, 1, MPI_DOUBLE, st->P - 1, st->comm)) return LTS_EMPI;
    last_stripe_s = all;
    last_stripe_last_s = lastv;
    return LTS_OK;
}

/* Stripe partitioning (LoGPC §5.2.1, Fig. 8): this rank owns rows [row0, row0 + nrows); the
 * stripe is cut into b column blocks. Block c needs the last row of block c of the rank above
 * (one message of value-bytes x columns, received into its own slot, all receives posted up
 * front as bulk transfers land without the receiver's help), is computed row by row, and its
 * last row is packed (the aggregation cost alpha n/b of eq. (15)'s W) and sent down. */
static int dag_run(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    const int n = st->p->grid, b = st->blocks, me = st->me, last = me == st->P - 1;
    const size_t vb = st->bytes;
    MPI_Request *rin = st->req, *rout = st->req + b;
    const int corrupt = st->p->corrupt_rank == me;
    st->pending = 1;
    for (int k = 0; k < b; k++) {
        int cols = part_start(n, b, k + 1) - part_start(n, b, k);
        rin[k] = rout[k] = MPI_REQUEST_NULL;
        if (me > 0 && MPI_Irecv(st->dag_in + (size_t)k * st->slot, (int)(cols * vb), MPI_BYTE, me - 1, TAG_DAG, st->comm,
                                &rin[k])) return LTS_EMPI;
    }
    for (int k = 0; k < b; k++) {
        const int cols = part_start(n, b, k + 1) - part_start(n, b, k);
        if (me > 0 && MPI_Wait(&rin[k], MPI_STATUS_IGNORE)) return LTS_EMPI;
        dag_block(st, k, st->dag_in + (size_t)k * st->slot, corrupt);
        if (!last) {
            unsigned char *out = dag_pack(st, k);
            if (MPI_Isend(out, (int)((size_t)cols * vb), MPI_BYTE, me + 1, TAG_DAG, st->comm, &rout[k]))
                return LTS_EMPI;
        }
    }
    return lts_chk(MPI_Waitall(b, rout, MPI_STATUSES_IGNORE));
}

/* This rank's stripe equals the serial computation's; received padding is intact. */
static void dag_verify(lts_app_run_state_t *st) {
    if (!st->pending) return;
    st->pending = 0;
    const int n = st->p->grid, b = st->blocks;
    const size_t vb = st->bytes;
    for (size_t q = 0; q < (size_t)st->nrows * n && !st->failed; q++)
        if (st->grid[q] != st->ref[q])
            fail_verify(st, "dag cell (%d, %d) = 0x%016llx, the serial computation on rank 0 gives 0x%016llx",
                        st->row0 + (int)(q / (size_t)n), (int)(q % (size_t)n), (unsigned long long)st->grid[q],
                        (unsigned long long)st->ref[q]);
    for (int k = 0; k < b && st->me > 0 && vb > 8 && !st->failed; k++) {
        int cols = part_start(n, b, k + 1) - part_start(n, b, k);
        for (int j = 0; j < cols && !st->failed; j++) {
            const unsigned char *e = st->dag_in + (size_t)k * st->slot + (size_t)j * vb;
            uint64_t v;
            memcpy(&v, e, 8);
            for (size_t t = 8; t < vb; t++)
                if (e[t] != dag_pad(v)) {
                    fail_verify(st, "dag block %d from rank %d: value %d, padding byte %zu is 0x%02x, expected 0x%02x", k,
                                st->me - 1, j, t, e[t], dag_pad(v));
                    break;
                }
        }
    }
    memset(st->grid, POISON, (size_t)st->nrows * n * sizeof *st->grid);
    if (st->me > 0) memset(st->dag_in, POISON, st->slot * (size_t)b);
}

static int dag_prepare(lts_op_ctx_t *c) {
    dag_verify(c->state);
    return LTS_OK;
}

static void dag_fini(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    dag_verify(st);
    dag_free(st);
}

/* ---- null: the registry's test row ------------------------------------------------------- */

static int null_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks, size_t nblocks,
                      int P, char *msg, size_t len) {
    (void)p; (void)sizes; (void)nsizes; (void)blocks; (void)nblocks; (void)P; (void)msg; (void)len;
    return LTS_OK;
}
static const char *null_variant(const lts_app_params_t *p) { (void)p; return "none"; }
static int null_run(lts_op_ctx_t *c) { (void)c; return LTS_OK; }

/* ---- the registry --------------------------------------------------------------------------- */

static const lts_app_pattern_t patterns[] = {
    {{.name = "remap",
      .help = "all-to-all remap (LoGPC §5.1): --messages N of --sizes bytes per rank, --dest random|shift, "
              "--style sync|async",
      .group_size = 0, .scale = 1.0, .metric = "time", .init = remap_init, .run = remap_run, .fini = remap_fini,
      .prepare = remap_prepare},
     remap_variant, remap_check, remap_setup, remap_teardown, 0},
    {{.name = "dag",
      .help = "Diamond-DAG wavefront (LoGPC §5.2, eq. 15): --grid n, stripes of rows, --blocks b, --task-work T, "
              "--sizes = bytes per boundary value",
      .group_size = 0, .scale = 1.0, .metric = "time", .init = dag_init, .run = dag_run, .fini = dag_fini,
      .prepare = dag_prepare},
     dag_variant, dag_check, dag_setup, dag_teardown, 1},
    {{.name = "null", .help = "no work: the driver's own cost (tests the registry)", .group_size = 0, .scale = 1.0,
      .metric = "time", .run = null_run},
     null_variant, null_check, NULL, NULL, 0},
};
_Static_assert(sizeof(patterns) / sizeof(patterns[0]) <= LTS_REGISTRY_MAX, "app registry too large");
const lts_registry_t lts_app_registry = LTS_REGISTRY("application pattern", patterns);

/* ---- the run --------------------------------------------------------------------------------- */

/* Every rank learns whether any rank's check failed; rank 0 gets the lowest failing rank's text. */
static int agree_verify(lts_app_run_state_t *st, MPI_Comm comm, char *out, size_t len) {
    int who = st->failed ? st->me : st->P, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == st->P) return 0;
    char buf[sizeof st->msg];
    if (first == 0) memcpy(buf, st->msg, sizeof buf);
    else if (st->me == first) MPI_Send(st->msg, (int)sizeof st->msg, MPI_CHAR, 0, TAG_REP + 1, comm);
    else if (st->me == 0) MPI_Recv(buf, (int)sizeof buf, MPI_CHAR, first, TAG_REP + 1, comm, MPI_STATUS_IGNORE);
    if (st->me == 0 && out && len) snprintf(out, len, "%s", buf);
    return 1;
}

/* The point runner's settle step (point.c): every rank learns whether any rank's check failed
 * (rank 0 gets the failing rank's text), then rank 0 fills in what the pattern saw. */
typedef struct {
    lts_app_run_state_t *st;
    const lts_app_cfg_t *cfg;
    lts_app_point_t ap;
} app_settle_t;

static int app_settle(lts_point_job_t *job, int rc) {
    app_settle_t *x = job->settle_state;
    lts_app_run_state_t *st = x->st;
    const lts_app_cfg_t *cfg = x->cfg;
    if (rc == LTS_OK && agree_verify(st, job->ctx->comm, cfg->errmsg, cfg->errlen)) rc = LTS_APP_EVERIFY;
    if (rc == LTS_OK && st->me == 0) {
        const lts_app_pattern_t *pat = cfg->pattern;
        const int n = cfg->params.grid;
        x->ap = (lts_app_point_t){pat->op.name, job->pt.alg, st->bytes, st->blocks,
                                  pat->uses_blocks ? st->bytes * (size_t)((n + st->blocks - 1) / st->blocks) : 0,
                                  st->recv_min, st->recv_max, st->rounds, st->task_s, st->rr_rtt_s, st->rr_handler_s};
        job->pt.app = &x->ap;
    }
    return rc;
}

int lts_app_run(MPI_Comm comm, const lts_app_cfg_t *cfg) {
    const lts_app_pattern_t *pat = cfg->pattern;
    lts_app_run_state_t st;
    memset(&st, 0, sizeof st);
    MPI_Comm_rank(comm, &st.me);
    MPI_Comm_size(comm, &st.P);
    st.p = &cfg->params;
    st.timer = cfg->measure.timer;
    char msg[256];
    if (pat->check(&cfg->params, cfg->sizes, cfg->nsizes, cfg->blocks, cfg->nblocks, st.P, msg, sizeof msg))
        return LTS_EINVAL;
    if (pat->uses_blocks ? !cfg->nblocks : cfg->nblocks) return LTS_EINVAL;
    if (MPI_Comm_dup(comm, &st.comm)) return LTS_EMPI;
    int lrc = pat->setup ? pat->setup(&st) : LTS_OK, rc;
    MPI_Allreduce(&lrc, &rc, 1, MPI_INT, MPI_MIN, comm);
    const int one_block = 0;
    const int *blocks = pat->uses_blocks ? cfg->blocks : &one_block;
    const size_t nblocks = pat->uses_blocks ? cfg->nblocks : 1;
    for (size_t s = 0; s < cfg->nsizes && rc == LTS_OK; s++)
        for (size_t b = 0; b < nblocks && rc == LTS_OK; b++) {
            st.bytes = cfg->sizes[s];
            st.blocks = blocks[b];
            lts_op_ctx_t ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.comm = comm;
            ctx.rank = st.me;
            ctx.size = st.P;
            ctx.bytes = st.bytes;
            ctx.state = &st;
            ctx.req = MPI_REQUEST_NULL;
            static const int all = -1;
            app_settle_t settle = {&st, cfg, {0}};
            lts_point_job_t job = {
                .pt = {.op = pat->op.name, .group = &all, .bytes = st.bytes, .reply_bytes = st.bytes,
                       .alg = pat->variant(&cfg->params), .root = 0},
                .src = 0, .op = &pat->op, .ctx = &ctx, .measure = cfg->measure, .settle = app_settle,
                .settle_state = &settle};
            rc = lts_point_run(comm, &job, 1, cfg->on_point, cfg->ud);
        }
    if (pat->teardown) pat->teardown(&st);
    MPI_Comm_free(&st.comm);
    return rc;
}
