/* Point-to-point operation descriptors (MPIBlib §3: roundtrips i <-> j, point-to-two i -> j,k).
 * Group rank 0 is the initiator; its local time is the measurement (root timing). */
#include "latscope/bench.h"
#include "latscope/errors.h"
#include "latscope/util.h"

#define TAG 17


/* i -> j `bytes`, j -> i `reply_bytes`; the value is the roundtrip time. Each side's receive is
 * posted by prepare() before the repetition starts.
 *
 * The same round trip exists twice: through the MPI_ entry points, and through the PMPI_ ones,
 * which a PMPI tool (latscope's injector, a profiler) does not intercept. Measured in one launch,
 * the PMPI_ copy is the in-run baseline of the tool's added cost: no launch-to-launch difference
 * (shared-memory placement, core binding) between the baseline and the tool's run. */
typedef struct {
    int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    int (*wait)(MPI_Request *, MPI_Status *);
    int (*cancel)(MPI_Request *);
} entry_points_t;
static const entry_points_t MPI_EP = {MPI_Irecv, MPI_Send, MPI_Wait, MPI_Cancel};
static const entry_points_t PMPI_EP = {PMPI_Irecv, PMPI_Send, PMPI_Wait, PMPI_Cancel};

static int rt_prepare(lts_op_ctx_t *c, const entry_points_t *ep) {
    if (c->rank == 0)
        return lts_chk(ep->irecv(c->rbuf, (int)c->reply_bytes, MPI_BYTE, 1, TAG, c->comm, &c->req));
    return lts_chk(ep->irecv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &c->req));
}

static void rt_cancel(lts_op_ctx_t *c, const entry_points_t *ep) {
    if (c->req == MPI_REQUEST_NULL) return;
    ep->cancel(&c->req);
    ep->wait(&c->req, MPI_STATUS_IGNORE);
}

static int rt_run(lts_op_ctx_t *c, const entry_points_t *ep) {
    if (c->rank == 0) {
        if (ep->send(c->sbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm)) return LTS_EMPI;
        return lts_chk(ep->wait(&c->req, MPI_STATUS_IGNORE));
    }
    if (ep->wait(&c->req, MPI_STATUS_IGNORE)) return LTS_EMPI;
    return lts_chk(ep->send(c->sbuf, (int)c->reply_bytes, MPI_BYTE, 0, TAG, c->comm));
}

static int roundtrip_prepare(lts_op_ctx_t *c) { return rt_prepare(c, &MPI_EP); }
static void cancel_req(lts_op_ctx_t *c) { rt_cancel(c, &MPI_EP); }
static int roundtrip_run(lts_op_ctx_t *c) { return rt_run(c, &MPI_EP); }
static int pmpi_prepare(lts_op_ctx_t *c) { return rt_prepare(c, &PMPI_EP); }
static void pmpi_cancel(lts_op_ctx_t *c) { rt_cancel(c, &PMPI_EP); }
static int pmpi_run(lts_op_ctx_t *c) { return rt_run(c, &PMPI_EP); }

/* Streaming bandwidth: a window of nonblocking sends, then one empty acknowledgement, so the
 * time covers delivery of the whole window (bandwidth = window * bytes / time). */
static int bandwidth_run(lts_op_ctx_t *c) {
    MPI_Request req[1024];
    int w = c->window;
    if (c->rank == 0) {
        for (int k = 0; k < w; k++)
            if (MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, 1, TAG, c->comm, &req[k])) return LTS_EMPI;
        if (MPI_Waitall(w, req, MPI_STATUSES_IGNORE)) return LTS_EMPI;
        return lts_chk(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG + 1, c->comm, MPI_STATUS_IGNORE));
    }
    for (int k = 0; k < w; k++)
        if (MPI_Irecv((char *)c->rbuf + (size_t)k * c->bytes, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, &req[k]))
            return LTS_EMPI;
    if (MPI_Waitall(w, req, MPI_STATUSES_IGNORE)) return LTS_EMPI;
    return lts_chk(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG + 1, c->comm));
}

/* point-to-two: i -> j and i -> k `bytes` each, concurrently; j and k reply with reply_bytes */
static int p2two_run(lts_op_ctx_t *c) {
    MPI_Request req[4];
    if (c->rank == 0) {
        for (int k = 1; k <= 2; k++) {
            if (MPI_Irecv((char *)c->rbuf + (size_t)(k - 1) * c->reply_bytes, (int)c->reply_bytes, MPI_BYTE, k, TAG,
                          c->comm, &req[k - 1])) return LTS_EMPI;
            if (MPI_Isend(c->sbuf, (int)c->bytes, MPI_BYTE, k, TAG, c->comm, &req[k + 1])) return LTS_EMPI;
        }
        return lts_chk(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    }
    if (MPI_Recv(c->rbuf, (int)c->bytes, MPI_BYTE, 0, TAG, c->comm, MPI_STATUS_IGNORE)) return LTS_EMPI;
    return lts_chk(MPI_Send(c->sbuf, (int)c->reply_bytes, MPI_BYTE, 0, TAG, c->comm));
}

static int null_run(lts_op_ctx_t *c) { (void)c; return LTS_OK; }

/* Every operation but null ends with the initiator receiving the partners' last message (reply,
 * ack), so each is self-isolating: --sync auto runs it back to back (docs/measurement.md). */
static const lts_op_desc_t p2p_ops[] = {
    {"pingpong", "one-way latency: RTT/2 of an M-byte message bounced i -> j -> i (reply = M)", 2, 0, 0.5, "latency",
     NULL, roundtrip_run, NULL, roundtrip_prepare, cancel_req, 1},
    {"pingpong_pmpi", "pingpong through the PMPI_ entry points, unseen by PMPI tools (a tool's in-run baseline)", 2, 0,
     0.5, "latency", NULL, pmpi_run, NULL, pmpi_prepare, pmpi_cancel, 1},
    {"roundtrip", "roundtrip time i -M-> j -R-> i (R = --reply-size, default M; MPIBlib i<->j)", 2, 0, 1.0, "rtt",
     NULL, roundtrip_run, NULL, roundtrip_prepare, cancel_req, 1},
    {"bandwidth", "streaming: --window nonblocking M-byte sends i -> j, then an empty ack", 2, 1, 1.0, "time",
     NULL, bandwidth_run, NULL, NULL, NULL, 1},
    {"p2two", "point-to-two: i -> j,k M bytes each, empty (or --reply-size) replies", 3, 0, 1.0, "rtt",
     NULL, p2two_run, NULL, NULL, NULL, 1},
    {"null", "no communication: the driver's own cost (tests)", 2, 0, 1.0, "time", NULL, null_run, NULL, NULL, NULL},
};
_Static_assert(sizeof(p2p_ops) / sizeof(p2p_ops[0]) <= LTS_REGISTRY_MAX, "p2p registry too large");
const lts_registry_t lts_p2p_registry = LTS_REGISTRY("p2p operation", p2p_ops);

size_t lts_op_bufsize(const lts_op_desc_t *op, size_t max_bytes, size_t max_reply, int window) {
    size_t m = max_bytes > max_reply ? max_bytes : max_reply;
    if (op->windowed && window > 1) m *= (size_t)window;
    if (op->group_size > 2) m *= (size_t)(op->group_size - 1);
    return m ? m : 1;
}
