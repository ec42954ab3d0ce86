/* The simulator's engine (docs/sim.md "Semantics"): one event queue, per-rank CPU and NIC
 * resources, MPI-style matching, LogGOPS costs (Hoefler et al., LogGOPSim, HPDC 2010, §2-3).
 *
 * A message of s bytes, b = max(s - 1, 0):
 *   send   starts at t0 = max(ready, CPU free) + the table's delay (the injector busy-waits in
 *          the wrapper before the real call, so the CPU is held), then >= NIC free;
 *          CPU busy o_s + b O, NIC busy g + b G, arrival at t0 + o_s + b G + L.
 *   recv   processed at t1 = max(arrival, posted, CPU free, NIC free): CPU busy o_r + b O,
 *          NIC busy g + b G; the receive completes at t1 + o_r + b O.
 *   s > S  rendezvous: a request (o_s, L), the receiver answers when matched (o_r, L), then the
 *          data goes as above; the send completes when its data has left.
 * Generated programs (lts_sim_prog_t) follow MPI's progress rule as latscope's barrier model
 * does (python/latscope/models/barrier_sim.py): an arrived message is processed inside the wait
 * that covers it, in arrival order. GOAL schedules follow LogGOPSim: a posted receive is
 * processed when its message arrives.
 *
 * Memory: per rank one 64-byte rank_t and its queues' heads (24 bytes); in flight, one 32-byte
 * event per message (and a pool entry while it waits in a queue); the chunk pool, the entry pool
 * and the heaps grow by doubling, never one malloc per message.
 *
 * Why one file of over 600 lines (docs/architecture.md): the queue, the rank state, matching and
 * the operations' costs are the inner loop of every event; kept in one translation unit, they are
 * static functions the compiler inlines into it (bench/sim_scale.py measures that loop). Split
 * out are what is not on it: GOAL parsing (goal.c) and the generated programs (programs.c). */
#include "sim.h"
#include "latscope/errors.h"
#include "table.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

