/* The simulator's executor of generated programs (lts_sim_prog_t, docs/sim.md "Semantics"): each
 * rank runs its program in order (run_rank), blocking in waits, on the core's queue (engine.c) in
 * time order, or in rank-ordered windows when every message is eager (exec_window.c, which runs
 * the same ranks by lts_sim_prog_msg). Each operation is computed from (rank, P, step) when the
 * rank reaches it: nothing is stored per operation. With opts.critical_path each operation's
 * record says what decided it; the walk and the deadlock report are report.c's. */
#include "engine_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        if (!n) { lts_sim_fail(s, LTS_ENOMEM, "out of memory (critical path: %zu operations)", nc); return CP_NONE; }
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
                return lts_sim_fail(s, LTS_EINVAL, "%s: rank %d, operation %u: send to rank %d (valid: 0..%d)", pg->name, r,
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
                    if (lts_sim_push_win(s, &ev)) return s->failed;
                }
                R->pc++;
                t = R->cpu;
                break;
            }
            if (s->cr) s->cp_bits = (uint64_t)(s->cq[r].nsend & CP_SEQ_MASK) << CP_SIZE_BITS;
            if (lts_sim_do_send(s, r, t, op_peer, op_tag, op_size, (uint32_t)r, &st, &done) < 0) return s->failed;
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
                    if (lts_sim_do_rts(s, r, m, (uint32_t)r, t)) return s->failed;
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
                return lts_sim_fail(s, LTS_ENOTSUP, "critical path: %s releases the ranks by a shared-memory flag, which the "
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
                return lts_sim_fail(s, LTS_EINVAL, "%s: rank %d, operation %u: the flag is stored twice", pg->name, r, R->pc);
            s->flag_on = 1;
            s->flag_t = max64(t, R->cpu) + s->o->par.L;
            for (int q = 0; q < s->P; q++)
                if (s->r[q].state == R_FLAG && push(s, EV_READY, q, 0, s->flag_t)) return s->failed;
            R->pc++;
            break;
        default:
            return lts_sim_fail(s, LTS_EINVAL, "%s: rank %d, operation %u: unknown operation %d", pg->name, r, R->pc, op_kind);
        }
    }
}

static int run_rank(sim_t *s, int r, int64_t t) { return run_rank_g(s, r, t, 0); }
static int run_rank_fast(sim_t *s, int r, int64_t t) { return run_rank_g(s, r, t, 1); }

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
int lts_sim_prog_msg(sim_t *s, int r, int src, int tag, int64_t evsize, uint32_t arg) {
    return prog_msg_g(s, r, src, tag, evsize, arg, 0);
}
int lts_sim_prog_msg_fast(sim_t *s, int r, int src, int tag, int64_t evsize, uint32_t arg) {
    return prog_msg_g(s, r, src, tag, evsize, arg, 1);
}

