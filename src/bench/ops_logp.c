/* LogP / LogGP / PLogP parameter measurement (seed 002 §5.1, seed 003 §2; netgauge's
 * and PLogP's methods): operation descriptors timed by the one driver (lts_measure) on a pair,
 * group rank 0's clock:
 *   o_s  time in the send call (MPI_Send), the receive pre-posted by the partner (prepare)
 *   o_r  time in the receive call when the message has already arrived: the partner sends in
 *        prepare (untimed), the receiver busy-waits a delay D there, so the message is in its
 *        queue before the timed MPI_Recv starts (netgauge's "delay before receiving")
 *   rtt  a ping-pong (receives pre-posted): RTT = 2 (o_s + L + o_r), so L = RTT/2 - o_s - o_r
 *   poll time to receive a message that arrived a delay D before by polling: MPI_Iprobe until it
 *        is seen, then MPI_Recv of the matched message (the partner sends untimed, as for o_r).
 *        A blocking MPI_Recv may enter the library's waiting loop (MPICH: sched_yield, most of a
 *        microsecond) before it looks; a receive that polls never does, which is how barriers
 *        that gather over several communicators (linear-2net) receive
 *   g    a train of `window` back-to-back sends, the partner's receives pre-posted; the value is
 *        time / window (the gap: at least max(o_s, g) per message; LogGP: g + (m-1) G)
 *   g_r  the receive side of a train: the partner sends `window` messages (untimed), the
 *        receiver busy-waits a delay D so that they have arrived, then times `window` back-to-back
 *        MPI_Recv; the value is time / window. LogP charges a stream of receptions max(o_r, g)
 *        per message; on shared memory an isolated o_r (after D) pays cold cache misses on the
 *        queue and the data that a stream overlaps, so g_r < o_r there (PLogP's g(m) seen from
 *        the receiver: what one more message costs a processor that keeps receiving)
 *   g_nb a train of `window` MPI_Isend then MPI_Waitall, the partner's receives pre-posted; time /
 *        window: the gap of a nonblocking stream (above the eager limit a blocking send waits for
 *        its receiver, so g is latency-bound there; nonblocking sends overlap the handshakes)
 *   rtt_train  `window` ping-pongs back to back, time / window: the round trip in a stream (rtt
 *        is one isolated ping-pong after the driver's synchronisation)
 *   rtt_loop  a ping-pong in seed 002's barrier benchmark loop (§4.3): round trips back to back
 *        (self-isolating: --sync auto leaves out the stop-sync), each rank busy for 30 us
 *        between them (untimed, in prepare), as between two barriers of that loop. The barrier
 *        loop simulation takes its hop from it: the isolated rtt, after the driver's allreduce,
 *        came out 20-40 % above the loop's hop in some launches here, rtt_loop within a few % of
 *        the measured two-hop barrier chains (docs/barriers.md)
 *   rtt_poll  rtt_loop with both receives polled (MPI_Iprobe until seen, then MPI_Recv): the round
 *        trip of two ranks that never enter the blocking wait. Its half is the one-way time to a
 *        polling receiver (the linear-2net gather's hop; docs/barriers.md "Blocking waits")
 *   rtt_poll_any  rtt_poll with the first rank's receive polled as linear-2net's gather polls: MPI_Iprobe
 *        with MPI_ANY_SOURCE over two communicators in turn (the pair's and a duplicate; the reply
 *        comes on the duplicate, as an odd rank's arrival does), then MPI_Recv of the matched
 *        message. rtt_poll_any - rtt_poll/2 is the one-way time to such a receiver: a wildcard
 *        probe must look in every source's queue, and a second communicator costs one more probe
 *        per look (~80-100 ns more than rtt_poll/2 here; docs/barriers.md "linear-2net")
 *   rwait time from sending a 0-byte message to the end of the blocking MPI_Recv of its reply,
 *        the partner polling for it and replying at once (30 us of work before, as rtt_loop).
 *        The reply arrives a polled round trip after the call, sooner than MPICH's blocking wait
 *        looks again after its first sched_yield, so rwait - o_s is the least time a blocking
 *        receive that has to wait takes (the wait floor, ~1.5 us here against ~0.4 us polled)
 *   irecv_wait  time in MPI_Wait completing a receive that was posted (MPI_Irecv) before its
 *        message was sent and whose message arrived a delay D before the call: rank 0 posts the
 *        receive, then tells the partner to send (a 0-byte message on another tag) and
 *        busy-waits D, untimed, in prepare. The receive of an exchange round (MPI_Sendrecv =
 *        Irecv, Isend, Waitall: dissemination, pairwise), whose message is there when the
 *        Waitall starts, costs this, not o_r (a blocking MPI_Recv of a queued message, which
 *        takes the unexpected-queue path and, in MPICH, the waiting loop's sched_yield;
 *        docs/barriers.md "The exchange receive"). Self-isolating: a stop-sync between the
 *        prepare and the timed wait would progress the engine and complete the receive inside
 *        the allreduce; under --sync auto only the first repetition of each block (1 in ~50)
 *        follows one, which the median does not see
 *   post time in MPI_Irecv when nothing matching has arrived (the receive is only queued; it is
 *        cancelled, untimed, before the next repetition). LogP has no term for it: a receive
 *        posted on the critical path (MPI_Sendrecv's exchange rounds, a Recv issued after the
 *        partner's message could have arrived) pays it before the message can be matched
 *   flag half the round trip of a 64-bit flag ping-pong through an MPI-3 shared-memory window
 *        (MPI_Win_allocate_shared over the pair, each direction its own 64-byte line, C11
 *        release stores and acquire loads): the one-way latency of a shared-memory release, what
 *        a barrier's flag release (tree-shm, shm) costs instead of a message. Only for a pair on
 *        one node: latscope-bench logp skips it otherwise
 *   mcast a round trip out by a max(m, 1)-byte MPI_Bcast from rank 0 and back by a 0-byte
 *        message that rank 0 polls for: latscope fit logp takes the one-way latency of the
 *        library's broadcast as a release, the seed's "multicast" exit (seed 002 §3) as this MPI
 *        provides it, as mcast - rtt_poll/2 (the way back is a polled ping-pong's half). The root stays rank 0, as in the barrier rows' release: MPICH's shared-memory
 *        broadcast (POSIX release_gather, its default on one node) is cheaper than a message,
 *        and dearer than a bare flag, and alternating roots would add its root-change cost
 * Test hook (for tests only): the hooks' send_cost_s and recv_cost_s (include/latscope/hooks.h;
 * latscope-bench takes them from LATSCOPE_TEST_SEND_COST_S / _RECV_COST_S), read once per point at
 * init, are busy-waited inside every timed send and receive call path of these operations (both
 * ranks), so a test can check that the fit recovers known o_s and o_r increments and an unchanged
 * L. Zero (the normal case) they cost nothing. */
