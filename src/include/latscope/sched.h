/* Scheduling of pairwise / triplet experiments into rounds of disjoint groups. */
#ifndef LATSCOPE_SCHED_H
#define LATSCOPE_SCHED_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Round-robin tournament (circle method) over P ranks: every pair i<j meets exactly once in
 * P-1 rounds (P even) or P rounds (P odd, one rank idle per round). round_of receives, for each
 * rank, its partner in round r (-1: idle). Returns the number of rounds. */
int lts_tournament_rounds(int P);
int lts_tournament_partner(int P, int round, int rank);

/* Greedy first-fit packing of groups (each of `width` ranks, row-major in `ranks`) into rounds of
 * rank-disjoint groups, preserving order within a round. round_of[g] receives each group's round.
 * Returns the number of rounds or a negative error. */
int lts_pack_rounds(int P, const int *ranks, size_t ngroups, int width, int *round_of);

#ifdef __cplusplus
}
#endif
#endif
