/* latscope-bench: runs directly under any mpiexec / srun.
 *   latscope-bench p2p [options]      point-to-point campaigns
 *   latscope-bench coll [options]     collectives over all ranks, one or more algorithms
 *   latscope-bench list               the registries (timers, operations, sync methods)
 * Bad input: every rank parses the same arguments, so all reach the same verdict; rank 0 prints
 * the message, everyone finalizes and exits 2. This file holds what every command shares (the
 * common options, the record writer, the command table, main); the commands are apps/cmd_*.c. */
#include "bench_cli.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(void);

/* The names in the option lines come from the registries' rows (usage()): %s slots, in order:
 * collective operations, timing methods, clock synchronisations, p2p operations, timers, sync
 * methods. What each row does: latscope-bench list. */
static const char *USAGE =
    "usage: latscope-bench COMMAND [options]   (commands below)\n"
    "       latscope-bench --version | --help\n"
    "\n"
    "coll options (with the common options below):\n"
    "  --op NAME          %s\n"
    "  --alg LIST         algorithms, e.g. native,binomial or -linear (default all; see latscope-bench list)\n"
    "  --root R           the root rank (default 0); root timing is taken there, also for rootless ops\n"
    "  --sizes            bcast/reduce/allreduce: the message; scatter/gather: the root's whole buffer;\n"
    "                     allgather: the whole result; alltoall: the whole send buffer. Split ops need\n"
    "                     multiples of the rank count (default: 0,8,64,1K,8K,64K per rank)\n"
    "  --timing LIST      %s, a list, or all; see docs/collectives.md\n"
    "  --clock-sync NAME  global timing's clock synchronisation: %s\n"
    "  --resync DURATION  re-synchronise when the last sync is older (default: once)\n"
    "  --start-window D   global timing: lead time of each common start (default: measured)\n"
    "  --pipelined        repetitions back to back (same as --sync none): the pipeline effect\n"
    "  --dummy-work D     busy-wait D after every repetition, untimed (e.g. 30us: seed 002 barrier benchmark)\n"
    "\n"
    "p2p options:\n"
    "  --op NAME[,NAME]   %s; a list runs\n"
    "                     one after the other in this launch (same group size)\n"
    "  --mode seq|par     one group at a time, or rounds of disjoint groups (default par)\n"
    "  --pairs I:J,...    pairs to measure (default all i<j); --triplets I:J:K,... for p2two\n"
    "  --sizes LIST       e.g. 0,8,1K,64K  1:4M:x2  0:100K:+1K (default 0,8,64,1K,8K,64K)\n"
    "  --reply-size N     reply size for roundtrip (default: same) and p2two (default 0)\n"
    "  --window W         messages in flight for bandwidth (1..1024, default 64)\n"
    "  --timer NAME       %s\n"
    "  --timing root|max  p2p: the initiator's clock (default) or the max over the group\n"
    "  --sync NAME        %s\n"
    "                     (auto: none for p2p round trips one pair at a time, else barrier)\n"
    "  --warmup N         untimed repetitions (default 100)\n"
    "  --min-reps N --max-reps N   repetition bounds (default 200 or a smaller --max-reps, and 100000;\n"
    "                     equal: a fixed count); an adaptive point stops only once the halves of\n"
    "                     its samples agree (steady state, docs/measurement.md)\n"
    "  --confidence C     confidence level in (0,1) (default 0.95)\n"
    "  --rel-err E        target relative CI half-width in (0,1) (default 0.025)\n"
    "  --stop-rule median|mean   the median's order-statistic CI (default) or the Student-t CI of the mean\n"
    "  --budget SECONDS   time budget per point (default 10; 0: none)\n"
    "  --seed S           recorded and broadcast (default 1)\n"
    "  --raw              include every sample in the records\n"
    "  -o, --output FILE  JSON Lines results (default - : standard output)\n"
    "  --progress         one line per point on standard error (latscope bench: the default on a terminal)\n"
    "Environment: LATSCOPE_QUICK=1 caps every point to a smoke test (warm-up 10, 30 repetitions,\n"
    "  0.05 s), recorded as rep_policy.quick in the metadata.\n";

