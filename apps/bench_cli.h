/* The shared command-line machinery of latscope-bench: the verdict on bad input (fail: the
 * first error wins, rank 0 prints it, every rank exits 2), the options every measuring command
 * takes (common_*), the results emitter, and the command table. A command in its own file
 * (apps/cmd_NAME.c, picked up by CMake) registers itself with LTS_BENCH_COMMAND; it never edits
 * latscope_bench.c. Its own options use values from O_USER up and are merged with the common
 * ones by command_opt(). */
#ifndef LATSCOPE_APPS_BENCH_CLI_H
#define LATSCOPE_APPS_BENCH_CLI_H
#include "app.h"
#include "latscope/latscope.h"
#include "test_hooks.h"
#include <getopt.h>
#include <stdio.h>

typedef struct emit_ctx {
    FILE *out;
    lts_run_info_t *info;
    int raw, progress;
    size_t done, total;
    int io_error;
} emit_ctx_t;

/* A command's row: its name, its own options, its --help, and its defaults where they differ
 * from the common ones. common_init applies them; command_opt parses with them. */
typedef struct cmd_spec {
    const char *name;            /* "tune": messages point to `latscope-bench tune --help` */
    const struct option *own;    /* its own options (values from O_USER up), zero-terminated; NULL: none */
    const char *help;            /* its --help, printed after latscope-bench's usage; NULL: the usage only */
    int help_alone;              /* 1: --help prints help without latscope-bench's usage before it */
    const char *sizes, *timer, *timing;   /* --sizes, --timer, --timing defaults; NULL: the common ones */
    unsigned timing_allowed;     /* the --timing methods it takes, one bit per lts_timing_t; 0: root, max */
    int warmup;                  /* --warmup's default; 0: the repetition policy's */
    const char *op;              /* --op's default; NULL: the command takes no --op */
    int coll;                    /* 1: it measures a collective and takes --alg (default all), --root (default 0) */
} cmd_spec_t;

typedef struct common {
    const char *sizes_spec, *timer_name, *timing, *sync_name, *output;
    int sizes_given, min_reps_given, raw, progress, sync_i;
    unsigned long long seed;
    lts_rep_policy_t pol;
    lts_timing_t tmeth;        /* the timing method when one is selected */
    unsigned timings;          /* the selected methods, one bit per lts_timing_t */
    unsigned timing_allowed;   /* from the command's row (default root, max) */
    double dummy_work_s;       /* --dummy-work */
    size_t *sizes, nsizes;
    lts_timer_t timer;
    FILE *out;
    const cmd_spec_t *cmd;     /* the command these are the options of */
    const char *op_name, *alg_spec, *root_s;   /* --op, --alg, --root where the command takes them */
    int opt;                   /* command_opt: the command's own option just read */
    int help;                  /* command_opt: --help was given (and printed) */
    struct option *opts_;      /* command_opt's merged option table while it scans */
} common_t;

enum { O_OP = 256, O_MODE, O_PAIRS, O_TRIPLETS, O_SIZES, O_REPLY, O_WINDOW, O_TIMER, O_TIMING, O_SYNC,
       O_WARMUP, O_MINR, O_MAXR, O_CONF, O_RELERR, O_RULE, O_BUDGET, O_SEED, O_RAW, O_OUTPUT, O_PROGRESS, O_ALG, O_ROOT, O_HELP,
       O_CLOCKSYNC, O_RESYNC, O_STARTWIN, O_DUMMY, O_PIPELINED,
       O_USER = 1000 };

/* The common options (and those of p2p/coll), terminated by a zero row. */
extern const struct option lts_cli_opts[];

