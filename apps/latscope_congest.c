/* latscope-congest: background load between rank pairs (seed 004 §5.1, Algorithm 3). The
 * program -- options, the run's set-up, the report (text, --json latscope.congest/1) -- around the
 * generator of src/congest/congest.c, which says how the load is made and how every rank stops
 * in the same round.
 *
 * The bandwidth is measured at start-up per pair, all pairs at once, or given with --bandwidth.
 * The run ends after --duration or on SIGINT/SIGTERM (the handler only sets the flag the
 * generator polls); rank 0 prints the load achieved per pair and in total, and everyone exits 0.
 *
 * Bad input: every rank parses the same arguments and reaches the same verdict; rank 0 names
 * the bad value; all exit 2.
 *
 * Test hook (for tests only): LATSCOPE_TEST_READY_FILE=PATH makes each sender create PATH.<rank>
 * once it has sent LATSCOPE_TEST_READY_MSGS messages (default 1), so a test signals a run that is
 * under way (handlers installed on every rank, that many messages sent) by waiting for the file,
 * not for a fixed time. */
#include "app.h"
#include "congest.h"
#include "latscope/errors.h"
#include "latscope/json.h"
#include "latscope/hostload.h"
#include "latscope/results.h"
#include "latscope/sizes.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRINT_MAX 10000000L

static const char *USAGE =
    "usage: latscope-congest [options]      (under mpiexec/srun, at least 2 ranks)\n"
    "  Rank pairs 0->1, 2->3, ... each keep a fraction of their one-way bandwidth busy with\n"
    "  exponentially spaced messages (seed 004 Algorithm 3); an odd last rank idles.\n"
    "  --load F           fraction of the one-way bandwidth, 0 < F <= 1 (default 0.5)\n"
    "  --bandwidth B      one-way bandwidth in bytes/s, e.g. 10G, 1.25GB/s, or bits: 10Gbit/s\n"
    "                     (K, M, G, T are powers of 1000; default: measured at start-up)\n"
    "  --size N           message size, e.g. 64K (K, M, G are powers of 1024; 1 B..1G; default 64K)\n"
    "  --duration T       run time, e.g. 10s, 500ms, 2m (default 10s); 0: until SIGINT/SIGTERM\n"
    "  --seed S           seed of the gap streams, each rank's is MT19937-64 init_by_array64({S, rank})\n"
    "  --json FILE        also write the result as JSON (format latscope.congest/1)\n"
    "  --print-gaps N     print the first N gaps (ns) of each sender's stream as JSON lines and exit\n"
    "                     (needs --bandwidth; sends nothing)\n"
    "  --print-random N   print the first N outputs of MT19937-64 init_genrand64(S) and exit\n"
    "  --version, --help\n"
    "  SIGINT/SIGTERM stop the run cleanly: the load achieved so far is printed, exit status 0.\n"
    "  (MPICH's mpiexec passes them on to the ranks. Open MPI's mpirun does too, but then exits 1\n"
    "  and may drop the ranks' output: signal the ranks themselves, or use --duration / --json.)\n"
    "Environment: LATSCOPE_QUICK=1 caps --duration at 1 s (a smoke test; \"quick\": true in --json).\n";

typedef struct opts {
    double load, bandwidth_Bps, duration_s;
    int quick;   /* LATSCOPE_QUICK=1 capped --duration */
    size_t size;
    unsigned long long seed;
    const char *json;
    long print_gaps, print_random;
} opts_t;

static volatile sig_atomic_t g_signal;
static void on_signal(int sig) { g_signal = sig; }

/* ---- option values ---------------------------------------------------------------------- */
static int parse_num(const char *s, double *v, const char **rest) {
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (end == s || errno || !isfinite(*v)) return -1;
    *rest = end;
    return 0;
}