#include "latscope/logp.h"
#include "latscope/errors.h"
#include "latscope/hooks.h"
#include "latscope/util.h"
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG 0x4c50

typedef struct logp_state {
    double send_cost_s, recv_cost_s;   /* test hook */
    double delay_s;                    /* o_r, g_r: wait before the timed receive(s) */
    MPI_Request *reqs;                 /* g: the receiver's pre-posted train; g_r: the sender's */
    MPI_Comm node;                     /* flag: the pair as a shared-memory communicator */
    MPI_Comm dup;                      /* rtt_poll_any: the second communicator */
    MPI_Win win;                       /* flag: the shared window */
    volatile uint64_t *ping, *pong;    /* flag: rank 0 -> 1 and 1 -> 0 lines */
    uint64_t seq;                      /* flag: round trips done (both ranks count alike) */
} logp_state_t;

static double delay_cfg_s = -1.0;   /* < 0: automatic */

void lts_logp_set_delay(double s) { delay_cfg_s = s; }

/* Sends and receives with the test hook's extra cost inside the call path. The send cost comes
 * before the message leaves, the receive cost after it arrived: LogP's o_s precedes injection and
 * o_r follows arrival, so a ping-pong's RTT/2 grows by both and L = RTT/2 - o_s - o_r does not. */
static int snd(lts_op_ctx_t *c, const void *b, int peer) {
    lts_spin(NULL, ((logp_state_t *)c->state)->send_cost_s);
    return lts_chk(MPI_Send(b, (int)c->bytes, MPI_BYTE, peer, TAG, c->comm));
}
static int wait_recv(lts_op_ctx_t *c, MPI_Request *r) {
    int rc = MPI_Wait(r, MPI_STATUS_IGNORE);
    lts_spin(NULL, ((logp_state_t *)c->state)->recv_cost_s);
    return lts_chk(rc);
}

