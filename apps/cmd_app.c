/* latscope-bench app: the real twins of the LoGPC §5 application models (apps.h), timed by the
 * one driver, every repetition verified. Points: remap, one per --sizes; dag, one per
 * --sizes (bytes per boundary value) x --blocks. Records carry the pattern's parameters. */
#include "bench_cli.h"
#include "latscope/apps.h"
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>


enum { O_PATTERN = O_USER + 60, O_MESSAGES, O_DEST, O_STYLE, O_GRID, O_BLOCKS, O_TASKWORK, O_CORRUPT };

static const struct option app_opts[] = {
    {"pattern", required_argument, 0, O_PATTERN}, {"messages", required_argument, 0, O_MESSAGES},
    {"dest", required_argument, 0, O_DEST},       {"style", required_argument, 0, O_STYLE},
    {"grid", required_argument, 0, O_GRID},       {"blocks", required_argument, 0, O_BLOCKS},
    {"task-work", required_argument, 0, O_TASKWORK}, {"corrupt-rank", required_argument, 0, O_CORRUPT},
    {0, 0, 0, 0}};

static const char APP_USAGE[] =   /* after latscope-bench's usage, a blank line between */
    "\nlatscope-bench app --pattern remap|dag [options]   (LoGPC §5 application twins; see docs/apps.md)\n"
    "  --pattern NAME     remap (default), dag, null\n"
    "  remap: --messages N (per rank per repetition, default 64), --dest random|shift (default random;\n"
    "         random: a table drawn from --seed, the same on every rank), --style sync|async (default async),\n"
    "         --sizes = message sizes (default 8)\n"
    "  dag:   --grid N (n x n tasks, default 256), --blocks LIST (b per stripe, e.g. 1,2,4,8; default 4),\n"
    "         --task-work T (one task, e.g. 1us; 0: the cell function only; default 1us),\n"
    "         --sizes = bytes sent per boundary value (>= 8; default 8)\n"
    "  --corrupt-rank R   testing: rank R damages one received value, so the run must fail its check\n"
    "  defaults here: --timing max (the slowest rank's time), --warmup 5\n"
    "  exit status: 2 bad input, 3 a failed check or MPI error (the message names rank and value)\n";

/* "1,2,4" -> ints; fails naming the item. */
static int parse_blocks(app_t *a, const char *spec, int **out, size_t *n) {
    size_t cap = 8, k = 0;
    int *v = malloc(cap * sizeof *v);
    char *copy = strdup(spec), *save = NULL;
    if (!v || !copy) { free(v); free(copy); fail(a, "out of memory"); return -1; }
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        long x = strtol(it, &end, 10);
        if (errno || end == it || *end || x < INT_MIN || x > INT_MAX) {
            fail(a, "--blocks '%s': '%s' is not an integer; give a list such as 1,2,4,8", spec, it);
            free(copy); free(v);
            return -1;
        }
        if (k == cap) {
            int *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) { free(copy); free(v); fail(a, "out of memory"); return -1; }
            v = nv;
            cap *= 2;
        }
        v[k++] = (int)x;
    }
    free(copy);
    if (!k) { free(v); fail(a, "--blocks '%s': no block count given; e.g. 1,2,4,8", spec); return -1; }
    *out = v;
    *n = k;
    return 0;
}

typedef struct app_emit {
    emit_ctx_t *e;
    const lts_app_cfg_t *cfg;
    const lts_app_point_t *ap;   /* the point being written */
    int P, cpus, ranks_node;
} app_emit_t;

static const char *DEST_NAMES[] = {"random", "shift"};
static const char *STYLE_NAMES[] = {"sync", "async"};

