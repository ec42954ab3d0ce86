/* The simulator engine's internals (docs/sim.md "Semantics", "Scale"); not a public header (sim.h
 * is). Shared by the core (engine.c: the event queue, the entry pool, per-rank CPU/NIC, matching,
 * LogGOPS costs), the three executors (exec_prog.c: generated programs in time order;
 * exec_window.c: generated eager programs in rank-ordered windows; exec_goal.c: GOAL schedules) and
 * what ends a run for all three (report.c: the deadlock report and the critical path).
 *
 * What is on the inner loop of every event crosses the files as static inline functions here (the
 * queues and matching, a send's start, a window's slots, the 4-ary heap); the calls left between
 * the files (a window's message to its program rank, the core's send) are inlined by link-time
 * optimisation (cmake/parts/sim.cmake), so the loops run as many instructions per event as when the
 * engine was one translation unit (bench/sim_scale.py measures them). The functions below are
 * hidden from users of the static library.
 *
 * Memory: per rank one 64-byte rank_t and its queues' heads (24 bytes); in flight, one 32-byte
 * event per message (and a pool entry while it waits in a queue); the chunk pool, the entry pool
 * and the heaps grow by doubling, never one malloc per message. */
#ifndef LTS_SIM_ENGINE_INTERNAL_H
#define LTS_SIM_ENGINE_INTERNAL_H
#include "sim.h"
#include "latscope/errors.h"
#include "table.h"
#include <stdint.h>
#include <string.h>

#pragma GCC visibility push(hidden)

/* ---- event queue: a timing wheel (Varghese & Lauck 1987; a calendar queue, Brown 1988) of
 * (time, payload) events. Bucket k holds the events of [k W, (k+1) W), W = 2^WBITS ps; the wheel
 * covers NB buckets ahead of the current one, later events wait in a 4-ary heap ("far"). The
 * current bucket is consumed in (time, payload) order: as a FIFO while all its events share one
 * time (a lock-step schedule: 10^6 events at one instant cost O(1) each), else sorted once when it
 * becomes current (an LSD radix sort of (time, type, rank, index) keys over the digits that vary,
 * ties of the rest of the payload put in order after it), events scheduled into it meanwhile
 * merged from a small 4-ary heap ("side"). No event is ever scheduled before the one being
 * processed. Measured at 2^20 ranks (bench/sim_scale.py): a binary heap's pop was 60 % of the
 * run, a radix heap moved each event ~20 times once delays spread the times, a heap per bucket
 * spent half the run in mispredicted comparisons; the sorted bucket also tells which ranks come
 * next, fetched ahead (PREFETCH_AHEAD). The order is total: runs are deterministic. */
/* An eager message travels inside its event (src, tag, size): nothing is allocated for it
 * unless it must wait in a queue, and its arrival reads no other memory. */
typedef struct ev { int64_t t; uint64_t p; int64_t size; int32_t src, tag; } ev_t;
enum { EV_READY = 0, EV_ARRIVE = 1, EV_CTS = 2, EV_MSG = 3 };   /* ARRIVE: a rendezvous request or its data */
#define EV_MAKE(type, rank, arg) (((uint64_t)(type) << 62) | ((uint64_t)(uint32_t)(rank) << 32) | (uint32_t)(arg))
#define EV_TYPE(p) ((int)((p) >> 62))
#define EV_RANK(p) ((int)(((p) >> 32) & 0x3fffffffu))
#define EV_ARG(p) ((uint32_t)(p))
#define LTS_SIM_MAX_RANKS (1 << 30)
#define WBITS 14
#define NB (1u << 16)
#define PREFETCH_AHEAD 24   /* events: the rank of the event this far ahead is fetched now */
#define PREFETCH_RANK(s, rk) __builtin_prefetch(&(s)->r[rk], 1)
#define KEY_IDX_BITS (64 - WBITS - 32)   /* a sorted bucket's key: (t mod W, type, rank, index); larger
                                           buckets: qsort */

