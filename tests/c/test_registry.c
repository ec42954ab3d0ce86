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
    return CHECK_DONE();
}
