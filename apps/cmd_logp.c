/* latscope-bench logp: the LogP / LogGP / PLogP parameters of one pair, per message size
 * (src/bench/ops_logp.c): o_s (time in the send call), o_r (time in the receive call when the
 * message has already arrived), rtt (ping-pong) and g (trains of back-to-back sends), each timed
 * by the one driver on the first rank's clock. One metadata record, then one point record per
 * (measurement, size), op = o_s | o_r | rtt | g | g_nb | g_r | rtt_train; the trains' records
 * (g, g_nb, g_r, rtt_train: back-to-back streams, what a processor that keeps sending or receiving
 * pays per message) carry the train length as window and time per message as the value; post
 * (time in MPI_Irecv, nothing to match), poll (a receive by MPI_Iprobe then MPI_Recv), flag
 * (one-way shared-memory flag latency) and mcast (out by MPI_Bcast, back by a message) are what
 * barriers cost beyond LogP, measured at the smallest size only, flag only for a pair on one node.
 * `latscope fit logp` derives L = RTT/2 - o_s - o_r, G, PLogP. */
#include "bench_cli.h"
#include "latscope/logp.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { O_LOGP_OPS = O_USER + 40, O_LOGP_TRAIN, O_LOGP_DELAY, O_LOGP_PAIR };

static const struct option own[] = {
    {"ops", required_argument, 0, O_LOGP_OPS}, {"train", required_argument, 0, O_LOGP_TRAIN},
    {"delay", required_argument, 0, O_LOGP_DELAY}, {"pair", required_argument, 0, O_LOGP_PAIR}, {0, 0, 0, 0}};

static const char HELP[] =
    "latscope-bench logp [options]: LogP/LogGP/PLogP parameters of one pair, per size\n"
    "  --ops LIST       measurements (default all; grammar a,b,-c): o_s, o_r, rtt, g, g_nb, g_r,\n"
    "                   rtt_train per size; post, poll, flag, mcast, rtt_loop, rtt_poll, rwait,\n"
    "                   irecv_wait, rtt_poll_any, catch at the smallest size\n"
    "                   (flag, catch: a pair on one node, skipped otherwise)\n"
    "  --train N        g, g_r: messages per train (2..1024, default 32)\n"
    "  --delay D        o_r, poll, g_r: wait between the partner's send(s) and the timed receive(s) (e.g.\n"
    "                   50us; default: twice a quick RTT of the size, at least 10us; g_r adds RTT/2 per\n"
    "                   message of the train)\n"
    "  --pair I:J       the ranks (default 0:1); I's clock times everything\n"
    "  --sizes LIST     message sizes (default 0,8,64,512,4K,16K,64K,256K)\n"
    "  and the common options (--timer, --warmup, --min-reps, --max-reps, --rel-err, --budget,\n"
    "  --sync, --raw, -o, --progress; see latscope-bench --help). Timing: the first rank's clock.\n"
    "Test hook: LATSCOPE_TEST_SEND_COST_S / LATSCOPE_TEST_RECV_COST_S add a busy-wait inside every\n"
    "send / receive call path of these measurements (tests only).\n";

/* measured once, at the smallest size: neither depends on the message size */
static int size_independent(const char *op) {
    return !strcmp(op, "post") || !strcmp(op, "poll") || !strcmp(op, "flag") || !strcmp(op, "mcast") ||
           !strcmp(op, "rtt_loop") || !strcmp(op, "rtt_poll") || !strcmp(op, "rwait") ||
           !strcmp(op, "irecv_wait") || !strcmp(op, "rtt_poll_any") || !strcmp(op, "catch");
}

static const cmd_spec_t logp_cmd = {.name = "logp", .own = own, .help = HELP, .help_alone = 1,
                                    .sizes = "0,8,64,512,4K,16K,64K,256K", .timing_allowed = 1u << LTS_TIMING_ROOT};