typedef struct evvec { ev_t *e; size_t n, cap; } evvec_t;
/* A window's event when every message is eager, of 0 bytes, and no critical path is kept (sim_t.narrow,
 * run_window): 16 bytes, half of ev_t, so the window's radix sort and the chunks move half the
 * memory. The time is its offset in its window (t = window << wbits | toff, exact: wbits <= 32), the
 * payload's arg the sender (a program's send's handle is its rank), the type EV_MSG. */
typedef struct wev { uint32_t toff, dst, src; int32_t tag; } wev_t;
/* A bucket of the wheel other than the current one: a list of chunks of CH events from one pool
 * (on huge pages): appending an event costs a store into its bucket's last chunk, and the
 * thousands of buckets in use do not each cost TLB entries and reallocations (bench/sim_scale.py:
 * one vector per bucket made a third of the run stalls in the append). The current bucket is
 * copied out to one vector (sim_t.curv) and its chunks go back to the pool. */
#define CH 256
#define CNONE UINT32_MAX
typedef struct bslot { uint32_t head, tail, n, fill; } bslot_t;   /* fill: events in the tail chunk */

static inline int ev_less(const ev_t *a, const ev_t *b) { return a->t < b->t || (a->t == b->t && a->p < b->p); }

static inline void heap_up(ev_t *h, size_t i) {
    ev_t e = h[i];
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!ev_less(&e, &h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

static inline void heap_down(ev_t *h, size_t n, size_t i) {
    ev_t e = h[i];
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t j = c + 1; j < end; j++)
            if (ev_less(&h[j], &h[best])) best = j;
        if (!ev_less(&h[best], &e)) break;
        h[i] = h[best];
        i = best;
    }
    h[i] = e;
}

static inline ev_t heap_pop(evvec_t *v) {
    ev_t top = v->e[0];
    v->e[0] = v->e[--v->n];
    if (v->n) heap_down(v->e, v->n, 0);
    return top;
}

/* ---- pool of queue entries (messages, posted receives), singly linked by index -------------- */
enum { M_EAGER = 1, M_RTS, M_DATA, M_POSTED };
typedef struct qent {
    int64_t size;
    int32_t next, src, dst, tag;
    uint32_t h, h2;     /* the send's handle (GOAL vertex), the matched receive's handle */
    int32_t kind;
} qent_t;

typedef struct list { int32_t head, tail; } list_t;

/* A rank's state is one cache line (64-byte aligned): once delays spread the times, ranks are
 * visited in no order and each visit costs a miss per line (bench/sim_scale.py: two lines per
 * rank were 20 % slower). Its three queues live in a separate array (sim_t.rl), read only when
 * the bit of `lists` says the queue is not empty. */
enum { L_POSTED = 0, L_UNEXP, L_READY };   /* posted receives after the first; unexpected messages;
                                              matched, unprocessed messages */
enum { R_RUN = 0, R_WAIT, R_SEND, R_DONE, R_FLAG };
typedef struct rank {
    int64_t cpu, nic_s, nic_r;   /* when each resource is next free */
    uint64_t rng;                /* the injector's per-rank stream (src/inject/table.h) */
    int64_t delay;               /* table delay drawn so far (here, not in a separate array: one
                                    cache miss per send less) */
    uint32_t pc, outstanding;
    int32_t ps_src, ps_tag;      /* the first posted receive, here: a match reads no other memory */
    uint32_t ps_h;
    uint8_t state, ps_on, lists; /* lists: bit L_* set while that queue is not empty */
} rank_t;
_Static_assert(sizeof(rank_t) == 64, "a rank's state is one cache line");

