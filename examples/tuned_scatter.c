/* example-tuned-scatter: an application using run-time selection (seed 001 §4, Opt_Scatter).
 *
 *   mpiexec -n 4 example-tuned-scatter                     tune scatter now, then use it
 *   mpiexec -n 4 example-tuned-scatter --save table.json   ... and keep the table
 *   mpiexec -n 4 example-tuned-scatter --table table.json  use a table made earlier
 *                                                          (latscope tune --op scatter --np 4 -o table.json)
 *   options: --iters N (default 20)  --alg LIST (default native,linear,binomial)
 *
 * After tuning (or loading), every scatter of the application goes through lts_scatter_tuned,
 * which picks the table's fastest algorithm for the message size; the data of every call are
 * checked. Exit 0 when all data were right, 1 when not, 2 on bad input (on every rank). */
#include "latscope/latscope.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, P;

/* Rank 0 reads the table file and broadcasts its text: the ranks need no shared file system,
 * and all parse the same bytes, so all install the same table. */
static int load_table(const char *path, lts_tune_table_t **t, char *msg, size_t len) {
    long long n = -1;
    char *text = NULL;
    if (me == 0) {
        FILE *f = fopen(path, "rb");
        if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n) {
            text[n] = '\0';
        } else {
            n = -1;
        }
        if (f) fclose(f);
    }
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (n < 0) {
        free(text);
        snprintf(msg, len, "--table '%s': cannot be read", path);
        return LTS_EIO;
    }
    if (me != 0 && !(text = malloc((size_t)n + 1))) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Bcast(text, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
    text[n] = '\0';
    char inner[512];
    int rc = lts_tune_parse(text, (size_t)n, t, inner, sizeof inner);
    free(text);
    if (rc) snprintf(msg, len, "--table '%s': %s", path, inner);
    return rc;
}

