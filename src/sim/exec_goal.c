/* The simulator's executor of GOAL schedules (LogGOPSim/Schedgen text parsed by goal.c; docs/sim.md
 * "Semantics"): an operation starts when its dependencies are met (requires: ended; irequires:
 * started), on the core's queue (engine.c) in time order; a posted receive is processed when its
 * message arrives, as LogGOPSim does. Each operation keeps what decided its start and a receive's
 * end (the critical path); the walk and the deadlock report are report.c's. */
#include "engine_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        if (lts_sim_do_send(s, r, s->now, g->peer[v], g->tag[v], g->size[v], v, &st, &done) < 0) return s->failed;
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
        if (s->q[m].kind == M_RTS) return lts_sim_do_rts(s, r, m, v, s->now);
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
    if (e->kind == M_RTS) return lts_sim_do_rts(s, r, m, v, s->now);
    v_recv(s, v, r, e->h, 1);
    int64_t done = do_recv(s, r, e->size, s->now);
    qfree(s, m);
    return v_done(s, v, done);
}

static const char *goal_kind(int k) { return k == LTS_GOAL_SEND ? "send" : k == LTS_GOAL_RECV ? "recv" : "calc"; }

/* The deadlock report (report.c): a started operation not done is blocked (a receive never
 * matched, a rendezvous send never answered); one never started waits for another. */
static int goal_unit(const sim_t *s, size_t v) {
    return s->vstate[v] == 2 ? LTS_SIM_UNIT_DONE : s->vstate[v] == 1 ? LTS_SIM_UNIT_BLOCKED : LTS_SIM_UNIT_WAITING;
}
static void goal_say(const sim_t *s, size_t v, char *buf, size_t len) {
    const lts_goal_t *g = s->goal;
    if (s->vstate[v] == 1 && g->kind[v] == LTS_GOAL_RECV) {
        char src[16], tag[16];
        snprintf(src, sizeof src, "%d", g->peer[v]);
        snprintf(tag, sizeof tag, "%d", g->tag[v]);
        snprintf(buf, len, "%s:%d: rank %d: recv %lldb from %s tag %s never matched (no matching send)", g->name,
                 g->line[v], g->rank[v], (long long)g->size[v], g->peer[v] < 0 ? "any" : src, g->tag[v] < 0 ? "any" : tag);
    } else if (s->vstate[v] == 1) {
        snprintf(buf, len, "%s:%d: rank %d: send %lldb to %d tag %d (rendezvous) never matched", g->name, g->line[v],
                 g->rank[v], (long long)g->size[v], g->peer[v], g->tag[v]);
    } else {
        snprintf(buf, len, "%s:%d: rank %d: %s never became ready (it depends on an operation that never completes, or "
                 "on itself)", g->name, g->line[v], g->rank[v], goal_kind(g->kind[v]));
    }
}
static const lts_sim_deadlock_ops_t goal_deadlock = {goal_unit, goal_say};

/* The critical path (report.c): v's start cause is vcause, a receive's end cause vleft (v_recv);
 * causes are vertices, never a message to find back. */
static uint32_t goal_start_cause(const sim_t *s, int r, uint32_t v) { return s->vcause[v]; }
static uint32_t goal_end_cause(const sim_t *s, int r, uint32_t v) {
    return s->goal->kind[v] == LTS_GOAL_RECV ? s->vleft[v] : NONE;
}
static void goal_entry(const sim_t *s, int r, uint32_t v, lts_sim_cp_t *out) {
    *out = (lts_sim_cp_t){v, s->goal->rank[v], v, s->vstart[v], s->vend[v]};
}
static const lts_sim_cp_ops_t goal_cp = {goal_start_cause, goal_end_cause, NULL, goal_entry};

/* The walk starts from the operation that ends last (the first, on ties). */
static int critical_path(sim_t *s, lts_sim_result_t *res) {
    const lts_goal_t *g = s->goal;
    if (!g->nv) return 0;
    uint32_t last = 0;
    for (uint32_t v = 1; v < g->nv; v++)
        if (s->vend[v] > s->vend[last]) last = v;
    return lts_sim_critical_path(s, res, g->nv, g->rank[last], last, &goal_cp);
}

int lts_sim_run_goal(const lts_goal_t *g, const lts_sim_opts_t *o, lts_sim_result_t *res, char *err, size_t errlen) {
    sim_t s;
    memset(res, 0, sizeof *res);
    int rc = lts_sim_init(&s, g->P, o, err, errlen);
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
            rc = lts_sim_fail(&s, LTS_ENOMEM, "out of memory (%zu operations)", g->nv);
        else {
            memset(s.vcause, 0xff, (g->nv ? g->nv : 1) * sizeof *s.vcause);
            memset(s.lastv, 0xff, (size_t)g->P * sizeof *s.lastv);
        }
    }
    for (size_t v = 0; !rc && v < g->nv; v++) {
        if (g->kind[v] == LTS_GOAL_CALC && g->size[v] > INT64_MAX / 4 / s.unit)
            rc = lts_sim_fail(&s, LTS_ERANGE, "%s:%d: calc %lld: longer than the simulator's clock allows (10^5 s)", g->name,
                      g->line[v], (long long)g->size[v]);
        s.vleft[v] = g->ndeps[v];
        if (!g->ndeps[v]) rc = push(&s, EV_READY, g->rank[v], (uint32_t)v, 0);
    }
    ev_t e;
    while (!rc && (rc = lts_sim_next_event(&s, &e)) > 0) {
        int r = EV_RANK(e.p);
        switch (EV_TYPE(e.p)) {
        case EV_READY: rc = goal_ready(&s, EV_ARG(e.p)); break;
        case EV_MSG: rc = goal_msg(&s, r, &e); break;
        case EV_ARRIVE: rc = goal_arrive(&s, r, (int32_t)EV_ARG(e.p)); break;
        case EV_CTS: {
            int32_t m = (int32_t)EV_ARG(e.p);
            uint32_t v = s.q[m].h;
            int64_t done = lts_sim_do_cts(&s, r, m);
            rc = done < 0 ? s.failed : v_done(&s, v, done);
            break;
        }
        }
    }
    if (!rc) rc = lts_sim_deadlock(&s, g->nv, &goal_deadlock);
    if (!rc) rc = critical_path(&s, res);
    if (!rc) lts_sim_finish(&s, res, g->nv * (1 + 4 + 8 + 8 + 8 + 4) + (size_t)g->P * 4);
    lts_sim_free_state(&s);
    return rc;
}