static void heap_up(ev_t *h, size_t i) {
    ev_t e = h[i];
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!ev_less(&e, &h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

static void heap_down(ev_t *h, size_t n, size_t i) {
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

static ev_t heap_pop(evvec_t *v) {
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

static int fail(sim_t *s, int code, const char *fmt, ...) {
    if (s->err && s->errlen && !s->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err, s->errlen, fmt, ap);
        va_end(ap);
    }
    s->failed = code;
    return code;
}

static int vput(sim_t *s, evvec_t *v, ev_t e) {
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 64;
        ev_t *ne = realloc(v->e, nc * sizeof *ne);
        if (!ne) return fail(s, LTS_ENOMEM, "out of memory (event queue of %zu events)", nc);
        v->e = ne;
        v->cap = nc;
    }
    v->e[v->n++] = e;
    return 0;
}

static int sort_bucket(sim_t *s, evvec_t *b);
static void hugify(void *p, size_t n);

/* The place of a new event at the end of bucket b (NULL: out of memory, s->failed set): the caller
 * writes the event there, field by field (a 32-byte copy of an event just built on the stack
 * stalled on the store forwarding of its halves). */
static int slot_chunk(sim_t *s, bslot_t *b);
static inline ev_t *slot_add(sim_t *s, bslot_t *b) {
    if (__builtin_expect(!b->n || b->fill == CH, 0) && slot_chunk(s, b)) return NULL;
    b->n++;
    return &s->cev[(size_t)b->tail * CH + b->fill++];
}

/* A new chunk at the end of bucket b. */
static int slot_chunk(sim_t *s, bslot_t *b) {
    uint32_t c = s->cfree;
    if (c != CNONE) {
        s->cfree = s->cnext[c];
    } else {
        if (s->cused == s->ccap) {
            size_t nc = s->ccap ? s->ccap * 2 : 256;
            if (nc >= CNONE) return fail(s, LTS_ENOMEM, "more than 2^32 chunks of events in flight");
            ev_t *ne = realloc(s->cev, nc * CH * sizeof *ne);
            if (ne) s->cev = ne;
            uint32_t *nn = ne ? realloc(s->cnext, nc * sizeof *nn) : NULL;
            if (!nn) return fail(s, LTS_ENOMEM, "out of memory (event queue of %zu events)", nc * CH);
            s->cnext = nn;
            s->ccap = nc;
            if (nc * CH * sizeof *ne >= (8u << 20)) hugify(ne, nc * CH * sizeof *ne);
        }
        c = (uint32_t)s->cused++;
    }
    s->cnext[c] = CNONE;
    if (b->n) s->cnext[b->tail] = c;
    else b->head = c;
    b->tail = c;
    b->fill = 0;
    return 0;
}

static int slot_put(sim_t *s, bslot_t *b, const ev_t *e) {
    ev_t *x = slot_add(s, b);
    if (!x) return s->failed;
    *x = *e;
    return 0;
}

static int push_win(sim_t *s, const ev_t *e);
static ev_t *win_slot(sim_t *s, int64_t t);
static wev_t *nwin_slot(sim_t *s, int64_t t);
static int nwin_put(sim_t *s, int64_t t, int dst, int src, int tag);
static int push_ev(sim_t *s, ev_t e) {
    if (s->win) return push_win(s, &e);
    int64_t t = e.t;
    uint64_t k = (uint64_t)t >> WBITS;
    if (t < s->now)
        return fail(s, LTS_EINVAL, "internal: an event scheduled in the past (%lld < %lld ps)", (long long)t,
                    (long long)s->now);
    if (++s->hn > s->hpeak) s->hpeak = s->hn;
    if (k == s->cur) {
        evvec_t *b = &s->curv;
        if (!s->cur_sorted) {
            if (t == s->cur_t || s->head == b->n) {
                if (s->head == b->n) { b->n = s->head = 0; s->cur_t = t; }
                return vput(s, b, e);
            }
            /* a second time in this bucket: the rest is sorted */
            memmove(b->e, b->e + s->head, (b->n - s->head) * sizeof *b->e);
            b->n -= s->head;
            s->head = 0;
            if (sort_bucket(s, b)) return s->failed;
        }
        if (vput(s, &s->side, e)) return s->failed;
        heap_up(s->side.e, s->side.n - 1);
        return 0;
    }
    if (k < s->cur + NB) {
        s->ring_n++;
        return slot_put(s, &s->ring[k & (NB - 1)], &e);
    }
    if (vput(s, &s->far, e)) return s->failed;
    heap_up(s->far.e, s->far.n - 1);
    return 0;
}

static int push(sim_t *s, int type, int rank, uint32_t arg, int64_t t) {
    ev_t e = {t, EV_MAKE(type, rank, arg), 0, 0, 0};
    return push_ev(s, e);
}

static int ev_cmp(const void *a, const void *b) {
    return ev_less(a, b) ? -1 : ev_less(b, a) ? 1 : 0;
}

/* Sort bucket b (the current one) in (t, payload) order: keys (t mod W, type, rank, index),
 * radix-sorted 8 bits at a time over the digits where they differ (stable: equal keys stay in
 * index order), each run of equal (t, type, rank) then ordered by the rest of the payload, and
 * the events moved to their places (consumed in memory order, the next ranks read ahead from
 * them). A bucket too large for the key's index bits is sorted by qsort instead. */
static int sort_bucket(sim_t *s, evvec_t *b) {
    size_t n = b->n;
    if (2 * n > s->ord_cap) {
        size_t nc = s->ord_cap ? s->ord_cap : 1024;
        while (nc < 2 * n) nc *= 2;
        uint64_t *no = realloc(s->ord_buf, nc * sizeof *no);
        if (!no) return fail(s, LTS_ENOMEM, "out of memory (a bucket of %zu events)", n);
        s->ord_buf = no;
        s->ord_cap = nc;
    }
    if (n > s->alt.cap) {
        size_t nc = s->alt.cap ? s->alt.cap : 1024;
        while (nc < n) nc *= 2;
        free(s->alt.e);
        s->alt.e = malloc(nc * sizeof *s->alt.e);
        s->alt.cap = s->alt.e ? nc : 0;
        if (!s->alt.e) return fail(s, LTS_ENOMEM, "out of memory (a bucket of %zu events)", n);
    }
    uint64_t *a = s->ord_buf, *tmp = s->ord_buf + n;
    const uint64_t omask = ((uint64_t)1 << KEY_IDX_BITS) - 1;
    s->cur_sorted = 1;
    s->head = 0;
    if (n > omask) {
        qsort(b->e, n, sizeof *b->e, ev_cmp);
        return 0;
    }
    uint64_t diff = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t p = b->e[i].p;
        a[i] = ((uint64_t)b->e[i].t << (KEY_IDX_BITS + 32)) | (p >> 62 << (KEY_IDX_BITS + 30)) |
               ((p >> 32 & 0x3fffffff) << KEY_IDX_BITS) | i;
        diff |= a[i] ^ a[0];
    }
    for (int shift = KEY_IDX_BITS; shift < 64; shift += 8) {
        if (!((diff >> shift) & 0xff)) continue;
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++) cnt[(a[i] >> shift) & 0xff]++;
        for (size_t i = 0, sum = 0; i < 256; i++) {
            size_t c = cnt[i];
            cnt[i] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[cnt[(a[i] >> shift) & 0xff]++] = a[i];
        uint64_t *x = a;
        a = tmp;
        tmp = x;
    }
    for (size_t i = 1; i < n; i++)   /* ties of (t, type, rank): by the rest of the payload */
        if ((a[i] ^ a[i - 1]) >> KEY_IDX_BITS == 0) {
            uint64_t k = a[i];
            size_t j = i;
            for (; j > 0 && (a[j - 1] ^ k) >> KEY_IDX_BITS == 0 &&
                   ev_less(&b->e[k & omask], &b->e[a[j - 1] & omask]);
                 j--)
                a[j] = a[j - 1];
            a[j] = k;
        }
    for (size_t i = 0; i < n; i++) s->alt.e[i] = b->e[a[i] & omask];
    evvec_t x = *b;
    b->e = s->alt.e;
    b->cap = s->alt.cap;
    s->alt.e = x.e;
    s->alt.cap = x.cap;
    for (size_t i = 0; i < n && i < PREFETCH_AHEAD; i++) PREFETCH_RANK(s, EV_RANK(b->e[i].p));
    return 0;
}

/* Make bucket s->cur current: far events now within the wheel join it, its events form a FIFO
 * (one time) or are sorted. */
static void enter_bucket(sim_t *s) {
    while (s->far.n && ((uint64_t)s->far.e[0].t >> WBITS) < s->cur + NB) {
        ev_t e = heap_pop(&s->far);
        uint64_t k = (uint64_t)e.t >> WBITS;
        if (slot_put(s, &s->ring[k & (NB - 1)], &e)) return;
        s->ring_n++;
    }
    bslot_t *sl = &s->ring[s->cur & (NB - 1)];
    evvec_t *b = &s->curv;
    s->ring_n -= sl->n;
    s->head = 0;
    s->cur_sorted = 0;
    b->n = 0;
    if (!sl->n) return;
    if (sl->n > b->cap) {
        size_t nc = b->cap ? b->cap : 1024;
        while (nc < sl->n) nc *= 2;
        free(b->e);
        b->e = malloc(nc * sizeof *b->e);
        if (!b->e) { b->cap = 0; fail(s, LTS_ENOMEM, "out of memory (a bucket of %u events)", sl->n); return; }
        b->cap = nc;
    }
    for (uint32_t c = sl->head, left = sl->n; left;) {   /* out of the chunks, which go back to the pool */
        uint32_t take = left < CH ? left : CH, nx = s->cnext[c];
        memcpy(b->e + b->n, s->cev + (size_t)c * CH, take * sizeof *b->e);
        b->n += take;
        left -= take;
        s->cnext[c] = s->cfree;
        s->cfree = c;
        c = nx;
    }
    sl->n = 0;
    s->cur_t = b->e[0].t;
    for (size_t i = 1; i < b->n; i++)
        if (b->e[i].t != s->cur_t) {
            sort_bucket(s, b);
            return;
        }
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

/* the earliest event (s->hn > 0); a failed reallocation sets s->failed */
static ev_t pop(sim_t *s) {
    for (;;) {
        evvec_t *b = &s->curv;
        /* the rank of an event PREFETCH_AHEAD ahead is fetched while this one is processed: once
         * delays spread the times, ranks come in no order and this miss was most of the time per
         * event */
        /* a FIFO, or sorted with the events scheduled into it since (side, sorted mode only) */
        if (s->head < b->n || s->side.n) {
            s->hn--;
            if (s->side.n && (s->head == b->n || ev_less(&s->side.e[0], &b->e[s->head]))) return heap_pop(&s->side);
            if (s->head + PREFETCH_AHEAD < b->n) PREFETCH_RANK(s, EV_RANK(b->e[s->head + PREFETCH_AHEAD].p));
            if (s->head + PREFETCH_AHEAD / 2 < b->n) prefetch_lists(s, EV_RANK(b->e[s->head + PREFETCH_AHEAD / 2].p));
            return b->e[s->head++];
        }
        b->n = 0;
        /* the next bucket; with the wheel empty, straight to the first far event's */
        s->cur = s->ring_n ? s->cur + 1 : (uint64_t)s->far.e[0].t >> WBITS;
        enter_bucket(s);
        if (s->failed) return (ev_t){0, 0, 0, 0, 0};
    }
}

/* Large arrays on transparent huge pages where the kernel allows it: the ranks are visited in
 * no order once delays spread the times, and a TLB miss per visit doubled the cost. */
static void hugify(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1), e = (uintptr_t)p + n;
    if (e > a + (2u << 20)) madvise((void *)a, (e - a) & ~(uintptr_t)((2u << 20) - 1), MADV_HUGEPAGE);
#else
    (void)p; (void)n;
#endif
}

static int32_t qalloc(sim_t *s) {
    if (s->qfree >= 0) {
        int32_t i = s->qfree;
        s->qfree = s->q[i].next;
        return i;
    }
    if (s->qn == s->qcap) {
        size_t nc = s->qcap ? s->qcap * 2 : 1024;
        if (nc > INT32_MAX) { fail(s, LTS_ENOMEM, "more than 2^31 messages in flight"); return -1; }
        qent_t *nq = realloc(s->q, nc * sizeof *nq);
        if (!nq) { fail(s, LTS_ENOMEM, "out of memory (%zu messages in flight)", nc); return -1; }
        s->q = nq;
        s->qcap = nc;
        if (nc * sizeof *nq >= (8u << 20)) hugify(nq, nc * sizeof *nq);
    }
    return (int32_t)s->qn++;
}

static void qfree(sim_t *s, int32_t i) { s->q[i].next = s->qfree; s->qfree = i; }

static inline list_t *rlist(sim_t *s, const rank_t *R, int w) { return &s->rl[(size_t)(R - s->r) * 3 + (size_t)w]; }

/* Append pool entry i to rank R's queue w. */
static void lappend(sim_t *s, rank_t *R, int w, int32_t i) {
    list_t *l = rlist(s, R, w);
    s->q[i].next = -1;
    if (R->lists & (1u << w)) s->q[l->tail].next = i;
    else l->head = i;
    l->tail = i;
    R->lists |= (uint8_t)(1u << w);
}

static int32_t lpop(sim_t *s, rank_t *R, int w) {
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
static int32_t lmatch(sim_t *s, rank_t *R, int w, int src, int tag, int recv_side_wild) {
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
    int32_t e = qalloc(s);
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

/* ---- LogGOPS costs ---------------------------------------------------------------------- */

/* OS noise (the detours of LogGOPSim's noise model; Hoefler, Schneider & Lumsdaine, SC10): every
 * noise_period the rank's CPU is taken for noise_detour, from a phase of the rank's own (a hash of
 * the seed and the rank, not the table's stream: the injector's draws stay as they are). Work
 * that would start inside a detour starts at its end; work that reaches a detour's start is
 * stretched by it. Returns when `dur` of work started at `start` ends. */
/* rank r's noise phase in [0, T): a hash of the seed and the rank, not the table's stream */
static inline int64_t noise_phase(const sim_t *s, int r, int64_t T) {
    return (int64_t)(lts_inject_splitmix64(s->o->seed ^ 0x6e6f6973652d3031ULL ^ ((uint64_t)(uint32_t)r << 21)) % (uint64_t)T);
}
static int64_t busy_trace(const sim_t *s, int r, int64_t start, int64_t dur);
static int64_t busy_noise(const sim_t *s, int r, int64_t start, int64_t dur);
static inline int64_t busy(const sim_t *s, int r, int64_t start, int64_t dur) {
    if (__builtin_expect(!s->noisy, 1)) return start + dur;   /* a call per operation less */
    return busy_noise(s, r, start, dur);
}
static int64_t busy_noise(const sim_t *s, int r, int64_t start, int64_t dur) {
    int64_t T = s->o->noise_period, d = s->o->noise_detour;
    if (s->nz_free) return busy_trace(s, r, start, dur);
    if (T <= 0 || d <= 0) return start + dur;
    int64_t ph = noise_phase(s, r, T);
    int64_t k = start - ph;
    k = k >= 0 ? k / T : -((-k + T - 1) / T);
    int64_t ds = ph + k * T;   /* the last detour to start at or before `start` */
    if (start < ds + d) start = ds + d;
    for (int64_t t = start, left = dur;;) {
        int64_t nd = ds + T;
        if (t + left <= nd) return t + left;
        left -= nd - t;
        t = nd + d;
        ds = nd;
    }
}

/* The same from a noise trace (lts_sim_noise_t, src/sim/noise.c): detour i of cycle k takes the
 * CPU over [ph + k span + start_i, ... + dur_i), ph the rank's phase, drawn as for periodic noise
 * (a trace of one detour at 0 every span is the periodic noise exactly). Work longer than a cycle's
 * free time skips whole cycles: from any point outside a detour, one span later is the same point
 * of the trace, with exactly the span's free time done in between. */
static int64_t busy_trace(const sim_t *s, int r, int64_t start, int64_t dur) {
    const lts_sim_noise_t *nz = s->o->noise_trace;
    const int64_t *det = nz->det, span = nz->span;
    size_t n = nz->n;
    int64_t ph = noise_phase(s, r, span);
    int64_t u = start - ph;
    int64_t k = u >= 0 ? u / span : -((-u + span - 1) / span);
    int64_t base = ph + k * span, x = u - k * span;   /* start = base + x, 0 <= x < span */
    size_t lo = 0, hi = n;   /* j: the first detour starting after x */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (det[2 * mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    size_t j = lo;
    if (j > 0 && x < det[2 * (j - 1)] + det[2 * (j - 1) + 1]) x = det[2 * (j - 1)] + det[2 * (j - 1) + 1];
    int64_t left = dur;
    if (left > s->nz_free) {
        int64_t cycles = (left - 1) / s->nz_free;
        base += cycles * span;
        left -= cycles * s->nz_free;
    }
    for (;;) {
        if (j == n) { j = 0; base += span; x -= span; }
        int64_t ns = det[2 * j];
        if (x + left <= ns) return base + x + left;
        if (x < ns) left -= ns - x;
        x = ns + det[2 * j + 1];
        j++;
    }
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

/* Issue a send from rank r at time t (>= now). Returns the pool entry (-1 on error); *start is
 * when it started, *done its local completion (eager) or -1 (rendezvous: when the data leaves). */
static int32_t do_send(sim_t *s, int r, int64_t t, int dst, int tag, int64_t size, uint32_t handle, int64_t *start,
                       int64_t *done) {
    const lts_sim_params_t *p = &s->o->par;
    rank_t *R = &s->r[r];
    int64_t t0 = send_start(s, R, t);
    *start = t0;
    int64_t b = extra_bytes(size);
    if (size <= p->S) {
        int64_t os_end = busy(s, r, t0, p->o_s);
        R->cpu = b * p->O != 0 ? busy(s, r, t0, p->o_s + b * p->O) : os_end;
        R->nic_s = t0 + p->g + b * p->G;
        *done = R->cpu;
        int64_t ta = os_end + b * p->G + p->L;
        if (s->narrow && nwin_put(s, ta, dst, r, tag)) return 0;
        ev_t *x = s->win && !s->narrow ? win_slot(s, ta) : NULL;
        if (x) {   /* written in its place (slot_add) */
            x->t = ta;
            x->p = EV_MAKE(EV_MSG, dst, handle);
            x->size = size | (int64_t)s->cp_bits;
            x->src = r;
            x->tag = tag;
            return 0;
        }
        if (s->failed) return -1;
        ev_t ev = {ta, EV_MAKE(EV_MSG, dst, handle), size | (int64_t)s->cp_bits, r, tag};
        return push_ev(s, ev) ? -1 : 0;
    }
    int32_t m = qalloc(s);
    if (m < 0) return -1;
    qent_t *e = &s->q[m];
    e->size = size;
    e->src = r;
    e->dst = dst;
    e->tag = tag;
    e->h = handle;
    e->h2 = 0;
    e->kind = M_RTS;
    R->cpu = busy(s, r, t0, p->o_s);
    R->nic_s = t0 + p->g;
    *done = -1;
    return push(s, EV_ARRIVE, dst, (uint32_t)m, R->cpu + p->L) ? -1 : m;
}

/* Rank r processes a message of `size` bytes at time t: returns the completion. */
static int64_t do_recv(sim_t *s, int r, int64_t size, int64_t t) {
    const lts_sim_params_t *p = &s->o->par;
    rank_t *R = &s->r[r];
    int64_t b = extra_bytes(size);
    int64_t t1 = max64(max64(t, R->cpu), R->nic_r);
    R->nic_r = t1 + p->g + b * p->G;
    R->cpu = busy(s, r, t1, p->o_r + b * p->O);
    return R->cpu;
}

/* A matched rendezvous request at rank r: answer it (o_r), the answer reaches the sender L later. */
static int do_rts(sim_t *s, int r, int32_t m, uint32_t recv_handle, int64_t t) {
    const lts_sim_params_t *p = &s->o->par;
    rank_t *R = &s->r[r];
    int64_t t1 = max64(max64(t, R->cpu), R->nic_r);
    R->cpu = busy(s, r, t1, p->o_r);
    R->nic_r = t1 + p->g;
    s->q[m].h2 = recv_handle;
    return push(s, EV_CTS, s->q[m].src, (uint32_t)m, R->cpu + p->L);
}

/* The answer reached the sender: the data leaves. Returns the send's completion (or -1). */
static int64_t do_cts(sim_t *s, int r, int32_t m) {
    const lts_sim_params_t *p = &s->o->par;
    rank_t *R = &s->r[r];
    qent_t *e = &s->q[m];
    int64_t b = extra_bytes(e->size);
    int64_t t0 = max64(max64(s->now, R->cpu), R->nic_s);
    int64_t os_end = busy(s, r, t0, p->o_s);
    R->cpu = b * p->O != 0 ? busy(s, r, t0, p->o_s + b * p->O) : os_end;
    R->nic_s = t0 + p->g + b * p->G;
    e->kind = M_DATA;
    if (push(s, EV_ARRIVE, e->dst, (uint32_t)m, os_end + b * p->G + p->L)) return -1;
    return R->cpu;
}

static int init_common(sim_t *s, int P, const lts_sim_opts_t *o, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->o = o;
    s->P = P;
    s->err = err;
    s->errlen = errlen;
    s->qfree = -1;
    s->cfree = CNONE;
    if (err && errlen) err[0] = '\0';
    const lts_sim_params_t *p = &o->par;
    if (P < 1 || P > LTS_SIM_MAX_RANKS) return fail(s, LTS_EINVAL, "P = %d: must be 1..%d", P, LTS_SIM_MAX_RANKS);
    if (p->L < 0 || p->o_s < 0 || p->o_r < 0 || p->g < 0 || p->G < 0 || p->O < 0 || p->S < 0)
        return fail(s, LTS_EINVAL, "LogGOPS parameters must be >= 0 (L, o, g, G, O, S)");
    if (o->noise_period < 0 || o->noise_detour < 0 || (o->noise_detour > 0 && o->noise_detour >= o->noise_period))
        return fail(s, LTS_EINVAL, "noise: the detour (%lld ps) must be >= 0 and shorter than the period (%lld ps)",
                    (long long)o->noise_detour, (long long)o->noise_period);
    if (o->noise_trace && o->noise_trace->n) {
        const lts_sim_noise_t *nz = o->noise_trace;
        if (o->noise_period > 0 && o->noise_detour > 0)
            return fail(s, LTS_EINVAL, "noise: give a period and detour, or a trace, not both");
        s->nz_free = nz->span;
        for (size_t i = 0; i < nz->n; i++) s->nz_free -= nz->det[2 * i + 1];
        if (s->nz_free <= 0) return fail(s, LTS_EINVAL, "noise trace: the detours fill the whole span");
    }
    s->noisy = s->nz_free > 0 || (o->noise_period > 0 && o->noise_detour > 0);
    /* the ranks' lines straight from the kernel, already zero (page-aligned, so 64-byte aligned): a
     * memset after posix_memalign wrote the 64 MiB of 2^20 ranks a second time (3 % of the run) */
    s->r_bytes = (size_t)P * sizeof *s->r;
    void *rp = mmap(NULL, s->r_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (rp != MAP_FAILED) {
        s->r = rp;
        hugify(s->r, s->r_bytes);
    }
    s->rl = malloc((size_t)P * 3 * sizeof *s->rl);   /* read only where a bit of rank_t.lists says */
    if (s->rl) hugify(s->rl, (size_t)P * 3 * sizeof *s->rl);
    s->fin = calloc((size_t)P, sizeof *s->fin);
    if (s->fin) hugify(s->fin, (size_t)P * sizeof *s->fin);
    s->ring = calloc(NB, sizeof *s->ring);
    s->dl = o->table ? calloc((size_t)P, sizeof *s->dl) : NULL;
    /* the chunk pool, reserved for about one event in flight per rank before anything is written
     * to it: pages touched before the madvise would stay small (growing it later moves them) */
    size_t chunks = (size_t)P / CH * 2;
    chunks = chunks < 256 ? 256 : chunks > ((size_t)1 << 20) ? (size_t)1 << 20 : chunks;
    s->cev = malloc(chunks * CH * sizeof *s->cev);
    s->cnext = malloc(chunks * sizeof *s->cnext);
    if (s->cev && s->cnext) {
        s->ccap = chunks;
        hugify(s->cev, chunks * CH * sizeof *s->cev);
    }
    if (!s->r || !s->rl || !s->fin || !s->ring || (o->table && !s->dl)) return fail(s, LTS_ENOMEM, "out of memory (%d ranks)", P);
    for (int i = 0; i < P; i++) {
        rank_t *R = &s->r[i];
        /* thread 0's stream: what the injector's first thread on rank i draws from */
        R->rng = lts_inject_stream_init(o->seed, i, 0);
    }
    return 0;
}

static void finish_common(sim_t *s, lts_sim_result_t *res, size_t extra_bytes_used) {
    res->P = s->P;
    res->finish = s->fin;
    s->fin = NULL;
    if (s->dl)
        for (int i = 0; i < s->P; i++) s->dl[i] = s->r[i].delay;
    res->delay_ps = s->dl;
    s->dl = NULL;
    res->events = s->events;
    res->messages = s->messages;
    res->delays = s->delays;
    res->delay_sum = s->delay_sum;
    size_t ev_bytes = NB * sizeof(bslot_t) + (s->far.cap + s->side.cap) * sizeof(ev_t) + s->ord_cap * sizeof(uint64_t) + s->alt.cap * sizeof(ev_t);
    ev_bytes += (s->curv.cap + s->cused * CH) * sizeof(ev_t) + s->cused * sizeof(uint32_t);   /* chunks used */
    res->peak_bytes = (size_t)s->P * (sizeof(rank_t) + 3 * sizeof(list_t) + sizeof(int64_t) * (s->o->table ? 2 : 1)) + ev_bytes + s->qcap * sizeof(qent_t) +
                      extra_bytes_used;
}

static void free_common(sim_t *s) {
    if (s->r) munmap(s->r, s->r_bytes);
    free(s->rl);
    free(s->fin);
    free(s->dl);
    free(s->ring);
    free(s->curv.e);
    free(s->cev);
    free(s->cnext);
    free(s->far.e);
    free(s->side.e);
    free(s->ord_buf);
    free(s->alt.e);
    free(s->q);
    free(s->vstate);
    free(s->vleft);
    free(s->vready);
    free(s->vstart);
    free(s->vend);
    free(s->vcause);
    free(s->lastv);
    free(s->cr);
    free(s->cq);
}

void lts_sim_result_free(lts_sim_result_t *r) {
    if (r) {
        free(r->finish);
        free(r->delay_ps);
        free(r->cp);
        r->finish = r->delay_ps = NULL;
        r->cp = NULL;
    }
}

/* The next event, the clock moved to it: 1, 0 when none is left, or a negative code. */
static int next_event(sim_t *s, ev_t *e) {
    if (!s->hn) return 0;
    *e = pop(s);
    if (s->failed) return s->failed;
    if (e->t < s->now)
        return fail(s, LTS_EINVAL, "internal: event queue out of order (%lld < %lld ps)", (long long)e->t,
                    (long long)s->now);
    s->now = e->t;
    s->events++;
    return 1;
}

/* ---- generated programs ------------------------------------------------------------------ */

static const char *op_name(int kind) {
    switch (kind) {
    case LTS_SIM_SEND: return "send";
    case LTS_SIM_IRECV: return "recv";
    case LTS_SIM_WAIT: return "wait";
    case LTS_SIM_CALC: return "calc";
    case LTS_SIM_FLAG_SET: return "flag store";
    case LTS_SIM_FLAG_WAIT: return "flag wait";
    default: return "end";
    }
}

/* A record for rank r's operation pc (critical path), its start and end, and what decided its start. */
static uint32_t cp_rec(sim_t *s, int r, uint32_t pc, int64_t start, int64_t end, uint32_t cause) {
    if (s->crn == s->crcap) {
        size_t nc = s->crcap * 2;
        cprec_t *n = nc < CP_MSG ? realloc(s->cr, nc * sizeof *n) : NULL;
        if (!n) { fail(s, LTS_ENOMEM, "out of memory (critical path: %zu operations)", nc); return CP_NONE; }
        s->cr = n;
        s->crcap = nc;
    }
    uint32_t i = (uint32_t)s->crn++;
    s->cr[i] = (cprec_t){start, end, cause, CP_NONE, s->cq[r].head, pc};
    s->cq[r].head = i;
    s->cq[r].head_start = start;
    return i;
}

/* What decided when a send or calc of rank r started (at `start`, the rank ready at t): the
 * operation that held its CPU/NIC when that delayed it (or a table's delay: the CPU's last user, as
 * the GOAL engine's v_cpu), else the one whose end made the rank ready. */
static uint32_t cp_cpu_cause(const sim_t *s, int r, int64_t t, int64_t start) {
    if (start > t && s->cq[r].lastcpu != CP_NONE) return s->cq[r].lastcpu;
    return s->cq[r].tc;
}

/* Receive c of rank r processed at t1, ending at `end`, its message arrived at `arr` (-1: it was
 * there when c was posted): its end cause, as the GOAL engine's v_recv. */
static void cp_recv(sim_t *s, int r, uint32_t c, int64_t t1, int64_t arr, uint32_t seq, int64_t end) {
    cprec_t *x = &s->cr[c];
    if ((arr >= 0 ? t1 > arr : t1 > x->start) && s->cq[r].lastcpu != CP_NONE) x->ecause = s->cq[r].lastcpu;
    else if (arr >= 0) x->ecause = CP_MSG | (seq & CP_SEQ_MASK);
    x->end = end;
    s->cq[r].lastcpu = c;
}

/* Process rank r's matched messages in arrival order (inside a wait), from time t on. */
static int64_t drain_ready(sim_t *s, int r, int64_t t) {
    rank_t *R = &s->r[r];
    int32_t m;
    while ((m = lpop(s, R, L_READY)) >= 0) {
        int64_t t1 = max64(max64(t, R->cpu), R->nic_r), done = do_recv(s, r, s->q[m].size, t);
        if (s->cr) {
            cp_recv(s, r, s->q[m].h2, t1, -1, 0, done);
            if (done > t && done > 0) s->cq[r].tc = s->q[m].h2;
        }
        t = max64(t, done);
        qfree(s, m);
        R->outstanding--;
    }
    return t;
}

/* Run rank r from time t (>= now) until it blocks, ends, or must wait for the clock. `fast` (a
 * constant at each call): a run of narrow windows without noise (sim_t.narrow, !noisy), where every
 * message is eager and of 0 bytes and no critical path is kept, so a send's and a receive's costs
 * are sums of the parameters (do_send with b = 0, busy without detours): the compiler makes that
 * copy without the general case's work, a quarter fewer instructions per event. */
static inline __attribute__((always_inline)) int run_rank_g(sim_t *s, int r, int64_t t, const int fast) {
    rank_t *R = &s->r[r];
    const lts_sim_prog_t *pg = s->prog;
    R->state = R_RUN;
    lts_sim_op_t buf[4];   /* the next operations (pg->ops), buf[ib .. nb) */
    int ib = 0, nb = 0;
    for (;;) {
        if (ib == nb) {
            ib = 0;
            if (pg->ops) nb = pg->ops(pg, r, R->pc, buf, 4);
            else { pg->op(pg, r, R->pc, buf); nb = 1; }
        }
        /* the fields one by one (volatile): the program wrote them as four stores, and one load of
         * two of them waited for the stores to reach the cache (no store forwarding) */
        const volatile lts_sim_op_t *vo = &buf[ib++];
        const int op_kind = vo->kind, op_peer = vo->peer, op_tag = vo->tag;
        const int64_t op_size = vo->size;
        switch (op_kind) {
        case LTS_SIM_END:
            R->state = R_DONE;
            s->fin[r] = max64(t, R->cpu);
            return 0;
        case LTS_SIM_SEND: {
            if (t > s->now && !s->ahead) return push(s, EV_READY, r, 0, t);   /* the CPU in time order */
            if (op_peer < 0 || op_peer >= s->P)
                return fail(s, LTS_EINVAL, "%s: rank %d, operation %u: send to rank %d (valid: 0..%d)", pg->name, r,
                            R->pc, op_peer, s->P - 1);
            int64_t st, done;
            if (fast) {   /* do_send's eager case at b = 0 without noise */
                const lts_sim_params_t *p = &s->o->par;
                const int64_t t0 = send_start(s, R, t);
                R->cpu = t0 + p->o_s;
                R->nic_s = t0 + p->g;
                const int64_t ta = R->cpu + p->L;
                if (!nwin_put(s, ta, op_peer, r, op_tag)) {
                    if (s->failed) return s->failed;
                    ev_t ev = {ta, EV_MAKE(EV_MSG, op_peer, (uint32_t)r), 0, r, op_tag};
                    if (push_win(s, &ev)) return s->failed;
                }
                R->pc++;
                t = R->cpu;
                break;
            }
            if (s->cr) s->cp_bits = (uint64_t)(s->cq[r].nsend & CP_SEQ_MASK) << CP_SIZE_BITS;
            if (do_send(s, r, t, op_peer, op_tag, op_size, (uint32_t)r, &st, &done) < 0) return s->failed;
            if (s->cr) {
                uint32_t c = cp_rec(s, r, R->pc, st, done, cp_cpu_cause(s, r, t, st));
                if (c == CP_NONE) return s->failed;
                s->cq[r].lastcpu = c;
                if (done > 0) s->cq[r].tc = c;
                s->cq[r].nsend++;
            }
            R->pc++;
            if (done < 0) { R->state = R_SEND; return 0; }
            t = done;
            break;
        }
        case LTS_SIM_CALC:
            if (t > s->now && !s->ahead) return push(s, EV_READY, r, 0, t);
            int64_t st = max64(t, R->cpu), t0 = t;
            t = busy(s, r, st, op_size);
            R->cpu = t;
            if (s->cr) {
                uint32_t c = cp_rec(s, r, R->pc, st, t, cp_cpu_cause(s, r, t0, st));
                if (c == CP_NONE) return s->failed;
                s->cq[r].lastcpu = c;
                if (t > 0) s->cq[r].tc = c;
            }
            R->pc++;
            break;
        case LTS_SIM_IRECV: {
            /* posting costs nothing; a message already here is matched now. Its record (critical
             * path) starts when the operation before it started, as the GOAL text's irequires says
             * (lts_sim_prog_write_goal) */
            uint32_t h = R->pc;
            if (s->cr) {
                uint32_t pv = s->cq[r].head;
                int64_t ps = pv == CP_NONE ? 0 : s->cq[r].head_start;
                h = cp_rec(s, r, R->pc, ps, -1, pv != CP_NONE && ps > 0 ? pv | LTS_GOAL_IREQ : CP_NONE);
                if (h == CP_NONE) return s->failed;
            }
            /* the queue's bit tested here: most receives find it empty, and the call cost more than the test */
            int32_t m = R->lists & (1u << L_UNEXP) ? lmatch(s, R, L_UNEXP, op_peer, op_tag, 0) : -1;
            if (m >= 0) {
                if (s->q[m].kind == M_RTS) {
                    if (do_rts(s, r, m, (uint32_t)r, t)) return s->failed;
                } else {
                    s->q[m].h2 = h;
                    lappend(s, R, L_READY, m);
                }
            } else if (posted_add(s, R, op_peer, op_tag, h)) {
                return s->failed;
            }
            R->outstanding++;
            R->pc++;
            break;
        }
        case LTS_SIM_WAIT:
            if (R->lists & (1u << L_READY)) t = drain_ready(s, r, t);
            if (R->outstanding) { R->state = R_WAIT; return 0; }
            R->pc++;
            break;
        case LTS_SIM_FLAG_SET:
        case LTS_SIM_FLAG_WAIT:
            if (s->cr)
                return fail(s, LTS_ENOTSUP, "critical path: %s releases the ranks by a shared-memory flag, which the "
                            "critical path does not follow", pg->name);
            if (op_kind == LTS_SIM_FLAG_WAIT) {
                if (!s->flag_on) { R->state = R_FLAG; return 0; }
                t = max64(t, s->flag_t);
                R->pc++;
                break;
            }
            /* a store: no CPU time, no NIC; every rank spinning on the flag sees it L later (the
             * set happens once per schedule, so waking them by one scan costs O(P) once) */
            if (s->flag_on)
                return fail(s, LTS_EINVAL, "%s: rank %d, operation %u: the flag is stored twice", pg->name, r, R->pc);
            s->flag_on = 1;
            s->flag_t = max64(t, R->cpu) + s->o->par.L;
            for (int q = 0; q < s->P; q++)
                if (s->r[q].state == R_FLAG && push(s, EV_READY, q, 0, s->flag_t)) return s->failed;
            R->pc++;
            break;
        default:
            return fail(s, LTS_EINVAL, "%s: rank %d, operation %u: unknown operation %d", pg->name, r, R->pc, op_kind);
        }
    }
}

static int run_rank(sim_t *s, int r, int64_t t) { return run_rank_g(s, r, t, 0); }
static int run_rank_fast(sim_t *s, int r, int64_t t) { return run_rank_g(s, r, t, 1); }

/* An eager message that must wait in a queue gets a pool entry. */
static int32_t msg_entry_f(sim_t *s, int src, int tag, int64_t size, uint32_t arg) {
    int32_t m = qalloc(s);
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
static int32_t msg_entry(sim_t *s, const ev_t *ev) { return msg_entry_f(s, ev->src, ev->tag, ev->size, EV_ARG(ev->p)); }

/* An eager message reaches rank r: a rank waiting for it processes it at once (its ready list is
 * empty: drained when it began to wait); else it queues, matched (ready) or not (unexpected). */
static inline __attribute__((always_inline)) int prog_msg_g(sim_t *s, int r, int src, int tag, int64_t evsize,
                                                             uint32_t arg, const int fast) {
    rank_t *R = &s->r[r];
    uint32_t h;
    int matched = posted_match(s, R, src, tag, &h);
    if (matched && R->state == R_WAIT) {
        int64_t size = s->cr ? CP_SIZE(evsize) : evsize, t1 = max64(max64(s->now, R->cpu), R->nic_r);
        if (fast) {   /* do_recv at b = 0 without noise (run_rank_g) */
            R->nic_r = t1 + s->o->par.g;
            R->cpu = t1 + s->o->par.o_r;
            if (--R->outstanding) return 0;
            R->state = R_RUN;
            R->pc++;
            return run_rank_fast(s, r, R->cpu);
        }
        int64_t t = do_recv(s, r, size, s->now);
        if (s->cr) {
            cp_recv(s, r, h, t1, s->now, (uint32_t)((uint64_t)evsize >> CP_SIZE_BITS), t);
            if (t > 0) s->cq[r].tc = h;
        }
        if (--R->outstanding) return 0;
        R->state = R_RUN;
        R->pc++;
        return s->ahead ? run_rank(s, r, t) : push(s, EV_READY, r, 0, t);
    }
    int32_t m = msg_entry_f(s, src, tag, evsize, arg);
    if (m < 0) return s->failed;
    if (matched) s->q[m].h2 = h;
    lappend(s, R, matched ? L_READY : L_UNEXP, m);
    return 0;
}
static int prog_msg(sim_t *s, int r, int src, int tag, int64_t evsize, uint32_t arg) {
    return prog_msg_g(s, r, src, tag, evsize, arg, 0);
}

static int prog_arrive(sim_t *s, int r, int32_t m) {
    rank_t *R = &s->r[r];
    qent_t *e = &s->q[m];
    if (e->kind == M_DATA) {
        lappend(s, R, L_READY, m);
    } else {
        uint32_t h;
        if (!posted_match(s, R, e->src, e->tag, &h)) { lappend(s, R, L_UNEXP, m); return 0; }
        if (e->kind == M_RTS) return do_rts(s, r, m, (uint32_t)r, s->now);
        lappend(s, R, L_READY, m);
    }
    if (R->state == R_WAIT) {
        int64_t t = drain_ready(s, r, s->now);
        if (!R->outstanding) {
            R->state = R_RUN;
            R->pc++;
            return s->ahead ? run_rank(s, r, t) : push(s, EV_READY, r, 0, t);
        }
    }
    return 0;
}

/* ---- windows in rank order (generated schedules, every message eager, o_s + L >= 16 ns) ------
 * Conservative lookahead (Chandy & Misra 1979): a message sent at t arrives no earlier than
 * t + o_s + L (do_send: o_s + b G + L after its start, noise only stretching o_s), and in run-ahead
 * mode (lts_sim_run_prog) an eager message's arrival is the only event, so processing an event at
 * t >= k W creates none before k W + o_s + L >= (k + 1) W when W <= o_s + L. The events of window k,
 * [k W, (k + 1) W), are therefore all known when it starts, and no rank's state is read or written
 * by another rank's event: each rank sees its own events of the window in the engine's order
 * (time, type, payload; the timing wheel's, above) and the result is the time-ordered run's, byte
 * for byte, whatever order the ranks take. They are taken in rank order: once a table spreads the
 * times, the time order visits the 2^20 ranks' state and appends to ~64 Ki buckets at random
 * (docs/sim.md "Scale": the misses were the run); in rank order the state streams and the new
 * events go to the few windows L + o + a draw ahead. A window whose events share one instant (a
 * lock-step schedule) keeps its arrival order, as the wheel's FIFO does. W is the largest power of
 * two <= o_s + L; windows live in the wheel's buckets (ring, NB of them, later ones in the far heap). */
static ev_t *win_slot(sim_t *s, int64_t t) {
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
    if (__builtin_expect(!b->n || b->fill == 2 * CH, 0) && slot_chunk(s, b)) return NULL;
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
/* An eager message's event (from the far heap) as a narrow one at the end of bucket b. */
static int nslot_put(sim_t *s, bslot_t *b, const ev_t *e) {
    wev_t *y = nslot_add(s, b);
    if (!y) return s->failed;
    *y = (wev_t){(uint32_t)((uint64_t)e->t & (((uint64_t)1 << s->wbits) - 1)), (uint32_t)EV_RANK(e->p), (uint32_t)e->src,
                 e->tag};
    return 0;
}

static int push_win(sim_t *s, const ev_t *e) {
    uint64_t k = (uint64_t)e->t >> s->wbits;
    if (k <= s->cur && s->events)
        return fail(s, LTS_EINVAL, "internal: an event inside the current window (%lld ps)", (long long)e->t);
    if (s->narrow && EV_TYPE(e->p) != EV_MSG)
        return fail(s, LTS_EINVAL, "internal: event type %d in a window", EV_TYPE(e->p));
    s->hn++;
    if (k < s->cur + NB) {
        s->ring_n++;
        return s->narrow ? nslot_put(s, &s->ring[k & (NB - 1)], e) : slot_put(s, &s->ring[k & (NB - 1)], e);
    }
    if (vput(s, &s->far, *e)) return s->failed;
    heap_up(s->far.e, s->far.n - 1);
    return 0;
}

/* Grow v to hold n events (its contents are not kept). */
static int win_buf(sim_t *s, evvec_t *v, size_t n) {
    if (n <= v->cap) return 0;
    size_t nc = v->cap ? v->cap : 1024;
    while (nc < n) nc *= 2;
    free(v->e);
    /* on huge pages from 2 MiB on (aligned to one): the sort scatters over the whole buffer */
    size_t bytes = nc * sizeof *v->e;
    void *m = NULL;
    if (bytes < (2u << 20) ? !(m = malloc(bytes)) : posix_memalign(&m, 2u << 20, bytes) != 0) m = NULL;
    v->e = m;
    v->cap = v->e ? nc : 0;
    if (!v->e) return fail(s, LTS_ENOMEM, "out of memory (a window of %zu events)", n);
    if (bytes >= (2u << 20)) hugify(v->e, bytes);
    return 0;
}

/* Event i of a window's array or chunk, narrow (wev_t) or not: its rank; whether event a precedes
 * event b of the same rank in the engine's order ((time, payload); narrow: (toff, sender)). */
#define WEV_RANK(nar, base, i) ((nar) ? ((const wev_t *)(base))[i].dst : (uint32_t)EV_RANK(((const ev_t *)(base))[i].p))
static inline __attribute__((always_inline)) int wev_lt(const int nar, const void *a, const void *b) {
    if (!nar) return ev_less(a, b);
    const wev_t *x = a, *y = b;
    return x->toff < y->toff || (x->toff == y->toff && x->src < y->src);
}

/* The next window with events into curv, in processing order: 1, 0 when none is left, or a
 * negative code. Its events are sorted by (rank, time, type, payload), stable: an LSD radix sort
 * on the rank (digits of up to 11 bits over the bits P - 1 needs: s->wdig, s->wpass), the first
 * pass straight out of the bucket's chunks (one read to count, one to scatter), then each run of
 * one rank's events (a few) by insertion on (time, payload). A window whose events share one
 * instant is copied out in arrival order instead. Narrow (wev_t) or not (ev_t): nar, a constant
 * at each call, so each kind gets its own loops. */
static inline __attribute__((always_inline)) int win_enter_g(sim_t *s, const int nar) {
    evvec_t *b = &s->curv;
    b->n = 0;
    s->head = 0;
    if (!s->hn) return 0;
    for (;;) {
        s->cur = s->ring_n ? s->cur + 1 : (uint64_t)s->far.e[0].t >> s->wbits;
        while (s->far.n && ((uint64_t)s->far.e[0].t >> s->wbits) < s->cur + NB) {
            ev_t e = heap_pop(&s->far);
            bslot_t *sb = &s->ring[((uint64_t)e.t >> s->wbits) & (NB - 1)];
            if (nar ? nslot_put(s, sb, &e) : slot_put(s, sb, &e)) return s->failed;
            s->ring_n++;
        }
        if (s->ring[s->cur & (NB - 1)].n) break;
    }
    const size_t esz = nar ? sizeof(wev_t) : sizeof(ev_t), chn = nar ? 2 * CH : CH;
    bslot_t *sl = &s->ring[s->cur & (NB - 1)];
    const size_t n = sl->n;
    s->ring_n -= n;
    const size_t nev = nar ? (n + 1) / 2 : n;   /* the buffers' size in ev_t */
    if (win_buf(s, b, nev) || win_buf(s, &s->alt, nev)) return s->failed;
    const int np = s->wpass, db = s->wdig;
    const uint32_t dm = (1u << db) - 1;
    static size_t cnt[3][1u << 11];
    memset(cnt, 0, sizeof cnt[0] * (size_t)np);
    int one_time = 1;
    const char *c0 = (const char *)s->cev + (size_t)sl->head * CH * sizeof(ev_t);
    const int64_t t0 = nar ? (int64_t)((const wev_t *)c0)->toff : ((const ev_t *)c0)->t;
    for (uint32_t c = sl->head, left = (uint32_t)n; left;) {   /* count */
        uint32_t take = left < chn ? left : (uint32_t)chn;
        const char *ce = (const char *)s->cev + (size_t)c * CH * sizeof(ev_t);
        for (uint32_t i = 0; i < take; i++) {
            uint32_t rk = WEV_RANK(nar, ce, i);
            one_time &= (nar ? (int64_t)((const wev_t *)ce)[i].toff : ((const ev_t *)ce)[i].t) == t0;
            if (np == 2) {   /* 2^12 .. 2^22 ranks: both digits without the loop */
                cnt[0][rk & dm]++;
                cnt[1][(rk >> db) & dm]++;
            } else {
                for (int d = 0; d < np; d++) cnt[d][(rk >> (d * db)) & dm]++;
            }
        }
        left -= take;
        c = s->cnext[c];
    }
    if (!one_time)
        for (int d = 0; d < np; d++)
            for (uint32_t i = 0, sum = 0; i <= dm; i++) {
                size_t x = cnt[d][i];
                cnt[d][i] = sum;
                sum += (uint32_t)x;
            }
    char *dst = (char *)(one_time || np % 2 ? b->e : s->alt.e), *oth = dst == (char *)b->e ? (char *)s->alt.e : (char *)b->e;
    for (uint32_t c = sl->head, left = (uint32_t)n, k = 0; left;) {   /* out of the chunks, which go back to the pool */
        uint32_t take = left < chn ? left : (uint32_t)chn, nx = s->cnext[c];
        const char *ce = (const char *)s->cev + (size_t)c * CH * sizeof(ev_t);
        if (one_time) {
            memcpy(dst + k * esz, ce, take * esz);
            k += take;
        } else {
            for (uint32_t i = 0; i < take; i++)
                memcpy(dst + cnt[0][WEV_RANK(nar, ce, i) & dm]++ * esz, ce + i * esz, esz);
        }
        left -= take;
        s->cnext[c] = s->cfree;
        s->cfree = c;
        c = nx;
    }
    sl->n = 0;
    b->n = n;
    if (one_time) return 1;
    for (int d = 1; d < np; d++) {   /* the other digits, ending in b->e */
        size_t *cd = cnt[d];
        for (size_t i = 0; i < n; i++) memcpy(oth + cd[(WEV_RANK(nar, dst, i) >> (d * db)) & dm]++ * esz, dst + i * esz, esz);
        char *x = dst;
        dst = oth;
        oth = x;
    }
    char *e = (char *)b->e;
    for (size_t i = 1; i < n; i++)   /* one rank's events: (time, payload), stable */
        if (WEV_RANK(nar, e, i) == WEV_RANK(nar, e, i - 1) && wev_lt(nar, e + i * esz, e + (i - 1) * esz)) {
            union { ev_t e; wev_t w; } x;
            const void *xp = nar ? (const void *)&x.w : (const void *)&x.e;
            memcpy(&x, e + i * esz, esz);
            const uint32_t xr = nar ? x.w.dst : (uint32_t)EV_RANK(x.e.p);
            size_t j = i;
            for (; j > 0 && WEV_RANK(nar, e, j - 1) == xr && wev_lt(nar, xp, e + (j - 1) * esz); j--)
                memcpy(e + j * esz, e + (j - 1) * esz, esz);
            memcpy(e + j * esz, &x, esz);
        }
    return 1;
}

/* The events of a program run in windows (s->win): each window's, rank by rank. */
static inline __attribute__((always_inline)) int run_window_g(sim_t *s, const int nar) {
    int rc;
    while ((rc = win_enter_g(s, nar)) > 0) {
        const void *be = s->curv.e;
        const size_t n = s->curv.n;
        const int64_t wt = (int64_t)(s->cur << s->wbits);
        for (size_t i = 0; i < n; i++) {
            if (__builtin_expect(i + PREFETCH_AHEAD < n, 1)) {
                PREFETCH_RANK(s, WEV_RANK(nar, be, i + PREFETCH_AHEAD));
                prefetch_lists(s, (int)WEV_RANK(nar, be, i + PREFETCH_AHEAD / 2));
                prefetch_unexp(s, (int)WEV_RANK(nar, be, i + PREFETCH_AHEAD / 4));
                if (s->o->table) prefetch_draw(s, (int)WEV_RANK(nar, be, i + PREFETCH_AHEAD / 4));
            }
            s->hn--;
            s->events++;
            if (nar) {
                const wev_t *w = (const wev_t *)be + i;
                s->now = wt + (int64_t)w->toff;
                if ((rc = s->noisy ? prog_msg(s, (int)w->dst, (int)w->src, w->tag, 0, w->src)
                                   : prog_msg_g(s, (int)w->dst, (int)w->src, w->tag, 0, w->src, 1)))
                    return rc;
                continue;
            }
            const ev_t *e = (const ev_t *)be + i;
            s->now = e->t;
            if (EV_TYPE(e->p) != EV_MSG)
                return fail(s, LTS_EINVAL, "internal: event type %d in a window", EV_TYPE(e->p));
            if ((rc = prog_msg(s, EV_RANK(e->p), e->src, e->tag, e->size, EV_ARG(e->p)))) return rc;
        }
        s->curv.n = 0;
    }
    return rc;
}
static int run_window(sim_t *s) { return s->narrow ? run_window_g(s, 1) : run_window_g(s, 0); }

static int prog_deadlock(sim_t *s) {
    for (int r = 0; r < s->P; r++) {
        rank_t *R = &s->r[r];
        if (R->state == R_DONE) continue;
        if (R->state == R_FLAG)
            return fail(s, LTS_EINVAL, "deadlock: %s, rank %d, operation %u: flag wait: the flag is never stored",
                        s->prog->name, r, R->pc);
        if (R->state == R_WAIT && R->ps_on) {
            lts_sim_op_t op;
            uint32_t pc = s->cr ? s->cr[R->ps_h].pc : R->ps_h;
            s->prog->op(s->prog, r, pc, &op);
            return fail(s, LTS_EINVAL,
                        "deadlock: %s, rank %d, operation %u: recv from %d tag %d never matched (no such send)",
                        s->prog->name, r, pc, op.peer, op.tag);
        }
        lts_sim_op_t op;
        s->prog->op(s->prog, r, R->pc ? R->pc - 1 : 0, &op);
        return fail(s, LTS_EINVAL, "deadlock: %s, rank %d, operation %u: %s to %d tag %d never completed", s->prog->name,
                    r, R->pc ? R->pc - 1 : 0, op_name(op.kind), op.peer, op.tag);
    }
    return 0;
}

/* The critical path of a generated schedule, walked back as critical_path (below) walks a GOAL
 * schedule's, over the records (cprec_t): from the operation that ends last (the first rank's
 * first, on ties, as GOAL's vertex order), a step back goes to a receive's end cause unless it was
 * reached through an irequires edge or again, else to the start cause; each record is listed once.
 * A message's send is found on its sender's chain by its number. */
static int prog_critical_path(sim_t *s, lts_sim_result_t *res) {
    const lts_sim_prog_t *pg = s->prog;
    int r = 0;
    for (int q = 1; q < s->P; q++)
        if (s->fin[q] > s->fin[r]) r = q;
    uint32_t v = CP_NONE;
    for (uint32_t i = s->cq[r].head; i != CP_NONE; i = s->cr[i].rprev)
        if (v == CP_NONE || s->cr[i].end >= s->cr[v].end) v = i;
    uint8_t *mark = calloc(s->crn ? s->crn : 1, 1);
    size_t n = 0, cap = 1024;
    lts_sim_cp_t *path = malloc(cap * sizeof *path);
    if (!mark || !path) {
        free(mark);
        free(path);
        return fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", s->crn);
    }
    int started = 0;
    while (v != CP_NONE) {
        if (mark[v] == 2) break;
        int again = mark[v] == 1;
        mark[v] = again ? 2 : 1;
        if (!again) {
            if (n == cap) {
                lts_sim_cp_t *np = realloc(path, (cap *= 2) * sizeof *path);
                if (!np) { free(mark); free(path); return fail(s, LTS_ENOMEM, "out of memory (critical path)"); }
                path = np;
            }
            path[n++] = (lts_sim_cp_t){v, r, s->cr[v].pc, s->cr[v].start, s->cr[v].end};
        }
        lts_sim_op_t op;
        pg->op(pg, r, s->cr[v].pc, &op);
        uint32_t c = s->cr[v].cause;
        if (!started && !again && op.kind == LTS_SIM_IRECV && s->cr[v].ecause != CP_NONE) {
            c = s->cr[v].ecause;
            if (c & CP_MSG) {   /* the message: its sender's send of that number, to r with that tag */
                uint32_t seq = c & ~CP_MSG, k = s->cq[op.peer].nsend, found = CP_NONE;
                for (uint32_t i = s->cq[op.peer].head; i != CP_NONE && found == CP_NONE; i = s->cr[i].rprev) {
                    lts_sim_op_t so;
                    pg->op(pg, op.peer, s->cr[i].pc, &so);
                    if (so.kind != LTS_SIM_SEND) continue;
                    k--;
                    if ((k & CP_SEQ_MASK) == seq && so.peer == r && so.tag == op.tag) found = i;
                }
                started = 0;
                v = found;
                r = op.peer;
                continue;
            }
        }
        started = c != CP_NONE && (c & LTS_GOAL_IREQ);
        v = c == CP_NONE ? CP_NONE : c & ~LTS_GOAL_IREQ;
    }
    free(mark);
    res->ncp_total = n;
    size_t k = n > LTS_SIM_CP_MAX ? LTS_SIM_CP_MAX : n;
    res->cp = malloc((k ? k : 1) * sizeof *res->cp);
    if (!res->cp) { free(path); return fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", k); }
    res->ncp = k;
    for (size_t i = 0; i < k; i++) res->cp[k - 1 - i] = path[i];   /* path[0] is the last: the latest k, reversed */
    free(path);
    return 0;
}

int lts_sim_run_prog(const lts_sim_prog_t *p, const lts_sim_opts_t *o, lts_sim_result_t *res, char *err,
                     size_t errlen) {
    sim_t s;
    memset(res, 0, sizeof *res);
    int rc = init_common(&s, p->P, o, err, errlen);
    s.prog = p;
    /* A rank may run ahead of the clock when nothing but its own program uses its CPU: every
     * message eager (a rendezvous request is answered by the receiver's CPU when it arrives) and
     * no wildcard receive (generated programs have none). Its CPU's timeline is then fixed by its
     * own operations and the arrival times, and messages between one pair with one tag match in
     * order whenever they are matched, so the result is the one of a strict time-ordered run
     * with one event per message instead of two. */
    s.ahead = p->size <= o->par.S;
    if (!rc && o->critical_path) {
        if (!s.ahead)
            rc = fail(&s, LTS_ENOTSUP, "critical path: %s's messages of %lld bytes go by rendezvous (S = %lld); the "
                      "critical path of a generated schedule follows eager messages only", p->name, (long long)p->size,
                      (long long)o->par.S);
        s.crcap = (size_t)s.P * 4;
        s.cr = rc ? NULL : malloc(s.crcap * sizeof *s.cr);
        if (s.cr) hugify(s.cr, s.crcap * sizeof *s.cr);
        s.cq = malloc((size_t)s.P * sizeof *s.cq);
        if (!rc && (!s.cr || !s.cq)) rc = fail(&s, LTS_ENOMEM, "out of memory (critical path of %d ranks)", s.P);
        if (!rc) {
            hugify(s.cq, (size_t)s.P * sizeof *s.cq);
            for (int r = 0; r < s.P; r++) s.cq[r] = (cprank_t){0, CP_NONE, CP_NONE, CP_NONE, 0};
        }
    }
    /* windows in rank order (run_window): eager messages only (run-ahead), no shared-memory flag
     * (seen by every rank at once), and L at least a wheel bucket (else the windows are too narrow
     * to hold more than the wheel's buckets do) */
    const char *wenv = getenv("LATSCOPE_SIM_WINDOWS");   /* "0": the timing wheel's time order instead, the
                                                          same output (tests/python/test_sim.py compares) */
    const int64_t look = o->par.L + o->par.o_s;   /* an eager message's arrival is >= o_s + L after its send */
    if (s.ahead && !p->shm_flag && look >= ((int64_t)1 << WBITS) && !(wenv && !strcmp(wenv, "0"))) {
        s.win = 1;
        while (s.wbits < 62 && ((int64_t)1 << (s.wbits + 1)) <= look) s.wbits++;
        int bits = 1;   /* the rank's digits (win_enter) */
        while (bits < 31 && ((uint32_t)(s.P - 1) >> bits)) bits++;
        s.wpass = (bits + 10) / 11;
        s.wdig = (bits + s.wpass - 1) / s.wpass;
        /* 16-byte events where they hold everything (wev_t): no payload, no send number */
        s.narrow = !o->critical_path && p->size == 0 && s.wbits <= 32;
    }
    /* every rank starts at 0, in rank order (what popping P ready events at 0 would do) */
    for (int r = 0; r < s.P && !rc; r++) rc = run_rank(&s, r, 0);
    if (!rc && s.win) rc = run_window(&s);
    ev_t e;
    while (!rc && !s.win && (rc = next_event(&s, &e)) > 0) {
        int r = EV_RANK(e.p);
        switch (EV_TYPE(e.p)) {
        case EV_READY: rc = run_rank(&s, r, s.now); break;
        case EV_MSG: rc = prog_msg(&s, r, e.src, e.tag, e.size, EV_ARG(e.p)); break;
        case EV_ARRIVE: rc = prog_arrive(&s, r, (int32_t)EV_ARG(e.p)); break;
        case EV_CTS: {
            int32_t m = (int32_t)EV_ARG(e.p);
            int64_t done = do_cts(&s, r, m);
            if (done < 0) { rc = s.failed; break; }
            rc = push(&s, EV_READY, r, 0, done);
            break;
        }
        }
    }
    if (!rc) rc = prog_deadlock(&s);
    if (!rc && s.cr) rc = prog_critical_path(&s, res);
    if (!rc) finish_common(&s, res, s.cr ? s.crcap * sizeof *s.cr + (size_t)s.P * sizeof *s.cq : 0);
    free_common(&s);
    return rc;
}

/* ---- GOAL schedules ------------------------------------------------------------------------ */

#define NONE UINT32_MAX

static int notify(sim_t *s, uint32_t w, int64_t t, uint32_t from, uint32_t ireq) {
    if (t > s->vready[w]) {
        s->vready[w] = t;
        s->vcause[w] = from | ireq;
    }
    if (--s->vleft[w] == 0) return push(s, EV_READY, s->goal->rank[w], w, s->vready[w]);
    return 0;
}

static int v_started(sim_t *s, uint32_t v, int64_t t) {
    const lts_goal_t *g = s->goal;
    s->vstate[v] = 1;
    for (size_t i = g->dep_off[v]; i < g->dep_off[v + 1]; i++)
        if ((g->dep_list[i] & LTS_GOAL_IREQ) && notify(s, g->dep_list[i] & ~LTS_GOAL_IREQ, t, v, LTS_GOAL_IREQ)) return s->failed;
    return 0;
}

static int v_done(sim_t *s, uint32_t v, int64_t t) {
    const lts_goal_t *g = s->goal;
    s->vstate[v] = 2;
    s->vend[v] = t;
    int r = g->rank[v];
    if (t > s->fin[r]) s->fin[r] = t;
    for (size_t i = g->dep_off[v]; i < g->dep_off[v + 1]; i++)
        if (!(g->dep_list[i] & LTS_GOAL_IREQ) && notify(s, g->dep_list[i], t, v, 0)) return s->failed;
    return 0;
}

/* v starts using rank r's CPU: if the CPU (or NIC) was what it waited for, the operation that
 * held it is v's cause on the critical path */
static void v_cpu(sim_t *s, uint32_t v, int r, int64_t start) {
    if (start > s->now && s->lastv[r] != NONE) s->vcause[v] = s->lastv[r];
    s->lastv[r] = v;
}

/* A receive v is processed now: gated by its rank's CPU or NIC (their last user), by the
 * message (its send, when it arrives now) or by its own posting (its start cause, vcause). The
 * first two are its end cause, kept apart from vcause: an operation that irequires v started
 * when v was posted, and following it back must reach what posted v, not v's completion
 * (which that operation may itself have delayed, holding the CPU). */
static void v_recv(sim_t *s, uint32_t v, int r, uint32_t send, int arriving) {
    const rank_t *R = &s->r[r];
    if ((R->cpu > s->now || R->nic_r > s->now) && s->lastv[r] != NONE) s->vleft[v] = s->lastv[r];
    else if (arriving) s->vleft[v] = send;
    s->lastv[r] = v;
}

static int goal_ready(sim_t *s, uint32_t v) {
    const lts_goal_t *g = s->goal;
    int r = g->rank[v];
    rank_t *R = &s->r[r];
    switch (g->kind[v]) {
    case LTS_GOAL_CALC: {
        int64_t st = max64(s->now, R->cpu);
        R->cpu = busy(s, r, st, g->size[v] * s->unit);
        s->vstart[v] = st;
        v_cpu(s, v, r, st);
        if (v_started(s, v, st)) return s->failed;
        return v_done(s, v, R->cpu);
    }
    case LTS_GOAL_SEND: {
        int64_t st, done;
        if (do_send(s, r, s->now, g->peer[v], g->tag[v], g->size[v], v, &st, &done) < 0) return s->failed;
        s->vstart[v] = st;
        v_cpu(s, v, r, st);
        if (v_started(s, v, st)) return s->failed;
        return done >= 0 ? v_done(s, v, done) : 0;
    }
    default: {   /* recv: posted now */
        s->vstart[v] = s->now;
        s->vleft[v] = NONE;   /* its end cause: none yet (v_recv) */
        if (v_started(s, v, s->now)) return s->failed;
        int32_t m = lmatch(s, R, L_UNEXP, g->peer[v], g->tag[v], 0);
        if (m < 0) return posted_add(s, R, g->peer[v], g->tag[v], v);
        if (s->q[m].kind == M_RTS) return do_rts(s, r, m, v, s->now);
        v_recv(s, v, r, s->q[m].h, 0);
        int64_t done = do_recv(s, r, s->q[m].size, s->now);
        qfree(s, m);
        return v_done(s, v, done);
    }
    }
}

static int goal_msg(sim_t *s, int r, const ev_t *ev) {
    rank_t *R = &s->r[r];
    uint32_t v;
    if (!posted_match(s, R, ev->src, ev->tag, &v)) {
        int32_t m = msg_entry(s, ev);
        if (m < 0) return s->failed;
        lappend(s, R, L_UNEXP, m);
        return 0;
    }
    v_recv(s, v, r, EV_ARG(ev->p), 1);
    return v_done(s, v, do_recv(s, r, ev->size, s->now));
}

static int goal_arrive(sim_t *s, int r, int32_t m) {
    rank_t *R = &s->r[r];
    qent_t *e = &s->q[m];
    if (e->kind == M_DATA) {
        uint32_t v = e->h2;
        v_recv(s, v, r, e->h, 1);
        int64_t done = do_recv(s, r, e->size, s->now);
        qfree(s, m);
        return v_done(s, v, done);
    }
    uint32_t v;
    if (!posted_match(s, R, e->src, e->tag, &v)) { lappend(s, R, L_UNEXP, m); return 0; }
    if (e->kind == M_RTS) return do_rts(s, r, m, v, s->now);
    v_recv(s, v, r, e->h, 1);
    int64_t done = do_recv(s, r, e->size, s->now);
    qfree(s, m);
    return v_done(s, v, done);
}

static const char *goal_kind(int k) { return k == LTS_GOAL_SEND ? "send" : k == LTS_GOAL_RECV ? "recv" : "calc"; }

static int goal_deadlock(sim_t *s) {
    const lts_goal_t *g = s->goal;
    size_t waiting = (size_t)-1;
    for (size_t v = 0; v < g->nv; v++) {
        if (s->vstate[v] == 2) continue;
        if (s->vstate[v] == 1 && g->kind[v] == LTS_GOAL_RECV) {
            char src[16], tag[16];
            snprintf(src, sizeof src, "%d", g->peer[v]);
            snprintf(tag, sizeof tag, "%d", g->tag[v]);
            return fail(s, LTS_EINVAL,
                        "deadlock: %s:%d: rank %d: recv %lldb from %s tag %s never matched (no matching send)", g->name,
                        g->line[v], g->rank[v], (long long)g->size[v], g->peer[v] < 0 ? "any" : src,
                        g->tag[v] < 0 ? "any" : tag);
        }
        if (s->vstate[v] == 1)
            return fail(s, LTS_EINVAL, "deadlock: %s:%d: rank %d: send %lldb to %d tag %d (rendezvous) never matched",
                        g->name, g->line[v], g->rank[v], (long long)g->size[v], g->peer[v], g->tag[v]);
        if (waiting == (size_t)-1) waiting = v;
    }
    if (waiting != (size_t)-1) {
        size_t v = waiting;
        return fail(s, LTS_EINVAL,
                    "deadlock: %s:%d: rank %d: %s never became ready (it depends on an operation that never "
                    "completes, or on itself)",
                    g->name, g->line[v], g->rank[v], goal_kind(g->kind[v]));
    }
    return 0;
}

/* From the operation that ends last back along the causes: the operations that decided the end
 * time, in time order (res->cp: LTS_SIM_CP_MAX at most, the latest ones). A step back from v goes
 * to what decided its end: a receive's end cause (vleft, see v_recv), else its start cause
 * (vcause). Reached through an irequires edge, only v's start mattered (LogGOPSim: irequires is
 * "started", requires "completed"), so the walk goes on from v's start cause. A receive posted
 * early and completed late can be reached twice: first for its completion, then, through an
 * operation that irequires it (and held the CPU it waited for), for its posting; it is listed
 * once, where it completed, and the walk goes on from what posted it. Each operation is listed
 * once, so the walk ends. */
static int critical_path(sim_t *s, lts_sim_result_t *res) {
    const lts_goal_t *g = s->goal;
    if (!g->nv) return 0;
    uint32_t last = 0;
    for (uint32_t v = 1; v < g->nv; v++)
        if (s->vend[v] > s->vend[last]) last = v;
    /* vstate (all 2 after a complete run) marks the listed operations: 3 listed, 4 passed again */
    uint32_t *path = malloc(g->nv * sizeof *path);
    if (!path) return fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", g->nv);
    size_t n = 0;
    int started = 0;   /* v was reached through an irequires edge: its start is what counted */
    for (uint32_t v = last; v != NONE;) {
        if (s->vstate[v] == 4) break;
        int again = s->vstate[v] == 3;
        if (again) s->vstate[v] = 4;
        else {
            s->vstate[v] = 3;
            path[n++] = v;
        }
        uint32_t c = (!started && !again && g->kind[v] == LTS_GOAL_RECV && s->vleft[v] != NONE) ? s->vleft[v] : s->vcause[v];
        started = c != NONE && (c & LTS_GOAL_IREQ);
        v = c == NONE ? NONE : c & ~LTS_GOAL_IREQ;
    }
    res->ncp_total = n;
    size_t k = n > LTS_SIM_CP_MAX ? LTS_SIM_CP_MAX : n;
    res->cp = malloc((k ? k : 1) * sizeof *res->cp);
    if (!res->cp) {
        free(path);
        return fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", k);
    }
    res->ncp = k;
    for (size_t i = 0; i < k; i++) {   /* path[0] is the last operation: the latest k, reversed */
        lts_sim_cp_t *c = &res->cp[k - 1 - i];
        uint32_t v = path[i];
        c->op = v;
        c->rank = g->rank[v];
        c->pc = v;
        c->start = s->vstart[v];
        c->end = s->vend[v];
    }
    free(path);
    return 0;
}

int lts_sim_run_goal(const lts_goal_t *g, const lts_sim_opts_t *o, lts_sim_result_t *res, char *err, size_t errlen) {
    sim_t s;
    memset(res, 0, sizeof *res);
    int rc = init_common(&s, g->P, o, err, errlen);
    s.goal = g;
    s.unit = o->goal_unit_ps > 0 ? o->goal_unit_ps : 1000;
    if (!rc) {
        s.vstate = calloc(g->nv ? g->nv : 1, 1);
        s.vleft = malloc((g->nv ? g->nv : 1) * sizeof *s.vleft);
        s.vready = calloc(g->nv ? g->nv : 1, sizeof *s.vready);
        s.vstart = calloc(g->nv ? g->nv : 1, sizeof *s.vstart);
        s.vend = calloc(g->nv ? g->nv : 1, sizeof *s.vend);
        s.vcause = malloc((g->nv ? g->nv : 1) * sizeof *s.vcause);
        s.lastv = malloc((size_t)g->P * sizeof *s.lastv);
        if (!s.vstate || !s.vleft || !s.vready || !s.vstart || !s.vend || !s.vcause || !s.lastv)
            rc = fail(&s, LTS_ENOMEM, "out of memory (%zu operations)", g->nv);
        else {
            memset(s.vcause, 0xff, (g->nv ? g->nv : 1) * sizeof *s.vcause);
            memset(s.lastv, 0xff, (size_t)g->P * sizeof *s.lastv);
        }
    }
    for (size_t v = 0; !rc && v < g->nv; v++) {
        if (g->kind[v] == LTS_GOAL_CALC && g->size[v] > INT64_MAX / 4 / s.unit)
            rc = fail(&s, LTS_ERANGE, "%s:%d: calc %lld: longer than the simulator's clock allows (10^5 s)", g->name,
                      g->line[v], (long long)g->size[v]);
        s.vleft[v] = g->ndeps[v];
        if (!g->ndeps[v]) rc = push(&s, EV_READY, g->rank[v], (uint32_t)v, 0);
    }
    ev_t e;
    while (!rc && (rc = next_event(&s, &e)) > 0) {
        int r = EV_RANK(e.p);
        switch (EV_TYPE(e.p)) {
        case EV_READY: rc = goal_ready(&s, EV_ARG(e.p)); break;
        case EV_MSG: rc = goal_msg(&s, r, &e); break;
        case EV_ARRIVE: rc = goal_arrive(&s, r, (int32_t)EV_ARG(e.p)); break;
        case EV_CTS: {
            int32_t m = (int32_t)EV_ARG(e.p);
            uint32_t v = s.q[m].h;
            int64_t done = do_cts(&s, r, m);
            rc = done < 0 ? s.failed : v_done(&s, v, done);
            break;
        }
        }
    }
    if (!rc) rc = goal_deadlock(&s);
    if (!rc) rc = critical_path(&s, res);
    if (!rc) finish_common(&s, res, g->nv * (1 + 4 + 8 + 8 + 8 + 4) + (size_t)g->P * 4);
    free_common(&s);
    return rc;
}