/* a few untimed 0-byte... m-byte ping-pongs: the median RTT, for the automatic o_r delay */
static double quick_rtt(lts_op_ctx_t *c) {
    double t[7];
    for (int i = 0; i < 7; i++) {
        double t0 = MPI_Wtime();
        if (c->rank == 0) {
            MPI_Send(c->sbuf, (int)c->bytes, MPI_BYTE, 1, TAG + 1, c->comm);
            MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG + 1, c->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG + 1, c->comm, MPI_STATUS_IGNORE);
            MPI_Send(c->sbuf, (int)c->bytes, MPI_BYTE, 0, TAG + 1, c->comm);
        }
        t[i] = MPI_Wtime() - t0;
    }
    for (int i = 1; i < 7; i++)   /* insertion sort of 7 */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
    return t[3];
}

static int logp_init(lts_op_ctx_t *c) {
    logp_state_t *s = calloc(1, sizeof *s);
    if (!s) return LTS_ENOMEM;
    s->send_cost_s = lts_test_hooks()->send_cost_s;
    s->recv_cost_s = lts_test_hooks()->recv_cost_s;
    c->state = s;
    return LTS_OK;
}

static void logp_fini(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (s) free(s->reqs);
    free(s);
    c->state = NULL;
}

static void cancel_req(lts_op_ctx_t *c) {
    if (c->req == MPI_REQUEST_NULL) return;
    MPI_Cancel(&c->req);
    MPI_Wait(&c->req, MPI_STATUS_IGNORE);
}

/* ---- o_s ---- */
static int os_prepare(lts_op_ctx_t *c) {
    if (c->rank == 1) return lts_chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &c->req));
    return LTS_OK;
}
static int os_run(lts_op_ctx_t *c) {
    if (c->rank == 0) return snd(c, c->sbuf, 1);
    return wait_recv(c, &c->req);
}

/* ---- o_r ---- */
static int or_init(lts_op_ctx_t *c) {
    int rc = logp_init(c);
    if (rc) return rc;
    logp_state_t *s = c->state;
    /* D must exceed the one-way time so the message is there: twice the RTT (and >= 10 us)
     * unless given; both ranks agree on rank 0's value */
    double d = delay_cfg_s >= 0 ? delay_cfg_s : fmax(10e-6, 2.0 * quick_rtt(c));
    MPI_Bcast(&d, 1, MPI_DOUBLE, 0, c->comm);
    s->delay_s = d;
    return LTS_OK;
}
static int or_prepare(lts_op_ctx_t *c) {
    if (c->rank == 1) return lts_chk(MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &c->req));
    lts_spin(NULL, ((logp_state_t *)c->state)->delay_s);
    return LTS_OK;
}
static int or_run(lts_op_ctx_t *c) {
    if (c->rank == 0) {
        int rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
        lts_spin(NULL, ((logp_state_t *)c->state)->recv_cost_s);
        return lts_chk(rc);
    }
    return lts_chk(MPI_Wait(&c->req, MPI_STATUS_IGNORE));   /* the send, posted in prepare */
}
/* the last prepared message is never timed: receive it (rank 0), complete the send (rank 1) */
static void or_cancel(lts_op_ctx_t *c) {
    if (c->rank == 0) MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
    else if (c->req != MPI_REQUEST_NULL) MPI_Wait(&c->req, MPI_STATUS_IGNORE);
}

/* ---- poll: Iprobe until seen, then receive ---- */
static int poll_recv(lts_op_ctx_t *c, int from, int tag);   /* below, with rtt_poll */
static int poll_run(lts_op_ctx_t *c) {
    if (c->rank == 0) return poll_recv(c, 1, TAG);
    return lts_chk(MPI_Wait(&c->req, MPI_STATUS_IGNORE));   /* the send, posted in prepare */
}

/* ---- rtt ---- */
static int rtt_prepare(lts_op_ctx_t *c) {
    return lts_chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 1 - c->rank, TAG, c->comm, &c->req));
}
static int rtt_run(lts_op_ctx_t *c) {
    int rc;
    if (c->rank == 0) {
        if ((rc = snd(c, c->sbuf, 1))) return rc;
        return wait_recv(c, &c->req);
    }
    if ((rc = wait_recv(c, &c->req))) return rc;
    return snd(c, c->sbuf, 0);
}