/* The pattern's parameters: an "app" object in the metadata, flat fields in every point. */
static void app_extra(lts_json_t *j, int is_meta, void *ud) {
    const app_emit_t *x = ud;
    const lts_app_params_t *p = &x->cfg->params;
    const char *pat = x->cfg->pattern->op.name;
    const int remap = !strcmp(pat, "remap"), dag = !strcmp(pat, "dag");
    if (is_meta) {
        lts_json_obj_begin(j, "app");
        lts_json_str(j, "pattern", pat);
        lts_json_str(j, "variant", x->cfg->pattern->variant(p));
        if (remap) {
            lts_json_int(j, "messages", p->messages);
            lts_json_str(j, "dest", DEST_NAMES[p->dest]);
            lts_json_str(j, "style", STYLE_NAMES[p->style]);
        }
        if (dag) {
            lts_json_int(j, "grid", p->grid);
            lts_json_arr_begin(j, "blocks");
            for (size_t b = 0; b < x->cfg->nblocks; b++) lts_json_int(j, NULL, x->cfg->blocks[b]);
            lts_json_arr_end(j);
            lts_json_dbl(j, "task_work_s", p->task_work_s);
        }
        if (p->corrupt_rank >= 0) lts_json_int(j, "corrupt_rank", p->corrupt_rank); else lts_json_null(j, "corrupt_rank");
        lts_json_int(j, "cpus_available", x->cpus);
        lts_json_int(j, "ranks_per_node", x->ranks_node);
        lts_json_obj_end(j);
        return;
    }
    const lts_app_point_t *ap = x->ap;
    lts_json_str(j, "pattern", ap->pattern);
    lts_json_int(j, "ranks", x->P);
    if (remap) {
        lts_json_int(j, "messages", p->messages);
        lts_json_str(j, "dest", DEST_NAMES[p->dest]);
        lts_json_str(j, "style", STYLE_NAMES[p->style]);
        lts_json_int(j, "recv_min_messages", ap->recv_min);
        lts_json_int(j, "recv_max_messages", ap->recv_max);
        /* sync: LoGPC §5.1.1's 2 (o_s + L + o_r) measured with the twin's calls (null: async, P = 1) */
        lts_json_dbl(j, "rr_rtt_s", ap->rr_rtt_s);
        lts_json_dbl(j, "rr_handler_s", ap->rr_handler_s);   /* LoPC's C_r ~ o_r + o_s, the same calls */
    }
    if (dag) {
        lts_json_int(j, "grid", p->grid);
        lts_json_int(j, "blocks", ap->blocks);
        lts_json_int(j, "value_bytes", (long long)ap->bytes);
        lts_json_int(j, "block_bytes_max", (long long)ap->block_bytes_max);
        lts_json_dbl(j, "task_work_s", p->task_work_s);
        lts_json_dbl(j, "task_s", ap->task_s);
        lts_json_int(j, "task_rounds", ap->task_rounds);
        /* eq. (15)'s W measured: this stripe's computation and packing without messages */
        lts_json_dbl(j, "stripe_compute_s", lts_app_dag_stripe_compute_s());
        lts_json_dbl(j, "stripe_compute_last_s", lts_app_dag_stripe_last_s());
    }
    lts_json_int(j, "cpus_available", x->cpus);
    lts_json_int(j, "ranks_per_node", x->ranks_node);
}

static void app_on_point(void *ud, const lts_point_t *pt) {
    app_emit_t *x = ud;
    x->ap = pt->app;
    on_point(x->e, pt);
}

/* the whole pattern ends when its slowest rank does: --timing max */
static const cmd_spec_t app_cmd = {.name = "app", .own = app_opts, .help = APP_USAGE, .sizes = "8", .timing = "max",
                                   .warmup = 5};

