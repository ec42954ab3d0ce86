/* latscope-bench budget: the rungs of the latency budget (src/bench/ops_budget.c,
 * docs/budget.md) that belong to one launch environment, each timed by the one driver between
 * ranks 0 and 1 on rank 0's clock (the cycle counter by default), one point record per rung.
 * `latscope budget` starts one launch per environment and derives the components. */
#include "bench_cli.h"
#include "latscope/budget.h"
#include "latscope/systime.h"
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_BUD_RUNGS = O_USER + 60, O_BUD_LAUNCH, O_BUD_SIZE, O_BUD_ADDRS, O_BUD_LIST, O_BUD_NOPIN };

static const struct option own[] = {
    {"rungs", required_argument, 0, O_BUD_RUNGS}, {"launch", required_argument, 0, O_BUD_LAUNCH},
    {"size", required_argument, 0, O_BUD_SIZE}, {"addrs", required_argument, 0, O_BUD_ADDRS},
    {"list", no_argument, 0, O_BUD_LIST}, {"no-pin", no_argument, 0, O_BUD_NOPIN}, {0, 0, 0, 0}};

static const char HELP[] =
    "latscope-bench budget [options]: same-clock ping-pongs of the latency budget (docs/budget.md)\n"
    "  --launch CLASS   the environment this launch runs in: local (default), mpi-tcp, netns, netns-tcp;\n"
    "                   the rungs of that class are measured, the others refused\n"
    "  --rungs LIST     rungs (grammar a,b,-c; default: the class's default ladder); --list shows them\n"
    "  --size N         payload bytes (1..65000, default 20: seed 000's message)\n"
    "  --addrs A0,A1    IPv4 addresses ranks 0 and 1 bind their sockets to (default 127.0.0.1,127.0.0.1)\n"
    "  --no-pin         do not pin rank r to CPU r mod (CPUs) (pinning keeps the two sides apart)\n"
    "  --list           print the rung registry, one JSON object a line, and exit\n"
    "  and the common options (--timer, default tsc; --warmup, --min-reps, --max-reps, --rel-err,\n"
    "  --budget, --raw, -o, --progress; see latscope-bench --help). Needs exactly 2 ranks.\n";

static void list_rungs(void) {
    for (size_t i = 0; i < lts_budget_registry.count; i++) {
        const lts_budget_rung_t *r = (const lts_budget_rung_t *)lts_reg_row(&lts_budget_registry, i);
        printf("{\"name\": \"%s\", \"launch\": \"%s\", \"mech\": \"%s\", \"blocking\": %s, \"delay_s\": %.9g, "
               "\"default\": %s, \"help\": \"%s\"}\n", r->name, r->launch, r->mech, r->blocking ? "true" : "false",
               r->delay_s, r->in_default ? "true" : "false", r->help);
    }
}

/* Rank r on CPU r mod n of the CPUs this process may use: the two sides of a ping-pong never
 * share a core (on 2 cores each gets its own), so a polling side does not delay its partner. */
static void pin_self(int rank) {
    cpu_set_t set, one;
    if (sched_getaffinity(0, sizeof set, &set)) return;
    int n = CPU_COUNT(&set), want = rank % (n ? n : 1), k = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set) && k++ == want) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
}

static const cmd_spec_t budget_cmd = {.name = "budget", .own = own, .help = HELP, .help_alone = 1, .timer = "tsc",
                                      .timing_allowed = 1u << LTS_TIMING_ROOT};

