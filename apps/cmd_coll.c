/* latscope-bench coll: collectives over all ranks, one or more algorithms and timing methods
 * (src/bench/ops_coll.c). Registered in apps/latscope_bench.c (the built-ins come first). */
#include "bench_cli.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The algorithms a --alg list selects for a collective (parametrised rows such as "tree:k=3"
 * instantiated by lts_coll_select; caller frees *algs), and the sizes checked against the
 * operation's split: shared by coll and every command that measures collectives. */
void coll_select_and_sizes(app_t *a, common_t *o, int op_i, const char *op_name, const char *alg_spec,
                           const lts_coll_alg_t ***algs, size_t *nalgs) {
    char bad[256] = "", names[512];
    lts_reg_names(lts_coll_registry((lts_coll_op_t)op_i), names, sizeof names);
    int rc = lts_coll_select((lts_coll_op_t)op_i, alg_spec, algs, nalgs, bad, sizeof bad);
    if (rc == LTS_ENOTFOUND)
        fail(a, "--alg '%s': unknown algorithm '%s' for --op %s; valid: %s", alg_spec, bad, op_name, names);
    else if (rc) fail(a, "--alg '%s': %s", alg_spec, bad[0] ? bad : lts_strerror(rc));
    else if (!*nalgs) fail(a, "--alg '%s' selects no algorithm for --op %s; valid: %s", alg_spec, op_name, names);
    /* split operations: the default sizes are per-rank blocks of 0, 8, ... 64K */
    if (!o->sizes_given && !a->have_err && !lts_coll_size_ok(op_i, 1, a->P))
        for (size_t s = 0; s < o->nsizes; s++) o->sizes[s] *= (size_t)a->P;
    for (size_t s = 0; s < o->nsizes && !a->have_err; s++) {
        if (!lts_coll_size_ok(op_i, o->sizes[s], a->P))
            fail(a, "--sizes: %zu B is not divisible by the %d ranks: --op %s splits the size (the whole buffer) "
                 "into one block per rank; give multiples of %d", o->sizes[s], a->P, op_name, a->P);
        else if (o->sizes[s] > (size_t)INT_MAX)
            fail(a, "--sizes: %zu B is more than an MPI count can say", o->sizes[s]);
    }
}

/* "op alg, ..." for every collective algorithm row carrying `flags`. */
static void coll_rows_with(unsigned flags, char *buf, size_t n) {
    buf[0] = '\0';
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        for (size_t i = 0; i < r->count; i++)
            if ((((const lts_coll_alg_t *)lts_reg_row(r, i))->flags & flags) == flags)
                snprintf(buf + strlen(buf), n - strlen(buf), "%s%s %s", buf[0] ? ", " : "",
                         lts_reg_row(&lts_coll_op_names, (size_t)op)->name, lts_reg_row(r, i)->name);
    }
}

/* its options are all in lts_cli_opts; it takes every timing method */
static const cmd_spec_t coll_cmd = {.name = "coll", .timing_allowed = (1u << LTS_TIMING_N) - 1, .op = "bcast", .coll = 1};