const struct option lts_cli_opts[] = {
    {"op", required_argument, 0, O_OP}, {"mode", required_argument, 0, O_MODE},
    {"pairs", required_argument, 0, O_PAIRS}, {"triplets", required_argument, 0, O_TRIPLETS},
    {"sizes", required_argument, 0, O_SIZES}, {"reply-size", required_argument, 0, O_REPLY},
    {"window", required_argument, 0, O_WINDOW}, {"timer", required_argument, 0, O_TIMER},
    {"timing", required_argument, 0, O_TIMING}, {"sync", required_argument, 0, O_SYNC},
    {"warmup", required_argument, 0, O_WARMUP}, {"min-reps", required_argument, 0, O_MINR},
    {"max-reps", required_argument, 0, O_MAXR}, {"confidence", required_argument, 0, O_CONF},
    {"rel-err", required_argument, 0, O_RELERR}, {"stop-rule", required_argument, 0, O_RULE},
    {"budget", required_argument, 0, O_BUDGET}, {"seed", required_argument, 0, O_SEED},
    {"raw", no_argument, 0, O_RAW}, {"output", required_argument, 0, O_OUTPUT},
    {"progress", no_argument, 0, O_PROGRESS}, {"alg", required_argument, 0, O_ALG},
    {"root", required_argument, 0, O_ROOT}, {"help", no_argument, 0, O_HELP},
    {"clock-sync", required_argument, 0, O_CLOCKSYNC}, {"resync", required_argument, 0, O_RESYNC},
    {"start-window", required_argument, 0, O_STARTWIN}, {"dummy-work", required_argument, 0, O_DUMMY},
    {"pipelined", no_argument, 0, O_PIPELINED}, {0, 0, 0, 0}};

int parse_int(app_t *a, const char *flag, const char *v, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fail(a, "%s '%s': must be an integer in [%ld, %ld]", flag, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int parse_dbl(app_t *a, const char *flag, const char *v, double *out) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x)) {
        fail(a, "%s '%s': not a number", flag, v);
        return -1;
    }
    *out = x;
    return 0;
}

int parse_duration(app_t *a, const char *flag, const char *v, double *out) {
    int rc = lts_parse_duration(v, out);
    if (rc == LTS_ERANGE) fail(a, "%s '%s': at most one hour", flag, v);
    else if (rc) fail(a, "%s '%s': must be a non-negative duration with a unit: ns, us, ms or s (e.g. 30us)", flag, v);
    return rc ? -1 : 0;
}

/* "0:1,2:3" (width 2) or "0:1:2,..." (width 3) */
int parse_groups(app_t *a, const char *flag, const char *spec, int width, int P, int **out, size_t *n) {
    size_t cap = 16, k = 0;
    int *g = malloc(cap * (size_t)width * sizeof *g);
    char *copy = strdup(spec), *save = NULL;
    if (!g || !copy) { fail(a, "out of memory"); free(g); free(copy); return -1; }
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (k == cap) { cap *= 2; g = realloc(g, cap * (size_t)width * sizeof *g); if (!g) { fail(a, "out of memory"); free(copy); return -1; } }
        const char *p = it;
        for (int w = 0; w < width; w++) {
            char *end;
            errno = 0;
            long r = strtol(p, &end, 10);
            int last = w == width - 1;
            if (errno || end == p || (last ? *end != '\0' : *end != ':')) {
                fail(a, "%s '%s': each item must be %s of rank numbers", flag, it, width == 2 ? "I:J" : "I:J:K");
                goto bad;
            }
            if (r < 0 || r >= P) {
                fail(a, "%s '%s': rank %ld is out of range: this run has ranks 0..%d", flag, it, r, P - 1);
                goto bad;
            }
            for (int q = 0; q < w; q++)
                if (g[k * (size_t)width + (size_t)q] == (int)r) {
                    fail(a, "%s '%s': rank %ld appears twice: the ranks of one item must differ", flag, it, r);
                    goto bad;
                }
            g[k * (size_t)width + (size_t)w] = (int)r;
            p = end + 1;
        }
        k++;
    }
    free(copy);
    if (k == 0) { fail(a, "%s '%s': no items", flag, spec); free(g); return -1; }
    *out = g;
    *n = k;
    return 0;
bad:
    free(copy);
    free(g);
    return -1;
}