int parse_int(app_t *a, const char *flag, const char *v, long lo, long hi, int *out);
int parse_dbl(app_t *a, const char *flag, const char *v, double *out);
/* A duration with a unit ("30us"); fails naming the flag and the allowed form. */
int parse_duration(app_t *a, const char *flag, const char *v, double *out);
/* Row index of `name` in r, or -1 after fail() listing the valid names. */
int lookup(app_t *a, const lts_registry_t *r, const char *flag, const char *name);
/* lts_point_cb writing one record (and a progress line); ud is an emit_ctx_t. */
void on_point(void *ud, const lts_point_t *pt);
/* lts_coll_cfg_t.on_sync: a "clock_sync" record before the points it serves; ud is an emit_ctx_t. */
void on_sync(void *ud, const lts_clocksync_info_t *info);
/* "0:1,2:3" (width 2) or "0:1:2,..." (width 3): groups of world ranks < P; caller frees *out. */
int parse_groups(app_t *a, const char *flag, const char *spec, int width, int P, int **out, size_t *n);
/* the built-in commands (apps/cmd_p2p.c, apps/cmd_coll.c) */
int cmd_p2p(app_t *a, int argc, char **argv, int full_argc, char **full_argv);
int cmd_coll(app_t *a, int argc, char **argv, int full_argc, char **full_argv);

/* The common options at their defaults, then cmd's own defaults; the scan starts over. */
common_t common_start(const cmd_spec_t *cmd);
/* One option of the common set: 1 handled, 0 not a common option, -1 --help (printed). */
int common_opt(app_t *a, common_t *o, int c);
/* The getopt loop of every command: 1 with the next option that is the command's own in o->opt
 * (common ones are handled on the way by common_opt); 0 at the end of the arguments (a leftover
 * argument has failed) or after --help (printed on rank 0, o->help set). common_start starts the
 * scan over. Use:
 *     while (command_opt(a, &o, argc, argv)) switch (o.opt) {... default: foreign_opt(...);}
 *     if (o.help) return -1; */
int command_opt(app_t *a, common_t *o, int argc, char **argv);
/* --root as a rank of this run; fails naming the value (and returns 0) otherwise. */
long common_root(app_t *a, const common_t *o);
/* An option that is not the command's own: known to another command, or unknown. */
void foreign_opt(app_t *a, int c, char **argv, const char *cmd);
void common_check(app_t *a, common_t *o, const char *cmd);
/* --alg and --sizes of a collective: fails naming the bad value; *algs is malloc'd. */
void coll_select_and_sizes(app_t *a, common_t *o, int op_i, const char *op_name, const char *alg_spec,
                           const lts_coll_alg_t ***algs, size_t *nalgs);
/* Open the timer, agree on the verdict across ranks, open the output on rank 0. 0: go on. */
int common_open(app_t *a, common_t *o);
const lts_sync_desc_t *common_sync(const common_t *o);
/* The metadata every command records from the common options (tool, timing, timer, policy, sync,
 * seed, command line, o's sizes; reply_bytes -1, window 0): a command sets what is its own. */
lts_run_info_t common_info(const common_t *o, const char *bench, const char *op, int full_argc, char **full_argv);
/* After the run: agree on write errors, close, report; returns the exit status (0 or 3). */
int common_finish(app_t *a, common_t *o, int rc, int io_error, const char *cmd);

/* A latscope-bench command: fn(app, argc, argv, full_argc, full_argv) with argv[0] the command
 * name; returns 0, -1 (help printed), 1 (bad input, after fail()) or an exit status > 1. */
typedef int (*lts_bench_cmd_fn)(app_t *a, int argc, char **argv, int full_argc, char **full_argv);
void lts_bench_command_add(const char *name, const char *usage, lts_bench_cmd_fn fn);
/* The command registered under `name`, or NULL. */
lts_bench_cmd_fn lts_bench_command_find(const char *name);
#define LTS_BENCH_COMMAND(name_, usage_, fn_) \
    __attribute__((constructor)) static void lts_bench_cmd_ctor_##fn_(void) { lts_bench_command_add(name_, usage_, fn_); }

#endif