/* Collectives over all ranks: every selected algorithm at every size, through lts_measure. */
int cmd_coll(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    const char *csync = NULL;
    double resync = 0.0, window = 0.0;
    int window_given = 0;
    common_t o = common_start(&coll_cmd);
    while (command_opt(a, &o, argc, argv)) switch (o.opt) {
    case O_CLOCKSYNC: csync = optarg; break;
    case O_RESYNC: parse_duration(a, "--resync", optarg, &resync); break;
    case O_STARTWIN:
        window_given = 1;
        if (!parse_duration(a, "--start-window", optarg, &window) && window < 1e-6)
            fail(a, "--start-window '%s': too short: the common start must leave the ranks time to arrive; "
                 "give at least 1us (default: measured)", optarg);
        break;
    default: foreign_opt(a, o.opt, argv, "coll");
    }
    if (o.help) return -1;

    int op_i = lookup(a, &lts_coll_op_names, "--op", o.op_name);
    common_check(a, &o, "coll");
    long root = common_root(a, &o);
    const lts_coll_alg_t **algs = NULL;
    size_t nalgs = 0;
    if (op_i >= 0) coll_select_and_sizes(a, &o, op_i, o.op_name, o.alg_spec, &algs, &nalgs);
    /* timing methods against the operation, the algorithms and the other options, from their
     * rows: `global` is any method on the synchronised clock */
    int global = 0;
    char clocked[64] = "", unclocked[128] = "";
    for (size_t i = 0; i < lts_timing_registry.count; i++) {
        const lts_timing_desc_t *t = lts_timing_row((lts_timing_t)i);
        char *list = t->needs_clock ? clocked : unclocked;
        size_t len = t->needs_clock ? sizeof clocked : sizeof unclocked;
        if (!t->per_target) snprintf(list + strlen(list), len - strlen(list), "%s%s", *list ? ", " : "", t->name);
        if (t->needs_clock && (o.timings & (1u << i))) global = 1;
    }
    const int all_timings = !strcmp(o.timing, "all");
    if (!a->have_err && csync) lookup(a, &lts_clocksync_registry, "--clock-sync", csync);
    if (!a->have_err && !global && (csync || window_given || resync > 0))
        fail(a, "%s applies to --timing %s (or all); this run uses --timing %s",
             csync ? "--clock-sync" : window_given ? "--start-window" : "--resync", clocked, o.timing);
    if (!a->have_err && global && !strcmp(o.sync_name, "none"))
        fail(a, "--timing %s: %s timing starts every repetition at a common instant, so repetitions cannot be "
             "pipelined; drop --pipelined / --sync none or choose one of %s", o.timing, clocked, unclocked);
    /* a method named on its own must apply to every algorithm selected ("all": where it applies) */
    for (size_t i = 0; i < lts_timing_registry.count && !all_timings; i++) {
        const lts_timing_desc_t *t = lts_timing_row((lts_timing_t)i);
        if (a->have_err || !(o.timings & (1u << i))) continue;
        if (t->per_target && a->P < 2)
            fail(a, "--timing %s needs at least 2 ranks (root -> rank i tasks); this run has 1", t->name);
        for (size_t k = 0; k < nalgs && !a->have_err; k++)
            if (!lts_timing_applies(t, algs[k], a->P)) {
                char rows[256];
                coll_rows_with(t->alg_flags, rows, sizeof rows);
                fail(a, "--timing %s applies to the algorithms whose root -> rank i messages are tasks of their own "
                     "(%s), not --op %s --alg %s", t->name, rows, o.op_name, algs[k]->name);
            }
    }
    if (common_open(a, &o)) {
        free(o.sizes);
        free(algs);
        return 1;
    }
    if (global && !csync) csync = "hca";
    const char *opn = lts_reg_row(&lts_coll_op_names, (size_t)op_i)->name;
    lts_run_info_t info = common_info(&o, "coll", opn, full_argc, full_argv);
    info.clock_sync = global ? csync : NULL;
    info.resync_s = resync;
    int rc = lts_results_write_meta(o.out, MPI_COMM_WORLD, &info);
    /* the points the campaign will measure: a timing method of "all" runs only where it applies
     * (ops_coll.c), so the progress total counts (algorithm, method) pairs that apply */
    size_t npairs = 0;
    for (size_t k = 0; k < nalgs; k++)
        for (int i = 0; i < LTS_TIMING_N; i++)
            if (o.timings & (1u << i)) npairs += !!lts_timing_applies(lts_timing_row((lts_timing_t)i), algs[k], a->P);
    emit_ctx_t e = {o.out, &info, o.raw, o.progress, 0, npairs * o.nsizes, rc != 0};
    lts_coll_cfg_t cfg = {0};
    cfg.op = op_i;
    cfg.algs = algs;
    cfg.nalgs = nalgs;
    cfg.root = (int)root;
    cfg.sizes = o.sizes;
    cfg.nsizes = o.nsizes;
    cfg.measure.timer = &o.timer;
    cfg.measure.policy = o.pol;
    cfg.measure.sync = common_sync(&o);
    cfg.measure.timing = o.tmeth;
    cfg.measure.dummy_work_s = o.dummy_work_s;
    cfg.measure.start_window_s = window;
    cfg.on_point = on_point;
    cfg.ud = &e;
    cfg.timings = o.timings;
    cfg.clock_sync = csync;
    cfg.resync_s = resync;
    cfg.on_sync = on_sync;
    rc = lts_coll_run(MPI_COMM_WORLD, &cfg);
    if (rc == LTS_ERANGE) {
        fail(a, "--start-window %g us is shorter than twice the clocks' residual error after --clock-sync %s; widen it "
             "or leave it out (measured)", window * 1e6, csync);
        rc = LTS_OK;
    } else if (rc == LTS_ENODATA && a->me == 0) {
        fprintf(stderr, "latscope-bench: no valid repetition: with global timing every repetition had a rank reach the "
                        "common start late; widen --start-window (or run fewer ranks than cores)\n");
    }
    free(o.sizes);
    free(algs);
    return common_finish(a, &o, rc, e.io_error, "coll");
}