static int cmd_logp(app_t *a, int argc, char **argv, int full_argc, char **full_argv) {
    const char *ops_spec = "all", *pair_s = "0:1";
    int train = 32;
    double delay = -1.0;
    common_t o = common_start(&logp_cmd);
    while (command_opt(a, &o, argc, argv)) switch (o.opt) {
    case O_LOGP_OPS: ops_spec = optarg; break;
    case O_LOGP_TRAIN: parse_int(a, "--train", optarg, 2, 1024, &train); break;
    case O_LOGP_DELAY: parse_duration(a, "--delay", optarg, &delay); break;
    case O_LOGP_PAIR: pair_s = optarg; break;
    default: foreign_opt(a, o.opt, argv, "logp");
    }
    if (o.help) return -1;
    common_check(a, &o, "logp");

    uint64_t mask = 0;
    char bad[64] = "", names[256];
    lts_reg_names(&lts_logp_registry, names, sizeof names);
    if (lts_reg_select(&lts_logp_registry, ops_spec, &mask, bad, sizeof bad))
        fail(a, "--ops '%s': unknown measurement '%s'; valid: %s", ops_spec, bad, names);
    else if (!mask)
        fail(a, "--ops '%s' selects no measurement; valid: %s", ops_spec, names);
    int group[2] = {0, 1};
    if (a->P < 2) fail(a, "logp measures a pair: it needs at least 2 ranks; this run has %d (mpiexec -n 2)", a->P);
    {
        char *end, *end2;
        errno = 0;
        long i = strtol(pair_s, &end, 10), j = *end == ':' ? strtol(end + 1, &end2, 10) : -1;
        if (errno || end == pair_s || *end != ':' || *end2 || end2 == end + 1)
            fail(a, "--pair '%s': must be I:J, two rank numbers (e.g. 0:1)", pair_s);
        else if (i < 0 || j < 0 || i >= a->P || j >= a->P)
            fail(a, "--pair '%s': ranks must be in 0..%d (this run has %d)", pair_s, a->P - 1, a->P);
        else if (i == j)
            fail(a, "--pair '%s': the two ranks must differ", pair_s);
        else { group[0] = (int)i; group[1] = (int)j; }
    }
    size_t maxb = 0;
    for (size_t s = 0; s < o.nsizes; s++) if (o.sizes[s] > maxb) maxb = o.sizes[s];
    if (!a->have_err && (double)maxb * train > (double)LTS_SIZE_MAX_BYTES)
        fail(a, "--train %d x largest size %zu B needs more than 1 GiB of receive buffers; lower one of them", train,
             maxb);
    if (common_open(a, &o)) {
        free(o.sizes);
        return 1;
    }
    lts_logp_set_delay(delay);
    /* flag needs the pair in one shared-memory domain: compare the node leaders' world ranks.
     * Test hook (tests only), as the shm barrier's: shm_node_size = m makes "nodes" of m
     * consecutive ranks, so the skip is tested on one machine (include/latscope/hooks.h). */
    int pair_shares_node = 0;
    {
        MPI_Comm node;
        int lead = a->me, *leads = malloc((size_t)a->P * sizeof *leads);
        int m = lts_test_hooks()->shm_node_size;
        if (m >= 1) MPI_Comm_split(MPI_COMM_WORLD, a->me / m, a->me, &node);
        else MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, a->me, MPI_INFO_NULL, &node);
        MPI_Bcast(&lead, 1, MPI_INT, 0, node);
        MPI_Comm_free(&node);
        if (leads) {
            MPI_Allgather(&lead, 1, MPI_INT, leads, 1, MPI_INT, MPI_COMM_WORLD);
            pair_shares_node = leads[group[0]] == leads[group[1]];
            free(leads);
        }
    }
    size_t smallest = o.sizes[0];
    for (size_t s = 1; s < o.nsizes; s++) if (o.sizes[s] < smallest) smallest = o.sizes[s];
    for (int q = 0; q < 2; q++) {   /* flag, catch: shared memory between the pair */
        const char *shm_op = q ? "catch" : "flag";
        int flag_idx = lts_reg_find(&lts_logp_registry, shm_op);
        if (flag_idx >= 0 && (mask >> flag_idx & 1) && !pair_shares_node) {
            mask &= ~((uint64_t)1 << flag_idx);
            if (a->me == 0)
                fprintf(stderr, "latscope-bench logp: %s not measured: ranks %d and %d are on different nodes (no "
                                "shared memory between them)\n", shm_op, group[0], group[1]);
        }
    }
    lts_run_info_t info = common_info(&o, "logp", "logp", full_argc, full_argv);
    info.mode = "seq";
    info.window = train;
    int rc = lts_results_write_meta(o.out, MPI_COMM_WORLD, &info);
    size_t npoints = 0;
    for (size_t i = 0; i < lts_logp_registry.count; i++)
        if ((mask >> i) & 1) npoints += size_independent(lts_reg_row(&lts_logp_registry, i)->name) ? 1 : o.nsizes;
    emit_ctx_t e = {o.out, &info, o.raw, o.progress, 0, npoints, rc != 0};
    for (size_t i = 0; i < lts_logp_registry.count && rc == LTS_OK; i++) {
        if (!(mask & ((uint64_t)1 << i))) continue;
        lts_op_desc_t op;
        const char *name = lts_reg_row(&lts_logp_registry, i)->name;
        /* the trains (g, g_nb, g_r, rtt_train) report time per message: lts_logp_op scales them */
        if ((rc = lts_logp_op(name, train, &op))) break;
        if (!strcmp(name, "catch")) {   /* a sweep of send times, not a timed call (ops_logp_catch.c) */
            lts_measurement_t m;
            if ((rc = lts_logp_catch(MPI_COMM_WORLD, group, &m))) break;
            lts_point_t pt = {.op = name, .group = group, .group_size = 2, .bytes = smallest, .window = 1, .m = &m};
            if (a->me == 0) on_point(&e, &pt);
            lts_measurement_free(&m);
            continue;
        }
        int win = op.scale < 1.0 ? train : 1;
        lts_p2p_cfg_t cfg = {0};
        cfg.op = &op;
        cfg.mode = LTS_MODE_SEQ;
        cfg.groups = group;
        cfg.ngroups = 1;
        cfg.sizes = size_independent(name) ? &smallest : o.sizes;
        cfg.nsizes = size_independent(name) ? 1 : o.nsizes;
        cfg.reply_bytes = -1;
        cfg.window = win;
        cfg.measure.timer = &o.timer;
        cfg.measure.policy = o.pol;
        cfg.measure.sync = common_sync(&o);
        cfg.measure.timing = LTS_TIMING_ROOT;
        cfg.measure.dummy_work_s = o.dummy_work_s;
        cfg.on_point = on_point;
        cfg.ud = &e;
        rc = lts_p2p_run(MPI_COMM_WORLD, &cfg);
    }
    free(o.sizes);
    return common_finish(a, &o, rc, e.io_error, "logp");
}

LTS_BENCH_COMMAND("logp", "latscope-bench logp [options]     LogP/LogGP/PLogP parameters of a pair (o_s, o_r, rtt, g, ...)",
                  cmd_logp)