/* ---- rtt_loop: the round trip of seed 002's benchmark loop ---- */
#define LOOP_WORK_S 30e-6   /* seed 002 §4.3: the dummy work between two barriers */
static int rttl_prepare(lts_op_ctx_t *c) {
    int rc = lts_chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 1 - c->rank, TAG, c->comm, &c->req));
    lts_spin(NULL, LOOP_WORK_S);
    return rc;
}

/* a receive that never enters the blocking wait: MPI_Iprobe until the message is seen */
static int poll_recv(lts_op_ctx_t *c, int from, int tag) {
    int got = 0, rc = MPI_SUCCESS;
    while (!got && rc == MPI_SUCCESS) rc = MPI_Iprobe(from, tag, c->comm, &got, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, from, tag, c->comm, MPI_STATUS_IGNORE);
    lts_spin(NULL, ((logp_state_t *)c->state)->recv_cost_s);
    return lts_chk(rc);
}
static int loop_work(lts_op_ctx_t *c) {
    (void)c;
    lts_spin(NULL, LOOP_WORK_S);
    return LTS_OK;
}

/* ---- rtt_poll: rtt_loop, both receives polled ---- */
static int rttp_run(lts_op_ctx_t *c) {
    int rc;
    if (c->rank == 0) return (rc = snd(c, c->sbuf, 1)) ? rc : poll_recv(c, 1, TAG);
    return (rc = poll_recv(c, 0, TAG)) ? rc : snd(c, c->sbuf, 0);
}

/* ---- rtt_poll_any: the first rank polls with MPI_ANY_SOURCE over two communicators ---- */
static int rtpa_init(lts_op_ctx_t *c) {
    int rc = logp_init(c);
    if (rc) return rc;
    logp_state_t *s = c->state;
    s->dup = MPI_COMM_NULL;
    return lts_chk(MPI_Comm_dup(c->comm, &s->dup));
}
static void rtpa_fini(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (s && s->dup != MPI_COMM_NULL) MPI_Comm_free(&s->dup);
    logp_fini(c);
}
static int rtpa_run(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    int rc;
    if (c->rank == 1) {   /* as rtt_poll's partner, the reply on the duplicate */
        if ((rc = poll_recv(c, 0, TAG))) return rc;
        lts_spin(NULL, s->send_cost_s);
        return lts_chk(MPI_Send(c->sbuf, (int)c->bytes, MPI_BYTE, 0, TAG, s->dup));
    }
    if ((rc = snd(c, c->sbuf, 1))) return rc;
    /* src/algos/barrier.c linear_gather's loop: both communicators in turn, any source */
    MPI_Comm nets[2] = {c->comm, s->dup};
    for (int got = 0; !got;)
        for (int q = 0; q < 2 && !got; q++) {
            if ((rc = lts_chk(MPI_Iprobe(MPI_ANY_SOURCE, TAG, nets[q], &got, MPI_STATUS_IGNORE)))) return rc;
            if (got) rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, MPI_ANY_SOURCE, TAG, nets[q], MPI_STATUS_IGNORE);
        }
    lts_spin(NULL, s->recv_cost_s);
    return lts_chk(rc);
}

/* ---- rwait: a blocking receive whose reply comes a polled round trip after the call ---- */
static int rwait_run(lts_op_ctx_t *c) {
    int rc;
    if (c->rank == 0) {
        if ((rc = snd(c, c->sbuf, 1))) return rc;
        rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
        lts_spin(NULL, ((logp_state_t *)c->state)->recv_cost_s);
        return lts_chk(rc);
    }
    return (rc = poll_recv(c, 0, TAG)) ? rc : snd(c, c->sbuf, 0);
}

/* ---- rtt_train: `window` ping-pongs back to back ---- */
static int rttt_run(lts_op_ctx_t *c) {
    const double rcost = ((logp_state_t *)c->state)->recv_cost_s;
    for (int i = 0; i < c->window; i++) {
        int rc;
        if (c->rank == 0) {
            if ((rc = snd(c, c->sbuf, 1))) return rc;
            rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
            lts_spin(NULL, rcost);   /* the test hook: receive cost after arrival, as wait_recv */
            if (rc) return LTS_EMPI;
        } else {
            rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, MPI_STATUS_IGNORE);
            lts_spin(NULL, rcost);
            if (rc) return LTS_EMPI;
            if ((rc = snd(c, c->sbuf, 0))) return rc;
        }
    }
    return LTS_OK;
}