static int prog_arrive(sim_t *s, int r, int32_t m) {
    rank_t *R = &s->r[r];
    qent_t *e = &s->q[m];
    if (e->kind == M_DATA) {
        lappend(s, R, L_READY, m);
    } else {
        uint32_t h;
        if (!posted_match(s, R, e->src, e->tag, &h)) { lappend(s, R, L_UNEXP, m); return 0; }
        if (e->kind == M_RTS) return lts_sim_do_rts(s, r, m, (uint32_t)r, s->now);
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


/* The deadlock report (report.c): a rank not done is blocked, in the words below. */
static int prog_unit(const sim_t *s, size_t i) { return s->r[i].state == R_DONE ? LTS_SIM_UNIT_DONE : LTS_SIM_UNIT_BLOCKED; }
static void prog_say(const sim_t *s, size_t i, char *buf, size_t len) {
    const int r = (int)i;
    const rank_t *R = &s->r[r];
    lts_sim_op_t op;
    if (R->state == R_FLAG) {
        snprintf(buf, len, "%s, rank %d, operation %u: flag wait: the flag is never stored", s->prog->name, r, R->pc);
    } else if (R->state == R_WAIT && R->ps_on) {
        uint32_t pc = s->cr ? s->cr[R->ps_h].pc : R->ps_h;
        s->prog->op(s->prog, r, pc, &op);
        snprintf(buf, len, "%s, rank %d, operation %u: recv from %d tag %d never matched (no such send)", s->prog->name, r,
                 pc, op.peer, op.tag);
    } else {
        s->prog->op(s->prog, r, R->pc ? R->pc - 1 : 0, &op);
        snprintf(buf, len, "%s, rank %d, operation %u: %s to %d tag %d never completed", s->prog->name, r,
                 R->pc ? R->pc - 1 : 0, op_name(op.kind), op.peer, op.tag);
    }
}
static const lts_sim_deadlock_ops_t prog_deadlock = {prog_unit, prog_say};

/* The critical path (report.c) over the records (cprec_t): a receive's end cause, a record of its
 * rank or its message (CP_MSG | the send's number on the sending rank, its peer: generated
 * schedules have no wildcard), is found back on the sender's chain by that number. */
static uint32_t prog_start_cause(const sim_t *s, int r, uint32_t v) { return s->cr[v].cause; }
static uint32_t prog_end_cause(const sim_t *s, int r, uint32_t v) {
    lts_sim_op_t op;
    s->prog->op(s->prog, r, s->cr[v].pc, &op);
    return op.kind == LTS_SIM_IRECV ? s->cr[v].ecause : CP_NONE;
}
static uint32_t prog_message(const sim_t *s, int *rp, uint32_t v, uint32_t c) {
    const lts_sim_prog_t *pg = s->prog;
    const int r = *rp;
    lts_sim_op_t op;
    pg->op(pg, r, s->cr[v].pc, &op);
    uint32_t seq = c & ~CP_MSG, k = s->cq[op.peer].nsend, found = CP_NONE;
    for (uint32_t i = s->cq[op.peer].head; i != CP_NONE && found == CP_NONE; i = s->cr[i].rprev) {
        lts_sim_op_t so;   /* its sender's send of that number, to r with that tag */
        pg->op(pg, op.peer, s->cr[i].pc, &so);
        if (so.kind != LTS_SIM_SEND) continue;
        k--;
        if ((k & CP_SEQ_MASK) == seq && so.peer == r && so.tag == op.tag) found = i;
    }
    *rp = op.peer;
    return found;
}
static void prog_entry(const sim_t *s, int r, uint32_t v, lts_sim_cp_t *out) {
    *out = (lts_sim_cp_t){v, r, s->cr[v].pc, s->cr[v].start, s->cr[v].end};
}
static const lts_sim_cp_ops_t prog_cp = {prog_start_cause, prog_end_cause, prog_message, prog_entry};

/* The walk starts from the operation that ends last: the first rank's first, on ties, as GOAL's
 * vertex order. */
static int prog_critical_path(sim_t *s, lts_sim_result_t *res) {
    int r = 0;
    for (int q = 1; q < s->P; q++)
        if (s->fin[q] > s->fin[r]) r = q;
    uint32_t v = CP_NONE;
    for (uint32_t i = s->cq[r].head; i != CP_NONE; i = s->cr[i].rprev)
        if (v == CP_NONE || s->cr[i].end >= s->cr[v].end) v = i;
    return lts_sim_critical_path(s, res, s->crn, r, v, &prog_cp);
}

int lts_sim_run_prog(const lts_sim_prog_t *p, const lts_sim_opts_t *o, lts_sim_result_t *res, char *err,
                     size_t errlen) {
    sim_t s;
    memset(res, 0, sizeof *res);
    int rc = lts_sim_init(&s, p->P, o, err, errlen);
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
            rc = lts_sim_fail(&s, LTS_ENOTSUP, "critical path: %s's messages of %lld bytes go by rendezvous (S = %lld); the "
                      "critical path of a generated schedule follows eager messages only", p->name, (long long)p->size,
                      (long long)o->par.S);
        s.crcap = (size_t)s.P * 4;
        s.cr = rc ? NULL : malloc(s.crcap * sizeof *s.cr);
        if (s.cr) lts_sim_hugify(s.cr, s.crcap * sizeof *s.cr);
        s.cq = malloc((size_t)s.P * sizeof *s.cq);
        if (!rc && (!s.cr || !s.cq)) rc = lts_sim_fail(&s, LTS_ENOMEM, "out of memory (critical path of %d ranks)", s.P);
        if (!rc) {
            lts_sim_hugify(s.cq, (size_t)s.P * sizeof *s.cq);
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
    if (!rc && s.win) rc = lts_sim_run_window(&s);
    ev_t e;
    while (!rc && !s.win && (rc = lts_sim_next_event(&s, &e)) > 0) {
        int r = EV_RANK(e.p);
        switch (EV_TYPE(e.p)) {
        case EV_READY: rc = run_rank(&s, r, s.now); break;
        case EV_MSG: rc = lts_sim_prog_msg(&s, r, e.src, e.tag, e.size, EV_ARG(e.p)); break;
        case EV_ARRIVE: rc = prog_arrive(&s, r, (int32_t)EV_ARG(e.p)); break;
        case EV_CTS: {
            int32_t m = (int32_t)EV_ARG(e.p);
            int64_t done = lts_sim_do_cts(&s, r, m);
            if (done < 0) { rc = s.failed; break; }
            rc = push(&s, EV_READY, r, 0, done);
            break;
        }
        }
    }
    if (!rc) rc = lts_sim_deadlock(&s, (size_t)s.P, &prog_deadlock);
    if (!rc && s.cr) rc = prog_critical_path(&s, res);
    if (!rc) lts_sim_finish(&s, res, s.cr ? s.crcap * sizeof *s.cr + (size_t)s.P * sizeof *s.cq : 0);
    lts_sim_free_state(&s);
    return rc;
}
