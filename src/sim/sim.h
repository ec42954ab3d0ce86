/* latscope's LogGOPS discrete-event simulator (docs/sim.md): schedules (GOAL text, or latscope's
 * own algorithms generated on the fly) run under LogGOPS (Hoefler, Schneider & Lumsdaine,
 * "LogGOPSim", HPDC 2010: L, o, g, G, O, S) with per-message extra delays drawn from a latscope
 * delay table by the injector's generator (src/inject/table.h). Pure C, no MPI.
 *
 * Times are integer picoseconds inside (int64: sums are exact, so a zero-noise run equals the
 * closed forms of latscope.models to the last digit, and runs are bit-for-bit deterministic).
 * Functions return 0 or a negative LTS_E* code (latscope/errors.h) with a one-line message in
 * err naming the bad input (file:line, rank, operation). */
#ifndef LTS_SIM_H
#define LTS_SIM_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LTS_SIM_ERRLEN 512
#define LTS_SIM_ANY (-1)   /* recv from any source / with any tag (GOAL's -1) */

/* LogGOPS parameters, picoseconds (G, O per byte). o_s/o_r: LogGOPS's o split as latscope's
 * fits measure it (docs/params-format.md). S: messages larger than S bytes go by rendezvous. */
typedef struct lts_sim_params {
    int64_t L, o_s, o_r, g, G, O;
    int64_t S;
} lts_sim_params_t;

/* One operation of a rank's program (generated schedules): executed in program order.
 * FLAG_SET stores the schedule's one shared-memory flag (no CPU, no NIC, no table delay: not an
 * MPI call); FLAG_WAIT spins until it is seen, L after the store (barrier_sim's flag_s default,
 * one cache-line transfer). */
enum { LTS_SIM_END = 0, LTS_SIM_SEND, LTS_SIM_IRECV, LTS_SIM_WAIT, LTS_SIM_CALC, LTS_SIM_FLAG_SET, LTS_SIM_FLAG_WAIT };
typedef struct lts_sim_op {
    int kind;
    int peer, tag;
    int64_t size;   /* bytes (send/irecv), picoseconds (calc) */
} lts_sim_op_t;

/* A generated schedule: op(rank, pc) is rank's pc-th operation (LTS_SIM_END past the last),
 * computed on demand from (rank, P, pc): nothing is stored per operation. */
typedef struct lts_sim_prog {
    const char *name;
    int P, k;
    int shm_flag;   /* the program stores or waits on the shared-memory flag (lts_sim_algo_t.shm_flag) */
    int64_t size;   /* message bytes where the algorithm has a payload (bcast) */
    void (*op)(const struct lts_sim_prog *p, int rank, uint32_t pc, lts_sim_op_t *out);
    /* optional: the operations from pc on, up to max (at least 1; the last may be LTS_SIM_END),
     * their number; the same as op() at pc, pc + 1, ... (one call per round instead of one per
     * operation: the call was a sixth of the engine's instructions per event) */
    int (*ops)(const struct lts_sim_prog *p, int rank, uint32_t pc, lts_sim_op_t *out, int max);
} lts_sim_prog_t;

/* The registry of generated schedules (src/sim/programs.c): one row per algorithm. */
typedef struct lts_sim_algo {
    const char *name, *what;
    void (*op)(const lts_sim_prog_t *p, int rank, uint32_t pc, lts_sim_op_t *out);
    int shm_flag;
    int (*ops)(const lts_sim_prog_t *p, int rank, uint32_t pc, lts_sim_op_t *out, int max);   /* or NULL */   /* 1: uses LTS_SIM_FLAG_SET/WAIT, a store seen by every rank at once: the engine
                       cannot process a window of L by rank (src/sim/exec_window.c, run_window) */
} lts_sim_algo_t;
extern const lts_sim_algo_t lts_sim_algos[];
extern const int lts_sim_nalgos;
int lts_sim_prog_init(lts_sim_prog_t *p, const char *name, int P, int k, int64_t size, char *err, size_t errlen);

/* Write a generated schedule as GOAL text: each rank's operations in program order; a send or
 * calc requires the operation before it and the receives of every wait before it, a receive is
 * posted (irequires) when the operation before it has started. LTS_ENOTSUP for a schedule with a
 * shared-memory flag (tree-shm): GOAL has no such operation. */
