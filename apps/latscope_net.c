/* latscope-net: barriers on the UDP messaging layer (src/net; docs/network.md), seed 002 on its own
 * ground. One launch measures the layer's LogP parameters between ranks 0 and 1 (seed 002 §5.1.1:
 * o_s, o_r, L from RTT/2 = o_s + L + o_r, g, and the same for a multicast), then each selected
 * barrier (seed 002 §4.3's loop: barrier, a short dummy loop), optionally with random arrival
 * delays and a check that no rank left a barrier before the last one arrived. MPI is used only to
 * exchange addresses and to gather results between phases; every barrier message is UDP.
 *
 * Bad input: every rank parses the same arguments and reaches the same verdict; rank 0 names the
 * bad value; all exit 2. A barrier that cannot make progress for --deadline ends the job
 * (MPI_Abort), so a lost datagram or a dead rank never hangs it. */
#include "../src/net/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <latscope/errors.h>
#include <latscope/registry.h>
#include <latscope/version.h>

static const char *USAGE =
    "usage: latscope-net list [--json]\n"
    "       latscope-net run [options]        (under mpiexec, one rank per node)\n"
    "  --iface A[,B]      interfaces of network 0 (and 1), e.g. lts0,lts1 (default lts0)\n"
    "  --group G[,H]      IPv4 multicast group per network (default 239.255.77.1,239.255.77.2)\n"
    "  --mport N          multicast UDP port of network 0 (network 1: N+1; default 47000)\n"
    "  --algs LIST        barrier rows, a,b,-c or all (default all rows the networks allow)\n"
    "  --recv block|poll  wait for datagrams in poll() or by spinning on nonblocking receives\n"
    "  --reps N           timed barriers per row (default 300); --warmup N (default 30)\n"
    "  --gap-us U         dummy loop after each barrier, microseconds (default 30: seed 002 Fig. 4)\n"
    "  --gap sleep|spin   the dummy loop sleeps (default: each emulated node has a CPU of its own, so a\n"
    "                     node's computation must not take another node's CPU) or spins\n"
    "  --timeout-us U     retransmission timeout: ask again after U us without the message (default 2000)\n"
    "  --deadline-s S     give up (abort the job) after S s without progress (default 20)\n"
    "  --check            random arrival delays (0..--delay-us) and the check that no rank leaves\n"
    "                     a barrier before every rank has arrived (one host: CLOCK_MONOTONIC is shared)\n"
    "  --delay-us U       the largest random delay (default 200); --seed S (default 1)\n"
    "  --logp-reps N      samples per LogP parameter (default 300; 0: no LogP phase)\n"
    "  -o FILE            results (JSON Lines, latscope.net/1; default: standard output)\n";

typedef struct opts {
    lts_net_opts_t net;
    char ifaces[256], groups[256];
    const char *algs, *out;
    int reps, warmup, logp_reps, check, seed, gap_spin;
    double gap_s, delay_s, deadline_s;
} opts_t;

static int rank_, size_;

static void die(const char *msg) {
    if (rank_ == 0) fprintf(stderr, "latscope-net: error: %s\n", msg);
    MPI_Finalize();
    exit(2);
}

static void spin(double s) {
    uint64_t end = lts_net_now_ns() + (uint64_t)(s * 1e9);
    while (lts_net_now_ns() < end) {}
}

static int parse_int(const char *opt, const char *v, int lo, int hi) {
    char *e;
    long x = strtol(v, &e, 10);
    char msg[256];
    if (!*v || *e || x < lo || x > hi) {
        snprintf(msg, sizeof msg, "%s '%s': must be a whole number in %d..%d", opt, v, lo, hi);
        die(msg);
    }
    return (int)x;
}

static int split2(char *s, const char **out) {
    int n = 0;
    for (char *t = strtok(s, ","); t && n < 3; t = strtok(NULL, ",")) out[n++] = t;
    return n;
}

