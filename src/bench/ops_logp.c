/* LogP / LogGP / PLogP parameter measurement (issue 4; seed 002 §5.1, seed 003 §2; netgauge's
 * and PLogP's methods): operation descriptors timed by the one driver (lts_measure) on a pair,
 * group rank 0's clock:
 *   o_s  time in the send call (MPI_Send), the receive pre-posted by the partner (prepare)
 *   o_r  time in the receive call when the message has already arrived: the partner sends in
 *        prepare (untimed), the receiver busy-waits a delay D there, so the message is in its
 *        queue before the timed MPI_Recv starts (netgauge's "delay before receiving")
 *   rtt  a ping-pong (receives pre-posted): RTT = 2 (o_s + L + o_r), so L = RTT/2 - o_s - o_r
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
 * Test hook (for tests only): LATSCOPE_TEST_SEND_COST_S and LATSCOPE_TEST_RECV_COST_S, read once
 * per point at init, are busy-waited inside every timed send and receive call path of these
 * operations (both ranks), so a test can check that the fit recovers known o_s and o_r
 * increments and an unchanged L. Unset (the normal case) they cost nothing. */
#include "latscope/logp.h"
#include "latscope/errors.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG 0x4c50

typedef struct logp_state {
    double send_cost_s, recv_cost_s;   /* test hook */
    double delay_s;                    /* o_r, g_r: wait before the timed receive(s) */
    MPI_Request *reqs;                 /* g: the receiver's pre-posted train; g_r: the sender's */
} logp_state_t;

static double delay_cfg_s = -1.0;   /* < 0: automatic */

void lts_logp_set_delay(double s) { delay_cfg_s = s; }

static int chk(int mpi_rc) { return mpi_rc == MPI_SUCCESS ? LTS_OK : LTS_EMPI; }

static void spin(double s) {
    if (s <= 0) return;
    double t = MPI_Wtime() + s;
    while (MPI_Wtime() < t) {
    }
}

static double env_cost(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return 0.0;
    char *end;
    double x = strtod(v, &end);
    return (end != v && *end == '\0' && isfinite(x) && x > 0) ? x : 0.0;
}

/* Sends and receives with the test hook's extra cost inside the call path. The send cost comes
 * before the message leaves, the receive cost after it arrived: LogP's o_s precedes injection and
 * o_r follows arrival, so a ping-pong's RTT/2 grows by both and L = RTT/2 - o_s - o_r does not. */
static int snd(lts_op_ctx_t *c, const void *b, int peer) {
    spin(((logp_state_t *)c->state)->send_cost_s);
    return chk(MPI_Send(b, (int)c->bytes, MPI_BYTE, peer, TAG, c->comm));
}
static int wait_recv(lts_op_ctx_t *c, MPI_Request *r) {
    int rc = MPI_Wait(r, MPI_STATUS_IGNORE);
    spin(((logp_state_t *)c->state)->recv_cost_s);
    return chk(rc);
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
    s->send_cost_s = env_cost("LATSCOPE_TEST_SEND_COST_S");
    s->recv_cost_s = env_cost("LATSCOPE_TEST_RECV_COST_S");
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
    if (c->rank == 1) return chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &c->req));
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
    if (c->rank == 1) return chk(MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &c->req));
    spin(((logp_state_t *)c->state)->delay_s);
    return LTS_OK;
}
static int or_run(lts_op_ctx_t *c) {
    if (c->rank == 0) {
        int rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
        spin(((logp_state_t *)c->state)->recv_cost_s);
        return chk(rc);
    }
    return chk(MPI_Wait(&c->req, MPI_STATUS_IGNORE));   /* the send, posted in prepare */
}
/* the last prepared message is never timed: receive it (rank 0), complete the send (rank 1) */
static void or_cancel(lts_op_ctx_t *c) {
    if (c->rank == 0) MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
    else if (c->req != MPI_REQUEST_NULL) MPI_Wait(&c->req, MPI_STATUS_IGNORE);
}

/* ---- rtt ---- */
static int rtt_prepare(lts_op_ctx_t *c) {
    return chk(MPI_Irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 1 - c->rank, TAG, c->comm, &c->req));
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

/* ---- rtt_train: `window` ping-pongs back to back ---- */
static int rttt_run(lts_op_ctx_t *c) {
    const double rcost = ((logp_state_t *)c->state)->recv_cost_s;
    for (int i = 0; i < c->window; i++) {
        int rc;
        if (c->rank == 0) {
            if ((rc = snd(c, c->sbuf, 1))) return rc;
            rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, MPI_STATUS_IGNORE);
            spin(rcost);   /* the test hook: receive cost after arrival, as wait_recv */
            if (rc) return LTS_EMPI;
        } else {
            rc = MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, MPI_STATUS_IGNORE);
            spin(rcost);
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
    spin(s->recv_cost_s * c->window);
    return chk(rc);
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
            spin(s->send_cost_s);
            if (MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, &s->reqs[i])) return LTS_EMPI;
        }
        return chk(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
    }
    int rc = MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE);
    spin(s->recv_cost_s * c->window);
    return chk(rc);
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
    spin(s->delay_s);
    return LTS_OK;
}
static int gr_run(lts_op_ctx_t *c) {
    logp_state_t *s = c->state;
    if (c->rank == 0) {
        for (int i = 0; i < c->window; i++) {
            int rc = MPI_Recv((char *)c->rbuf + (size_t)i * c->bytes, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm,
                              MPI_STATUS_IGNORE);
            spin(s->recv_cost_s);
            if (rc) return LTS_EMPI;
        }
        return LTS_OK;
    }
    return chk(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));   /* the sends, posted in prepare */
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