static void opt_load(app_t *a, const char *s, double *out) {
    const char *rest;
    double v;
    if (parse_num(s, &v, &rest) || *rest || !(v > 0 && v <= 1))
        fail(a, "--load '%s': must be a fraction of the bandwidth, 0 < F <= 1 (e.g. 0.5)", s);
    else
        *out = v;
}

static void opt_bandwidth(app_t *a, const char *s, double *out) {
    const char *u;
    double v, mul = 1;
    if (parse_num(s, &v, &u) || !(v > 0)) goto bad;
    switch (*u) {
    case 'k': case 'K': mul = 1e3; u++; break;
    case 'M': mul = 1e6; u++; break;
    case 'G': mul = 1e9; u++; break;
    case 'T': mul = 1e12; u++; break;
    default: break;
    }
    if (!*u || !strcmp(u, "B/s") || !strcmp(u, "B")) *out = v * mul;
    else if (!strcmp(u, "bit/s") || !strcmp(u, "bps") || !strcmp(u, "b/s")) *out = v * mul / 8;
    else goto bad;
    if (*out < 1) goto bad;
    return;
bad:
    fail(a, "--bandwidth '%s': must be a positive rate in bytes/s, e.g. 10G, 1.25GB/s, 800M, or in bits: "
            "10Gbit/s (K, M, G, T are powers of 1000; at least 1 B/s)", s);
}

static void opt_duration(app_t *a, const char *s, double *out) {
    const char *u;
    double v, mul = 1;
    if (parse_num(s, &v, &u) || v < 0) goto bad;
    if (!*u || !strcmp(u, "s")) mul = 1;
    else if (!strcmp(u, "ms")) mul = 1e-3;
    else if (!strcmp(u, "us")) mul = 1e-6;
    else if (!strcmp(u, "m") || !strcmp(u, "min")) mul = 60;
    else if (!strcmp(u, "h")) mul = 3600;
    else goto bad;
    if (v * mul > 1e7) goto bad;
    *out = v * mul;
    return;
bad:
    fail(a, "--duration '%s': must be a non-negative time up to 1e7 s, e.g. 10s, 500ms, 2m "
            "(units us, ms, s, m, h; plain number: seconds; 0: until SIGINT/SIGTERM)", s);
}

static void opt_long(app_t *a, const char *flag, const char *s, long lo, long hi, long *out) {
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        fail(a, "%s '%s': must be an integer in [%ld, %ld]", flag, s, lo, hi);
    else
        *out = v;
}

enum { O_LOAD = 256, O_BW, O_SIZE, O_DUR, O_SEED, O_JSON, O_GAPS, O_RANDOM, O_HELP, O_VERSION };
static const struct option OPTS[] = {
    {"load", required_argument, 0, O_LOAD},         {"bandwidth", required_argument, 0, O_BW},
    {"size", required_argument, 0, O_SIZE},         {"duration", required_argument, 0, O_DUR},
    {"seed", required_argument, 0, O_SEED},         {"json", required_argument, 0, O_JSON},
    {"print-gaps", required_argument, 0, O_GAPS},   {"print-random", required_argument, 0, O_RANDOM},
    {"help", no_argument, 0, O_HELP},               {"version", no_argument, 0, O_VERSION},
    {0, 0, 0, 0}};