int lookup(app_t *a, const lts_registry_t *r, const char *flag, const char *name) {
    int i = lts_reg_find(r, name);
    if (i < 0) {
        char names[512];
        lts_reg_names(r, names, sizeof names);
        fail(a, "%s '%s': unknown %s; valid: %s", flag, name, r->kind, names);
    }
    return i;
}

/* seconds since the program started (the progress line's ETA) */
static double prog_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double prog_t0;
__attribute__((constructor)) static void prog_start(void) { prog_t0 = prog_now(); }

/* a time in the unit that keeps it readable, 9 columns wide: "  1.171 us", "-217.000 ns" */
static void fmt_secs(char *buf, size_t n, double s) {
    double a = fabs(s);
    if (!isfinite(s)) snprintf(buf, n, "%9s   ", "n/a");
    else if (a >= 0.9999995) snprintf(buf, n, "%9.3f s ", s);   /* no "1000.000 ms" */
    else if (a >= 0.9999995e-3) snprintf(buf, n, "%9.3f ms", s * 1e3);
    else if (a >= 0.9999995e-6) snprintf(buf, n, "%9.3f us", s * 1e6);
    else snprintf(buf, n, "%9.3f ns", s * 1e9);
}

void on_point(void *ud, const lts_point_t *pt) {
    emit_ctx_t *e = ud;
    if (lts_results_write_point(e->out, pt, e->info, e->raw)) e->io_error = 1;
    e->done++;
    if (e->done == 1) {
        /* the campaign's size, for latscope's line when it ends the job early ("after 12 of 23
         * points"); latscope names the file (python/latscope/run.py, run_program) */
        const char *pf = getenv("LATSCOPE_POINTS_PLANNED_FILE");
        FILE *f = pf && *pf ? fopen(pf, "w") : NULL;
        if (f) {
            fprintf(f, "%zu\n", e->total);
            fclose(f);
        }
    }
    if (e->progress) {
        lts_summary_t s;
        lts_summarize(pt->m->samples, pt->m->n, e->info->policy->confidence, e->info->policy->rule, &s);
        char grp[64] = "";
        if (pt->alg) snprintf(grp, sizeof grp, "%s%s%s", pt->alg, pt->timing ? "/" : "", pt->timing ? pt->timing : "");
        for (int k = 0; k < pt->group_size; k++)
            snprintf(grp + strlen(grp), sizeof grp - strlen(grp), "%s%s%d", k == 0 && pt->alg ? " " : "",
                     k ? (k == 1 ? "->" : ",") : "", pt->group[k]);
        /* never "nan": an undefined CI is n/a; one wider than the value says nothing (>100%) */
        char ci[16], med[24], eta[24] = "";
        if (!isfinite(s.rel_err)) snprintf(ci, sizeof ci, "%7s", "n/a");
        else if (s.rel_err > 1.0) snprintf(ci, sizeof ci, "%7s", ">100%");
        else snprintf(ci, sizeof ci, "+-%4.1f%%", s.rel_err * 100);
        fmt_secs(med, sizeof med, s.median);
        double el = prog_now() - prog_t0;
        if (e->total > e->done && e->done > 0) {
            double left = el / (double)e->done * (double)(e->total - e->done);
            snprintf(eta, sizeof eta, "ETA %d:%02d", (int)(left / 60), (int)left % 60);
        } else
            snprintf(eta, sizeof eta, "done %d:%02d", (int)(el / 60), (int)el % 60);
        int w = snprintf(NULL, 0, "%zu", e->total);
        fprintf(stderr, "[%*zu/%zu] %-14s %9zu B  %-22s median %s%s  n=%-7zu %s  %-9s %s\n", w, e->done, e->total,
                pt->op, pt->bytes, grp, med, !isfinite(s.median) ? "" : (s.median <= 0 ? " (INVALID: <= 0)" : ""),
                s.n, ci, lts_stop_reason_name((lts_stop_reason_t)pt->m->stop_reason), eta);
        fflush(stderr);
    }
}

/* lts_coll_cfg_t.on_sync: a "clock_sync" record before the points it serves */
void on_sync(void *ud, const lts_clocksync_info_t *info) {
    emit_ctx_t *e = ud;
    if (lts_results_write_sync(e->out, info)) e->io_error = 1;
    if (e->progress)
        fprintf(stderr, "clock sync %s (%s%s): %.3f ms, residual max %.3f us (+-%.3f us)\n", info->method, info->model,
                info->drift_rejected ? ", drift rejected" : "", info->cost_s * 1e3, info->residual_max_s * 1e6,
                info->residual_bound_s * 1e6);
}


