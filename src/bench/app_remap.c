/* The all-to-all remap of LoGPC §5.1 as an application twin (src/bench/ops_apps.c runs it). */
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
#include "latscope/apps_internal.h"

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

const char *lts_app_remap_variant(const lts_app_params_t *p) { return p->style == LTS_REMAP_SYNC ? "sync" : "async"; }

int lts_app_remap_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks,
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
int lts_app_remap_setup(lts_app_run_state_t *st) {
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

void lts_app_remap_teardown(lts_app_run_state_t *st) {
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

int lts_app_remap_init(lts_op_ctx_t *c) {
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

int lts_app_remap_run(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    int rc = st->p->style == LTS_REMAP_SYNC ? remap_sync_run(st) : remap_async_run(st);
    st->pending = 1;
    return rc;
}

static void check_status(lts_app_run_state_t *st, const MPI_Status *s, int src, const char *what, int seq) {
    int count = -1;
    MPI_Get_count(s, MPI_BYTE, &count);
    if (s->MPI_SOURCE != src || count != (int)st->bytes)
        lts_app_fail_verify(st, "remap %s %d: from rank %d with %d bytes, expected rank %d with %zu bytes", what, seq,
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
            lts_app_fail_verify(st, "remap message %d received (seq %d of rank %d, %zu B): byte %zu is 0x%02x, expected 0x%02x", i,
                        st->in_seq[i], st->in_src[i], B, at, got, want);
    }
    if (st->p->style == LTS_REMAP_SYNC) {
        const int *dest = st->dest + (size_t)st->me * (size_t)n;
        for (int k = 0; k < n && !st->failed; k++) {
            check_status(st, &st->rep_st[k], dest[k], "reply", k);
            size_t at = payload_check(st->pbuf + slot_of((size_t)k, B), B, payload_key(st->p->seed, st->me, k), &got, &want);
            if (at < B)
                lts_app_fail_verify(st, "remap reply %d from rank %d (%zu B) does not echo the request: byte %zu is 0x%02x, "
                            "expected 0x%02x", k, dest[k], B, at, got, want);
        }
    }
    memset(st->rbuf, POISON, (size_t)st->nin * B);
    memset(st->pbuf, POISON, (size_t)n * B);
}

int lts_app_remap_prepare(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    remap_verify(st);
    return LTS_OK;
}

void lts_app_remap_fini(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    remap_verify(st);
    remap_free(st);
}