static int cmd_app(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    const char *pattern = "remap", *dest = "random", *style = "async", *blocks_spec = NULL;
    int messages = 64, grid = 256, corrupt = -1, remap_given = 0, dag_given = 0;
    double task_work = 1e-6;
    common_t o = common_start(&app_cmd);
    while (command_opt(a, &o, argc, argv)) switch (o.opt) {
    case O_PATTERN: pattern = optarg; break;
    case O_MESSAGES: parse_int(a, "--messages", optarg, 1, LTS_APP_MAX_MESSAGES, &messages); remap_given = 1; break;
    case O_DEST: dest = optarg; remap_given = 1; break;
    case O_STYLE: style = optarg; remap_given = 1; break;
    case O_GRID: parse_int(a, "--grid", optarg, 1, LTS_APP_MAX_GRID, &grid); dag_given = 1; break;
    case O_BLOCKS: blocks_spec = optarg; dag_given = 1; break;
    case O_TASKWORK: parse_duration(a, "--task-work", optarg, &task_work); dag_given = 1; break;
    case O_CORRUPT: parse_int(a, "--corrupt-rank", optarg, 0, a->P - 1, &corrupt); break;
    default: foreign_opt(a, o.opt, argv, "app");
    }
    if (o.help) return -1;

    int pi = lookup(a, &lts_app_registry, "--pattern", pattern);
    common_check(a, &o, "app");
    const lts_app_pattern_t *pat = pi >= 0 ? (const lts_app_pattern_t *)lts_reg_row(&lts_app_registry, (size_t)pi) : NULL;
    lts_app_cfg_t cfg;
    memset(&cfg, 0, sizeof cfg);
    int *blocks = NULL;
    size_t nblocks = 0;
    char verr[512] = "";
    if (pat && !a->have_err) {
        const int is_remap = !strcmp(pat->op.name, "remap");
        if (!is_remap && remap_given)
            fail(a, "--messages, --dest and --style apply to --pattern remap, not %s", pat->op.name);
        else if (!pat->uses_blocks && dag_given)
            fail(a, "--grid, --blocks and --task-work apply to --pattern dag, not %s", pat->op.name);
        int d = !strcmp(dest, "random") ? LTS_REMAP_RANDOM : !strcmp(dest, "shift") ? LTS_REMAP_SHIFT : -1;
        int s = !strcmp(style, "sync") ? LTS_REMAP_SYNC : !strcmp(style, "async") ? LTS_REMAP_ASYNC : -1;
        if (d < 0) fail(a, "--dest '%s': valid: random, shift", dest);
        if (s < 0) fail(a, "--style '%s': valid: sync, async", style);
        if (pat->uses_blocks && !a->have_err) parse_blocks(a, blocks_spec ? blocks_spec : "4", &blocks, &nblocks);
        cfg.pattern = pat;
        cfg.params.messages = messages;
        cfg.params.dest = d;
        cfg.params.style = s;
        cfg.params.grid = grid;
        cfg.params.task_work_s = task_work;
        cfg.params.corrupt_rank = corrupt;
        char msg[300];
        if (!a->have_err && pat->check(&cfg.params, o.sizes, o.nsizes, blocks, nblocks, a->P, msg, sizeof msg))
            fail(a, "%s", msg);
    }
    if (common_open(a, &o)) {
        free(o.sizes);
        free(blocks);
        return 1;
    }
    cfg.params.seed = o.seed;   /* broadcast by common_open: every rank draws the same table */
    cfg.sizes = o.sizes;
    cfg.nsizes = o.nsizes;
    cfg.blocks = blocks;
    cfg.nblocks = nblocks;
    cfg.measure.timer = &o.timer;
    cfg.measure.policy = o.pol;
    cfg.measure.sync = common_sync(&o);
    cfg.measure.timing = o.tmeth;
    cfg.errmsg = verr;
    cfg.errlen = sizeof verr;

    /* oversubscription is recorded with every point: the models assume one processor per rank */
    app_emit_t x = {0};
    x.P = a->P;
    cpu_set_t cs;
    x.cpus = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : -1;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &x.ranks_node);
    MPI_Comm_free(&node);

    lts_run_info_t info = common_info(&o, "app", pat->op.name, full_argc, full_argv);
    info.mode = pat->variant(&cfg.params);
    emit_ctx_t e = {o.out, &info, o.raw, o.progress, 0, o.nsizes * (nblocks ? nblocks : 1), 0};
    x.e = &e;
    x.cfg = &cfg;
    lts_results_set_extra(app_extra, &x);
    e.io_error = lts_results_write_meta(o.out, MPI_COMM_WORLD, &info) != 0;
    cfg.on_point = app_on_point;
    cfg.ud = &x;
    int rc = lts_app_run(MPI_COMM_WORLD, &cfg);
    lts_results_set_extra(NULL, NULL);
    free(o.sizes);
    free(blocks);
    if (rc == LTS_APP_EVERIFY) {
        if (a->me == 0) fprintf(stderr, "latscope-bench: app --pattern %s failed its check: %s\n", pat->op.name, verr);
        common_finish(a, &o, 0, e.io_error, "app");
        return 3;
    }
    return common_finish(a, &o, rc, e.io_error, "app");
}

LTS_BENCH_COMMAND("app", "latscope-bench app [options]      LoGPC §5 application twins: --pattern remap|dag", cmd_app)