static void parse(int argc, char **argv, opts_t *o) {
    *o = (opts_t){ .algs = "all", .reps = 300, .warmup = 30, .logp_reps = 300, .seed = 1, .gap_s = 30e-6,
                   .delay_s = 200e-6, .deadline_s = 20 };
    strcpy(o->ifaces, "lts0");
    strcpy(o->groups, "239.255.77.1,239.255.77.2");
    o->net.mport = 47000;
    o->net.timeout_s = 2e-3;
    char msg[512];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--check")) { o->check = 1; continue; }
        if (i + 1 >= argc) {
            snprintf(msg, sizeof msg, "%s: needs a value (or an unknown option; see --help)", a);
            die(msg);
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--iface")) snprintf(o->ifaces, sizeof o->ifaces, "%s", v);
        else if (!strcmp(a, "--group")) snprintf(o->groups, sizeof o->groups, "%s", v);
        else if (!strcmp(a, "--mport")) o->net.mport = parse_int(a, v, 1024, 65000);
        else if (!strcmp(a, "--algs")) o->algs = v;
        else if (!strcmp(a, "--gap")) {
            if (strcmp(v, "sleep") && strcmp(v, "spin")) {
                snprintf(msg, sizeof msg, "--gap '%s': must be sleep or spin", v);
                die(msg);
            }
            o->gap_spin = !strcmp(v, "spin");
        }
        else if (!strcmp(a, "--recv")) {
            if (strcmp(v, "block") && strcmp(v, "poll")) {
                snprintf(msg, sizeof msg, "--recv '%s': must be block or poll", v);
                die(msg);
            }
            o->net.busy_poll = !strcmp(v, "poll");
        } else if (!strcmp(a, "--reps")) o->reps = parse_int(a, v, 1, 100000);
        else if (!strcmp(a, "--warmup")) o->warmup = parse_int(a, v, 0, 100000);
        else if (!strcmp(a, "--gap-us")) o->gap_s = parse_int(a, v, 0, 1000000) * 1e-6;
        else if (!strcmp(a, "--timeout-us")) o->net.timeout_s = parse_int(a, v, 50, 10000000) * 1e-6;
        else if (!strcmp(a, "--deadline-s")) o->deadline_s = parse_int(a, v, 1, 3600);
        else if (!strcmp(a, "--delay-us")) o->delay_s = parse_int(a, v, 0, 1000000) * 1e-6;
        else if (!strcmp(a, "--seed")) o->seed = parse_int(a, v, 0, 2000000000);
        else if (!strcmp(a, "--logp-reps")) o->logp_reps = parse_int(a, v, 0, 100000);
        else if (!strcmp(a, "-o")) o->out = v;
        else {
            snprintf(msg, sizeof msg, "unknown option '%s' (see latscope-net --help)", a);
            die(msg);
        }
    }
    const char *g[3];
    o->net.nnets = split2(o->ifaces, o->net.iface);
    if (o->net.nnets < 1 || o->net.nnets > 2) die("--iface: one or two interface names, comma-separated");
    int ng = split2(o->groups, g);
    if (ng < o->net.nnets) die("--group: one multicast group per network");
    for (int k = 0; k < o->net.nnets; k++) o->net.group[k] = g[k];
}

static const lts_registry_t *registry(void) {
    static lts_registry_t r;
    r = (lts_registry_t){ "net barrier", lts_nbar_rows, (size_t)lts_nbar_count, sizeof(lts_nbar_t) };
    return &r;
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int cmd_list(int argc, char **argv) {
    int json = argc > 2 && !strcmp(argv[2], "--json");
    if (json) printf("{\"schema\": \"latscope.net-registry/1\", \"barriers\": [");
    for (int i = 0; i < lts_nbar_count; i++) {
        const lts_nbar_t *b = &lts_nbar_rows[i];
        if (json) {
            printf("%s{\"name\": ", i ? ", " : "");
            json_str(stdout, b->name);
            printf(", \"help\": ");
            json_str(stdout, b->help);
            printf(", \"networks\": %d, \"k\": %d, \"cost\": ", b->nets, b->k);
            json_str(stdout, b->cost);
            printf("}");
        } else
            printf("%-16s %d net  %s\n%16s cost = %s\n", b->name, b->nets, b->help, "", b->cost);
    }
    if (json) printf("]}\n");
    return 0;
}

/* Wait for every rank without spinning: 8 ranks on 2 cores must not busy-wait in MPI. With a
 * layer: keep reading its sockets meanwhile, so that the LogP phase's multicasts do not overflow
 * an idle rank's socket (which would count as losses later). */
static void idle_barrier_net(lts_net_t *n) {
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        lts_msg_t m;
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done) lts_net_recv(n, 0.0002, &m);
    }
}

