/* latscope-bench p2p: point-to-point campaigns over pairs or triplets (src/bench/p2p.c), one or
 * more operations per launch. Registered in apps/latscope_bench.c (the built-ins come first). */
#include "bench_cli.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --op A,B,...: the operations are measured one after the other in this launch (e.g.
 * pingpong_pmpi,pingpong: a PMPI tool's run and its baseline under one launch's conditions).
 * They must share a group size, so --pairs / --triplets apply to all. Returns how many. */
static size_t p2p_ops(app_t *a, const char *op_name, const lts_op_desc_t **ops, size_t max_ops) {
    size_t nops = 0;
    char list[256];
    if (snprintf(list, sizeof list, "%s", op_name) >= (int)sizeof list) fail(a, "--op '%s': too long", op_name);
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t && !a->have_err; t = strtok_r(NULL, ",", &save)) {
        int i = lookup(a, &lts_p2p_registry, "--op", t);
        if (i < 0) break;
        if (nops == max_ops) { fail(a, "--op '%s': at most %zu operations", op_name, max_ops); break; }
        ops[nops++] = (const lts_op_desc_t *)lts_reg_row(&lts_p2p_registry, (size_t)i);
        if (ops[nops - 1]->group_size != ops[0]->group_size)
            fail(a, "--op '%s': %s and %s have different group sizes (%d and %d ranks); run them separately",
                 op_name, ops[0]->name, ops[nops - 1]->name, ops[0]->group_size, ops[nops - 1]->group_size);
    }
    if (!nops && !a->have_err) fail(a, "--op '%s': no operation named; valid: see latscope-bench list", op_name);
    return nops;
}

static const cmd_spec_t p2p_cmd = {.name = "p2p", .op = "pingpong"};   /* its options are all in lts_cli_opts */

int cmd_p2p(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    const char *mode = "par", *pairs = NULL, *triplets = NULL;
    long reply = -2;   /* -2: default for the op */
    int window = 64;
    common_t o = common_start(&p2p_cmd);
    while (command_opt(a, &o, argc, argv)) switch (o.opt) {
    case O_MODE: mode = optarg; break;
    case O_PAIRS: pairs = optarg; break;
    case O_TRIPLETS: triplets = optarg; break;
    case O_REPLY: {
        size_t v;
        int rc = lts_parse_size(optarg, &v);
        if (rc) fail(a, "--reply-size '%s': must be a size from 0 to 1G (e.g. 0, 8, 64K)", optarg);
        else reply = (long)v;
        break;
    }
    case O_WINDOW: parse_int(a, "--window", optarg, 1, 1024, &window); break;
    default: foreign_opt(a, o.opt, argv, "p2p");
    }
    if (o.help) return -1;

    enum { MAX_OPS = 8 };
    const lts_op_desc_t *ops[MAX_OPS];
    size_t nops = p2p_ops(a, o.op_name, ops, MAX_OPS);
    int op_i = nops ? 0 : -1;
    common_check(a, &o, "p2p");
    if (!a->have_err && (o.timings & (o.timings - 1)))
        fail(a, "--timing '%s': p2p takes one method: root or max", o.timing);
    if (strcmp(mode, "seq") && strcmp(mode, "par")) fail(a, "--mode '%s': valid: seq, par", mode);
    size_t *sizes = o.sizes, nsizes = o.nsizes;

    const lts_op_desc_t *op = op_i >= 0 && !a->have_err ? ops[0] : NULL;
    for (size_t k = 1; k < nops && op && !a->have_err; k++)
        if (reply >= 0 && strcmp(ops[k]->name, "roundtrip") && strcmp(ops[k]->name, "p2two"))
            fail(a, "--reply-size applies to --op roundtrip and p2two, not %s", ops[k]->name);
    int *groups = NULL;
    size_t ngroups = 0;
    if (op && !a->have_err) {
        if (a->P < op->group_size)
            fail(a, "--op %s needs at least %d ranks; this run has %d (start it with mpiexec -n %d or more)", op->name,
                 op->group_size, a->P, op->group_size);
        else if (op->group_size == 3 && pairs)
            fail(a, "--pairs does not apply to --op %s: it takes --triplets I:J:K,...", op->name);
        else if (op->group_size == 2 && triplets)
            fail(a, "--triplets applies only to --op p2two; --op %s takes --pairs I:J,...", op->name);
        else if (reply >= 0 && strcmp(op->name, "roundtrip") && strcmp(op->name, "p2two"))
            fail(a, "--reply-size applies to --op roundtrip and p2two, not %s", op->name);
        else if (op->group_size == 2) {
            if (pairs) parse_groups(a, "--pairs", pairs, 2, a->P, &groups, &ngroups);
            else lts_all_pairs(a->P, &groups, &ngroups);
        } else {
            if (triplets) parse_groups(a, "--triplets", triplets, 3, a->P, &groups, &ngroups);
            else lts_all_triplets(a->P, &groups, &ngroups);
        }
        if (reply == -2) reply = !strcmp(op->name, "p2two") ? 0 : -1;
        if (!a->have_err && op->windowed) {
            size_t max_b = 0;
            for (size_t s = 0; s < nsizes; s++) if (sizes[s] > max_b) max_b = sizes[s];
            if ((double)max_b * window > (double)LTS_SIZE_MAX_BYTES)
                fail(a, "--window %d x largest size %zu B needs more than 1 GiB of receive buffers; lower one of them",
                     window, max_b);
        }
    }
    if (common_open(a, &o)) {
        free(sizes);
        free(groups);
        return 1;
    }

    lts_run_info_t info = common_info(&o, "p2p", nops > 1 ? o.op_name : op->name, full_argc, full_argv);
    info.mode = mode;
    /* pairs run side by side only in par mode with 4 or more ranks (lts_p2p_run) */
    info.sync = lts_sync_resolve(common_sync(&o), op, !strcmp(mode, "par") && a->P >= 4,
                                 lts_timing_row(o.tmeth)->sync_start)->name;
    info.sizes = sizes;
    info.nsizes = nsizes;
    info.reply_bytes = reply;
    info.window = window;
    int rc = lts_results_write_meta(o.out, MPI_COMM_WORLD, &info);

    emit_ctx_t e = {o.out, &info, o.raw, o.progress, 0, nops * nsizes * ngroups, rc != 0};
    for (size_t k = 0; k < nops && !rc; k++) {
        lts_p2p_cfg_t cfg = {ops[k], !strcmp(mode, "par") ? LTS_MODE_PAR : LTS_MODE_SEQ, groups, ngroups, sizes, nsizes,
                             reply, window, {&o.timer, o.pol, common_sync(&o), o.tmeth}, on_point, &e};
        cfg.measure.dummy_work_s = o.dummy_work_s;
        rc = lts_p2p_run(MPI_COMM_WORLD, &cfg);
    }
    free(sizes);
    free(groups);
    return common_finish(a, &o, rc, e.io_error, "p2p");
}