/* ---- g: train of `window` sends ---- */
static int g_init(lts_op_ctx_t *c) {
    int rc = logp_init(c);
    if (rc) return rc;
    logp_state_t *s = c->state;
    s->reqs = malloc((size_t)(c->window > 0 ? c->window : 1) * sizeof *s->reqs);
    if (!s->reqs) return LTS_ENOMEM;
    for (int i = 0; i < c->window; i++) s->reqs[i] = MPI_REQUEST_NULL;
    return LTS_OK;
}
static int g_prepare(lts_op_ctx_t *c) {
    if (c->rank == 0) return LTS_OK;
    logp_state_t *s = c->state;
    for (int i = 0; i < c->window; i++)
        if (MPI_Irecv((char *)c->rbuf + (size_t)i * c->bytes, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &s->reqs[i]))
            return LTS_EMPI;
    return LTS_OK;
}
static int g_run(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (c->rank == 0) {
        for (int i = 0; i < c->window; i++) {
            int rc = snd(c, c->sbuf, 1);
            if (rc) return rc;
        }
        return LTS_OK;
    }
    int rc = MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE);
    lts_spin(NULL, s->recv_cost_s * c->window);
    return lts_chk(rc);
}
static void g_cancel(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (c->rank == 0 || !s || !s->reqs) return;
    for (int i = 0; i < c->window; i++)
        if (s->reqs[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&s->reqs[i]);
            MPI_Wait(&s->reqs[i], MPI_STATUS_IGNORE);
        }
}

/* ---- g_nb: a train of nonblocking sends ---- */
static int gnb_run(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (c->rank == 0) {
        for (int i = 0; i < c->window; i++) {
            lts_spin(NULL, s->send_cost_s);
            if (MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, &s->reqs[i])) return LTS_EMPI;
        }
        return lts_chk(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
    }
    int rc = MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE);
    lts_spin(NULL, s->recv_cost_s * c->window);
    return lts_chk(rc);
}

/* ---- g_r: the receive side of a train ---- */
static int gr_init(lts_op_ctx_t *c) {
    int rc = g_init(c);
    if (rc) return rc;
    logp_state_t *s = c->state;
    /* D: the whole train must have left the sender: twice the RTT (>= 10 us) as for o_r, plus
     * an RTT/2 per message (a generous bound on the sender's gap); both ranks agree on rank 0's */
    double d = delay_cfg_s;
    if (d < 0) {
        double rtt = quick_rtt(c);
        d = fmax(10e-6, 2.0 * rtt) + c->window * rtt / 2;
    }
    MPI_Bcast(&d, 1, MPI_DOUBLE, 0, c->comm);
    s->delay_s = d;
    return LTS_OK;
}
static int gr_prepare(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (c->rank == 1) {
        for (int i = 0; i < c->window; i++)
            if (MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &s->reqs[i])) return LTS_EMPI;
        return LTS_OK;
    }
    lts_spin(NULL, s->delay_s);
    return LTS_OK;
}
static int gr_run(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (c->rank == 0) {
        for (int i = 0; i < c->window; i++) {
            int rc = MPI_Recv((char *)c->rbuf + (size_t)i * c->bytes, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm,
                              MPI_STATUS_IGNORE);
            lts_spin(NULL, s->recv_cost_s);
            if (rc) return LTS_EMPI;
        }
        return LTS_OK;
    }
    return lts_chk(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));   /* the sends, posted in prepare */
}
/* the last prepared train is never timed: receive it (rank 0), complete the sends (rank 1) */
static void gr_cancel(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (!s || !s->reqs) return;
    if (c->rank == 0) {
        for (int i = 0; i < c->window; i++)
            MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
    } else {
        MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE);
    }
}

