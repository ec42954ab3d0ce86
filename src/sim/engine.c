/* The simulator's core (docs/sim.md "Semantics"): one event queue, the pool of queue entries,
 * per-rank CPU and NIC resources, MPI-style matching, LogGOPS costs (Hoefler et al., LogGOPSim,
 * HPDC 2010, §2-3). The executors that run schedules on it are exec_prog.c (generated programs,
 * time order), exec_window.c (generated eager programs, rank-ordered windows) and exec_goal.c
 * (GOAL schedules); report.c ends a run for all three. Types and the inline helpers of the inner
 * loop: engine_internal.h.
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
 * processed when its message arrives. */
#include "engine_internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int sort_bucket(sim_t *s, evvec_t *b);

int lts_sim_fail(sim_t *s, int code, const char *fmt, ...) {
    if (s->err && s->errlen && !s->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err, s->errlen, fmt, ap);
        va_end(ap);
    }
    s->failed = code;
    return code;
}

int lts_sim_vput(sim_t *s, evvec_t *v, ev_t e) {
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 64;
        ev_t *ne = realloc(v->e, nc * sizeof *ne);
        if (!ne) return lts_sim_fail(s, LTS_ENOMEM, "out of memory (event queue of %zu events)", nc);
        v->e = ne;
        v->cap = nc;
    }
    v->e[v->n++] = e;
    return 0;
}