static void idle_barrier(void) {
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    struct timespec ts = { 0, 200000 };
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done) nanosleep(&ts, NULL);
    }
}

static void drain_socket(lts_net_t *n) {
    lts_msg_t m;
    while (lts_net_try(n, &m) == 1) {}
}

/* ---- LogP phase: ranks 0 and 1 (seed 002 §5.1.1) --------------------------------------------- */
enum { LP_RTT, LP_OS, LP_OR, LP_G, LP_OSM, LP_ORM, LP_MRTT, LP_N };
static const char *LP_NAMES[LP_N] = { "rtt2_s", "os_s", "or_s", "g_s", "osm_s", "orm_s", "mrtt_s" };
#define BURST 16
#define PROBE 3   /* a message type the barrier engine ignores */

typedef struct samples { double *v; int n; } samples_t;

/* Rank 1's side of every sub-phase: answer each probe (with its tag); for o_r, spin first so the
 * datagram is there before the timed receive. Ends when rank 0 has entered the Ibarrier. */
static void lp_responder(lts_net_t *n, int phase, samples_t *s) {
    MPI_Request r;
    int done = 0, burst_n = 0;
    uint32_t burst_tag = UINT32_MAX;
    uint64_t first = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        lts_msg_t m;
        int got;
        if (phase == LP_OR || phase == LP_ORM) {
            spin(30e-6);
            uint64_t t0 = lts_net_now_ns();
            got = lts_net_try(n, &m);
            uint64_t t1 = lts_net_now_ns();
            if (got == 1 && m.type == PROBE) {
                s->v[s->n < 100000 ? s->n++ : 0] = (double)(t1 - t0) * 1e-9;
                lts_net_send(n, 0, 0, PROBE, 0, m.tag);
            }
        } else {
            got = lts_net_recv(n, 0.001, &m);
            if (got == 1 && m.type == PROBE) {
                if (phase == LP_G) {
                    uint64_t t = lts_net_now_ns();
                    if (m.tag != burst_tag) {
                        burst_tag = m.tag;
                        burst_n = 0;
                        first = t;
                    }
                    if (++burst_n == BURST) {
                        s->v[s->n < 100000 ? s->n++ : 0] = (double)(t - first) * 1e-9 / (BURST - 1);
                        lts_net_send(n, 0, 0, PROBE, 0, m.tag);
                    }
                } else if (phase != LP_OS && phase != LP_OSM)
                    lts_net_send(n, 0, 0, PROBE, 0, m.tag);
            }
        }
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
}

/* Wait for rank 1's answer to probe `tag`; 0 when it did not come in time (lost: no sample). */
static int lp_wait(lts_net_t *n, uint32_t tag, double timeout_s) {
    uint64_t end = lts_net_now_ns() + (uint64_t)(timeout_s * 1e9);
    lts_msg_t m;
    while (lts_net_now_ns() < end)
        if (lts_net_recv(n, timeout_s, &m) == 1 && m.type == PROBE && m.tag == tag) return 1;
    return 0;
}