/* ---- irecv_wait: MPI_Wait of a pre-posted receive whose message has arrived ---- */
static int irw_prepare(lts_op_ctx_t *c) {
    int rc;
    if (c->rank == 0) {
        /* posted first, then the partner is told to send: the message meets a posted receive */
        if ((rc = lts_chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG + 4, c->comm, &c->req)))) return rc;
        if ((rc = lts_chk(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG + 5, c->comm)))) return rc;
        /* the message arrives meanwhile (the partner's test-hook send cost comes before it) */
        logp_state_t *s = c->state;
        lts_spin(NULL, s->delay_s + s->send_cost_s);
        return LTS_OK;
    }
    /* the go polled: a blocking receive may sit in MPICH's yielding wait past D (pinned beside
     * other work, every repetition of a launch came out at D + 0.7 us) */
    for (int got = 0; !got;)
        if ((rc = lts_chk(MPI_Iprobe(0, TAG + 5, c->comm, &got, MPI_STATUS_IGNORE)))) return rc;
    if ((rc = lts_chk(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG + 5, c->comm, MPI_STATUS_IGNORE)))) return rc;
    lts_spin(NULL, ((logp_state_t *)c->state)->send_cost_s);
    return lts_chk(MPI_Send(c->sbuf, (int)c->bytes, MPI_BYTE, 0, TAG + 4, c->comm));
}
static int irw_run(lts_op_ctx_t *c) {
    return c->rank == 0 ? wait_recv(c, &c->req) : LTS_OK;   /* the partner's part is all in prepare */
}
/* a prepared repetition never timed: its message is on its way (the partner's prepare sends it) */
static void irw_cancel(lts_op_ctx_t *c) {
    if (c->rank == 0 && c->req != MPI_REQUEST_NULL) MPI_Wait(&c->req, MPI_STATUS_IGNORE);
}

/* ---- post: time in MPI_Irecv with nothing to match ---- */
static int post_run(lts_op_ctx_t *c) {
    if (c->rank == 0)   /* a tag the partner never sends: the receive stays posted until cancelled */
        return lts_chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG + 2, c->comm, &c->req));
    return LTS_OK;
}
/* the previous repetition's receive is cancelled untimed (MPI_Cancel of a receive is local) */
static int post_prepare(lts_op_ctx_t *c) {
    cancel_req(c);
    return LTS_OK;
}
/* the driver's cancel hook runs only after a prepare: the last repetition's receive may remain */
static void post_fini(lts_op_ctx_t *c) {
    cancel_req(c);
    logp_fini(c);
}

/* ---- flag: a 64-bit flag ping-pong through a shared-memory window ---- */
static int flag_init(lts_op_ctx_t *c) {
    int rc = logp_init(c);
    if (rc) return rc;
    logp_state_t *s = c->state;
    s->node = MPI_COMM_NULL;
    s->win = MPI_WIN_NULL;
    int n = 0;
    if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &s->node)) return LTS_EMPI;
    MPI_Comm_size(s->node, &n);
    /* the caller checks that the pair shares a node; both ranks see the same n */
    if (n != 2) return LTS_ENOTSUP;
    void *base;
    /* two 64-byte lines (one per direction, so neither rank's spinning reads the line the other
     * writes next) and room to align them */
    if (MPI_Win_allocate_shared(c->rank == 0 ? 3 * 64 : 0, 1, MPI_INFO_NULL, s->node, &base, &s->win))
        return LTS_EMPI;
    MPI_Aint sz;
    int du;
    if (MPI_Win_shared_query(s->win, 0, &sz, &du, &base)) return LTS_EMPI;
    /* each process maps the segment at its own address: rank 0 decides the aligned offset */
    int off = (int)((64 - ((uintptr_t)base & 63)) & 63);
    if (MPI_Bcast(&off, 1, MPI_INT, 0, s->node)) return LTS_EMPI;
    s->ping = (volatile uint64_t *)((char *)base + off);
    s->pong = s->ping + 8;
    if (c->rank == 0) *s->ping = *s->pong = 0;
    s->seq = 0;
    /* one passive-target epoch for the window's life (unified memory model: C11 atomics below) */
    if (MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win) || MPI_Win_sync(s->win) || MPI_Barrier(s->node))
        return LTS_EMPI;
    return LTS_OK;
}
static void flag_wait(volatile uint64_t *w, uint64_t want) {
    /* Yield now and then, so an oversubscribed partner gets the core -- but rarely: a yield
     * costs more than the cache-line transfer being measured (a yield every 64 spins doubled the
     * flag under Open MPI, to more than its message round trip). 4096 spins are some us. */
    for (unsigned spins = 0; __atomic_load_n(w, __ATOMIC_ACQUIRE) < want; spins++)
        if ((spins & 4095) == 4095) sched_yield();
}
static int flag_run(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    uint64_t want = ++s->seq;
    if (c->rank == 0) {
        __atomic_store_n(s->ping, want, __ATOMIC_RELEASE);
        flag_wait(s->pong, want);
    } else {
        flag_wait(s->ping, want);
        __atomic_store_n(s->pong, want, __ATOMIC_RELEASE);
    }
    return LTS_OK;
}
static void flag_fini(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (s && s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    if (s && s->node != MPI_COMM_NULL) MPI_Comm_free(&s->node);
    logp_fini(c);
}

/* ---- mcast: out by a broadcast from rank 0, back by a message ---- */
/* at least one byte: an empty broadcast is a no-op in MPICH (it returns at once, 20 ns here), and
 * the barrier rows release with a 1-byte MPI_Bcast */
static int mcast_run(lts_op_ctx_t *c) {
    int n = c->bytes > 0 ? (int)c->bytes : 1;
    if (MPI_Bcast(c->sbuf, n, MPI_BYTE, 0, c->comm)) return LTS_EMPI;
    /* the way back polled (as rtt_poll's, whose half the fit subtracts): a blocking wait here
     * would add its wait floor (rwait) to what is meant to be the broadcast's latency */
    if (c->rank == 0) {
        int got = 0, rc = MPI_SUCCESS;
        while (!got && rc == MPI_SUCCESS) rc = MPI_Iprobe(1, TAG + 3, c->comm, &got, MPI_STATUS_IGNORE);
        return lts_chk(rc ? rc : MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG + 3, c->comm, MPI_STATUS_IGNORE));
    }
    return lts_chk(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG + 3, c->comm));
}