/* ---- options every measuring command takes (sizes, timer, timing, repetitions, output) -- */

lts_run_info_t common_info(const common_t *o, const char *bench, const char *op, int full_argc, char **full_argv) {
    lts_run_info_t info;
    memset(&info, 0, sizeof info);
    info.tool = "latscope-bench";
    info.bench = bench;
    info.op = op;
    info.timing = o->timing;
    info.timer = &o->timer;
    info.policy = &o->pol;
    /* operations other than p2p's round trips never run back to back under auto */
    info.sync = lts_sync_resolve(common_sync(o), NULL, 0, 0)->name;
    info.sync_requested = common_sync(o)->name;
    info.seed = o->seed;
    info.argc = full_argc;
    info.argv = full_argv;
    info.sizes = o->sizes;
    info.nsizes = o->nsizes;
    info.reply_bytes = -1;
    return info;
}

common_t common_start(const cmd_spec_t *cmd) {
    common_t oc, *o = &oc;
    memset(o, 0, sizeof *o);
    o->sizes_spec = "0,8,64,1K,8K,64K";
    o->timer_name = "monotonic";
    o->timing = "root";
    o->sync_name = "auto";
    o->output = "-";
    o->seed = 1;
    o->sync_i = -1;
    o->timing_allowed = (1u << LTS_TIMING_ROOT) | (1u << LTS_TIMING_MAX);
    lts_rep_policy_default(&o->pol);
    o->cmd = cmd;
    if (cmd->sizes) o->sizes_spec = cmd->sizes;
    if (cmd->timer) o->timer_name = cmd->timer;
    if (cmd->timing) o->timing = cmd->timing;
    if (cmd->timing_allowed) o->timing_allowed = cmd->timing_allowed;
    if (cmd->warmup) o->pol.warmup = cmd->warmup;
    o->op_name = cmd->op;
    o->alg_spec = "all";
    o->root_s = "0";
    optind = 1;   /* the command's arguments are scanned from the start */
    opterr = 0;
    return oc;
}

/* lts_cli_opts followed by `own` (zero-terminated); malloc'd, never NULL (aborts on no memory). */
static struct option *cli_opts_with(const struct option *own) {
    size_t n0 = 0, n1 = 0;
    while (lts_cli_opts[n0].name) n0++;
    while (own && own[n1].name) n1++;
    struct option *o = calloc(n0 + n1 + 1, sizeof *o);
    if (!o) { fprintf(stderr, "latscope-bench: out of memory\n"); abort(); }
    memcpy(o, lts_cli_opts, n0 * sizeof *o);
    if (n1) memcpy(o + n0, own, n1 * sizeof *o);
    return o;
}

int command_opt(app_t *a, common_t *o, int argc, char **argv) {
    const cmd_spec_t *cmd = o->cmd;
    if (!o->opts_) o->opts_ = cli_opts_with(cmd->own);
    int c;
    while ((c = getopt_long(argc, argv, "o:", o->opts_, NULL)) != -1) {
        if (c == O_HELP && cmd->help_alone) {
            if (a->me == 0) fputs(cmd->help, stdout);
            o->help = 1;
            break;
        }
        if (c == O_OP && cmd->op) o->op_name = optarg;
        else if (c == O_ALG && cmd->coll) o->alg_spec = optarg;
        else if (c == O_ROOT && cmd->coll) o->root_s = optarg;
        else {
            int h = common_opt(a, o, c);
            if (h < 0) {
                if (a->me == 0 && cmd->help) fputs(cmd->help, stdout);
                o->help = 1;
                break;
            }
            if (!h) {
                o->opt = c;
                return 1;
            }
        }
    }
    free(o->opts_);
    o->opts_ = NULL;
    if (!o->help && optind < argc)
        fail(a, "unexpected argument '%s'; see latscope-bench%s%s --help", argv[optind], cmd->help ? " " : "",
             cmd->help ? cmd->name : "");
    return 0;
}