/* 1: go on; 0: --help/--version done; errors go to a->err */
static int parse_args(app_t *a, opts_t *o, int argc, char **argv) {
    *o = (opts_t){.load = 0.5, .bandwidth_Bps = 0, .duration_s = 10, .size = 64 * 1024, .seed = 1};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", OPTS, NULL)) != -1) {
        switch (c) {
        case O_LOAD: opt_load(a, optarg, &o->load); break;
        case O_BW: opt_bandwidth(a, optarg, &o->bandwidth_Bps); break;
        case O_DUR: opt_duration(a, optarg, &o->duration_s); break;
        case O_SIZE: {
            size_t v = 0;
            int rc = lts_parse_size(optarg, &v);
            if (rc || v == 0)
                fail(a, "--size '%s': must be a message size from 1 B to 1G, e.g. 64K (K, M, G are powers of 1024)",
                     optarg);
            else
                o->size = v;
            break;
        }
        case O_SEED: {
            errno = 0;
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-')
                fail(a, "--seed '%s': must be a non-negative integer below 2^64", optarg);
            else
                o->seed = v;
            break;
        }
        case O_JSON:
            if (!*optarg) fail(a, "--json '': give a file name");
            o->json = optarg;
            break;
        case O_GAPS: opt_long(a, "--print-gaps", optarg, 1, PRINT_MAX, &o->print_gaps); break;
        case O_RANDOM: opt_long(a, "--print-random", optarg, 1, PRINT_MAX, &o->print_random); break;
        case O_HELP:
            if (a->me == 0) fputs(USAGE, stdout);
            return 0;
        case O_VERSION:
            if (a->me == 0) printf("latscope-congest %s\n", LTS_VERSION);
            return 0;
        default:
            fail(a, "unknown or incomplete option '%s'; see latscope-congest --help", argv[optind - 1]);
        }
    }
    if (optind < argc) fail(a, "unexpected argument '%s'; see latscope-congest --help", argv[optind]);
    /* LATSCOPE_QUICK=1 (smoke tests, the docs test): a timed run lasts at most 1 s; recorded in --json */
    const char *quick = getenv("LATSCOPE_QUICK");
    if (quick && *quick && strcmp(quick, "0")) {
        if (strcmp(quick, "1")) fail(a, "LATSCOPE_QUICK '%s': must be 1 (smoke-test sizes) or 0/unset", quick);
        else {
            o->quick = 1;
            if (o->duration_s > 1.0) o->duration_s = 1.0;
        }
    }
    if (o->print_gaps && !o->bandwidth_Bps)
        fail(a, "--print-gaps needs --bandwidth (the gaps' mean is size / (load x bandwidth))");
    if (!o->print_gaps && !o->print_random && a->P < 2)
        fail(a, "latscope-congest needs at least 2 ranks (pairs 0->1, 2->3, ...); this run has %d "
                "(start it with mpiexec -n 2 or more)", a->P);
    return 1;
}

