/* Test hooks: faults and fakes that tests ask for (a rank that reaches every common start late,
 * a known cost inside every send and receive of the LogP measurements, "nodes" of m ranks on one
 * machine, a known clock skew). The library never reads the environment for them: a program
 * fills one struct and hands it over (lts_set_test_hooks); latscope-bench and the check programs
 * take it from LATSCOPE_TEST_* variables (apps/test_hooks.c; docs/architecture.md). All zero --
 * the default -- is normal operation and costs nothing. */
#ifndef LATSCOPE_HOOKS_H
#define LATSCOPE_HOOKS_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct lts_test_hooks {
    double arrive_late_s;   /* global timing: ranks other than 0 reach every common start this late (s) */
    double send_cost_s;     /* logp operations: busy-wait inside every timed send call path (s) */
    double recv_cost_s;     /* logp operations: busy-wait after every timed receive (s) */
    int shm_node_size;      /* > 0: "nodes" of this many consecutive ranks (shm barrier rows, logp's flag) */
    int clock_skew;         /* 1: rank r's timer reports (1 + r*skew_drift) t + r*skew_offset_s */
    double skew_offset_s, skew_drift;
} lts_test_hooks_t;

/* Copy *h into the library's hooks (NULL: back to all zero). Call before measuring. */
void lts_set_test_hooks(const lts_test_hooks_t *h);
/* The hooks in force (never NULL). */
const lts_test_hooks_t *lts_test_hooks(void);

#ifdef __cplusplus
}
#endif
#endif
