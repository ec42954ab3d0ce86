/* latscope-sim: the LogGOPS simulator's program (docs/sim.md). A schedule (--algo NAME --P N,
 * generated on the fly, or --goal FILE) runs under the given parameters, optionally with the
 * injector's delay table and seed; one JSON object (latscope.sim/1) goes to stdout, per-rank
 * finish times to --per-rank FILE (JSONL). Bad input and deadlocks: one line on stderr, exit 2. */
#include "sim.h"
#include "latscope/errors.h"
#include "table.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define PROG "latscope-sim"

static void usage(FILE *f) {
    fprintf(f,
            "usage: " PROG " (--algo NAME --P N [--size BYTES] [--k K] | --goal FILE) [parameters] [options]\n"
            "  parameters (seconds; a latscope.params/1 file's fields, docs/params-format.md):\n"
            "    --L S --o S (both overheads) | --o-s S --o-r S, --g S, --G S (per byte), --O S (per byte),\n"
            "    --S BYTES (eager/rendezvous threshold; default: no rendezvous)\n"
            "  variation: --table FILE (latscope delay table, docs/delay-table.md) --seed N (default 1)\n"
            "    --noise-period S --noise-detour S  OS noise: every period, each rank's CPU is taken for the\n"
            "                                       detour (a phase per rank from the seed)\n"
            "    --noise-trace FILE                 OS noise from a trace of detours (docs/sim.md), repeated,\n"
            "                                       from a phase per rank\n"
            "  --goal-unit S   a GOAL calc's unit (default 1e-9: ns)\n"
            "  --critical-path a generated schedule's critical path too (a GOAL schedule's is always found)\n"
            "  --per-rank FILE per-rank finish times, JSONL\n"
            "  --goal-out FILE write the generated schedule as GOAL text instead of running it\n"
            "  --bins N        histogram bins of the finish times (default 20)\n"
            "  --list          the generated schedules\n");
}

static int bad(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, PROG ": error: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 2;
}

static int parse_seconds(const char *flag, const char *s, int64_t *ps) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 9.2e6)
        return bad("%s '%s': expected a time in seconds >= 0 (e.g. 1.5e-6)", flag, s);
    *ps = llround(v * 1e12);
    return 0;
}

static int parse_count(const char *flag, const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, PROG ": error: %s '%s': expected an integer %lld..%lld\n", flag, s, lo, hi);
        return 2;
    }
    *out = v;
    return 0;
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* The k-th smallest of v[0..n) (v reordered): Hoare's quickselect, median-of-three pivot; equal
 * values stop both scans, so a lock-step run (every finish time equal) splits evenly. O(n): a
 * qsort of 2^20 finish times was 4 % of a simulation's run. */
static int64_t select_k(int64_t *v, size_t n, size_t k) {
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t a = v[lo], b = v[mid], c = v[hi];
        int64_t piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        for (;;) {
            while (v[i] < piv) i++;
            while (v[j] > piv) j--;
            if (i >= j) break;
            int64_t t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
        /* v[lo..j] <= piv <= v[j+1..hi] */
        if (k <= j) hi = j;
        else lo = j + 1;
    }
    return v[k];
}

static double sec(int64_t ps) { return (double)ps / 1e12; }