/* ---- catch: a sweep, not a timed repetition (src/bench/ops_logp_catch.c) ---- */
/* Its value is a lead, not the duration of a call, so the driver cannot time it: latscope-bench
 * logp runs lts_logp_catch() for this row; the row is here so that --ops selects it by name. */
static int catch_run(lts_op_ctx_t *c) {
    (void)c;
    return LTS_ENOTSUP;
}

/* scale of g is 1/window: set by lts_logp_op() for the campaign's window */
static const lts_op_desc_t logp_ops[] = {
    {.name = "o_s", .help = "send overhead: time in MPI_Send, the partner's receive pre-posted", .group_size = 2,
     .scale = 1.0, .metric = "o_s", .init = logp_init, .run = os_run, .fini = logp_fini, .prepare = os_prepare,
     .cancel = cancel_req},
    {.name = "o_r", .help = "receive overhead: time in MPI_Recv of a message that arrived a delay D before",
     .group_size = 2, .scale = 1.0, .metric = "o_r", .init = or_init, .run = or_run, .fini = logp_fini,
     .prepare = or_prepare, .cancel = or_cancel},
    {.name = "rtt", .help = "round-trip time of an M-byte ping-pong (RTT/2 = o_s + L + o_r)", .group_size = 2,
     .scale = 1.0, .metric = "rtt", .init = logp_init, .run = rtt_run, .fini = logp_fini, .prepare = rtt_prepare,
     .cancel = cancel_req},
    {.name = "rtt_loop", .help = "round trip in seed 002's barrier loop: ping-pongs back to back, 30 us of untimed "
     "work on each rank between them (smallest size only)", .group_size = 2, .scale = 1.0, .metric = "rtt",
     .init = logp_init, .run = rtt_run, .fini = logp_fini, .prepare = rttl_prepare, .cancel = cancel_req,
     .self_isolating = 1},
    {.name = "poll", .help = "polling receive: MPI_Iprobe until a message that arrived a delay D before is seen, "
     "then MPI_Recv (smallest size only)", .group_size = 2, .scale = 1.0, .metric = "poll", .init = or_init,
     .run = poll_run, .fini = logp_fini, .prepare = or_prepare, .cancel = or_cancel},
    {.name = "rtt_train", .help = "round-trip time in a train of --train back-to-back ping-pongs (time per round "
     "trip; the stream counterpart of rtt)", .group_size = 2, .windowed = 0, .scale = 1.0, .metric = "rtt",
     .init = logp_init, .run = rttt_run, .fini = logp_fini},
    {.name = "g", .help = "gap: a train of --train back-to-back sends, time per message at the sender",
     .group_size = 2, .windowed = 1, .scale = 1.0, .metric = "g", .init = g_init, .run = g_run, .fini = logp_fini,
     .prepare = g_prepare, .cancel = g_cancel},
    {.name = "g_nb", .help = "gap of nonblocking sends: a train of --train MPI_Isend then MPI_Waitall, the partner's "
     "receives pre-posted, time per message at the sender", .group_size = 2, .windowed = 1, .scale = 1.0,
     .metric = "g_nb", .init = g_init, .run = gnb_run, .fini = logp_fini, .prepare = g_prepare, .cancel = g_cancel},
    {.name = "g_r", .help = "receive gap: a train of --train back-to-back receives of messages that have arrived, "
     "time per message at the receiver", .group_size = 2, .windowed = 1, .scale = 1.0, .metric = "g_r",
     .init = gr_init, .run = gr_run, .fini = logp_fini, .prepare = gr_prepare, .cancel = gr_cancel},
    {.name = "irecv_wait", .help = "time in MPI_Wait completing a receive posted before its message was sent, the "
     "message arrived a delay D before (an exchange round's receive; smallest size only)", .group_size = 2,
     .scale = 1.0, .metric = "irecv_wait", .init = or_init, .run = irw_run, .fini = logp_fini,
     .prepare = irw_prepare, .cancel = irw_cancel, .self_isolating = 1},
    {.name = "post", .help = "time in MPI_Irecv when nothing matching has arrived (the receive is cancelled, "
     "untimed; smallest size only)", .group_size = 2, .scale = 1.0, .metric = "post", .init = logp_init,
     .run = post_run, .fini = post_fini, .prepare = post_prepare, .cancel = cancel_req},
    {.name = "flag", .help = "one-way latency of a 64-bit flag in an MPI-3 shared-memory window (half a flag "
     "ping-pong; a pair on one node only; smallest size only)", .group_size = 2, .scale = 0.5, .metric = "flag",
     .init = flag_init, .run = flag_run, .fini = flag_fini},
    {.name = "mcast", .help = "round trip out by MPI_Bcast from the first rank, back by a message (the fit takes "
     "mcast - RTT/2: the broadcast's one-way latency; smallest size only)", .group_size = 2, .scale = 1.0,
     .metric = "mcast_rtt", .init = logp_init, .run = mcast_run, .fini = logp_fini},
    {.name = "rtt_poll", .help = "rtt_loop with both receives polled (MPI_Iprobe until seen, then MPI_Recv; smallest "
     "size only)", .group_size = 2, .scale = 1.0, .metric = "rtt", .init = logp_init, .run = rttp_run,
     .fini = logp_fini, .prepare = loop_work, .self_isolating = 1},
    {.name = "rtt_poll_any", .help = "rtt_poll with the first rank polling MPI_ANY_SOURCE over two communicators, "
     "as linear-2net's gather (smallest size only)", .group_size = 2, .scale = 1.0, .metric = "rtt",
     .init = rtpa_init, .run = rtpa_run, .fini = rtpa_fini, .prepare = loop_work, .self_isolating = 1},
    {.name = "rwait", .help = "send, then a blocking MPI_Recv of the reply the partner sends as soon as its polling "
     "sees the message (minus o_s: a blocking receive's wait floor; smallest size only)", .group_size = 2,
     .scale = 1.0, .metric = "rwait", .init = logp_init, .run = rwait_run, .fini = logp_fini, .prepare = loop_work,
     .self_isolating = 1},
    {.name = "catch", .help = "lead a partner's send needs for a posted receive's MPI_Wait to find it at its first "
     "look: a sweep of send times around the call (a pair on one node only; smallest size only)", .group_size = 2,
     .scale = 1.0, .metric = "catch", .init = logp_init, .run = catch_run, .fini = logp_fini},
};
_Static_assert(sizeof(logp_ops) / sizeof(logp_ops[0]) <= LTS_REGISTRY_MAX, "logp registry too large");
const lts_registry_t lts_logp_registry = LTS_REGISTRY("logp measurement", logp_ops);

int lts_logp_op(const char *name, int window, lts_op_desc_t *out) {
    int i = lts_reg_find(&lts_logp_registry, name);
    if (i < 0) return LTS_ENOTFOUND;
    if (window < 1) return LTS_EINVAL;
    *out = logp_ops[i];
    if (!strcmp(out->name, "g") || !strcmp(out->name, "g_nb") || !strcmp(out->name, "g_r") ||
        !strcmp(out->name, "rtt_train")) out->scale = 1.0 / window;
    return LTS_OK;
}