static void lp_sender(lts_net_t *n, int phase, int reps, samples_t *s) {
    double to = lts_net_timeout(n) * 5;
    for (int i = 0; i < reps; i++) {
        uint32_t tag = (uint32_t)i;
        uint64_t t0 = lts_net_now_ns(), t1;
        switch (phase) {
        case LP_RTT:
        case LP_MRTT:
            if (phase == LP_RTT) lts_net_send(n, 1, 0, PROBE, 0, tag);
            else lts_net_mcast(n, 0, PROBE, 0, tag);
            if (lp_wait(n, tag, to)) {
                t1 = lts_net_now_ns();
                s->v[s->n++] = (double)(t1 - t0) * 1e-9 / (phase == LP_RTT ? 2 : 1);
            }
            break;
        case LP_OS:
        case LP_OSM:
            if (phase == LP_OS) lts_net_send(n, 1, 0, PROBE, 0, tag);
            else lts_net_mcast(n, 0, PROBE, 0, tag);
            t1 = lts_net_now_ns();
            s->v[s->n++] = (double)(t1 - t0) * 1e-9;
            spin(20e-6);   /* an idle link for the next send: the overhead, not the gap */
            break;
        case LP_OR:
        case LP_ORM:
            if (phase == LP_OR) lts_net_send(n, 1, 0, PROBE, 0, tag);
            else lts_net_mcast(n, 0, PROBE, 0, tag);
            lp_wait(n, tag, to);
            break;
        case LP_G:
            for (int j = 0; j < BURST; j++) lts_net_send(n, 1, 0, PROBE, 0, tag);
            lp_wait(n, tag, to);
            break;
        }
    }
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}

static void print_samples(FILE *f, const char *name, const samples_t *s, int first) {
    fprintf(f, "%s\"%s\": [", first ? "" : ", ", name);
    for (int i = 0; i < s->n; i++) fprintf(f, "%s%.9g", i ? ", " : "", s->v[i]);
    fprintf(f, "]");
}

