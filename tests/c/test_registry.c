#include "latscope/latscope.h"
#include "check.h"
#include <string.h>

int main(void) {
    /* the registries and their null rows */
    CHECK(lts_reg_find(&lts_timer_registry, "tsc") >= 0);
    CHECK(lts_reg_find(&lts_timer_registry, "null") >= 0);
    CHECK(lts_reg_find(&lts_timer_registry, "sundial") == LTS_ENOTFOUND);
    CHECK(lts_reg_find(&lts_p2p_registry, "pingpong") >= 0);
    CHECK(lts_reg_find(&lts_p2p_registry, "pingpong:k=3") >= 0);   /* parameters are not part of the name */
    char names[256];
    lts_reg_names(&lts_timer_registry, names, sizeof names);
    CHECK(!strcmp(names, "wtime, monotonic, tsc, null"));
    /* include/exclude grammar */
    uint64_t m;
    char bad[64];
    int w = lts_reg_find(&lts_timer_registry, "wtime"), t = lts_reg_find(&lts_timer_registry, "tsc");
    int nul = lts_reg_find(&lts_timer_registry, "null"), mo = lts_reg_find(&lts_timer_registry, "monotonic");
    CHECK(lts_reg_select(&lts_timer_registry, "wtime,tsc", &m, bad, sizeof bad) == LTS_OK && m == ((1u << w) | (1u << t)));
    CHECK(lts_reg_select(&lts_timer_registry, "-tsc", &m, bad, sizeof bad) == LTS_OK && m == ((1u << w) | (1u << mo)));
    CHECK(lts_reg_select(&lts_timer_registry, "all,-wtime", &m, bad, sizeof bad) == LTS_OK && m == ((1u << t) | (1u << mo)));
    CHECK(lts_reg_select(&lts_timer_registry, "null", &m, bad, sizeof bad) == LTS_OK && m == (1u << nul));
    CHECK(lts_reg_select(&lts_timer_registry, "wtime,sundial", &m, bad, sizeof bad) == LTS_ENOTFOUND && !strcmp(bad, "sundial"));
    CHECK(lts_reg_select(&lts_timer_registry, "wtime,,tsc", &m, bad, sizeof bad) == LTS_EINVAL);
    /* timers open without MPI (monotonic, tsc): resolution and overhead measured */
    lts_timer_t tm;
    CHECK(lts_timer_open("monotonic", &tm) == LTS_OK && tm.resolution_s > 0 && tm.resolution_s < 1e-5 && tm.overhead_s > 0);
    if (lts_cycles_available()) {
        CHECK(lts_timer_open("tsc", &tm) == LTS_OK && tm.ticks_per_s > 1e6 && tm.overhead_s > 0);
        /* the calibrated counter agrees with the monotonic clock over 50 ms to 1 % */
        lts_timer_t mono;
        lts_timer_open("monotonic", &mono);
        double a0 = lts_timer_now(&tm), b0 = lts_timer_now(&mono);
        while (lts_timer_now(&mono) - b0 < 0.05) {}
        double da = lts_timer_now(&tm) - a0, db = lts_timer_now(&mono) - b0;
        CHECK_NEAR(da / db, 1.0, 0.01);
    }
    CHECK(lts_timer_open("sundial", &tm) == LTS_ENOTFOUND);
    CHECK(!strcmp(lts_strerror(LTS_ETOOFEW), "too few ranks"));

    /* timing rows: row i is lts_timing_t i; what each needs is data the driver reads */
    for (int i = 0; i < LTS_TIMING_N; i++)
        CHECK(lts_timing_row((lts_timing_t)i) ==
              (const lts_timing_desc_t *)lts_reg_row(&lts_timing_registry, (size_t)i));
    CHECK(lts_timing_row(LTS_TIMING_N) == NULL);
    const lts_timing_desc_t *glob = lts_timing_row(LTS_TIMING_GLOBAL), *ind = lts_timing_row(LTS_TIMING_INDIVIDUAL);
    CHECK(glob->needs_clock && glob->sync_start && lts_timing_row(LTS_TIMING_MAX)->sync_start);
    CHECK(!lts_timing_row(LTS_TIMING_ROOT)->every_rank && lts_timing_row(LTS_TIMING_LOCAL)->every_rank);
    /* individual timing applies by the algorithm rows' flag, not by their names */
    const char *tasks[] = {"bcast linear", "bcast binomial", "scatter linear", "scatter binomial"};
    int ntasks = 0;
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        for (size_t i = 0; i < r->count; i++) {
            const lts_coll_alg_t *alg = (const lts_coll_alg_t *)lts_reg_row(r, i);
            char nm[64];
            snprintf(nm, sizeof nm, "%s %s", lts_reg_row(&lts_coll_op_names, (size_t)op)->name, alg->name);
            int listed = 0;
            for (int k = 0; k < 4; k++) listed |= !strcmp(nm, tasks[k]);
            CHECK(lts_timing_applies(ind, alg, 4) == listed);
            CHECK(lts_timing_applies(glob, alg, 1));   /* the other methods apply everywhere */
            ntasks += listed;
        }
    }
    CHECK(ntasks == 4);
    CHECK(!lts_timing_applies(ind, lts_coll_find(LTS_COLL_BCAST, "linear"), 1));   /* a task needs a target rank */
    CHECK(!lts_timing_applies(ind, NULL, 2) && lts_timing_applies(glob, NULL, 2));  /* p2p: no algorithm */
    /* a registered algorithm says what it allows: one row, no name anywhere else */
    lts_coll_fn_t fn = {.bcast = lts_bcast_binomial};
    CHECK(lts_coll_register(LTS_COLL_BCAST, "mytree", NULL, fn) == LTS_OK);
    CHECK(lts_coll_register_flags(LTS_COLL_BCAST, "mytree2", NULL, fn, LTS_ALG_TASKS) == LTS_OK);
    CHECK(!lts_timing_applies(ind, lts_coll_find(LTS_COLL_BCAST, "mytree"), 2));
    CHECK(lts_timing_applies(ind, lts_coll_find(LTS_COLL_BCAST, "mytree2"), 2));
    return CHECK_DONE();
}