int lts_sim_slot_chunk(sim_t *s, bslot_t *b) {
    uint32_t c = s->cfree;
    if (c != CNONE) {
        s->cfree = s->cnext[c];
    } else {
        if (s->cused == s->ccap) {
            size_t nc = s->ccap ? s->ccap * 2 : 256;
            if (nc >= CNONE) return lts_sim_fail(s, LTS_ENOMEM, "more than 2^32 chunks of events in flight");
            ev_t *ne = realloc(s->cev, nc * CH * sizeof *ne);
            if (ne) s->cev = ne;
            uint32_t *nn = ne ? realloc(s->cnext, nc * sizeof *nn) : NULL;
            if (!nn) return lts_sim_fail(s, LTS_ENOMEM, "out of memory (event queue of %zu events)", nc * CH);
            s->cnext = nn;
            s->ccap = nc;
            if (nc * CH * sizeof *ne >= (8u << 20)) lts_sim_hugify(ne, nc * CH * sizeof *ne);
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


int lts_sim_push_ev(sim_t *s, ev_t e) {
    if (s->win) return lts_sim_push_win(s, &e);
    int64_t t = e.t;
    uint64_t k = (uint64_t)t >> WBITS;
    if (t < s->now)
        return lts_sim_fail(s, LTS_EINVAL, "internal: an event scheduled in the past (%lld < %lld ps)", (long long)t,
                    (long long)s->now);
    if (++s->hn > s->hpeak) s->hpeak = s->hn;
    if (k == s->cur) {
        evvec_t *b = &s->curv;
        if (!s->cur_sorted) {
            if (t == s->cur_t || s->head == b->n) {
                if (s->head == b->n) { b->n = s->head = 0; s->cur_t = t; }
                return lts_sim_vput(s, b, e);
            }
            /* a second time in this bucket: the rest is sorted */
            memmove(b->e, b->e + s->head, (b->n - s->head) * sizeof *b->e);
            b->n -= s->head;
            s->head = 0;
            if (sort_bucket(s, b)) return s->failed;
        }
        if (lts_sim_vput(s, &s->side, e)) return s->failed;
        heap_up(s->side.e, s->side.n - 1);
        return 0;
    }
    if (k < s->cur + NB) {
        s->ring_n++;
        return slot_put(s, &s->ring[k & (NB - 1)], &e);
    }
    if (lts_sim_vput(s, &s->far, e)) return s->failed;
    heap_up(s->far.e, s->far.n - 1);
    return 0;
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
        if (!no) return lts_sim_fail(s, LTS_ENOMEM, "out of memory (a bucket of %zu events)", n);
        s->ord_buf = no;
        s->ord_cap = nc;
    }
    if (n > s->alt.cap) {
        size_t nc = s->alt.cap ? s->alt.cap : 1024;
        while (nc < n) nc *= 2;
        free(s->alt.e);
        s->alt.e = malloc(nc * sizeof *s->alt.e);
        s->alt.cap = s->alt.e ? nc : 0;
        if (!s->alt.e) return lts_sim_fail(s, LTS_ENOMEM, "out of memory (a bucket of %zu events)", n);
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
        if (!b->e) { b->cap = 0; lts_sim_fail(s, LTS_ENOMEM, "out of memory (a bucket of %u events)", sl->n); return; }
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
void lts_sim_hugify(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1), e = (uintptr_t)p + n;
    if (e > a + (2u << 20)) madvise((void *)a, (e - a) & ~(uintptr_t)((2u << 20) - 1), MADV_HUGEPAGE);
#else
    (void)p; (void)n;
#endif
}

int32_t lts_sim_qalloc(sim_t *s) {
    if (s->qfree >= 0) {
        int32_t i = s->qfree;
        s->qfree = s->q[i].next;
        return i;
    }
    if (s->qn == s->qcap) {
        size_t nc = s->qcap ? s->qcap * 2 : 1024;
        if (nc > INT32_MAX) { lts_sim_fail(s, LTS_ENOMEM, "more than 2^31 messages in flight"); return -1; }
        qent_t *nq = realloc(s->q, nc * sizeof *nq);
        if (!nq) { lts_sim_fail(s, LTS_ENOMEM, "out of memory (%zu messages in flight)", nc); return -1; }
        s->q = nq;
        s->qcap = nc;
        if (nc * sizeof *nq >= (8u << 20)) lts_sim_hugify(nq, nc * sizeof *nq);
    }
    return (int32_t)s->qn++;
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
int64_t lts_sim_busy_noise(const sim_t *s, int r, int64_t start, int64_t dur) {
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


/* Issue a send from rank r at time t (>= now). Returns the pool entry (-1 on error); *start is
 * when it started, *done its local completion (eager) or -1 (rendezvous: when the data leaves). */
int32_t lts_sim_do_send(sim_t *s, int r, int64_t t, int dst, int tag, int64_t size, uint32_t handle, int64_t *start,
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
        return lts_sim_push_ev(s, ev) ? -1 : 0;
    }
    int32_t m = lts_sim_qalloc(s);
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

/* A matched rendezvous request at rank r: answer it (o_r), the answer reaches the sender L later. */
int lts_sim_do_rts(sim_t *s, int r, int32_t m, uint32_t recv_handle, int64_t t) {
    const lts_sim_params_t *p = &s->o->par;
    rank_t *R = &s->r[r];
    int64_t t1 = max64(max64(t, R->cpu), R->nic_r);
    R->cpu = busy(s, r, t1, p->o_r);
    R->nic_r = t1 + p->g;
    s->q[m].h2 = recv_handle;
    return push(s, EV_CTS, s->q[m].src, (uint32_t)m, R->cpu + p->L);
}

/* The answer reached the sender: the data leaves. Returns the send's completion (or -1). */
int64_t lts_sim_do_cts(sim_t *s, int r, int32_t m) {
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

int lts_sim_init(sim_t *s, int P, const lts_sim_opts_t *o, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->o = o;
    s->P = P;
    s->err = err;
    s->errlen = errlen;
    s->qfree = -1;
    s->cfree = CNONE;
    if (err && errlen) err[0] = '\0';
    const lts_sim_params_t *p = &o->par;
    if (P < 1 || P > LTS_SIM_MAX_RANKS) return lts_sim_fail(s, LTS_EINVAL, "P = %d: must be 1..%d", P, LTS_SIM_MAX_RANKS);
    if (p->L < 0 || p->o_s < 0 || p->o_r < 0 || p->g < 0 || p->G < 0 || p->O < 0 || p->S < 0)
        return lts_sim_fail(s, LTS_EINVAL, "LogGOPS parameters must be >= 0 (L, o, g, G, O, S)");
    if (o->noise_period < 0 || o->noise_detour < 0 || (o->noise_detour > 0 && o->noise_detour >= o->noise_period))
        return lts_sim_fail(s, LTS_EINVAL, "noise: the detour (%lld ps) must be >= 0 and shorter than the period (%lld ps)",
                    (long long)o->noise_detour, (long long)o->noise_period);
    if (o->noise_trace && o->noise_trace->n) {
        const lts_sim_noise_t *nz = o->noise_trace;
        if (o->noise_period > 0 && o->noise_detour > 0)
            return lts_sim_fail(s, LTS_EINVAL, "noise: give a period and detour, or a trace, not both");
        s->nz_free = nz->span;
        for (size_t i = 0; i < nz->n; i++) s->nz_free -= nz->det[2 * i + 1];
        if (s->nz_free <= 0) return lts_sim_fail(s, LTS_EINVAL, "noise trace: the detours fill the whole span");
    }
    s->noisy = s->nz_free > 0 || (o->noise_period > 0 && o->noise_detour > 0);
    /* the ranks' lines straight from the kernel, already zero (page-aligned, so 64-byte aligned): a
     * memset after posix_memalign wrote the 64 MiB of 2^20 ranks a second time (3 % of the run) */
    s->r_bytes = (size_t)P * sizeof *s->r;
    void *rp = mmap(NULL, s->r_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (rp != MAP_FAILED) {
        s->r = rp;
        lts_sim_hugify(s->r, s->r_bytes);
    }
    s->rl = malloc((size_t)P * 3 * sizeof *s->rl);   /* read only where a bit of rank_t.lists says */
    if (s->rl) lts_sim_hugify(s->rl, (size_t)P * 3 * sizeof *s->rl);
    s->fin = calloc((size_t)P, sizeof *s->fin);
    if (s->fin) lts_sim_hugify(s->fin, (size_t)P * sizeof *s->fin);
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
        lts_sim_hugify(s->cev, chunks * CH * sizeof *s->cev);
    }
    if (!s->r || !s->rl || !s->fin || !s->ring || (o->table && !s->dl)) return lts_sim_fail(s, LTS_ENOMEM, "out of memory (%d ranks)", P);
    for (int i = 0; i < P; i++) {
        rank_t *R = &s->r[i];
        /* thread 0's stream: what the injector's first thread on rank i draws from */
        R->rng = lts_inject_stream_init(o->seed, i, 0);
    }
    return 0;
}

void lts_sim_finish(sim_t *s, lts_sim_result_t *res, size_t extra_bytes_used) {
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

void lts_sim_free_state(sim_t *s) {
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
int lts_sim_next_event(sim_t *s, ev_t *e) {
    if (!s->hn) return 0;
    *e = pop(s);
    if (s->failed) return s->failed;
    if (e->t < s->now)
        return lts_sim_fail(s, LTS_EINVAL, "internal: event queue out of order (%lld < %lld ps)", (long long)e->t,
                    (long long)s->now);
    s->now = e->t;
    s->events++;
    return 1;
}
