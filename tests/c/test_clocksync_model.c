/* The drift-model choice of clock synchronisation (lts_clocksync_choose_model) and the
 * duration parser, on synthetic data: a real drift is kept and recovered; noise, and a "drift"
 * that stops half-way (a line fitted to the first part extrapolates badly), are rejected for
 * offset only. */
#include "latscope/latscope.h"
#include "test_hooks.h"
#include "check.h"
#include <stdlib.h>
#include <string.h>

int main(void) {
    enum { N = 12 };
    double t[N], th[N], a, b;
    /* offset 5 us + drift 1e-4 (100 ppm) with +-0.2 us noise (deterministic pattern) */
    for (int i = 0; i < N; i++) {
        t[i] = 0.01 * i;
        th[i] = 5e-6 + 1e-4 * t[i] + ((i % 3) - 1) * 0.2e-6;
    }
    CHECK(lts_clocksync_choose_model(t, th, N, &a, &b) == 1);
    CHECK_NEAR(b, 1e-4, 0.05e-4);
    CHECK_NEAR(a, 5e-6, 0.5e-6);

    /* offset only: noise alternating around 5 us, with an upward wiggle in the fit window */
    for (int i = 0; i < N; i++) th[i] = 5e-6 + (i < 8 ? 0.1e-6 * i : 0.0) - 0.35e-6 * (i >= 8);
    CHECK(lts_clocksync_choose_model(t, th, N, &a, &b) == 0);
    CHECK(b == 0.0);
    double mean = 0;
    for (int i = 0; i < N; i++) mean += th[i];
    CHECK_NEAR(a, mean / N, 1e-15);

    /* a "drift" that stops: rising for the first 2/3, flat after: the line predicts the later
     * third worse than the constant and is rejected */
    for (int i = 0; i < N; i++) th[i] = i < 8 ? 1e-6 * i : 4e-6;
    CHECK(lts_clocksync_choose_model(t, th, N, &a, &b) == 0);

    /* too few samples: offset only */
    CHECK(lts_clocksync_choose_model(t, th, 2, &a, &b) == 0);
    CHECK_NEAR(a, 0.5e-6, 1e-15);

    /* durations */
    double s;
    CHECK(lts_parse_duration("30us", &s) == 0); CHECK_NEAR(s, 30e-6, 1e-18);
    CHECK(lts_parse_duration("2ms", &s) == 0); CHECK_NEAR(s, 2e-3, 1e-15);
    CHECK(lts_parse_duration("150ns", &s) == 0); CHECK_NEAR(s, 150e-9, 1e-18);
    CHECK(lts_parse_duration("0x10", &s) == LTS_EINVAL);     /* hexadecimal is not a duration */
    CHECK(lts_parse_duration("0x1p-3s", &s) == LTS_EINVAL);
    CHECK(lts_parse_duration("0.5", &s) == 0); CHECK_NEAR(s, 0.5, 0);
    CHECK(lts_parse_duration("1s", &s) == 0); CHECK_NEAR(s, 1.0, 0);
    CHECK(lts_parse_duration("-1us", &s) == LTS_EINVAL);
    CHECK(lts_parse_duration("3 parsecs", &s) == LTS_EINVAL);
    CHECK(lts_parse_duration("", &s) == LTS_EINVAL);
    CHECK(lts_parse_duration("2h", &s) == LTS_EINVAL);
    CHECK(lts_parse_duration("7200", &s) == LTS_ERANGE);

    /* the test hooks: the programs' reading of LATSCOPE_TEST_* (apps/test_hooks.c), the library's
     * use of what they were given (the timer skew) */
    lts_timer_t tm = {0};
    lts_test_hooks_t h;
    char msg[256];
    setenv("LATSCOPE_TEST_CLOCK_SKEW", "0.5,1e-4", 1);
    setenv("LATSCOPE_TEST_SHM_NODE_SIZE", "2", 1);
    setenv("LATSCOPE_TEST_RECV_COST_S", "2e-6", 1);
    CHECK(lts_test_hooks_from_env(&h, msg, sizeof msg) == 0);
    CHECK(h.clock_skew == 1 && h.shm_node_size == 2 && h.send_cost_s == 0.0);
    CHECK_NEAR(h.recv_cost_s, 2e-6, 1e-18);
    CHECK(lts_timer_apply_test_skew(&tm, 3) == 0);   /* not handed to the library yet */
    lts_set_test_hooks(&h);
    CHECK(lts_test_hooks()->shm_node_size == 2);
    CHECK(lts_timer_apply_test_skew(&tm, 3) == 1);
    CHECK_NEAR(tm.skew_offset_s, 1.5, 1e-12);
    CHECK_NEAR(tm.skew_drift, 3e-4, 1e-15);
    lts_set_test_hooks(NULL);
    CHECK(lts_test_hooks()->shm_node_size == 0 && !lts_test_hooks()->clock_skew);
    static const char *bad[][2] = {{"LATSCOPE_TEST_CLOCK_SKEW", "0.5;x"}, {"LATSCOPE_TEST_CLOCK_SKEW", "0.5,"},
                                   {"LATSCOPE_TEST_SHM_NODE_SIZE", "0"}, {"LATSCOPE_TEST_SHM_NODE_SIZE", "2x"},
                                   {"LATSCOPE_TEST_SEND_COST_S", "-1e-6"}, {"LATSCOPE_TEST_ARRIVE_LATE_S", "soon"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsetenv("LATSCOPE_TEST_CLOCK_SKEW");
        unsetenv("LATSCOPE_TEST_SHM_NODE_SIZE");
        setenv(bad[i][0], bad[i][1], 1);
        msg[0] = 0;
        CHECK(lts_test_hooks_from_env(&h, msg, sizeof msg) == LTS_EINVAL);
        CHECK(strstr(msg, bad[i][0]) && strstr(msg, bad[i][1]));   /* names the variable and the value */
        unsetenv(bad[i][0]);
    }
    unsetenv("LATSCOPE_TEST_RECV_COST_S");
    CHECK(lts_test_hooks_from_env(&h, msg, sizeof msg) == 0 && !h.clock_skew && h.recv_cost_s == 0.0);
    return CHECK_DONE();
}