int main(int argc, char **argv) {
    const char *noise_path = NULL;
    const char *algo = NULL, *goal = NULL, *table_path = NULL, *per_rank = NULL, *goal_out = NULL;
    long long P = 0, size = 0, bins = 20, seed = 1, k = 4, S = -1;
    lts_sim_opts_t o;
    memset(&o, 0, sizeof o);
    o.goal_unit_ps = 1000;
    int have_o = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if (!strcmp(a, "--list")) {
            for (int j = 0; j < lts_sim_nalgos; j++) printf("%-16s %s\n", lts_sim_algos[j].name, lts_sim_algos[j].what);
            return 0;
        }
        if (!strcmp(a, "--critical-path")) { o.critical_path = 1; continue; }
        if (i + 1 >= argc) return bad("%s needs a value%s", a, " (see --help)");
        const char *v = argv[++i];
        int rc = 0;
        if (!strcmp(a, "--algo")) algo = v;
        else if (!strcmp(a, "--goal")) goal = v;
        else if (!strcmp(a, "--table")) table_path = v;
        else if (!strcmp(a, "--per-rank")) per_rank = v;
        else if (!strcmp(a, "--goal-out")) goal_out = v;
        else if (!strcmp(a, "--noise-trace")) noise_path = v;
        else if (!strcmp(a, "--P")) rc = parse_count(a, v, 1, 1 << 30, &P);
        else if (!strcmp(a, "--k")) rc = parse_count(a, v, 2, 4096, &k);
        else if (!strcmp(a, "--size")) rc = parse_count(a, v, 0, (long long)1 << 40, &size);
        else if (!strcmp(a, "--S")) rc = parse_count(a, v, 0, INT64_MAX, &S);
        else if (!strcmp(a, "--bins")) rc = parse_count(a, v, 1, 10000, &bins);
        else if (!strcmp(a, "--seed")) rc = parse_count(a, v, 0, INT64_MAX, &seed);
        else if (!strcmp(a, "--L")) rc = parse_seconds(a, v, &o.par.L);
        else if (!strcmp(a, "--o")) { rc = parse_seconds(a, v, &o.par.o_s); o.par.o_r = o.par.o_s; have_o = 1; }
        else if (!strcmp(a, "--o-s")) rc = parse_seconds(a, v, &o.par.o_s);
        else if (!strcmp(a, "--o-r")) rc = parse_seconds(a, v, &o.par.o_r);
        else if (!strcmp(a, "--g")) rc = parse_seconds(a, v, &o.par.g);
        else if (!strcmp(a, "--G")) rc = parse_seconds(a, v, &o.par.G);
        else if (!strcmp(a, "--O")) rc = parse_seconds(a, v, &o.par.O);
        else if (!strcmp(a, "--goal-unit")) rc = parse_seconds(a, v, &o.goal_unit_ps);
        else if (!strcmp(a, "--noise-period")) rc = parse_seconds(a, v, &o.noise_period);
        else if (!strcmp(a, "--noise-detour")) rc = parse_seconds(a, v, &o.noise_detour);
        else { fprintf(stderr, PROG ": error: unknown option '%s' (see --help)\n", a); return 2; }
        if (rc) return rc;
    }
    (void)have_o;
    o.par.S = S < 0 ? INT64_MAX : S;
    o.seed = (uint64_t)seed;
    if (!!algo == !!goal) return bad("give one schedule: --algo NAME --P N, or --goal FILE%s%s", "", "");
    if (algo && !P) return bad("--algo %s needs --P N (ranks)%s", algo, "");
    if (goal && P) return bad("--P is for --algo; a GOAL file says num_ranks itself%s%s", "", "");
    if (goal_out && !algo) return bad("--goal-out writes a generated schedule: give --algo NAME --P N%s%s", "", "");
    if (goal && o.goal_unit_ps <= 0) return bad("--goal-unit must be > 0%s%s", "", "");

    static uint64_t table[LTS_INJECT_TABLE_N];
    char err[LTS_INJECT_ERRLEN > LTS_SIM_ERRLEN ? LTS_INJECT_ERRLEN : LTS_SIM_ERRLEN];
    if (table_path) {
        if (lts_inject_table_load(table_path, table, err, sizeof err)) {
            fprintf(stderr, PROG ": error: %s\n", err);
            return 2;
        }
        o.table = table;
    }

    static lts_sim_noise_t nz;
    if (noise_path) {
        if (o.noise_period || o.noise_detour)
            return bad("--noise-trace %s: give either it or --noise-period/--noise-detour%s", noise_path, "");
        if (lts_sim_noise_load(noise_path, &nz, err, sizeof err)) {
            fprintf(stderr, PROG ": error: --noise-trace %s\n", err);
            return 2;
        }
        o.noise_trace = &nz;
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lts_sim_result_t res;
    lts_goal_t *g = NULL;
    int rc;
    size_t nops = 0;
    if (algo) {
        lts_sim_prog_t prog;
        rc = lts_sim_prog_init(&prog, algo, (int)P, (int)k, size, err, sizeof err);
        if (!rc && goal_out) {
            FILE *f = strcmp(goal_out, "-") ? fopen(goal_out, "w") : stdout;
            if (!f) {
                fprintf(stderr, PROG ": error: --goal-out %s: cannot write: %s\n", goal_out, strerror(errno));
                return 2;
            }
            rc = lts_sim_prog_write_goal(&prog, f);
            if (rc == LTS_ENOTSUP) {
                if (f != stdout) fclose(f);
                fprintf(stderr, PROG ": error: --goal-out: %s releases the ranks by a shared-memory flag, which GOAL "
                        "has no operation for\n", prog.name);
                return 2;
            }
            if ((f != stdout && fclose(f)) || rc) {
                fprintf(stderr, PROG ": error: --goal-out %s: write failed\n", goal_out);
                return 2;
            }
            return 0;
        }
        if (!rc) rc = lts_sim_run_prog(&prog, &o, &res, err, sizeof err);
    } else {
        rc = lts_goal_load(goal, &g, err, sizeof err);
        if (!rc) {
            nops = lts_goal_nops(g);
            rc = lts_sim_run_goal(g, &o, &res, err, sizeof err);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, PROG ": error: %s\n", err);
        lts_goal_free(g);
        return rc == LTS_ENOMEM ? 1 : 2;
    }
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    if (per_rank) {
        FILE *f = fopen(per_rank, "w");
        if (!f) {
            fprintf(stderr, PROG ": error: --per-rank %s: cannot write: %s\n", per_rank, strerror(errno));
            lts_sim_result_free(&res);
            return 2;
        }
        for (int r = 0; r < res.P; r++)
        {
            fprintf(f, "{\"rank\": %d, \"finish_s\": %.17g, \"finish_ps\": %lld", r, sec(res.finish[r]),
                    (long long)res.finish[r]);
            if (res.delay_ps) fprintf(f, ", \"delay_ps\": %lld", (long long)res.delay_ps[r]);
            fprintf(f, "}\n");
        }
        if (fclose(f)) {
            fprintf(stderr, PROG ": error: --per-rank %s: write failed\n", per_rank);
            lts_sim_result_free(&res);
            return 2;
        }
    }

    /* summary: finish-time quantiles and a histogram over [min, max] */
    int64_t *s = malloc((size_t)res.P * sizeof *s);
    if (!s) { fprintf(stderr, PROG ": error: out of memory\n"); return 1; }
    memcpy(s, res.finish, (size_t)res.P * sizeof *s);
    int64_t lo = s[0], hi = s[0];
    for (int r = 1; r < res.P; r++) {
        if (s[r] < lo) lo = s[r];
        if (s[r] > hi) hi = s[r];
    }
    int64_t med = select_k(s, (size_t)res.P, (size_t)(res.P - 1) / 2);
    long long *cnt = calloc((size_t)bins, sizeof *cnt);
    if (!cnt) { fprintf(stderr, PROG ": error: out of memory\n"); return 1; }
    for (int r = 0; r < res.P; r++) {
        long long b = hi > lo ? (long long)((double)(s[r] - lo) / (double)(hi - lo) * (double)bins) : 0;
        cnt[b >= bins ? bins - 1 : b]++;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);

    printf("{\"schema\": \"latscope.sim/1\", \"schedule\": ");
    if (algo) { printf("{\"algo\": "); json_str(stdout, algo); printf(", \"size_bytes\": %lld}", size); }
    else { printf("{\"goal\": "); json_str(stdout, goal); printf(", \"ops\": %zu}", nops); }
    printf(", \"P\": %d, \"params\": {\"L_s\": %.17g, \"o_s_s\": %.17g, \"o_r_s\": %.17g, \"g_s\": %.17g, "
           "\"G_s_per_byte\": %.17g, \"O_s_per_byte\": %.17g, \"S_bytes\": ",
           res.P, sec(o.par.L), sec(o.par.o_s), sec(o.par.o_r), sec(o.par.g), sec(o.par.G), sec(o.par.O));
    if (S < 0) printf("null"); else printf("%lld", S);
    printf("}, \"table\": ");
    if (table_path) json_str(stdout, table_path); else printf("null");
    if (o.noise_period > 0 && o.noise_detour > 0)
        printf(", \"noise\": {\"period_s\": %.17g, \"detour_s\": %.17g}", sec(o.noise_period), sec(o.noise_detour));
    else if (noise_path) {
        printf(", \"noise\": {\"trace\": ");
        json_str(stdout, noise_path);
        printf(", \"detours\": %zu, \"span_s\": %.17g}", nz.n, sec(nz.span));
    } else
        printf(", \"noise\": null");
    printf(", \"seed\": %llu, \"time_s\": %.17g, \"time_ps\": %lld, \"finish_min_s\": %.17g, \"finish_median_s\": %.17g, "
           "\"events\": %llu, \"messages\": %llu, \"delays\": %llu, \"delay_mean_s\": ",
           (unsigned long long)seed, sec(hi), (long long)hi, sec(lo), sec(med), (unsigned long long)res.events,
           (unsigned long long)res.messages, (unsigned long long)res.delays);
    if (res.delays) printf("%.17g", sec(res.delay_sum) / (double)res.delays); else printf("null");
    printf(", \"histogram\": {\"lo_s\": %.17g, \"hi_s\": %.17g, \"counts\": [", sec(lo), sec(hi));
    for (long long b = 0; b < bins; b++) printf("%s%lld", b ? ", " : "", cnt[b]);
    printf("]}, \"critical_path\": ");
    if (g && res.cp) {   /* the operations that decided the end time, in time order */
        static const char *kinds[] = {"", "send", "recv", "calc"};
        printf("{\"length\": %zu, \"ops\": [", res.ncp_total);
        for (size_t i = 0; i < res.ncp; i++) {
            uint32_t v = res.cp[i].op;
            printf("%s{\"rank\": %d, \"op\": \"%s\", \"line\": %d", i ? ", " : "", g->rank[v], kinds[g->kind[v]],
                   g->line[v]);
            if (g->kind[v] != LTS_GOAL_CALC) printf(", \"peer\": %d, \"tag\": %d, \"bytes\": %lld", g->peer[v], g->tag[v], (long long)g->size[v]);
            printf(", \"start_s\": %.17g, \"end_s\": %.17g}", sec(res.cp[i].start), sec(res.cp[i].end));
        }
        printf("]}");
    } else if (res.cp) {   /* a generated schedule's: each operation by its rank and step (pc) */
        printf("{\"length\": %zu, \"ops\": [", res.ncp_total);
        lts_sim_prog_t prog;
        lts_sim_prog_init(&prog, algo, (int)P, (int)k, size, err, sizeof err);
        for (size_t i = 0; i < res.ncp; i++) {
            lts_sim_op_t op;
            prog.op(&prog, res.cp[i].rank, res.cp[i].pc, &op);
            const char *kind = op.kind == LTS_SIM_SEND ? "send" : op.kind == LTS_SIM_IRECV ? "recv" : "calc";
            printf("%s{\"rank\": %d, \"op\": \"%s\", \"step\": %u", i ? ", " : "", res.cp[i].rank, kind, res.cp[i].pc);
            if (op.kind != LTS_SIM_CALC) printf(", \"peer\": %d, \"tag\": %d, \"bytes\": %lld", op.peer, op.tag, (long long)op.size);
            printf(", \"start_s\": %.17g, \"end_s\": %.17g}", sec(res.cp[i].start), sec(res.cp[i].end));
        }
        printf("]}");
    } else {
        printf("null");
    }
    printf(", \"wall_s\": %.6g, \"events_per_s\": %.6g, \"engine_bytes\": %zu, \"peak_rss_bytes\": %lld}\n", wall,
           wall > 0 ? (double)res.events / wall : 0.0, res.peak_bytes, (long long)ru.ru_maxrss * 1024);
    free(s);
    free(cnt);
    lts_sim_result_free(&res);
    lts_goal_free(g);
    return 0;
}