static void logp_phase(lts_net_t *n, const opts_t *o, FILE *f) {
    samples_t s[LP_N];
    for (int p = 0; p < LP_N; p++) {
        s[p].v = calloc((size_t)o->logp_reps + 100001, sizeof(double));
        s[p].n = 0;
    }
    for (int p = 0; p < LP_N; p++) {
        drain_socket(n);
        idle_barrier();
        if (rank_ == 0) lp_sender(n, p, o->logp_reps, &s[p]);
        else if (rank_ == 1) lp_responder(n, p, &s[p]);
        else idle_barrier_net(n);
    }
    /* rank 1's samples (o_r, g, their multicast twins) go to rank 0 */
    for (int p = 0; p < LP_N; p++) {
        if (p != LP_OR && p != LP_ORM && p != LP_G) continue;
        if (rank_ == 1) {
            MPI_Send(&s[p].n, 1, MPI_INT, 0, p, MPI_COMM_WORLD);
            MPI_Send(s[p].v, s[p].n, MPI_DOUBLE, 0, p, MPI_COMM_WORLD);
        } else if (rank_ == 0) {
            MPI_Recv(&s[p].n, 1, MPI_INT, 1, p, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(s[p].v, s[p].n, MPI_DOUBLE, 1, p, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    if (rank_ == 0) {
        fprintf(f, "{\"type\": \"logp\", \"samples\": {");
        for (int p = 0; p < LP_N; p++) print_samples(f, LP_NAMES[p], &s[p], p == 0);
        fprintf(f, "}}\n");
    }
    for (int p = 0; p < LP_N; p++) free(s[p].v);
    drain_socket(n);
    idle_barrier();
}

/* ---- barriers ------------------------------------------------------------------------------- */
static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void run_row(lts_net_t *n, lts_nbar_state_t *st, const lts_nbar_t *b, const opts_t *o, uint32_t *epoch,
                    FILE *f) {
    static lts_step_t steps[LTS_NET_MAXSTEPS];
    int ns = b->schedule(b, rank_, size_, steps);
    if (ns < 0) {
        fprintf(stderr, "latscope-net: %s: schedule too long at %d ranks\n", b->name, size_);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *dur = malloc(sizeof(double) * (size_t)o->reps);
    double *arr = malloc(sizeof(double) * (size_t)o->reps * 2);
    lts_net_counters_t c0 = *lts_net_counters(n);
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)o->seed << 20) ^ (uint64_t)(rank_ + 1) * 0x2545F4914F6CDD1Dull;
    double sum = 0;
    for (int i = -o->warmup; i < o->reps; i++) {
        if (o->check && o->delay_s > 0) spin((double)(xorshift(&rng) % 1000000) * 1e-6 * o->delay_s);
        uint64_t t0 = lts_net_now_ns();
        int rc = lts_nbar_run(st, steps, ns, (*epoch)++, o->deadline_s);
        uint64_t t1 = lts_net_now_ns();
        if (rc) {
            fprintf(stderr, "latscope-net: rank %d: %s barrier %u made no progress for %g s (%s): ending the job\n",
                    rank_, b->name, *epoch - 1, o->deadline_s, lts_strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (i >= 0) {
            dur[i] = (double)(t1 - t0) * 1e-9;
            sum += dur[i];
            arr[2 * i] = (double)t0 * 1e-9;
            arr[2 * i + 1] = (double)t1 * 1e-9;
        }
        if (o->gap_s > 0) {
            if (o->gap_spin) spin(o->gap_s);
            else {
                struct timespec ts = { 0, (long)(o->gap_s * 1e9) };
                nanosleep(&ts, NULL);
            }
        }
    }
    /* a rank still waiting for a retransmission must be answered before anyone enters MPI */
    lts_nbar_drain(st, MPI_COMM_WORLD);
    double med = median(dur, o->reps), mx = dur[o->reps - 1];
    double *meds = rank_ == 0 ? malloc(sizeof(double) * (size_t)size_) : NULL;
    double *all = rank_ == 0 && o->check ? malloc(sizeof(double) * (size_t)o->reps * 2 * (size_t)size_) : NULL;
    double tot = 0, gmax = 0;
    MPI_Gather(&med, 1, MPI_DOUBLE, meds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mx, &gmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (o->check)
        MPI_Gather(arr, 2 * o->reps, MPI_DOUBLE, all, 2 * o->reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    lts_net_counters_t c1 = *lts_net_counters(n), d, sumc;
    uint64_t *a = (uint64_t *)&d, *x0 = (uint64_t *)&c0, *x1 = (uint64_t *)&c1;
    for (size_t k = 0; k < sizeof d / sizeof(uint64_t); k++) a[k] = x1[k] - x0[k];
    MPI_Reduce(&d, &sumc, (int)(sizeof d / sizeof(uint64_t)), MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
        double mean_med = 0;
        for (int r = 0; r < size_; r++) mean_med += meds[r] / size_;
        fprintf(f, "{\"type\": \"barrier\", \"alg\": ");
        json_str(f, b->name);
        fprintf(f, ", \"networks\": %d, \"cost\": ", b->nets);
        json_str(f, b->cost);
        fprintf(f, ", \"ranks\": %d, \"reps\": %d, \"measured_s\": %.9g, \"mean_s\": %.9g, \"max_s\": %.9g, "
                   "\"rank_median_s\": [", size_, o->reps, mean_med, tot / ((double)o->reps * size_), gmax);
        for (int r = 0; r < size_; r++) fprintf(f, "%s%.9g", r ? ", " : "", meds[r]);
        fprintf(f, "], \"check\": ");
        if (o->check) {
            /* a barrier: the last arrival precedes the first departure, every repetition */
            int bad = 0;
            double worst = INFINITY;
            for (int i = 0; i < o->reps; i++) {
                double last_in = -INFINITY, first_out = INFINITY;
                for (int r = 0; r < size_; r++) {
                    const double *ar = all + (size_t)r * 2 * o->reps;
                    if (ar[2 * i] > last_in) last_in = ar[2 * i];
                    if (ar[2 * i + 1] < first_out) first_out = ar[2 * i + 1];
                }
                if (first_out < last_in) bad++;
                if (first_out - last_in < worst) worst = first_out - last_in;
            }
            fprintf(f, "{\"clock\": \"CLOCK_MONOTONIC\", \"delay_max_s\": %.9g, \"checked\": %d, \"violations\": %d, "
                       "\"min_margin_s\": %.9g}", o->delay_s, o->reps, bad, worst);
        } else
            fprintf(f, "null");
        fprintf(f, ", \"counters\": {\"sent\": %llu, \"mcast_sent\": %llu, \"received\": %llu, \"duplicates\": %llu, "
                   "\"lost\": %llu, \"timeouts\": %llu, \"requests\": %llu, \"retransmissions\": %llu}}\n",
                (unsigned long long)sumc.sent, (unsigned long long)sumc.mcast_sent,
                (unsigned long long)sumc.received, (unsigned long long)sumc.duplicates,
                (unsigned long long)sumc.lost, (unsigned long long)sumc.timeouts,
                (unsigned long long)sumc.requests, (unsigned long long)sumc.retransmissions);
        fflush(f);
    }
    free(meds);
    free(all);
    free(dur);
    free(arr);
}

static int cmd_run(int argc, char **argv) {
    opts_t o;
    parse(argc, argv, &o);
    uint64_t mask = 0;
    char bad[128], names[1024], msg[1536];
    if (lts_reg_select(registry(), o.algs, &mask, bad, sizeof bad) != 0) {
        lts_reg_names(registry(), names, sizeof names);
        snprintf(msg, sizeof msg, "--algs: unknown barrier '%s' (allowed: %s, all)", bad, names);
        die(msg);
    }
    int explicit_all = !strncmp(o.algs, "all", 3) || o.algs[0] == '-';
    for (int i = 0; i < lts_nbar_count; i++)
        if ((mask >> i & 1) && lts_nbar_rows[i].nets > o.net.nnets) {
            if (explicit_all) mask &= ~((uint64_t)1 << i);   /* "all": the rows these networks allow */
            else {
                snprintf(msg, sizeof msg, "--algs: '%s' needs %d networks; --iface names %d",
                         lts_nbar_rows[i].name, lts_nbar_rows[i].nets, o.net.nnets);
                die(msg);
            }
        }
    if (!mask) die("--algs: no barrier row selected");
    FILE *f = stdout;
    if (rank_ == 0 && o.out && !(f = fopen(o.out, "w"))) {
        fprintf(stderr, "latscope-net: error: cannot write '%s'\n", o.out);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    lts_net_t *n;
    char why[512];
    int rc = lts_net_open(&n, &o.net, MPI_COMM_WORLD, why, sizeof why);
    if (rc) {
        snprintf(msg, sizeof msg, "network layer: %s", why);
        die(msg);
    }
    if (rank_ == 0) {
        fprintf(f, "{\"type\": \"meta\", \"schema\": \"latscope.net/1\", \"version\": \"%s\", \"ranks\": %d, "
                   "\"networks\": %d, \"ifaces\": [", LTS_VERSION, size_, o.net.nnets);
        for (int k = 0; k < o.net.nnets; k++) {
            fprintf(f, "%s", k ? ", " : "");
            json_str(f, o.net.iface[k]);
        }
        fprintf(f, "], \"groups\": [");
        for (int k = 0; k < o.net.nnets; k++) {
            fprintf(f, "%s", k ? ", " : "");
            json_str(f, o.net.group[k]);
        }
        fprintf(f, "], \"recv\": \"%s\", \"timeout_s\": %.9g, \"reps\": %d, \"warmup\": %d, \"gap_s\": %.9g, "
                   "\"gap\": \"%s\", \"check\": %s, \"seed\": %d, \"logp_reps\": %d}\n",
                o.net.busy_poll ? "poll" : "block", o.net.timeout_s, o.reps, o.warmup, o.gap_s,
                o.gap_spin ? "spin" : "sleep",
                o.check ? "true" : "false", o.seed, size_ >= 2 ? o.logp_reps : 0);
        fflush(f);
    }
    if (size_ >= 2 && o.logp_reps > 0) logp_phase(n, &o, f);
    lts_nbar_state_t *st;
    if (lts_nbar_state_new(&st, n)) MPI_Abort(MPI_COMM_WORLD, 1);
    uint32_t epoch = 0;
    for (int i = 0; i < lts_nbar_count; i++)
        if (mask >> i & 1) run_row(n, st, &lts_nbar_rows[i], &o, &epoch, f);
    lts_nbar_state_free(st);
    lts_net_close(n);
    if (rank_ == 0 && f != stdout) fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* a 30 us sleep must not become 80 us (default slack 50 us) */
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "list")) return cmd_list(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (argc < 2 || strcmp(argv[1], "run")) die("expected a command: run or list (see --help)");
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help")) {
            if (rank_ == 0) fputs(USAGE, stdout);
            MPI_Finalize();
            return 0;
        }
    int rc = cmd_run(argc, argv);
    MPI_Finalize();
    return rc;
}
