/* latscope-bench tune: build a size -> algorithm decision table for one collective (seed 001 §4,
 * Opt_Scatter) with lts_tune_ex. Writes the usual results records (meta + one point per
 * candidate and size, `alg` set, bench "tune") to -o, the table (schema latscope.tune/1,
 * docs/tune-format.md) to --table, and the table as text to standard error on rank 0. */
#include "bench_cli.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { O_TABLE = O_USER + 30 };

static const struct option tune_opts[] = {{"table", required_argument, 0, O_TABLE}, {0, 0, 0, 0}};

static const char TUNE_USAGE[] =
    "latscope-bench tune --op OP [--alg LIST] [--sizes LIST] [--table FILE] [-o FILE] [options]\n"
    "  measures every --alg candidate (default all) of --op (default scatter) at every size and keeps,\n"
    "  per size, the eligible one with the smallest median (a median that is negative, cannot be told\n"
    "  from zero, or did not converge is set aside and listed; no eligible candidate at a size: exit 2);\n"
    "  equal neighbours merge into ranges whose boundaries lie at the geometric midpoint between\n"
    "  measured sizes (docs/tune-format.md)\n"
    "  --table FILE       write the decision table (JSON, latscope.tune/1); - : standard output\n"
    "  -o FILE            the measured points (JSON Lines, as coll writes them; default -)\n"
    "  --root R           the root while measuring (default 0)\n"
    "  --timing root|max  default root, as MPIBlib's Opt_Scatter (seed 001 §4). max includes the skew of\n"
    "                     the synchronised start (a few us on small messages); root's confirmation\n"
    "                     correction can go negative on oversubscribed nodes: compare with max there\n"
    "  sizes, repetitions, timer: the common options (latscope-bench --help)\n";

/* rank 0: the decision table for people: one row per measured size, the winner marked '*', a
 * candidate set aside 'x' (the reasons follow the table) */
static void print_table(FILE *f, const lts_tune_table_t *t) {
    fprintf(f, "decision table: %s on %d ranks (%s timing, %s timer; medians in us, * = fastest, x = set aside)\n",
            lts_reg_row(&lts_coll_op_names, (size_t)t->op)->name, t->ranks, t->timing, t->timer);
    fprintf(f, "  %-24s %-12s %10s", "size range (B)", "algorithm", "size (B)");
    for (size_t c = 0; c < t->ncand; c++) fprintf(f, " %11.11s", t->cand[c]->name);
    fputc('\n', f);
    for (size_t r = 0; r < t->nranges; r++) {
        const lts_tune_range_t *R = &t->ranges[r];
        char range[48];
        if (R->hi == LTS_TUNE_OPEN) snprintf(range, sizeof range, "[%zu, inf)", R->lo);
        else snprintf(range, sizeof range, "[%zu, %zu)", R->lo, R->hi);
        for (size_t p = 0; p < R->npoints || p == 0; p++) {
            fprintf(f, "  %-24s %-12s", p ? "" : range, p ? "" : R->alg->name);
            if (p < R->npoints) {
                fprintf(f, " %10zu", R->points[p].size_bytes);
                for (size_t c = 0; c < t->ncand; c++)
                    fprintf(f, " %10.3f%c", R->points[p].median_s[c] * 1e6,
                            t->cand[c] == R->alg ? '*' : R->points[p].set_aside && R->points[p].set_aside[c] ? 'x' : ' ');
            }
            fputc('\n', f);
        }
    }
    for (size_t r = 0; r < t->nranges; r++)
        for (size_t p = 0; p < t->ranges[r].npoints; p++) {
            const lts_tune_point_t *pt = &t->ranges[r].points[p];
            for (size_t c = 0; pt->set_aside && c < t->ncand; c++)
                if (pt->set_aside[c]) fprintf(f, "  set aside at %zu B: %s: %s\n", pt->size_bytes, t->cand[c]->name, pt->set_aside[c]);
        }
}

static const cmd_spec_t tune_cmd = {.name = "tune", .own = tune_opts, .help = TUNE_USAGE, .op = "scatter", .coll = 1};