long common_root(app_t *a, const common_t *o) {
    char *end;
    errno = 0;
    long root = strtol(o->root_s, &end, 10);
    if (errno || end == o->root_s || *end || root < 0 || root >= a->P) {
        fail(a, "--root '%s': must be a rank of this run, 0..%d", o->root_s, a->P - 1);
        return 0;
    }
    return root;
}

/* One option of the common set: 1 handled, 0 not a common option, -1 --help (printed). */
int common_opt(app_t *a, common_t *o, int c) {
    switch (c) {
    case O_SIZES: o->sizes_spec = optarg; o->sizes_given = 1; return 1;
    case O_TIMER: o->timer_name = optarg; return 1;
    case O_TIMING: o->timing = optarg; return 1;
    case O_SYNC: o->sync_name = optarg; return 1;
    case O_PIPELINED: o->sync_name = "none"; return 1;
    case O_DUMMY: parse_duration(a, "--dummy-work", optarg, &o->dummy_work_s); return 1;
    case O_WARMUP: parse_int(a, "--warmup", optarg, 0, 100000000, &o->pol.warmup); return 1;
    case O_MINR: parse_int(a, "--min-reps", optarg, 1, 100000000, &o->pol.min_reps); o->min_reps_given = 1; return 1;
    case O_MAXR: parse_int(a, "--max-reps", optarg, 1, 100000000, &o->pol.max_reps); return 1;
    case O_CONF: parse_dbl(a, "--confidence", optarg, &o->pol.confidence); return 1;
    case O_RELERR: parse_dbl(a, "--rel-err", optarg, &o->pol.rel_err); return 1;
    case O_RULE:
        if (!strcmp(optarg, "mean")) o->pol.rule = LTS_STOP_MEAN;
        else if (!strcmp(optarg, "median")) o->pol.rule = LTS_STOP_MEDIAN;
        else fail(a, "--stop-rule '%s': valid: mean, median", optarg);
        return 1;
    case O_BUDGET: parse_dbl(a, "--budget", optarg, &o->pol.budget_s); return 1;
    case O_SEED: {
        char *end;
        errno = 0;
        o->seed = strtoull(optarg, &end, 10);
        if (errno || end == optarg || *end || optarg[0] == '-') fail(a, "--seed '%s': must be a non-negative integer", optarg);
        return 1;
    }
    case O_RAW: o->raw = 1; return 1;
    case O_OUTPUT: case 'o': o->output = optarg; return 1;
    case O_PROGRESS: o->progress = 1; return 1;
    case O_HELP: if (a->me == 0) usage(); return -1;
    default: return 0;
    }
}

/* An option that is not the command's own: known to another command, or unknown. */
void foreign_opt(app_t *a, int c, char **argv, const char *cmd) {
    for (const struct option *op = lts_cli_opts; c >= O_OP && op->name; op++)
        if (op->val == c) {
            fail(a, "option '--%s' does not apply to %s; see latscope-bench --help", op->name, cmd);
            return;
        }
    fail(a, "unknown or incomplete option '%s'; see latscope-bench --help", argv[optind - 1]);
}