static void print_table(const lts_tune_table_t *t) {
    printf("decision table: %s on %d ranks (%s timing, %s timer; %s)\n", lts_reg_row(&lts_coll_op_names, t->op)->name,
           t->ranks, t->timing, t->timer, t->utc_time);
    for (size_t r = 0; r < t->nranges; r++) {
        const lts_tune_range_t *R = &t->ranges[r];
        char hi[32];
        if (R->hi == LTS_TUNE_OPEN) snprintf(hi, sizeof hi, "inf");
        else snprintf(hi, sizeof hi, "%zu", R->hi);
        printf("  [%9zu, %9s) B -> %s\n", R->lo, hi, R->alg->name);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *table = NULL, *save = NULL, *algs = "native,linear,binomial";
    int iters = 20;
    char err[1024] = "";
    /* every rank parses the same arguments: the same verdict everywhere */
    for (int i = 1; i < argc && !err[0]; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--table") && more) table = argv[++i];
        else if (!strcmp(argv[i], "--save") && more) save = argv[++i];
        else if (!strcmp(argv[i], "--alg") && more) algs = argv[++i];
        else if (!strcmp(argv[i], "--iters") && more) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < 1 || v > 1000000)
                snprintf(err, sizeof err, "--iters '%s': must be an integer in [1, 1000000]", argv[i]);
            iters = (int)v;
        } else {
            snprintf(err, sizeof err, "unknown or incomplete argument '%s'; valid: --table FILE, --save FILE, "
                     "--alg LIST, --iters N", argv[i]);
        }
    }
    if (!err[0] && table && save) snprintf(err, sizeof err, "--table and --save: give one (load a table, or tune and save)");

    lts_tune_table_t *t = NULL;
    int rc = 0;
    if (!err[0] && table) {
        rc = load_table(table, &t, err, sizeof err);
    } else if (!err[0]) {
        /* Tune: the root's whole buffer from 0 to 256 KiB (a multiple of P, as scatter needs),
         * a few repetitions per point: a short start-up cost for the application. */
        lts_timer_t tm;
        lts_measure_cfg_t m;
        memset(&m, 0, sizeof m);
        lts_timer_open("monotonic", &tm);
        m.timer = &tm;
        lts_rep_policy_default(&m.policy);
        /* a fixed count (min = max): an application wants a bounded start-up; a count asked for
         * counts as converged, so a size is only undecidable when its medians are invalid */
        m.policy.warmup = 5;
        m.policy.min_reps = m.policy.max_reps = 60;
        m.sync = (const lts_sync_desc_t *)lts_reg_row(&lts_sync_registry, (size_t)lts_reg_find(&lts_sync_registry, "barrier"));
        /* max timing (the slowest rank's time): root timing subtracts a measured confirmation time,
         * which on an oversubscribed node can exceed a small scatter; those medians go negative, are
         * set aside, and a size with none left cannot be decided (docs/tune-format.md) */
        m.timing = LTS_TIMING_MAX;
        size_t sizes[] = {0, 64, 1024, 8192, 65536, 262144};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) sizes[i] *= (size_t)P;
        char why[768] = "";
        lts_tune_opts_t topt;
        memset(&topt, 0, sizeof topt);
        topt.msg = why;
        topt.msglen = sizeof why;
        rc = lts_tune_ex(MPI_COMM_WORLD, LTS_COLL_SCATTER, algs, sizes, sizeof sizes / sizeof sizes[0], &m, &topt, &t);
        if (rc == LTS_ENOTFOUND || rc == LTS_EINVAL) {
            char names[512];
            lts_reg_names(lts_coll_registry(LTS_COLL_SCATTER), names, sizeof names);
            snprintf(err, sizeof err, "--alg '%s': not a selection of scatter algorithms; valid: %s", algs, names);
        } else if (rc == LTS_ENOELIGIBLE) {
            /* rank 0 holds the reason (the size and every candidate's); the others the code */
            snprintf(err, sizeof err, "tuning failed: %s", why[0] ? why : lts_strerror(rc));
        } else if (rc) {
            snprintf(err, sizeof err, "tuning failed: %s", lts_strerror(rc));
        } else if (save && me == 0 && (rc = lts_tune_save(t, save))) {
            snprintf(err, sizeof err, "--save '%s': cannot be written", save);
        }
        int bad = rc != 0, any;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);   /* the save verdict of rank 0 */
        if (any && !err[0]) snprintf(err, sizeof err, "rank 0 could not save the table");
    }
    if (!err[0] && (rc = lts_tune_use(t, MPI_COMM_WORLD, err, sizeof err))) {
        /* e.g. a table measured on another number of ranks: message from lts_tune_use */
    }
    if (err[0]) {
        if (me == 0) fprintf(stderr, "example-tuned-scatter: error: %s\n", err);
        lts_tune_free(t);
        MPI_Finalize();
        return 2;
    }
    if (me == 0) print_table(t);

    /* The application: scatters of several sizes, each checked. */
    const int counts[] = {1, 16, 256, 4096, 16384};
    long wrong = 0;
    double t_app = 0;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int c = counts[k];
        int *src = malloc((size_t)c * (size_t)P * sizeof *src), *dst = malloc((size_t)c * sizeof *dst);
        if (!src || !dst) MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; it++) {
            int root = it % P;
            if (me == root)
                for (size_t i = 0; i < (size_t)c * (size_t)P; i++) src[i] = (int)(i * 31 + (size_t)it);
            if (lts_scatter_tuned(src, c, MPI_INT, dst, c, MPI_INT, root, MPI_COMM_WORLD) != MPI_SUCCESS) wrong++;
            for (int i = 0; i < c; i++)
                if (dst[i] != (int)(((size_t)me * (size_t)c + (size_t)i) * 31 + (size_t)it)) { wrong++; break; }
        }
        double dt = MPI_Wtime() - t0;
        t_app += dt;
        if (me == 0)
            printf("  %7zu B: %-9s %8.2f us per scatter\n", (size_t)c * sizeof(int) * (size_t)P,
                   lts_tune_choice(LTS_COLL_SCATTER, P, (size_t)c * sizeof(int) * (size_t)P)->name, dt / iters * 1e6);
        free(src);
        free(dst);
    }

    /* What the dispatch itself costs: the table lookup a tuned call adds to the MPI call. */
    volatile size_t sink = 0;
    const int nl = 1000000;
    double t0 = MPI_Wtime();
    for (int i = 0; i < nl; i++) sink += (size_t)lts_tune_choice(LTS_COLL_SCATTER, P, (size_t)(i & 0xfffff))->k;
    double per = (MPI_Wtime() - t0) / nl;

    long all_wrong;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        printf("dispatch (table lookup): %.1f ns per call\n", per * 1e9);
        printf("%s: %ld wrong scatters of %d\n", all_wrong ? "FAILED" : "ok", all_wrong,
               iters * (int)(sizeof counts / sizeof counts[0]));
    }
    lts_tune_free(t);
    MPI_Finalize();
    return all_wrong ? 1 : 0;
}
