/* LATSCOPE_TEST_* -> lts_test_hooks_t (apps/test_hooks.h). Compiled into each program that honours
 * the hooks; the library itself never reads them (docs/architecture.md). */
#include "test_hooks.h"
#include "latscope/errors.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int seconds(const char *name, double *out, char *msg, size_t len) {
    const char *v = getenv(name);
    *out = 0.0;
    if (!v || !*v) return 0;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < 0) {
        snprintf(msg, len, "%s='%s': must be a number of seconds >= 0", name, v);
        return LTS_EINVAL;
    }
    *out = x;
    return 0;
}

int lts_test_hooks_from_env(lts_test_hooks_t *h, char *msg, size_t len) {
    memset(h, 0, sizeof *h);
    int rc;
    if ((rc = seconds("LATSCOPE_TEST_ARRIVE_LATE_S", &h->arrive_late_s, msg, len)) ||
        (rc = seconds("LATSCOPE_TEST_SEND_COST_S", &h->send_cost_s, msg, len)) ||
        (rc = seconds("LATSCOPE_TEST_RECV_COST_S", &h->recv_cost_s, msg, len)))
        return rc;
    const char *v = getenv("LATSCOPE_TEST_SHM_NODE_SIZE");
    if (v && *v) {
        char *end;
        long m = strtol(v, &end, 10);
        if (end == v || *end || m < 1 || m > 1 << 20) {
            snprintf(msg, len, "LATSCOPE_TEST_SHM_NODE_SIZE='%s': must be a whole number of ranks >= 1", v);
            return LTS_EINVAL;
        }
        h->shm_node_size = (int)m;
    }
    v = getenv("LATSCOPE_TEST_CLOCK_SKEW");
    if (v && *v) {
        char *end;
        double off = strtod(v, &end), drift = NAN;
        if (end != v && *end == ',') {
            const char *p = end + 1;
            drift = strtod(p, &end);
            if (end == p || *end) drift = NAN;
        }
        if (!isfinite(off) || !isfinite(drift)) {
            snprintf(msg, len, "LATSCOPE_TEST_CLOCK_SKEW='%s': must be OFFSET_S,DRIFT (rank r gets r times each)", v);
            return LTS_EINVAL;
        }
        h->clock_skew = 1;
        h->skew_offset_s = off;
        h->skew_drift = drift;
    }
    return 0;
}