/* Validate the common options (after the getopt loop). */
void common_check(app_t *a, common_t *o, const char *cmd) {
    char msg[512];
    /* the default minimum yields to a smaller --max-reps (an explicit --min-reps does not) */
    if (!o->min_reps_given && o->pol.max_reps < o->pol.min_reps) o->pol.min_reps = o->pol.max_reps;
    const char *quick = getenv("LATSCOPE_QUICK");
    if (quick && *quick && strcmp(quick, "0")) {
        if (strcmp(quick, "1")) fail(a, "LATSCOPE_QUICK '%s': must be 1 (smoke-test sizes) or 0/unset", quick);
        else if (!a->have_err && !lts_rep_policy_check(&o->pol, msg, sizeof msg)) lts_rep_policy_quick(&o->pol);
    }
    if (!a->have_err && lts_rep_policy_check(&o->pol, msg, sizeof msg)) fail(a, "%s", msg);
    o->sync_i = lookup(a, &lts_sync_registry, "--sync", o->sync_name);
    lookup(a, &lts_timer_registry, "--timer", o->timer_name);
    /* --timing: one method, a list, or all (of those this command allows) */
    o->tmeth = LTS_TIMING_ROOT;
    o->timings = 0;
    char allowed[160] = "";
    for (size_t i = 0; i < lts_timing_registry.count; i++)
        if (o->timing_allowed & (1u << i))
            snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s", *allowed ? ", " : "",
                     lts_reg_row(&lts_timing_registry, i)->name);
    uint64_t mask = 0;
    char bad[64] = "";
    int multi = o->timing_allowed & (o->timing_allowed - 1);
    if (lts_reg_select(&lts_timing_registry, o->timing, &mask, bad, sizeof bad) ||
        (!multi && strchr(o->timing, ',')))
        fail(a, "--timing '%s': valid for %s: %s%s", o->timing, cmd, allowed, multi ? ", a list of them, or all" : "");
    else if (!strcmp(o->timing, "all"))
        o->timings = o->timing_allowed;
    else if (mask & ~(uint64_t)o->timing_allowed)
        fail(a, "--timing '%s': not available for %s; valid: %s", o->timing, cmd, allowed);
    else if (!mask)
        fail(a, "--timing '%s' selects no method; valid: %s", o->timing, allowed);
    else
        o->timings = (unsigned)mask;
    for (int i = 0; i < LTS_TIMING_N; i++)
        if (o->timings & (1u << i)) { o->tmeth = (lts_timing_t)i; break; }
    if (!a->have_err && lts_parse_sizes(o->sizes_spec, &o->sizes, &o->nsizes, msg, sizeof msg))
        fail(a, "--sizes: %s", msg);
}

