/* The simulator's executor of generated eager programs in rank-ordered windows (docs/sim.md
 * "Scale"): the events of a window of 2^wbits <= o_s + L ps are taken rank by rank, each message
 * handed to its rank as the time-ordered executor would (exec_prog.c, lts_sim_prog_msg), with the
 * same output byte for byte; the core's wheel (engine.c) holds the windows. */
#include "engine_internal.h"
#include <stdlib.h>
#include <string.h>

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
/* An eager message's event (from the far heap) as a narrow one at the end of bucket b. */
static int nslot_put(sim_t *s, bslot_t *b, const ev_t *e) {
    wev_t *y = nslot_add(s, b);
    if (!y) return s->failed;
    *y = (wev_t){(uint32_t)((uint64_t)e->t & (((uint64_t)1 << s->wbits) - 1)), (uint32_t)EV_RANK(e->p), (uint32_t)e->src,
                 e->tag};
    return 0;
}

int lts_sim_push_win(sim_t *s, const ev_t *e) {
    uint64_t k = (uint64_t)e->t >> s->wbits;
    if (k <= s->cur && s->events)
        return lts_sim_fail(s, LTS_EINVAL, "internal: an event inside the current window (%lld ps)", (long long)e->t);
    if (s->narrow && EV_TYPE(e->p) != EV_MSG)
        return lts_sim_fail(s, LTS_EINVAL, "internal: event type %d in a window", EV_TYPE(e->p));
    s->hn++;
    if (k < s->cur + NB) {
        s->ring_n++;
        return s->narrow ? nslot_put(s, &s->ring[k & (NB - 1)], e) : slot_put(s, &s->ring[k & (NB - 1)], e);
    }
    if (lts_sim_vput(s, &s->far, *e)) return s->failed;
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
    if (!v->e) return lts_sim_fail(s, LTS_ENOMEM, "out of memory (a window of %zu events)", n);
    if (bytes >= (2u << 20)) lts_sim_hugify(v->e, bytes);
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
                if ((rc = s->noisy ? lts_sim_prog_msg(s, (int)w->dst, (int)w->src, w->tag, 0, w->src)
                                   : lts_sim_prog_msg_fast(s, (int)w->dst, (int)w->src, w->tag, 0, w->src)))
                    return rc;
                continue;
            }
            const ev_t *e = (const ev_t *)be + i;
            s->now = e->t;
            if (EV_TYPE(e->p) != EV_MSG)
                return lts_sim_fail(s, LTS_EINVAL, "internal: event type %d in a window", EV_TYPE(e->p));
            if ((rc = lts_sim_prog_msg(s, EV_RANK(e->p), e->src, e->tag, e->size, EV_ARG(e->p)))) return rc;
        }
        s->curv.n = 0;
    }
    return rc;
}
int lts_sim_run_window(sim_t *s) { return s->narrow ? run_window_g(s, 1) : run_window_g(s, 0); }
