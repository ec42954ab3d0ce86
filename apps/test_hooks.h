/* The programs' side of the test hooks (include/latscope/hooks.h): read LATSCOPE_TEST_* once. */
#ifndef LATSCOPE_APPS_TEST_HOOKS_H
#define LATSCOPE_APPS_TEST_HOOKS_H
#include "latscope/hooks.h"
#include <stddef.h>

/* Fill *h from the environment:
 *   LATSCOPE_TEST_ARRIVE_LATE_S=S   LATSCOPE_TEST_SEND_COST_S=S   LATSCOPE_TEST_RECV_COST_S=S
 *   LATSCOPE_TEST_SHM_NODE_SIZE=M   LATSCOPE_TEST_CLOCK_SKEW=OFFSET_S,DRIFT
 * Unset or empty: zero. Returns 0, or LTS_EINVAL with msg naming the variable, its value and what
 * is allowed (a malformed value is an error, never silently zero). */
int lts_test_hooks_from_env(lts_test_hooks_t *h, char *msg, size_t len);

#endif