/* A generated schedule's critical path (opts.critical_path; docs/sim.md "Outputs"): one record per
 * operation (send, receive, calc; 32 bytes), appended as the operations start, each with what
 * decided it, as the GOAL engine keeps them (vcause, and a receive's end cause, below): `cause` a
 * record of the same rank (| LTS_GOAL_IREQ: a receive posted when its predecessor started), `ecause`
 * a receive's end cause, a record of its rank (the CPU/NIC holder) or CP_MSG | the send's number on
 * the sending rank (its peer: generated schedules have no wildcard), carried in the message's event
 * (the size's upper bits) and found back only for the operations on the path. */
typedef struct cprec { int64_t start, end; uint32_t cause, ecause, rprev, pc; } cprec_t;
/* per rank, one place (a miss per event, not four): its last record (rprev chains them) and that
 * one's start, the last to use its CPU, the one whose end is its time now (if > 0), its sends */
typedef struct cprank { int64_t head_start; uint32_t head, lastcpu, tc, nsend; } cprank_t;
#define CP_NONE UINT32_MAX
#define CP_MSG 0x80000000u
#define CP_SIZE_BITS 41   /* a message's size < 2^41 (latscope-sim's --size <= 2^40) */
#define CP_SEQ_MASK ((1u << (64 - CP_SIZE_BITS)) - 1)
#define CP_SIZE(x) ((x) & (((int64_t)1 << CP_SIZE_BITS) - 1))

typedef struct sim {
    const lts_sim_opts_t *o;
    const lts_sim_prog_t *prog;
    const lts_goal_t *goal;
    int P;
    rank_t *r;           /* mmap'ed, r_bytes */
    size_t r_bytes;
    list_t *rl;          /* per rank, its queues (L_*) */
    int64_t *fin, *dl;   /* per rank: finish time; table delay drawn */
    bslot_t *ring;       /* NB buckets */
    evvec_t curv;        /* the current bucket's events */
    ev_t *cev;           /* the chunk pool: chunk c is cev[c CH .. (c + 1) CH) */
    uint32_t *cnext;     /* per chunk: the next in its bucket, or in the free list */
    size_t ccap, cused;  /* chunks allocated, ever used */
    uint32_t cfree;      /* the free list */
    evvec_t far;         /* beyond the wheel: a 4-ary heap */
    uint64_t cur;        /* the current bucket's number (time >> WBITS) */
    size_t head;         /* FIFO mode: the current bucket's next event */
    int cur_sorted;      /* the current bucket is sorted (ord), else a FIFO of one time, cur_t */
    int64_t cur_t;
    uint64_t *ord_buf;   /* sorting a bucket: its keys (the radix sort's two halves) */
    size_t ord_cap;
    evvec_t alt;         /* sorting a bucket: its events in order, then swapped with curv */
    evvec_t side;        /* events scheduled into the sorted current bucket: a 4-ary heap */
    size_t ring_n;       /* events in the wheel's other buckets */
    size_t hn, hpeak;    /* events queued, at most */
    qent_t *q;
    size_t qn, qcap;
    int32_t qfree;
    int64_t now;
    int ahead;           /* programs: a rank may run ahead of the clock (see lts_sim_run_prog) */
    int win;             /* programs: windows of 2^wbits <= L ps processed in rank order (run_window) */
    int narrow;          /* windows of 16-byte events (wev_t): the chunks and curv/alt hold wev_t */
    int wbits, wpass, wdig;   /* windows: width 2^wbits ps; radix passes and bits of the rank's digits */
    int flag_on;         /* programs: the shared-memory flag was stored, seen from flag_t on */
    int64_t flag_t;
    int64_t nz_free;     /* a noise trace's free time per span (0: no trace) */
    int noisy;           /* OS noise of either kind (busy) */
    cprec_t *cr;         /* programs' critical path (cprec_t): the records, */
    size_t crn, crcap;
    cprank_t *cq;        /* per rank (cprank_t) */
    uint64_t cp_bits;    /* OR'ed into the size of the message being sent: its send's number */
    int failed;
    uint64_t events, messages, delays;
    int64_t delay_sum;
    /* GOAL */
    uint8_t *vstate;     /* 0 waiting, 1 started, 2 done */
    int64_t *vstart, *vend;
    uint32_t *vcause;    /* the operation that decided when v could start (critical path), or NONE;
                          * | LTS_GOAL_IREQ when v irequires it (v waited for its start, not its end) */
    uint32_t *lastv;     /* per rank: the operation that last held its CPU */
    uint32_t *vleft;     /* dependencies still to come; once v is ready (0), a receive's end cause:
                          * its message or its rank's CPU/NIC when that, not its posting, decided
                          * when it completed (NONE otherwise; docs/sim.md "Outputs") */
    int64_t *vready;
    int64_t unit;
    char *err;
    size_t errlen;
} sim_t;

