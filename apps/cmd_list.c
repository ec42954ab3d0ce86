/* latscope-bench list [--json]: the registries, read from their rows. Text for people; --json,
 * one object (schema latscope.registries/1, docs/architecture.md "One source of truth") that
 * Python reads instead of keeping its own copies of the names, the barrier rows' parameter
 * grammar and the decision-table constants (python/latscope/registries.py). */
#include "bench_cli.h"
#include <string.h>

#define LIST_SCHEMA "latscope.registries/1"

static const struct { const char *key; const lts_registry_t *reg; } flat[] = {
    {"timers", &lts_timer_registry},       {"p2p_ops", &lts_p2p_registry},
    {"sync", &lts_sync_registry},          {"timing", &lts_timing_registry},
    {"clock_sync", &lts_clocksync_registry},
};

static void rows_json(lts_json_t *j, const lts_registry_t *r) {
    for (size_t i = 0; i < r->count; i++) {
        lts_json_obj_begin(j, NULL);
        lts_json_str(j, "name", lts_reg_row(r, i)->name);
        lts_json_str(j, "help", lts_reg_row(r, i)->help);
        lts_json_obj_end(j);
    }
}

/* Every row of every operation; "all": whether `--alg all` selects it (rows named null* exist to
 * test the registry, lts_reg_select); "params": a parametrised row's grammar ("tree:k=3",
 * lts_coll_select: k an integer in [min, max], default when not given). */
static void coll_json(lts_json_t *j) {
    lts_json_arr_begin(j, "collectives");
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        lts_json_obj_begin(j, NULL);
        lts_json_str(j, "op", lts_reg_row(&lts_coll_op_names, (size_t)op)->name);
        lts_json_str(j, "help", lts_reg_row(&lts_coll_op_names, (size_t)op)->help);
        lts_json_arr_begin(j, "algorithms");
        for (size_t i = 0; i < r->count; i++) {
            const lts_coll_alg_t *a = (const lts_coll_alg_t *)lts_reg_row(r, i);
            lts_json_obj_begin(j, NULL);
            lts_json_str(j, "name", a->name);
            lts_json_str(j, "help", a->help);
            lts_json_bool(j, "all", strncmp(a->name, "null", 4) != 0);
            lts_json_obj_begin(j, "params");
            if (a->barrier_k) {
                lts_json_obj_begin(j, "k");
                lts_json_int(j, "default", a->k);
                lts_json_int(j, "min", 2);
                lts_json_int(j, "max", LTS_BARRIER_K_MAX);
                lts_json_obj_end(j);
            }
            lts_json_obj_end(j);
            lts_json_obj_end(j);
        }
        lts_json_arr_end(j);
        lts_json_obj_end(j);
    }
    lts_json_arr_end(j);
}

static int list_json(void) {
    lts_json_t j;
    lts_json_init(&j);
    lts_json_obj_begin(&j, NULL);
    lts_json_str(&j, "schema", LIST_SCHEMA);
    lts_json_str(&j, "version", LTS_VERSION);
    for (size_t f = 0; f < sizeof flat / sizeof flat[0]; f++) {
        lts_json_arr_begin(&j, flat[f].key);
        rows_json(&j, flat[f].reg);
        lts_json_arr_end(&j);
    }
    coll_json(&j);
    /* the decision tables' constants (include/latscope/tune.h, docs/tune-format.md) */
    lts_json_obj_begin(&j, "tune");
    lts_json_str(&j, "schema", LTS_TUNE_SCHEMA);
    lts_json_str(&j, "statistic", "median");
    lts_json_str(&j, "boundary_rule", "geometric-midpoint");
    lts_json_int(&j, "max_candidates", LTS_TUNE_MAX_CANDIDATES);
    lts_json_obj_end(&j);
    lts_json_obj_end(&j);
    int rc = lts_json_emit(&j, stdout);
    lts_json_free(&j);
    return rc;
}

static void list_text(void) {
    for (size_t f = 0; f < sizeof flat / sizeof flat[0]; f++) {
        const lts_registry_t *r = flat[f].reg;
        printf("%s:\n", r->kind);
        for (size_t i = 0; i < r->count; i++) printf("  %-12s %s\n", lts_reg_row(r, i)->name, lts_reg_row(r, i)->help);
    }
    printf("collective algorithms (coll --op OP --alg NAME):\n");
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        for (size_t i = 0; i < r->count; i++)
            printf("  %-9s %-9s %s\n", lts_reg_row(&lts_coll_op_names, (size_t)op)->name, lts_reg_row(r, i)->name,
                   lts_reg_row(r, i)->help);
    }
}

static int cmd_list(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (a->me == 0) puts("latscope-bench list [--json]\n  the registries (--json: one object, latscope.registries/1)");
            return 0;
        } else {
            fail(a, "list: unexpected argument '%s'; allowed: --json", argv[i]);
            return 0;
        }
    }
    if (a->me != 0) return 0;
    if (!json) {
        list_text();
        return 0;
    }
    return list_json() ? 1 : 0;
}

LTS_BENCH_COMMAND("list", "latscope-bench list [--json]      the registries (--json: for programs)", cmd_list)