static int cmd_tune(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    const char *table = NULL;
    common_t o = common_start(&tune_cmd);
    while (command_opt(a, &o, argc, argv)) switch (o.opt) {
    case O_TABLE: table = optarg; break;
    default: foreign_opt(a, o.opt, argv, "tune");
    }
    if (o.help) return -1;

    int op_i = lookup(a, &lts_coll_op_names, "--op", o.op_name);
    common_check(a, &o, "tune");
    if (!a->have_err && (o.timings & (o.timings - 1)))
        fail(a, "--timing '%s': tune compares algorithms under one timing method; give one of root, max", o.timing);
    long root = common_root(a, &o);
    if (table && !*table) fail(a, "--table '': give a file name (or - for standard output)");
    if (table && !strcmp(table, "-") && !strcmp(o.output, "-"))
        fail(a, "--table - and -o -: both would go to standard output; give a file to one of them");
    size_t nalgs = 0;
    if (op_i >= 0 && !a->have_err) {
        const lts_coll_alg_t **algs = NULL;
        coll_select_and_sizes(a, &o, op_i, o.op_name, o.alg_spec, &algs, &nalgs);
        if (!a->have_err && nalgs > LTS_TUNE_MAX_CANDIDATES)
            fail(a, "--alg '%s': %zu candidates; a table takes at most %d", o.alg_spec, nalgs, LTS_TUNE_MAX_CANDIDATES);
        free(algs);
    }
    /* the table file is opened before measuring, so a bad path costs no measurement */
    FILE *tf = NULL;
    int t_ok = 1;
    if (!a->have_err && a->me == 0 && table) {
        if (!strcmp(table, "-")) tf = stdout;
        else if (!(tf = fopen(table, "w"))) {
            t_ok = 0;
            fail(a, "--table '%s': cannot be written (%s); give a writable path", table, strerror(errno));
        }
    }
    MPI_Bcast(&t_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!t_ok && !a->have_err) fail(a, "rank 0 could not open the --table file");
    if (common_open(a, &o)) {
        if (tf && tf != stdout) fclose(tf);
        free(o.sizes);
        return 1;
    }
    const char *opn = lts_reg_row(&lts_coll_op_names, (size_t)op_i)->name;
    lts_run_info_t info = common_info(&o, "tune", opn, full_argc, full_argv);
    int rc = lts_results_write_meta(o.out, MPI_COMM_WORLD, &info);
    emit_ctx_t e = {o.out, &info, o.raw, o.progress, 0, nalgs * o.nsizes, rc != 0};

    lts_measure_cfg_t m;
    memset(&m, 0, sizeof m);
    m.timer = &o.timer;
    m.policy = o.pol;
    m.sync = common_sync(&o);
    m.timing = o.tmeth;
    m.dummy_work_s = o.dummy_work_s;
    lts_tune_opts_t topt;
    memset(&topt, 0, sizeof topt);
    topt.root = (int)root;
    topt.on_point = on_point;
    topt.ud = &e;
    char why[2048] = "";
    topt.msg = why;
    topt.msglen = sizeof why;
    lts_tune_table_t *t = NULL;
    rc = lts_tune_ex(MPI_COMM_WORLD, (lts_coll_op_t)op_i, o.alg_spec, o.sizes, o.nsizes, &m, &topt, &t);
    if (rc == LTS_ENOELIGIBLE) {
        /* the points are in -o; no table is written: the measurements cannot support one at that
         * size. Exit 2 on every rank (all got the same code from lts_tune_ex), message on rank 0. */
        if (a->me == 0)
            fprintf(stderr, "latscope-bench: error: tune: %s%s\n", why,
                    o.tmeth == LTS_TIMING_ROOT ? " (root timing subtracts a measured confirmation time, which can exceed "
                    "a tiny or oversubscribed collective: measure with --timing max, more repetitions, or leave that "
                    "size out)" : " (more repetitions or a larger --budget, or leave that size out)");
        if (tf && tf != stdout) {
            fclose(tf);
            remove(table);
        }
        int io = e.io_error;
        common_finish(a, &o, 0, io, "tune");
        free(o.sizes);
        return 2;
    }
    int io = e.io_error;
    if (!rc && a->me == 0) {
        print_table(stderr, t);
        if (tf && lts_tune_write(t, tf)) {
            fprintf(stderr, "latscope-bench: writing the table to %s failed\n", table);
            io = 1;
        }
    }
    if (tf && tf != stdout && fclose(tf) != 0) io = 1;
    lts_tune_free(t);
    free(o.sizes);
    return common_finish(a, &o, rc, io, "tune");
}

LTS_BENCH_COMMAND("tune", "latscope-bench tune [options]     size -> algorithm decision table (latscope.tune/1)", cmd_tune)
