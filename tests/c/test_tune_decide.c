/* lts_tune_decide_obs / lts_tune_decide: the eligibility rule of selection (tune.h,
 * docs/tune-format.md "Which candidates are ranked"). A negative median (root timing's
 * confirmation subtraction, never clamped), a median whose CI reaches zero, an undefined one,
 * one without valid repetitions and a non-converged one whose CI overlaps another's never win,
 * and the table says why; a non-converged point clearly apart is still ranked; a size with no
 * eligible candidate is LTS_ENOELIGIBLE naming the size. No MPI needed (the registry is static). */
#include "latscope/latscope.h"
#include "check.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define US 1e-6
/* a converged point with a narrow CI around m */
static lts_tune_obs_t ok(double m) { return (lts_tune_obs_t){m, m * 0.99, m * 1.01, 0.01, 200, 200, 0, LTS_STOP_CONVERGED}; }

int main(void) {
    const lts_coll_alg_t *nat = lts_coll_find(LTS_COLL_SCATTER, "native"), *lin = lts_coll_find(LTS_COLL_SCATTER, "linear"),
                         *bin = lts_coll_find(LTS_COLL_SCATTER, "binomial");
    CHECK(nat && lin && bin);
    if (!nat || !lin || !bin) return CHECK_DONE();
    const lts_coll_alg_t *cand[] = {nat, lin, bin};
    enum { NS = 5 };
    size_t sz[NS] = {0, 8, 64, 4096, 65536};
    lts_tune_obs_t o[3 * NS];
    /* 0 B: native's median is negative (the demo's -0.64 us); it is the smallest, yet linear wins */
    o[0 * NS + 0] = (lts_tune_obs_t){-0.64 * US, -0.65 * US, -0.63 * US, 0.01, 200, 200, 196, LTS_STOP_CONVERGED};
    o[1 * NS + 0] = ok(0.58 * US);
    o[2 * NS + 0] = ok(1.6 * US);
    /* 8 B: native not measured (NaN); linear's CI reaches below zero; binomial wins */
    o[0 * NS + 1] = (lts_tune_obs_t){NAN, NAN, NAN, NAN, 0, 0, 0, 0};
    o[1 * NS + 1] = (lts_tune_obs_t){0.2 * US, -0.1 * US, 0.5 * US, 1.5, 30, 30, 12, LTS_STOP_FIXED};
    o[2 * NS + 1] = ok(3 * US);
    /* 64 B: native smallest but stopped on the budget with rel_err 0.3 and its CI overlaps
     * linear's: set aside; binomial stopped on max_reps within the target: converged */
    o[0 * NS + 2] = (lts_tune_obs_t){1.0 * US, 0.7 * US, 1.3 * US, 0.3, 40, 40, 0, LTS_STOP_BUDGET};
    o[1 * NS + 2] = ok(1.22 * US);
    o[2 * NS + 2] = (lts_tune_obs_t){5 * US, 4.95 * US, 5.05 * US, 0.01, 2000, 2000, 0, LTS_STOP_MAX_REPS};
    /* 4096 B: native not converged but its CI lies below everyone's: ranked, and wins */
    o[0 * NS + 3] = (lts_tune_obs_t){1.0 * US, 0.9 * US, 1.1 * US, 0.1, 50, 50, 0, LTS_STOP_BUDGET};
    o[1 * NS + 3] = ok(3 * US);
    o[2 * NS + 3] = ok(2 * US);
    /* 65536 B: binomial kept no repetition (median 0 from nowhere): set aside; native wins */
    o[0 * NS + 4] = ok(10 * US);
    o[1 * NS + 4] = ok(12 * US);
    o[2 * NS + 4] = (lts_tune_obs_t){1 * US, NAN, NAN, NAN, 0, 64, 0, LTS_STOP_BUDGET};

    char msg[1024] = "";
    lts_tune_table_t *t = NULL;
    CHECK(lts_tune_decide_obs(LTS_COLL_SCATTER, 2, cand, 3, sz, NS, o, 0.025, &t, msg, sizeof msg) == 0 && t);
    if (!t) return CHECK_DONE();
    const lts_coll_alg_t *want[NS] = {lin, bin, lin, nat, nat};
    size_t k = 0;
    for (size_t r = 0; r < t->nranges; r++)
        for (size_t p = 0; p < t->ranges[r].npoints; p++, k++) CHECK(k < NS && t->ranges[r].alg == want[k]);
    CHECK(k == NS);
    CHECK(lts_tune_lookup(t, 0) == lin && lts_tune_lookup(t, 8) == bin && lts_tune_lookup(t, 64) == lin &&
          lts_tune_lookup(t, 4096) == nat);
    /* the reasons, where the table keeps them */
    const lts_tune_point_t *p0 = &t->ranges[0].points[0], *p8 = &t->ranges[1].points[0], *p64 = &t->ranges[2].points[0];
    CHECK(p0->size_bytes == 0 && p0->set_aside && p0->set_aside[0] && !p0->set_aside[1] && !p0->set_aside[2]);
    CHECK(p0->set_aside && strstr(p0->set_aside[0], "median -0.640 us is not positive") &&
          strstr(p0->set_aside[0], "196 of 200 samples negative"));
    CHECK(p8->size_bytes == 8 && p8->set_aside && strstr(p8->set_aside[0], "no median") &&
          strstr(p8->set_aside[1], "cannot be told from zero: its CI reaches -0.100 us"));
    CHECK(p64->size_bytes == 64 && p64->set_aside && p64->set_aside[0] &&
          strstr(p64->set_aside[0], "not converged (stop budget, rel_err 0.3 > target 0.025)") &&
          strstr(p64->set_aside[0], "overlaps linear's") && !p64->set_aside[2]);
    const lts_tune_point_t *p4k = &t->ranges[3].points[0], *p64k = &t->ranges[3].points[1];
    CHECK(p4k->size_bytes == 4096 && p4k->set_aside == NULL);
    CHECK(p64k->size_bytes == 65536 && p64k->set_aside && strstr(p64k->set_aside[2], "no valid repetition (reps_valid 0 of 64)"));

    /* JSON: set_aside is written where something was set aside, read back, same bytes */
    char *a = NULL, *b = NULL;
    CHECK(lts_tune_to_json(t, &a) == 0 && a && strstr(a, "\"set_aside\""));
    lts_tune_table_t *u = NULL;
    CHECK(a && lts_tune_parse(a, strlen(a), &u, msg, sizeof msg) == 0 && u);
    if (u) {
        CHECK(lts_tune_to_json(u, &b) == 0 && !strcmp(a, b));
        CHECK(u->ranges[0].points[0].set_aside && !strcmp(u->ranges[0].points[0].set_aside[0], p0->set_aside[0]));
    }
    lts_tune_free(u);
    u = NULL;
    /* a table whose range algorithm is listed as set aside is refused by the loader */
    if (a) {
        char *bad = strdup(a), *q = strstr(bad, "\"set_aside\"");   /* the first: 0 B, native */
        q = q ? strstr(q, "\"native\"") : NULL;
        CHECK(q != NULL);
        if (q) memcpy(q, "\"linear\"", 8);   /* 0 B: linear is the range's algorithm */
        CHECK(lts_tune_parse(bad, strlen(bad), &u, msg, sizeof msg) == LTS_EINVAL && strstr(msg, "never wins"));
        free(bad);
    }
    free(a);
    free(b);
    lts_tune_free(t);

    /* no eligible candidate at a size: LTS_ENOELIGIBLE, the message names the size and reasons */
    size_t s16[] = {16};
    lts_tune_obs_t none[3] = {{-1 * US, -1.1 * US, -0.9 * US, 0.1, 30, 30, 30, LTS_STOP_FIXED},
                              {NAN, NAN, NAN, NAN, 0, 0, 0, 0},
                              {2 * US, 1 * US, 3 * US, 0.5, 40, 40, 0, LTS_STOP_BUDGET}};
    /* binomial alone, not converged, is apart from nobody: ranked */
    CHECK(lts_tune_decide_obs(LTS_COLL_SCATTER, 2, cand, 3, s16, 1, none, 0.025, &t, msg, sizeof msg) == 0 && t &&
          t->ranges[0].alg == bin);
    lts_tune_free(t);
    none[2].ci_lo_s = NAN;   /* ... but without a CI it cannot be placed */
    msg[0] = '\0';
    CHECK(lts_tune_decide_obs(LTS_COLL_SCATTER, 2, cand, 3, s16, 1, none, 0.025, &t, msg, sizeof msg) == LTS_ENOELIGIBLE &&
          !t);
    CHECK(strstr(msg, "size 16 B: no eligible candidate") && strstr(msg, "native: median -1.000 us is not positive") &&
          strstr(msg, "linear: no median") && strstr(msg, "binomial: not converged") && strstr(msg, "it has no CI"));
    CHECK(!strcmp(lts_strerror(LTS_ENOELIGIBLE), "no eligible candidate (medians negative, undefined or not converged)"));

    /* the medians-only form: a negative or NaN median never wins either */
    size_t s2[] = {0, 8};
    double md[] = {/*nat*/ -0.5 * US, NAN, /*lin*/ 1 * US, 2 * US, /*bin*/ 2 * US, 1.5 * US};
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 2, cand, 3, s2, 2, md, &t) == 0 && t && t->nranges == 2 &&
          t->ranges[0].alg == lin && t->ranges[1].alg == bin);
    lts_tune_free(t);
    double neg[] = {-1, 0, NAN};
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 2, cand, 3, s16, 1, neg, &t) == LTS_ENOELIGIBLE && !t);
    return CHECK_DONE();
}
