/* The end of a simulator run, the same for every executor (exec_prog.c, exec_window.c,
 * exec_goal.c): the deadlock report when the queue ran dry before every operation was done, and
 * the critical path (docs/sim.md "Outputs"). The executors say what their units and records are
 * (engine_internal.h: lts_sim_deadlock_ops_t, lts_sim_cp_ops_t); the rules are here, once. */
#include "engine_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line: "deadlock: " and the executor's words for unit i, in s->err as the first failure. */
static int deadlock_say(sim_t *s, size_t i, const lts_sim_deadlock_ops_t *ops) {
    static const char pre[] = "deadlock: ";
    const size_t np = sizeof pre - 1;
    if (s->err && s->errlen && !s->failed) {
        if (s->errlen > np) {
            memcpy(s->err, pre, np);
            ops->say(s, i, s->err + np, s->errlen - np);
        } else {   /* as vsnprintf would cut it */
            memcpy(s->err, pre, s->errlen - 1);
            s->err[s->errlen - 1] = '\0';
        }
    }
    s->failed = LTS_EINVAL;
    return LTS_EINVAL;
}

/* A unit blocked in an operation that can never complete is what a user looks for first; a unit
 * that never became ready only waits for one of those (or for itself, a cycle), so it is told only
 * when no unit is blocked. */
int lts_sim_deadlock(sim_t *s, size_t n, const lts_sim_deadlock_ops_t *ops) {
    size_t waiting = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        int st = ops->state(s, i);
        if (st == LTS_SIM_UNIT_BLOCKED) return deadlock_say(s, i, ops);
        if (st == LTS_SIM_UNIT_WAITING && waiting == SIZE_MAX) waiting = i;
    }
    return waiting == SIZE_MAX ? 0 : deadlock_say(s, waiting, ops);
}

/* From the operation that ends last back along the causes: the operations that decided the end
 * time, in time order (res->cp: LTS_SIM_CP_MAX at most, the latest ones). A step back from v goes
 * to what decided its end: a receive's end cause (its rank's CPU/NIC holder, or its message's
 * send), else its start cause. Reached through an irequires edge, only v's start mattered
 * (LogGOPSim: irequires is "started", requires "completed"), so the walk goes on from v's start
 * cause. A receive posted early and completed late can be reached twice: first for its
 * completion, then, through an operation that irequires it (and held the CPU it waited for), for
 * its posting; it is listed once, where it completed, and the walk goes on from what posted it.
 * Each operation is listed once and passed at most twice, so the walk ends. */
int lts_sim_critical_path(sim_t *s, lts_sim_result_t *res, size_t n, int r, uint32_t v, const lts_sim_cp_ops_t *ops) {
    uint8_t *mark = calloc(n ? n : 1, 1);   /* 1 listed, 2 passed again */
    size_t len = 0, cap = 1024;
    lts_sim_cp_t *path = malloc(cap * sizeof *path);
    if (!mark || !path) {
        free(mark);
        free(path);
        return lts_sim_fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", n);
    }
    int started = 0;   /* v was reached through an irequires edge: its start is what counted */
    while (v != CP_NONE) {
        if (mark[v] == 2) break;
        int again = mark[v] == 1;
        mark[v] = again ? 2 : 1;
        if (!again) {
            if (len == cap) {
                lts_sim_cp_t *np = realloc(path, (cap *= 2) * sizeof *path);
                if (!np) {
                    free(mark);
                    free(path);
                    return lts_sim_fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", n);
                }
                path = np;
            }
            ops->entry(s, r, v, &path[len++]);
        }
        uint32_t c = ops->start_cause(s, r, v);
        if (!started && !again) {
            uint32_t ec = ops->end_cause(s, r, v);
            if (ec != CP_NONE) {
                c = ec;
                if (ops->message && (c & CP_MSG)) {   /* a message: on to its send, on the sender */
                    v = ops->message(s, &r, v, c);
                    started = 0;
                    continue;
                }
            }
        }
        started = c != CP_NONE && (c & LTS_GOAL_IREQ);
        v = c == CP_NONE ? CP_NONE : c & ~LTS_GOAL_IREQ;
    }
    free(mark);
    res->ncp_total = len;
    size_t k = len > LTS_SIM_CP_MAX ? LTS_SIM_CP_MAX : len;
    res->cp = malloc((k ? k : 1) * sizeof *res->cp);
    if (!res->cp) {
        free(path);
        return lts_sim_fail(s, LTS_ENOMEM, "out of memory (critical path of %zu operations)", k);
    }
    res->ncp = k;
    for (size_t i = 0; i < k; i++) res->cp[k - 1 - i] = path[i];   /* path[0] is the last: the latest k, reversed */
    free(path);
    return 0;
}
