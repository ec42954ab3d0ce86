/* LogP / LogGP / PLogP parameter measurement on a pair of ranks (src/bench/ops_logp.c): the
 * operations o_s, o_r, rtt and g, timed by the one driver; `latscope-bench logp` runs them and
 * `latscope fit logp` turns the records into parameters (docs/barriers.md, "LogP"). */
#ifndef LATSCOPE_LOGP_H
#define LATSCOPE_LOGP_H
#include "latscope/bench.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Rows: "o_s", "o_r", "rtt", "g" (pair operations, group rank 0's clock). */
extern const lts_registry_t lts_logp_registry;

/* A copy of row `name` ready for a campaign with `window` (g: messages per train; its value is
 * scaled to time per message). LTS_ENOTFOUND, LTS_EINVAL (window < 1). */
int lts_logp_op(const char *name, int window, lts_op_desc_t *out);

/* o_r's delay between the partner's send and the timed receive; < 0: automatic (twice a quick
 * RTT of the point's size, at least 10 us). Set identically on both ranks before measuring. */
void lts_logp_set_delay(double seconds);

/* "catch" (src/bench/ops_logp_catch.c): the lead a partner's send needs for a posted receive's
 * MPI_Wait to find it at its first look, swept on the pair group[0], group[1] of comm (one node:
 * a shared-memory window carries the call time). Collective over comm; every rank gets m's
 * samples (the boundary's quantiles, seconds; negative: the send may start after the call);
 * free with lts_measurement_free. */
int lts_logp_catch(MPI_Comm comm, const int group[2], lts_measurement_t *m);

#ifdef __cplusplus
}
#endif
#endif