/* ---- the core (engine.c) ---------------------------------------------------------------------- */
/* The run fails with `code` and a one-line message in s->err (the first failure's: later ones keep it). */
int lts_sim_fail(sim_t *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int lts_sim_vput(sim_t *s, evvec_t *v, ev_t e);   /* append to a vector (a heap's array) */
int lts_sim_slot_chunk(sim_t *s, bslot_t *b);     /* a new chunk at the end of bucket b */
int lts_sim_push_ev(sim_t *s, ev_t e);            /* schedule an event (windows: lts_sim_push_win) */
void lts_sim_hugify(void *p, size_t n);           /* large arrays on transparent huge pages */
int32_t lts_sim_qalloc(sim_t *s);                 /* a pool entry, or -1 (s->failed set) */
int64_t lts_sim_busy_noise(const sim_t *s, int r, int64_t start, int64_t dur);
int32_t lts_sim_do_send(sim_t *s, int r, int64_t t, int dst, int tag, int64_t size, uint32_t handle, int64_t *start,
                        int64_t *done);
int lts_sim_do_rts(sim_t *s, int r, int32_t m, uint32_t recv_handle, int64_t t);
int64_t lts_sim_do_cts(sim_t *s, int r, int32_t m);
int lts_sim_init(sim_t *s, int P, const lts_sim_opts_t *o, char *err, size_t errlen);
void lts_sim_finish(sim_t *s, lts_sim_result_t *res, size_t extra_bytes_used);
void lts_sim_free_state(sim_t *s);
int lts_sim_next_event(sim_t *s, ev_t *e);

/* ---- the rank-ordered windows (exec_window.c) and the program ranks they run (exec_prog.c) --- */
int lts_sim_push_win(sim_t *s, const ev_t *e);    /* an event into its window (beyond the wheel: far) */
int lts_sim_run_window(sim_t *s);                 /* a program's events, window by window */
/* An eager message (src, tag, the event's size field, its arg) reaches rank r of a program, now;
 * _fast: a run of narrow windows without noise (run_rank_g's `fast`) */
int lts_sim_prog_msg(sim_t *s, int r, int src, int tag, int64_t evsize, uint32_t arg);
int lts_sim_prog_msg_fast(sim_t *s, int r, int src, int tag, int64_t evsize, uint32_t arg);

/* ---- the end of a run, for every executor (report.c) ------------------------------------------ */
/* The deadlock report: after the queue ran dry, the first of n units (ranks, GOAL operations) that
 * state() calls blocked, else the first it calls waiting (for a unit that never became ready), is
 * told by say() in the executor's words after "deadlock: "; LTS_EINVAL, or 0 when all are done. */
enum { LTS_SIM_UNIT_DONE = 0, LTS_SIM_UNIT_BLOCKED, LTS_SIM_UNIT_WAITING };
typedef struct lts_sim_deadlock_ops {
    int (*state)(const sim_t *s, size_t i);
    void (*say)(const sim_t *s, size_t i, char *buf, size_t len);
} lts_sim_deadlock_ops_t;
int lts_sim_deadlock(sim_t *s, size_t n, const lts_sim_deadlock_ops_t *ops);

/* The critical path (docs/sim.md "Outputs"), walked back from the operation that ends last over
 * what each executor recorded: an operation is (rank, id), id < n; start_cause() its start cause
 * (an id of the same rank, | LTS_GOAL_IREQ when it was an irequires edge, or CP_NONE),
 * end_cause() a receive's end cause (CP_NONE: none, or not a receive), either an id of the same
 * rank or CP_MSG | a message's number that message() (NULL: none are) finds back as the send's
 * (rank, id); entry() the operation's line of the path. */
typedef struct lts_sim_cp_ops {
    uint32_t (*start_cause)(const sim_t *s, int r, uint32_t v);
    uint32_t (*end_cause)(const sim_t *s, int r, uint32_t v);
    uint32_t (*message)(const sim_t *s, int *r, uint32_t v, uint32_t c);
    void (*entry)(const sim_t *s, int r, uint32_t v, lts_sim_cp_t *out);
} lts_sim_cp_ops_t;
int lts_sim_critical_path(sim_t *s, lts_sim_result_t *res, size_t n, int r, uint32_t v, const lts_sim_cp_ops_t *ops);

/* ---- inline: the inner loop's helpers ---------------------------------------------------- */


/* The place of a new event at the end of bucket b (NULL: out of memory, s->failed set): the caller
 * writes the event there, field by field (a 32-byte copy of an event just built on the stack
 * stalled on the store forwarding of its halves). */
static inline ev_t *slot_add(sim_t *s, bslot_t *b) {
    if (__builtin_expect(!b->n || b->fill == CH, 0) && lts_sim_slot_chunk(s, b)) return NULL;
    b->n++;
    return &s->cev[(size_t)b->tail * CH + b->fill++];
}

static inline int slot_put(sim_t *s, bslot_t *b, const ev_t *e) {
    ev_t *x = slot_add(s, b);
    if (!x) return s->failed;
    *x = *e;
    return 0;
}
static inline int push(sim_t *s, int type, int rank, uint32_t arg, int64_t t) {
    ev_t e = {t, EV_MAKE(type, rank, arg), 0, 0, 0};
    return lts_sim_push_ev(s, e);
}

/* A rank's queues, fetched half as far ahead as its state (by then in cache, and telling whether
 * it has any): a message that came early waits in a queue, and each of them cost two misses. */
static inline void prefetch_lists(const sim_t *s, int r) {
    const rank_t *R = &s->r[r];
    if (R->lists) {
        __builtin_prefetch(&s->rl[(size_t)r * 3], 1);
        __builtin_prefetch(&s->rl[(size_t)r * 3 + 2], 1);
    }
}

/* The first message of a rank's unexpected queue, fetched a quarter as far ahead as its state (by
 * then its queues are in cache): a message that came before its receive was posted is matched
 * when the rank gets to it, windows later, and that read was the miss of lmatch. */
static inline void prefetch_unexp(const sim_t *s, int r) {
    if (s->r[r].lists & (1u << L_UNEXP)) __builtin_prefetch(&s->q[s->rl[(size_t)r * 3 + L_UNEXP].head]);
}

/* The table entry of a rank's next draw (its state in cache by then): the draw's load was a stall of
 * its send, the 32 KiB table sharing the first-level cache with everything else. */
static inline void prefetch_draw(const sim_t *s, int r) {
    uint64_t st = s->r[r].rng;
    __builtin_prefetch(&s->o->table[lts_inject_next_index(&st)]);
}


static inline void qfree(sim_t *s, int32_t i) { s->q[i].next = s->qfree; s->qfree = i; }

static inline list_t *rlist(sim_t *s, const rank_t *R, int w) { return &s->rl[(size_t)(R - s->r) * 3 + (size_t)w]; }

/* Append pool entry i to rank R's queue w. */
static inline void lappend(sim_t *s, rank_t *R, int w, int32_t i) {
    list_t *l = rlist(s, R, w);
    s->q[i].next = -1;
    if (R->lists & (1u << w)) s->q[l->tail].next = i;
    else l->head = i;
    l->tail = i;
    R->lists |= (uint8_t)(1u << w);
}

static inline int32_t lpop(sim_t *s, rank_t *R, int w) {
    if (!(R->lists & (1u << w))) return -1;
    list_t *l = rlist(s, R, w);
    int32_t i = l->head;
    l->head = s->q[i].next;
    if (l->head < 0) R->lists &= (uint8_t)~(1u << w);
    return i;
}

/* First entry of rank R's queue w that matches (src, tag); `wild` says which side may hold
 * LTS_SIM_ANY: the posted receive (scanning posted receives for a message) or the request
 * (scanning messages). */
static inline int32_t lmatch(sim_t *s, rank_t *R, int w, int src, int tag, int recv_side_wild) {
    if (!(R->lists & (1u << w))) return -1;
    list_t *l = rlist(s, R, w);
    int32_t prev = -1;
    for (int32_t i = l->head; i >= 0; prev = i, i = s->q[i].next) {
        const qent_t *e = &s->q[i];
        int ok = recv_side_wild ? (e->src == LTS_SIM_ANY || e->src == src) && (e->tag == LTS_SIM_ANY || e->tag == tag)
                                : (src == LTS_SIM_ANY || e->src == src) && (tag == LTS_SIM_ANY || e->tag == tag);
        if (!ok) continue;
        if (prev >= 0) s->q[prev].next = e->next;
        else l->head = e->next;
        if (l->tail == i) l->tail = prev;
        if (l->head < 0) R->lists &= (uint8_t)~(1u << w);
        return i;
    }
    return -1;
}

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t extra_bytes(int64_t size) { return size > 1 ? size - 1 : 0; }

/* Posted receives: the oldest in the rank's own slot, the others in its pool list, in order. */
static inline __attribute__((always_inline)) int posted_add(sim_t *s, rank_t *R, int src, int tag, uint32_t h) {
    if (!R->ps_on) {
        R->ps_src = src;
        R->ps_tag = tag;
        R->ps_h = h;
        R->ps_on = 1;
        return 0;
    }
    int32_t e = lts_sim_qalloc(s);
    if (e < 0) return s->failed;
    s->q[e].src = src;
    s->q[e].tag = tag;
    s->q[e].kind = M_POSTED;
    s->q[e].h = h;
    lappend(s, R, L_POSTED, e);
    return 0;
}

/* The first posted receive that a message (src, tag) matches: removed, its handle in *h; 1, or
 * 0 when none matches. */
static inline __attribute__((always_inline)) int posted_match(sim_t *s, rank_t *R, int src, int tag, uint32_t *h) {
    if (!R->ps_on) return 0;
    if ((R->ps_src == LTS_SIM_ANY || R->ps_src == src) && (R->ps_tag == LTS_SIM_ANY || R->ps_tag == tag)) {
        *h = R->ps_h;
        int32_t nx = lpop(s, R, L_POSTED);
        if (nx < 0) { R->ps_on = 0; return 1; }
        R->ps_src = s->q[nx].src;
        R->ps_tag = s->q[nx].tag;
        R->ps_h = s->q[nx].h;
        qfree(s, nx);
        return 1;
    }
    int32_t pr = lmatch(s, R, L_POSTED, src, tag, 1);
    if (pr < 0) return 0;
    *h = s->q[pr].h;
    qfree(s, pr);
    return 1;
}

/* OS noise (engine.c): when `dur` of rank r's work started at `start` ends. */
static inline int64_t busy(const sim_t *s, int r, int64_t start, int64_t dur) {
    if (__builtin_expect(!s->noisy, 1)) return start + dur;   /* a call per operation less */
    return lts_sim_busy_noise(s, r, start, dur);
}

/* When a send of rank R, ready at t, starts: after its CPU is free, the table's delay and its NIC. */
static inline __attribute__((always_inline)) int64_t send_start(sim_t *s, rank_t *R, int64_t t) {
    int64_t t0 = max64(t, R->cpu);
    if (s->o->table) {   /* one draw per send, in the rank's issue order: the injector's sequence */
        int64_t d = (int64_t)s->o->table[lts_inject_next_index(&R->rng)] * 1000;
        t0 += d;
        R->delay += d;
        s->delays++;
        s->delay_sum += d;
    }
    s->messages++;
    return max64(t0, R->nic_s);
}

/* Rank r processes a message of `size` bytes at time t: returns the completion. */
static inline int64_t do_recv(sim_t *s, int r, int64_t size, int64_t t) {
    const lts_sim_params_t *p = &s->o->par;
    rank_t *R = &s->r[r];
    int64_t b = extra_bytes(size);
    int64_t t1 = max64(max64(t, R->cpu), R->nic_r);
    R->nic_r = t1 + p->g + b * p->G;
    R->cpu = busy(s, r, t1, p->o_r + b * p->O);
    return R->cpu;
}

/* The place of a message's event at t in its window's bucket (run_window; NULL: beyond the wheel,
 * or out of memory: lts_sim_push_win). */
static inline ev_t *win_slot(sim_t *s, int64_t t) {
    uint64_t k = (uint64_t)t >> s->wbits;
    if (__builtin_expect(k < s->cur + NB && (k > s->cur || !s->events), 1)) {
        s->hn++;
        s->ring_n++;
        return slot_add(s, &s->ring[k & (NB - 1)]);
    }
    return NULL;   /* beyond the wheel, or an internal error: push_win */
}

/* The same for a narrow event (wev_t): a chunk holds 2 CH of them. */
static inline __attribute__((always_inline)) wev_t *nslot_add(sim_t *s, bslot_t *b) {
    if (__builtin_expect(!b->n || b->fill == 2 * CH, 0) && lts_sim_slot_chunk(s, b)) return NULL;
    b->n++;
    return (wev_t *)s->cev + (size_t)b->tail * 2 * CH + b->fill++;
}
static inline __attribute__((always_inline)) wev_t *nwin_slot(sim_t *s, int64_t t) {
    uint64_t k = (uint64_t)t >> s->wbits;
    if (__builtin_expect(k < s->cur + NB && (k > s->cur || !s->events), 1)) {
        s->hn++;
        s->ring_n++;
        return nslot_add(s, &s->ring[k & (NB - 1)]);
    }
    return NULL;
}
/* A message's narrow event at t in its window's bucket: 1, or 0 when it does not go there (beyond the
 * wheel: push_win; or out of memory, s->failed set). */
static inline __attribute__((always_inline)) int nwin_put(sim_t *s, int64_t t, int dst, int src, int tag) {
    wev_t *y = nwin_slot(s, t);
    if (!y) return 0;
    y->toff = (uint32_t)((uint64_t)t & (((uint64_t)1 << s->wbits) - 1));
    y->dst = (uint32_t)dst;
    y->src = (uint32_t)src;
    y->tag = tag;
    return 1;
}
/* An eager message that must wait in a queue gets a pool entry. */
static inline int32_t msg_entry_f(sim_t *s, int src, int tag, int64_t size, uint32_t arg) {
    int32_t m = lts_sim_qalloc(s);
    if (m < 0) return -1;
    qent_t *e = &s->q[m];
    e->kind = M_EAGER;
    e->h = arg;   /* the send (GOAL: its vertex) */
    e->src = src;
    e->tag = tag;
    e->size = size;
    if (s->cr) {   /* the send's number rides in the size (critical path) */
        e->size = CP_SIZE(size);
        e->h = (uint32_t)((uint64_t)size >> CP_SIZE_BITS);
    }
    return m;
}
static inline int32_t msg_entry(sim_t *s, const ev_t *ev) { return msg_entry_f(s, ev->src, ev->tag, ev->size, EV_ARG(ev->p)); }

#pragma GCC visibility pop

#endif