/* Open the timer, agree on the verdict across ranks, open the output on rank 0. 0: go on. */
int common_open(app_t *a, common_t *o) {
    if (!a->have_err) {
        int rc = lts_timer_open(o->timer_name, &o->timer);
        if (rc) fail(a, "--timer %s: %s on this machine", o->timer_name, lts_strerror(rc));
        /* test hook: a known per-rank offset and drift for the clock-sync tests */
        else lts_timer_apply_test_skew(&o->timer, a->me);
    }
    /* Timer availability could differ between hosts: agree on a verdict before anything else. */
    int local_bad = a->have_err, any_bad;
    MPI_Allreduce(&local_bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad && !a->have_err) fail(a, "another rank rejected the arguments");
    /* Only rank 0 writes: its verdict on the output file is broadcast. */
    int out_ok = 1;
    if (!any_bad && a->me == 0) {
        if (!strcmp(o->output, "-")) o->out = stdout;
        else if (!(o->out = fopen(o->output, "w"))) {
            out_ok = 0;
            fail(a, "--output '%s': cannot be written (%s); give a writable path or - for standard output", o->output,
                 strerror(errno));
        }
    }
    MPI_Bcast(&out_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (any_bad || !out_ok) {
        if (!a->have_err) fail(a, "rank 0 could not open the output");
        return 1;
    }
    /* seeds are broadcast so every rank agrees (recorded; nothing random here yet) */
    MPI_Bcast(&o->seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    return 0;
}

const lts_sync_desc_t *common_sync(const common_t *o) {
    return (const lts_sync_desc_t *)lts_reg_row(&lts_sync_registry, (size_t)o->sync_i);
}

/* After the run: agree on write errors, close, report. */
int common_finish(app_t *a, common_t *o, int rc, int io_error, const char *cmd) {
    int any_io;
    MPI_Allreduce(&io_error, &any_io, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (a->me == 0 && o->out && o->out != stdout) fclose(o->out);
    if (rc) {
        if (a->me == 0) fprintf(stderr, "latscope-bench: %s failed: %s\n", cmd, lts_strerror(rc));
        return 3;
    }
    if (any_io) {
        if (a->me == 0) fprintf(stderr, "latscope-bench: writing results failed\n");
        return 3;
    }
    return 0;
}

/* ---- the command table: built-ins here, others from apps/cmd_*.c via LTS_BENCH_COMMAND ---- */

#define MAX_COMMANDS 32
static struct { const char *name, *usage; lts_bench_cmd_fn fn; } commands[MAX_COMMANDS];
static int ncommands;

void lts_bench_command_add(const char *name, const char *usage, lts_bench_cmd_fn fn) {
    if (ncommands == MAX_COMMANDS) { fprintf(stderr, "latscope-bench: command table full at %s\n", name); abort(); }
    commands[ncommands].name = name;
    commands[ncommands].usage = usage;
    commands[ncommands++].fn = fn;
}

lts_bench_cmd_fn lts_bench_command_find(const char *name) {
    for (int i = 0; i < ncommands; i++)
        if (!strcmp(name, commands[i].name)) return commands[i].fn;
    return NULL;
}

/* the built-in commands (apps/cmd_p2p.c, apps/cmd_coll.c), registered here so they come first */
LTS_BENCH_COMMAND("p2p", "latscope-bench p2p [options]      point-to-point campaigns", cmd_p2p)
LTS_BENCH_COMMAND("coll", "latscope-bench coll [options]     collectives over all ranks", cmd_coll)

static void command_names(char *buf, size_t n) {
    buf[0] = '\0';
    for (int i = 0; i < ncommands; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? ", " : "", commands[i].name);
}

/* "a, b (default), c": the rows of r in registry order, without the rows named null* (they test
 * the registry itself and no selection offers them) */
static const char *row_names(const lts_registry_t *r, const char *dflt, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->count && used < n; i++) {
        const char *nm = lts_reg_row(r, i)->name;
        if (!strncmp(nm, "null", 4)) continue;
        int w = snprintf(buf + used, n - used, "%s%s%s", used ? ", " : "", nm, strcmp(nm, dflt) ? "" : " (default)");
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

static void usage(void) {
    char ops[256], tms[256], cs[256], p2p[256], tmr[256], syn[256];
    printf(USAGE, row_names(&lts_coll_op_names, "bcast", ops, sizeof ops),
           row_names(&lts_timing_registry, "root", tms, sizeof tms), row_names(&lts_clocksync_registry, "hca", cs, sizeof cs),
           row_names(&lts_p2p_registry, "pingpong", p2p, sizeof p2p),
           row_names(&lts_timer_registry, "monotonic", tmr, sizeof tmr), row_names(&lts_sync_registry, "auto", syn, sizeof syn));
    printf("\ncommands:\n");
    for (int i = 0; i < ncommands; i++) printf("  %s\n", commands[i].usage);
}

/* Tasks the launcher started for this job: PMI_SIZE where a PMI server told the MPI, else
 * Slurm's count of this step's tasks; 0 when neither says. */
static long launched_tasks(void) {
    const char *v = getenv("PMI_SIZE");
    if (!v || !*v) v = getenv("SLURM_STEP_NUM_TASKS");
    return v && *v ? strtol(v, NULL, 10) : 0;
}

int main(int argc, char **argv) {
    app_t a = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &a.me);
    MPI_Comm_size(MPI_COMM_WORLD, &a.P);
    int status = 0;
    char names[256];
    command_names(names, sizeof names);
    long tasks = launched_tasks();
    lts_test_hooks_t hooks;
    char hmsg[256];
    /* the test hooks, once, before anything is measured (every rank reads the same environment) */
    int hooks_bad = lts_test_hooks_from_env(&hooks, hmsg, sizeof hmsg);
    if (!hooks_bad) lts_set_test_hooks(&hooks);
    if (hooks_bad) {
        fail(&a, "%s", hmsg);
    } else if (a.P == 1 && tasks > 1) {
        /* srun without a PMI the MPI speaks starts separate one-rank jobs that would all write
         * the same file (docs/slurm.md); every task sees the same, so each stops alone */
        fail(&a, "the launcher started %ld tasks, but MPI sees 1 rank in each: the MPI found no PMI "
                 "it speaks (the bundled MPICH speaks PMI-2: srun --mpi=pmi2)", tasks);
    } else if (argc < 2) {
        fail(&a, "missing command: %s; see latscope-bench --help", names);
    } else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (a.me == 0) usage();
    } else if (!strcmp(argv[1], "--version")) {
        if (a.me == 0) printf("latscope-bench %s\n", LTS_VERSION);
    } else {
        lts_bench_cmd_fn fn = lts_bench_command_find(argv[1]);
        if (!fn) {
            fail(&a, "unknown command '%s': valid commands: %s", argv[1], names);
        } else {
            int rc = fn(&a, argc - 1, argv + 1, argc, argv);
            if (rc > 1) status = rc;
        }
    }
    if (a.have_err) {
        if (a.me == 0) fprintf(stderr, "latscope-bench: error: %s\n", a.err);
        status = EXIT_USAGE;
    }
    MPI_Finalize();
    return status;
}