/* ---- output ------------------------------------------------------------------------------ */
static void fmt_rate(char *out, size_t n, double Bps) {
    const char *u[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
    int i = 0;
    while (Bps >= 1000 && i < 4) { Bps /= 1000; i++; }
    snprintf(out, n, "%.3g %s", Bps, u[i]);
}

/* What else the machine did during the run (docs/results-schema.md, "Load and oversubscription"):
 * a rate limiter can only lose time to other processes, so a reader judging the achieved rate
 * needs to know whether they took the CPUs the pairs needed. */
typedef struct run_load {
    double load_others;     /* CPUs other processes used over the run (NAN: unknown) */
    int cpus_available;     /* rank 0's host */
    int ranks;              /* ranks on rank 0's host */
    int oversubscribed;     /* some host has more ranks than CPUs */
} run_load_t;

static int print_results(const opts_t *o, int P, const lts_congest_report_t *all, int measured, int signalled, int argc,
                         char **argv, const run_load_t *ld) {
    int npairs = P / 2;
    double tot_bytes = 0, tot_req = 0, tot_time = 0, tot_bw = 0;
    char b1[32], b2[32], b3[32];
    printf("latscope-congest: %d ranks, %d pair%s%s, load %.3g of the one-way bandwidth (%s), %zu B messages, "
           "seed %llu%s\n",
           P, npairs, npairs == 1 ? "" : "s", P % 2 ? " (the last rank idled)" : "", o->load,
           measured ? "measured" : "given", o->size, o->seed, signalled ? ", stopped by a signal" : "");
    printf("%-10s %12s %12s %12s %10s %10s %8s\n", "pair", "bandwidth", "requested", "achieved", "achieved/req",
           "messages", "time_s");
    for (int p = 0; p < npairs; p++) {
        const lts_congest_report_t *s = &all[2 * p];
        double ach = s->elapsed_s > 0 ? s->bytes / s->elapsed_s : NAN;
        fmt_rate(b1, sizeof b1, s->bandwidth_Bps);
        fmt_rate(b2, sizeof b2, s->requested_Bps);
        fmt_rate(b3, sizeof b3, ach);
        char name[24];
        snprintf(name, sizeof name, "%d->%d", 2 * p, 2 * p + 1);
        printf("%-10s %12s %12s %12s %10.4f %12.0f %8.3f\n", name, b1, b2, b3, ach / s->requested_Bps, s->messages,
               s->elapsed_s);
        tot_bytes += s->bytes;
        tot_req += s->requested_Bps;
        tot_bw += s->bandwidth_Bps;
        if (s->elapsed_s > tot_time) tot_time = s->elapsed_s;
    }
    /* total: the sum of the pairs' rates (each over its own time) */
    double tot_ach = 0, tot_msgs = 0;
    for (int p = 0; p < npairs; p++) {
        const lts_congest_report_t *s = &all[2 * p];
        if (s->elapsed_s > 0) tot_ach += s->bytes / s->elapsed_s;
        tot_msgs += s->messages;
    }
    fmt_rate(b1, sizeof b1, tot_bw);
    fmt_rate(b2, sizeof b2, tot_req);
    fmt_rate(b3, sizeof b3, tot_ach);
    printf("%-10s %12s %12s %12s %10.4f %12.0f %8.3f\n", "total", b1, b2, b3, tot_ach / tot_req, tot_msgs, tot_time);
    fflush(stdout);
    int bad_count = 0;
    for (int p = 0; p < npairs; p++)
        if (all[2 * p].bytes != all[2 * p + 1].bytes) {
            fprintf(stderr, "latscope-congest: error: pair %d->%d: %.0f bytes sent but %.0f received\n", 2 * p,
                    2 * p + 1, all[2 * p].bytes, all[2 * p + 1].bytes);
            bad_count++;
        }
    if (!o->json) return bad_count ? 1 : 0;

    FILE *f = fopen(o->json, "w");
    if (!f) {
        fprintf(stderr, "latscope-congest: error: --json '%s': cannot be written (%s)\n", o->json, strerror(errno));
        return 3;
    }
    lts_json_t j;
    lts_json_init(&j);
    lts_json_obj_begin(&j, NULL);
    lts_json_str(&j, "format", "latscope.congest/1");
    lts_json_str(&j, "tool", "latscope-congest");
    lts_json_str(&j, "version", LTS_VERSION);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int ll;
    MPI_Get_library_version(lib, &ll);
    for (int i = 0; i < ll; i++) if (lib[i] == '\n') { lib[i] = '\0'; break; }
    lts_json_str(&j, "mpi_library", lib);
    lts_json_int(&j, "ranks", P);
    lts_json_arr_begin(&j, "argv");
    for (int i = 0; i < argc; i++) lts_json_str(&j, NULL, argv[i]);
    lts_json_arr_end(&j);
    lts_json_int(&j, "seed", (long long)o->seed);
    lts_json_str(&j, "rng", "mt19937-64 init_by_array64({seed, rank})");
    lts_json_str(&j, "gaps", "exponential");
    lts_json_dbl(&j, "load_requested", o->load);
    lts_json_int(&j, "size_bytes", (long long)o->size);
    if (o->duration_s > 0) lts_json_dbl(&j, "duration_requested_s", o->duration_s);
    else lts_json_null(&j, "duration_requested_s");
    lts_json_bool(&j, "quick", o->quick);
    lts_json_str(&j, "bandwidth_source", measured ? "measured" : "given");
    lts_json_bool(&j, "stopped_by_signal", signalled);
    lts_json_arr_begin(&j, "pairs");
    for (int p = 0; p < npairs; p++) {
        const lts_congest_report_t *s = &all[2 * p];
        double ach = s->elapsed_s > 0 ? s->bytes / s->elapsed_s : NAN;
        lts_json_obj_begin(&j, NULL);
        lts_json_int(&j, "sender", 2 * p);
        lts_json_int(&j, "receiver", 2 * p + 1);
        lts_json_dbl(&j, "bandwidth_bytes_per_s", s->bandwidth_Bps);
        lts_json_dbl(&j, "requested_bytes_per_s", s->requested_Bps);
        lts_json_dbl(&j, "achieved_bytes_per_s", ach);
        lts_json_dbl(&j, "achieved_fraction_of_requested", ach / s->requested_Bps);
        lts_json_dbl(&j, "achieved_fraction_of_bandwidth", ach / s->bandwidth_Bps);
        lts_json_dbl(&j, "sent_bytes", s->bytes);
        lts_json_dbl(&j, "received_bytes", all[2 * p + 1].bytes);
        lts_json_dbl(&j, "messages", s->messages);
        lts_json_dbl(&j, "elapsed_s", s->elapsed_s);
        lts_json_obj_end(&j);
    }
    lts_json_arr_end(&j);
    lts_json_obj_begin(&j, "total");
    lts_json_dbl(&j, "requested_bytes_per_s", tot_req);
    lts_json_dbl(&j, "achieved_bytes_per_s", tot_ach);
    lts_json_dbl(&j, "achieved_fraction_of_requested", tot_ach / tot_req);
    lts_json_dbl(&j, "messages", tot_msgs);
    lts_json_obj_end(&j);
    if (P % 2) lts_json_int(&j, "idle_rank", P - 1);
    else lts_json_null(&j, "idle_rank");
    lts_json_obj_begin(&j, "load");
    lts_json_dbl(&j, "load_others", ld->load_others);   /* null where unknown */
    lts_json_int(&j, "cpus_available", ld->cpus_available);
    lts_json_int(&j, "ranks", ld->ranks);
    lts_json_bool(&j, "oversubscribed", ld->oversubscribed);
    lts_json_obj_end(&j);
    lts_json_obj_end(&j);
    int rc = lts_json_emit(&j, f);
    lts_json_free(&j);
    if (fclose(f) || rc) {
        fprintf(stderr, "latscope-congest: error: --json '%s': write failed\n", o->json);
        return 3;
    }
    return bad_count ? 1 : 0;
}

/* A JSON number, or null where the value is not finite (NaN/Infinity are not JSON). */
static void json_num(const char *sep, const char *fmt, double v) {
    fputs(sep, stdout);
    if (isfinite(v)) printf(fmt, v);
    else fputs("null", stdout);
}

static void print_gaps(const opts_t *o, int P) {
    double mean = lts_congest_mean_gap_ns(o->size, o->load, o->bandwidth_Bps);
    for (int r = 0; r < (P < 2 ? 1 : P - P % 2); r += 2) {
        lts_mt64_t g;
        lts_congest_stream_init(&g, o->seed, r);
        printf("{\"rank\": %d, ", r);
        json_num("\"mean_gap_ns\": ", "%.6g", mean);
        fputs(", \"gaps_ns\": [", stdout);
        for (long i = 0; i < o->print_gaps; i++) json_num(i ? ", " : "", "%.17g", lts_congest_next_gap_ns(&g, mean));
        printf("]}\n");
    }
}

int main(int argc, char **argv) {
    app_t a = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &a.me);
    MPI_Comm_size(MPI_COMM_WORLD, &a.P);
    /* installed first thing: a signal during set-up also ends the run cleanly */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    opts_t o;
    int go = parse_args(&a, &o, argc, argv);
    /* the JSON file must be writable before anything runs (rank 0 writes it) */
    if (go && !a.have_err && o.json && a.me == 0) {
        FILE *f = fopen(o.json, "a");
        if (!f) fail(&a, "--json '%s': cannot be written (%s); give a writable path", o.json, strerror(errno));
        else fclose(f);
    }
    int bad = a.have_err, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad) {
        if (a.me == 0) fprintf(stderr, "latscope-congest: error: %s\n", a.have_err ? a.err : "another rank rejected the arguments");
        MPI_Finalize();
        return EXIT_USAGE;
    }
    if (!go) { MPI_Finalize(); return 0; }
    if (o.print_random) {
        if (a.me == 0) {
            lts_mt64_t g;
            lts_mt64_init(&g, o.seed);
            for (long i = 0; i < o.print_random; i++) printf("%llu\n", (unsigned long long)lts_mt64_next(&g));
        }
        MPI_Finalize();
        return 0;
    }
    if (o.print_gaps) {
        if (a.me == 0) print_gaps(&o, a.P);
        MPI_Finalize();
        return 0;
    }

    int peer;
    int role = lts_congest_role(a.me, a.P, &peer);
    char *sbuf = calloc(1, o.size), *rbuf = calloc(1, o.size);
    int oom = !sbuf || !rbuf, any_oom = 0;
    MPI_Allreduce(&oom, &any_oom, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_oom) {
        if (a.me == 0) fprintf(stderr, "latscope-congest: error: --size %zu: out of memory for the buffers\n", o.size);
        MPI_Finalize();
        return EXIT_USAGE;
    }
    int measured = o.bandwidth_Bps == 0;
    double bw = measured ? lts_congest_bandwidth(role, peer, o.size, sbuf, rbuf) : o.bandwidth_Bps;
    int bw_bad = role != 0 && !(bw > 0), any_bw_bad = 0;
    MPI_Allreduce(&bw_bad, &any_bw_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bw_bad) {
        if (a.me == 0) fprintf(stderr, "latscope-congest: error: the bandwidth could not be measured; give --bandwidth\n");
        MPI_Finalize();
        return 3;
    }

    /* the test hook: each sender creates LATSCOPE_TEST_READY_FILE.<rank> once it has sent
     * LATSCOPE_TEST_READY_MSGS messages (default 1) */
    const char *ready_n = getenv("LATSCOPE_TEST_READY_MSGS");
    lts_congest_cfg_t cfg = {.load = o.load, .size = o.size, .duration_s = o.duration_s, .seed = o.seed,
                             .stop = &g_signal, .ready_file = getenv("LATSCOPE_TEST_READY_FILE"),
                             .ready_msgs = ready_n && atof(ready_n) >= 1 ? floor(atof(ready_n)) : 1.0};
    /* the survey starts rank 0's load monitor: lts_load_others() then covers the run */
    lts_host_info_t mine, worst;
    run_load_t ld = {NAN, 0, 0, 0};
    int survey = lts_host_survey(MPI_COMM_WORLD, &mine, &worst, &ld.oversubscribed);
    lts_congest_report_t rep;
    lts_congest_run(&cfg, role, a.me, peer, bw, sbuf, rbuf, &rep);
    if (a.me == 0 && survey == 0) {
        ld.load_others = lts_load_others();
        ld.cpus_available = mine.cpus_available;
        ld.ranks = mine.ranks;
    }

    lts_congest_report_t *all = a.me == 0 ? malloc(sizeof *all * (size_t)a.P) : NULL;
    MPI_Gather(&rep, LTS_CONGEST_REPORT_N, MPI_DOUBLE, all, LTS_CONGEST_REPORT_N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int sig = g_signal != 0, signalled = 0;   /* a signal may reach only some ranks */
    MPI_Reduce(&sig, &signalled, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    int status = 0;
    if (a.me == 0) status = print_results(&o, a.P, all, measured, signalled, argc, argv, &ld);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return status;
}