int lts_sim_prog_write_goal(const lts_sim_prog_t *p, FILE *f);

/* A GOAL schedule (LogGOPSim/Schedgen text), parsed into arrays (src/sim/goal.c). */
typedef struct lts_goal lts_goal_t;
int lts_goal_parse(const char *text, size_t len, const char *name, lts_goal_t **out, char *err, size_t errlen);
int lts_goal_load(const char *path, lts_goal_t **out, char *err, size_t errlen);
int lts_goal_nranks(const lts_goal_t *g);
size_t lts_goal_nops(const lts_goal_t *g);
void lts_goal_free(lts_goal_t *g);

/* An OS-noise trace (src/sim/noise.c, docs/sim.md "Variation"): n detours (start, duration) in
 * ps, det[2i], det[2i+1], starts increasing, not overlapping, within [0, span); repeated every
 * span on each rank from a phase of the rank's own. */
typedef struct lts_sim_noise { int64_t *det; size_t n; int64_t span; } lts_sim_noise_t;
int lts_sim_noise_parse(const char *text, size_t len, const char *name, lts_sim_noise_t *out, char *err, size_t errlen);
int lts_sim_noise_load(const char *path, lts_sim_noise_t *out, char *err, size_t errlen);
void lts_sim_noise_free(lts_sim_noise_t *nz);

typedef struct lts_sim_opts {
    lts_sim_params_t par;
    const uint64_t *table;   /* LTS_INJECT_TABLE_N delays in ns, or NULL: no variation */
    uint64_t seed;
    int64_t goal_unit_ps;    /* a GOAL calc's unit (default 1000: ns, LogGOPSim's convention) */
    int64_t noise_period, noise_detour;   /* OS noise, ps: a detour every period per rank (0: none) */
    int critical_path;       /* generated schedules: record the critical path (GOAL schedules always do) */
    const lts_sim_noise_t *noise_trace;   /* OS noise from a trace (NULL or no detours: none); not
                                             with noise_period */
} lts_sim_opts_t;

#define LTS_SIM_CP_MAX 100000
/* One operation of a critical path: GOAL, op is its index in the lts_goal_t arrays; a generated
 * schedule, rank and pc (the operation lts_sim_prog_t.op gives). */
typedef struct lts_sim_cp { uint32_t op; int rank; uint32_t pc; int64_t start, end; } lts_sim_cp_t;

typedef struct lts_sim_result {
    int P;
    int64_t *finish;      /* per rank: the end of its last operation, ps (malloc'ed) */
    int64_t *delay_ps;    /* per rank: table delay drawn, ps (malloc'ed; NULL without a table) */
    uint64_t events, messages, delays;
    int64_t delay_sum;    /* ps of table delay drawn, all ranks */
    size_t peak_bytes;    /* the engine's own arrays at the end (pools, per-rank state) */
    lts_sim_cp_t *cp;     /* the critical path, in time order (malloc'ed; NULL for a generated schedule
                             run without opts.critical_path) */
    size_t ncp, ncp_total;   /* entries in cp; length of the whole path (cp keeps its end) */
} lts_sim_result_t;

int lts_sim_run_prog(const lts_sim_prog_t *p, const lts_sim_opts_t *o, lts_sim_result_t *res, char *err, size_t errlen);
int lts_sim_run_goal(const lts_goal_t *g, const lts_sim_opts_t *o, lts_sim_result_t *res, char *err, size_t errlen);
void lts_sim_result_free(lts_sim_result_t *r);

/* GOAL internals shared by goal.c and the GOAL executor (exec_goal.c) */
enum { LTS_GOAL_SEND = 1, LTS_GOAL_RECV, LTS_GOAL_CALC };
struct lts_goal {
    const char *name;
    int P;
    size_t nv;
    uint8_t *kind;
    int32_t *rank, *peer, *tag, *line;
    int64_t *size;          /* bytes, or calc units */
    uint32_t *ndeps;        /* dependencies of each vertex */
    size_t *dep_off;        /* nv + 1: dependents of v are dep_list[dep_off[v] .. dep_off[v+1]) */
    uint32_t *dep_list;     /* vertex | LTS_GOAL_IREQ (the dependent starts when v starts) */
};
#define LTS_GOAL_IREQ 0x80000000u

#endif