static int cmd_budget(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    const char *rungs_spec = NULL, *launch = "local", *size_s = "20", *addrs_s = NULL;
    int list = 0, pin = 1;
    common_t o = common_start(&budget_cmd);
    while (command_opt(a, &o, argc, argv)) switch (o.opt) {
    case O_BUD_RUNGS: rungs_spec = optarg; break;
    case O_BUD_LAUNCH: launch = optarg; break;
    case O_BUD_SIZE: size_s = optarg; break;
    case O_BUD_ADDRS: addrs_s = optarg; break;
    case O_BUD_LIST: list = 1; break;
    case O_BUD_NOPIN: pin = 0; break;
    default: foreign_opt(a, o.opt, argv, "budget");
    }
    if (o.help) return -1;
    if (o.sizes_given) fail(a, "--sizes does not apply to budget: one payload, --size N (default 20)");
    if (list) {
        if (a->me == 0) list_rungs();
        return -1;
    }
    {
        char *end;
        errno = 0;
        long v = strtol(size_s, &end, 10);
        if (errno || end == size_s || *end || v < 1 || v > 65000)
            fail(a, "--size '%s': must be a whole number of bytes in 1..65000 (UDP's datagram limit)", size_s);
        o.sizes_spec = size_s;
    }
    static const char *classes[] = {"local", "mpi-tcp", "netns", "netns-tcp"};
    int class_ok = 0;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) class_ok |= !strcmp(launch, classes[i]);
    if (!class_ok) fail(a, "--launch '%s': valid: local, mpi-tcp, netns, netns-tcp", launch);
    if (addrs_s) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", addrs_s);
        char *comma = strchr(buf, ',');
        if (comma) *comma = 0;
        if (!comma || lts_budget_set_addrs(buf, comma + 1))
            fail(a, "--addrs '%s': must be two IPv4 addresses A0,A1 (e.g. 10.0.0.1,10.0.0.2)", addrs_s);
    }
    /* the selection: the class's default ladder, or --rungs, whose rows must all be of this class */
    uint64_t mask = 0;
    char bad[64] = "", names[1024];
    lts_reg_names(&lts_budget_registry, names, sizeof names);
    if (rungs_spec && lts_reg_select(&lts_budget_registry, rungs_spec, &mask, bad, sizeof bad))
        fail(a, "--rungs '%s': unknown rung '%s'; valid: %s", rungs_spec, bad, names);
    for (size_t i = 0; i < lts_budget_registry.count && !a->have_err; i++) {
        const lts_budget_rung_t *r = (const lts_budget_rung_t *)lts_reg_row(&lts_budget_registry, i);
        int of_class = !strcmp(r->launch, launch);
        if (!rungs_spec) {
            if (of_class && r->in_default) mask |= (uint64_t)1 << i;
        } else if ((mask >> i & 1) && !of_class) {
            fail(a, "--rungs: rung '%s' needs the '%s' launch, this is --launch %s", r->name, r->launch, launch);
        }
    }
    if (!a->have_err && !mask) fail(a, "--rungs '%s' selects no rung of --launch %s", rungs_spec ? rungs_spec : "", launch);
    if (a->P != 2) fail(a, "budget measures a pair: it needs exactly 2 ranks; this run has %d (mpiexec -n 2)", a->P);
    common_check(a, &o, "budget");
    if (common_open(a, &o)) {
        free(o.sizes);
        return 1;
    }
    if (pin) pin_self(a->me);
    lts_run_info_t info = common_info(&o, "budget", launch, full_argc, full_argv);
    info.mode = "seq";
    info.window = 1;
    int rc = lts_results_write_meta(o.out, MPI_COMM_WORLD, &info);
    size_t npoints = 0;
    for (size_t i = 0; i < lts_budget_registry.count; i++) npoints += mask >> i & 1;
    emit_ctx_t e = {o.out, &info, o.raw, o.progress, 0, npoints, rc != 0};
    /* Inside the MPI call (docs/budget.md): with liblatscope_systime.so preloaded, count only the
     * rungs' measurements, not MPI's start-up */
    lts_systime_start_fn st_start = lts_systime_lookup_start();
    lts_systime_stop_fn st_stop = lts_systime_lookup_stop();
    int group[2] = {0, 1};
    for (size_t i = 0; i < lts_budget_registry.count && rc == LTS_OK; i++) {
        if (!(mask >> i & 1)) continue;
        lts_op_desc_t op;
        if ((rc = lts_budget_op(lts_reg_row(&lts_budget_registry, i)->name, &op))) break;
        lts_p2p_cfg_t cfg = {0};
        cfg.op = &op;
        cfg.mode = LTS_MODE_SEQ;
        cfg.groups = group;
        cfg.ngroups = 1;
        cfg.sizes = o.sizes;
        cfg.nsizes = o.nsizes;
        cfg.reply_bytes = -1;
        cfg.window = 1;
        cfg.measure.timer = &o.timer;
        cfg.measure.policy = o.pol;
        cfg.measure.sync = common_sync(&o);
        cfg.measure.timing = LTS_TIMING_ROOT;
        cfg.on_point = on_point;
        cfg.ud = &e;
        if (st_start && st_stop) st_start();
        rc = lts_p2p_run(MPI_COMM_WORLD, &cfg);
        if (st_start && st_stop) st_stop();
    }
    free(o.sizes);
    return common_finish(a, &o, rc, e.io_error, "budget");
}

LTS_BENCH_COMMAND("budget", "latscope-bench budget [options]   latency-budget rungs: flag, futex, pipe, sockets, MPI",
                  cmd_budget)
