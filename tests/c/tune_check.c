/* tune-check: tests of run-time selection (include/latscope/tune.h), valid at any number of ranks.
 *
 *   tune-check run [--delay-us D]   (under mpiexec, any np) the tuned dispatcher avoids a candidate
 *       slowed by a test hook ("slowlinear" = linear scatter + a busy-wait of D us on every rank),
 *       calls the rows its table chose (counted through registered wrappers), agrees across
 *       ranks, and moves the right data through lts_{scatter,gather,bcast}_tuned for every root.
 *   tune-check unit                 boundary rule, lookup, JSON reader edge cases (np 1)
 *   tune-check load FILE [--save OUT] [--sizes a,b,...]   load a table strictly; print
 *       "SIZE ALG" for each size; save it again. A bad file: "tune-check: error: MSG", exit 2.
 *   tune-check decide RESULTS.jsonl   (np 1) the C decision (lts_tune_decide_obs) from the point
 *       records of a latscope-bench tune results file, by the same fields Python's decide()
 *       reads; prints the table's JSON. No eligible candidate: the message, exit 2.
 *
 * Prints "ok" on rank 0 and exits 0; otherwise prints what failed and exits 1 (MPI_Abort). */
#include "latscope/latscope.h"
#include "latscope/jsonread.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_mpi.h"

/* ---- the test hook: counting wrappers, one of them slowed --------------------------------- */

/* 5 ms: well above a scatter's median even at np 4 on 2 cores (oversubscribed: up to ~1 ms) */
static double delay_s = 5e-3;
static long calls_slow, calls_binom, calls_native;

static void busy_wait(double s) {
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < s) {}
}
static int slowlinear(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm c) {
    calls_slow++;
    busy_wait(delay_s);
    return lts_scatter_linear(sb, sc, st, rb, rc, rt, root, c);
}
static int cbinomial(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm c) {
    calls_binom++;
    return lts_scatter_binomial(sb, sc, st, rb, rc, rt, root, c);
}
static int cnative(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm c) {
    calls_native++;
    return MPI_Scatter(sb, sc, st, rb, rc, rt, root, c);
}

static int val(int root, int i, int trial) { return (root + 1) * 1000003 + i * 7 + trial * 131; }

/* count ints per rank through lts_scatter_tuned from `root`; checks every rank's block */
static void scatter_once(int count, int root, int trial) {
    size_t n = (size_t)count * (size_t)P;
    int *s = malloc((n + 1) * sizeof *s), *r = malloc(((size_t)count + 1) * sizeof *r);
    for (size_t i = 0; i < n; i++) s[i] = me == root ? val(root, (int)i, trial) : -1;
    for (int i = 0; i < count; i++) r[i] = -1;
    CHECK(lts_scatter_tuned(s, count, MPI_INT, r, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "rc");
    for (int i = 0; i < count; i++)
        if (r[i] != val(root, me * count + i, trial)) {
            CHECK(0, "scatter count %d root %d: element %d is %d, expected %d", count, root, i, r[i],
                  val(root, me * count + i, trial));
            break;
        }
    free(s);
    free(r);
}

static void gather_once(int count, int root, int trial) {
    size_t n = (size_t)count * (size_t)P;
    int *s = malloc(((size_t)count + 1) * sizeof *s), *r = malloc((n + 1) * sizeof *r);
    for (int i = 0; i < count; i++) s[i] = val(me, i, trial);
    for (size_t i = 0; i < n; i++) r[i] = -1;
    CHECK(lts_gather_tuned(s, count, MPI_INT, r, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "rc");
    if (me == root)
        for (size_t i = 0; i < n; i++)
            if (r[i] != val((int)(i / (size_t)count), (int)(i % (size_t)count), trial)) {
                CHECK(0, "gather count %d root %d: element %zu wrong", count, root, i);
                break;
            }
    free(s);
    free(r);
}

static void bcast_once(int count, int root, int trial) {
    int *b = malloc(((size_t)count + 1) * sizeof *b);
    for (int i = 0; i < count; i++) b[i] = me == root ? val(root, i, trial) : -1;
    CHECK(lts_bcast_tuned(b, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "rc");
    for (int i = 0; i < count; i++)
        if (b[i] != val(root, i, trial)) {
            CHECK(0, "bcast count %d root %d: element %d wrong", count, root, i);
            break;
        }
    free(b);
}

/* every rank must hold the same table: compare each rank's JSON with rank 0's */
static void same_everywhere(const lts_tune_table_t *t, const char *what) {
    char *text = NULL;
    CHECK(lts_tune_to_json(t, &text) == 0, "%s: to_json", what);
    long long len = text ? (long long)strlen(text) : -1;
    long long len0 = len;
    MPI_Bcast(&len0, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    char *t0 = malloc((size_t)(len0 > 0 ? len0 : 0) + 1);
    if (me == 0) memcpy(t0, text, (size_t)len0 + 1);
    MPI_Bcast(t0, (int)len0, MPI_CHAR, 0, MPI_COMM_WORLD);
    t0[len0] = '\0';
    int same = len == len0 && !strcmp(text, t0), all;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(all, "%s: the tables differ between ranks", what);
    free(text);
    free(t0);
}

static lts_measure_cfg_t fast_cfg(lts_timer_t *tm) {
    lts_measure_cfg_t m;
    memset(&m, 0, sizeof m);
    lts_timer_open("monotonic", tm);
    m.timer = tm;
    lts_rep_policy_default(&m.policy);
    m.policy.warmup = 2;
    m.policy.min_reps = m.policy.max_reps = 9;
    m.sync = (const lts_sync_desc_t *)lts_reg_row(&lts_sync_registry, (size_t)lts_reg_find(&lts_sync_registry, "barrier"));
    /* max over ranks: every rank's busy-wait counts, and the value cannot go negative */
    m.timing = LTS_TIMING_MAX;
    return m;
}

static int cmd_run(void) {
    CHECK(lts_coll_register(LTS_COLL_SCATTER, "slowlinear", "test hook: linear + busy-wait", (lts_coll_fn_t){.scatter = slowlinear}) == 0, "register");
    CHECK(lts_coll_register(LTS_COLL_SCATTER, "cbinomial", "test: counted binomial", (lts_coll_fn_t){.scatter = cbinomial}) == 0, "register");
    CHECK(lts_coll_register(LTS_COLL_SCATTER, "cnative", "test: counted native", (lts_coll_fn_t){.scatter = cnative}) == 0, "register");
    const lts_coll_alg_t *slow = lts_coll_find(LTS_COLL_SCATTER, "slowlinear"),
                         *binom = lts_coll_find(LTS_COLL_SCATTER, "cbinomial"),
                         *nat = lts_coll_find(LTS_COLL_SCATTER, "cnative");
    const int counts[] = {0, 1, 2, 3, 16, 100, 256, 1000, 2048, 5000};
    const size_t ncounts = sizeof counts / sizeof counts[0];

    /* nothing installed: the MPI library's own scatter (none of the wrappers) */
    CHECK(lts_tune_choice(LTS_COLL_SCATTER, P, 64) == lts_coll_find(LTS_COLL_SCATTER, "native"), "default is native");
    for (int root = 0; root < P; root++) scatter_once(100, root, 1);
    CHECK(calls_slow + calls_binom + calls_native == 0, "untuned calls went through a wrapper");

    /* tune over the slowed candidate and the counted binomial */
    lts_timer_t tm;
    lts_measure_cfg_t m = fast_cfg(&tm);
    size_t sizes[] = {0, 64 * (size_t)P, 4096 * (size_t)P, 16 * (size_t)P, 512 * (size_t)P};   /* unsorted on purpose */
    lts_tune_table_t *t = NULL;
    int rc = lts_tune(MPI_COMM_WORLD, LTS_COLL_SCATTER, "slowlinear,cbinomial", sizes, 5, &m, &t);
    CHECK(rc == 0 && t, "lts_tune: %s", lts_strerror(rc));
    if (!t) return 1;
    CHECK(t->op == LTS_COLL_SCATTER && t->ranks == P && t->ncand == 2, "table header");
    CHECK(t->ranges[0].lo == 0 && t->ranges[t->nranges - 1].hi == LTS_TUNE_OPEN, "ranges cover all sizes");
    size_t npts = 0;
    for (size_t r = 0; r < t->nranges; r++) {
        CHECK(t->ranges[r].alg != slow, "range [%zu, %zu) picked the slowed candidate", t->ranges[r].lo, t->ranges[r].hi);
        for (size_t p = 0; p < t->ranges[r].npoints; p++, npts++) {
            const double *md = t->ranges[r].points[p].median_s;
            /* the hook adds delay_s to every call: its median must exceed the other's */
            CHECK(md[0] > md[1], "size %zu: slowlinear median %g <= cbinomial %g", t->ranges[r].points[p].size_bytes,
                  md[0], md[1]);
            CHECK(md[0] >= 0.5 * delay_s, "size %zu: slowlinear median %g below half the hook's delay %g",
                  t->ranges[r].points[p].size_bytes, md[0], delay_s);
        }
    }
    CHECK(npts == 5, "5 measured sizes, got %zu", npts);
    CHECK(!strcmp(t->statistic, "median") && !strcmp(t->timer, "monotonic") && !strcmp(t->timing, "max"), "provenance");
    CHECK(t->mpi_library[0] && t->utc_time[0], "mpi library and date recorded");
    same_everywhere(t, "tuned table");

    /* a table measured on another P is refused, with a message */
    char msg[512] = "";
    t->ranks = P + 1;
    CHECK(lts_tune_use(t, MPI_COMM_WORLD, msg, sizeof msg) == LTS_EINVAL && strstr(msg, "measured on"), "other P: %s", msg);
    t->ranks = P;
    CHECK(lts_tune_use(t, MPI_COMM_WORLD, msg, sizeof msg) == 0, "use: %s", msg);

    /* dispatch: every tuned call goes through the row the table chose, on every rank */
    calls_slow = calls_binom = calls_native = 0;
    long want_binom = 0;
    for (int root = 0; root < P; root++)
        for (size_t k = 0; k < ncounts; k++) {
            size_t bytes = (size_t)counts[k] * sizeof(int) * (size_t)P;
            CHECK(lts_tune_choice(LTS_COLL_SCATTER, P, bytes) == lts_tune_lookup(t, bytes), "choice = lookup");
            want_binom++;
            scatter_once(counts[k], root, (int)k);
        }
    CHECK(calls_binom == want_binom && calls_slow == 0 && calls_native == 0,
          "tuned calls: cbinomial %ld (want %ld), slowlinear %ld, cnative %ld", calls_binom, want_binom, calls_slow,
          calls_native);

    /* a table that sends large sizes to the counted native row: dispatch follows the table */
    const lts_coll_alg_t *cand[] = {binom, nat};
    size_t dsz[] = {0, 64, 4096};
    double med[] = {1, 1, 3, /* binom */ 2, 2, 2 /* native */};
    lts_tune_table_t *d = NULL;
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, P, cand, 2, dsz, 3, med, &d) == 0 && d, "decide");
    if (!d) return 1;
    CHECK(d->nranges == 2 && d->ranges[1].lo == 512 && d->ranges[1].alg == nat, "boundary sqrt(64 x 4096) = 512, got %zu",
          d->nranges == 2 ? d->ranges[1].lo : 0);
    CHECK(lts_tune_use(d, MPI_COMM_WORLD, msg, sizeof msg) == 0, "use: %s", msg);
    calls_slow = calls_binom = calls_native = 0;
    long wb = 0, wn = 0;
    for (int root = 0; root < P; root++)
        for (size_t k = 0; k < ncounts; k++) {
            size_t bytes = (size_t)counts[k] * sizeof(int) * (size_t)P;
            if (lts_tune_lookup(d, bytes) == nat) wn++;
            else wb++;
            scatter_once(counts[k], root, (int)k + 7);
        }
    CHECK(wn > 0 && wb > 0, "both rows used");
    CHECK(calls_binom == wb && calls_native == wn && calls_slow == 0, "forced table: cbinomial %ld/%ld cnative %ld/%ld",
          calls_binom, wb, calls_native, wn);
    lts_tune_free(d);

    /* the generic path: bcast and gather tuned over the built-ins; data at every root */
    size_t bsz[] = {0, 4, 400, 4000 * (size_t)P};
    lts_tune_table_t *tb = NULL, *tg = NULL;
    rc = lts_tune(MPI_COMM_WORLD, LTS_COLL_BCAST, "native,linear,binomial", bsz, 4, &m, &tb);
    CHECK(rc == 0 && tb, "tune bcast: %s", lts_strerror(rc));
    size_t gsz[] = {0, 4 * (size_t)P, 4000 * (size_t)P};
    rc = lts_tune(MPI_COMM_WORLD, LTS_COLL_GATHER, "native,linear,binomial", gsz, 3, &m, &tg);
    CHECK(rc == 0 && tg, "tune gather: %s", lts_strerror(rc));
    if (!tb || !tg) return 1;
    same_everywhere(tb, "bcast table");
    same_everywhere(tg, "gather table");
    CHECK(lts_tune_use(tb, MPI_COMM_WORLD, msg, sizeof msg) == 0, "use bcast: %s", msg);
    CHECK(lts_tune_use(tg, MPI_COMM_WORLD, msg, sizeof msg) == 0, "use gather: %s", msg);
    for (int root = 0; root < P; root++)
        for (size_t k = 0; k < ncounts; k++) {
            bcast_once(counts[k], root, (int)k);
            gather_once(counts[k], root, (int)k);
        }

    /* bad arguments: the same code on every rank, no communication */
    lts_tune_table_t *x = NULL;
    CHECK(lts_tune(MPI_COMM_WORLD, LTS_COLL_SCATTER, "nosuch", sizes, 5, &m, &x) == LTS_ENOTFOUND && !x, "unknown alg");
    if (P > 1) {
        size_t odd[] = {1};
        CHECK(lts_tune(MPI_COMM_WORLD, LTS_COLL_SCATTER, "cbinomial", odd, 1, &m, &x) == LTS_EINVAL && !x,
              "size not divisible by P");
    }

    /* cleared: native again */
    lts_tune_clear(LTS_COLL_NOPS);
    CHECK(lts_tune_choice(LTS_COLL_SCATTER, P, 64) == lts_coll_find(LTS_COLL_SCATTER, "native"), "cleared");
    calls_slow = calls_binom = calls_native = 0;
    scatter_once(10, 0, 3);
    CHECK(calls_slow + calls_binom + calls_native == 0, "after clear");
    lts_tune_free(t);
    lts_tune_free(tb);
    lts_tune_free(tg);
    return 0;
}

/* ---- unit checks (no communication) ------------------------------------------------------- */

static int parses(const char *s) {
    lts_jv_t *v = NULL;
    char msg[256];
    int rc = lts_jv_parse(s, strlen(s), &v, msg, sizeof msg);
    lts_jv_free(v);
    return rc == 0;
}

static int cmd_unit(void) {
    const lts_coll_alg_t *nat = lts_coll_find(LTS_COLL_SCATTER, "native"), *lin = lts_coll_find(LTS_COLL_SCATTER, "linear"),
                         *bin = lts_coll_find(LTS_COLL_SCATTER, "binomial");
    const lts_coll_alg_t *cand[] = {nat, lin, bin};
    /* winners: 0:lin 8:lin 64:bin 1024:nat 4096:nat ; NaN never wins; ties to the earlier */
    size_t sz[] = {0, 8, 64, 1024, 4096};
    double md[] = {/*nat*/ 5, 5, 5, 1, 1, /*lin*/ 1, 1, 5, 2, NAN, /*bin*/ 2, 2, 1, 2, 2};
    lts_tune_table_t *t = NULL;
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 4, cand, 3, sz, 5, md, &t) == 0 && t, "decide");
    if (!t) return 1;
    CHECK(t->nranges == 3, "3 ranges, got %zu", t->nranges);
    /* 8|64: 8*64 = 512, sqrt = 22.6 -> 23; 64|1024: 65536 -> 256 exactly */
    CHECK(t->ranges[0].lo == 0 && t->ranges[0].hi == 23 && t->ranges[0].alg == lin, "range 0 [%zu,%zu)", t->ranges[0].lo,
          t->ranges[0].hi);
    CHECK(t->ranges[1].lo == 23 && t->ranges[1].hi == 256 && t->ranges[1].alg == bin, "range 1 [%zu,%zu)", t->ranges[1].lo,
          t->ranges[1].hi);
    CHECK(t->ranges[2].lo == 256 && t->ranges[2].hi == LTS_TUNE_OPEN && t->ranges[2].alg == nat, "range 2");
    CHECK(t->ranges[0].npoints == 2 && t->ranges[1].npoints == 1 && t->ranges[2].npoints == 2, "points per range");
    CHECK(lts_tune_lookup(t, 0) == lin && lts_tune_lookup(t, 22) == lin && lts_tune_lookup(t, 23) == bin &&
          lts_tune_lookup(t, 255) == bin && lts_tune_lookup(t, 256) == nat && lts_tune_lookup(t, (size_t)1 << 40) == nat,
          "lookup at the boundaries");
    /* the roundtrip through JSON keeps everything; NaN is written as null */
    char *a = NULL, *b = NULL, msg[512];
    CHECK(lts_tune_to_json(t, &a) == 0 && strstr(a, "\"linear\": null"), "NaN median written as null");
    lts_tune_table_t *u = NULL;
    CHECK(lts_tune_parse(a, strlen(a), &u, msg, sizeof msg) == 0 && u, "parse own output: %s", msg);
    if (u) {
        CHECK(lts_tune_to_json(u, &b) == 0 && !strcmp(a, b), "roundtrip bytes");
        CHECK(isnan(u->ranges[2].points[1].median_s[1]), "null read back as NaN");
    }
    free(a);
    free(b);
    lts_tune_free(u);
    /* ties go to the earlier candidate; a size with no data is refused */
    size_t s1[] = {8};
    double tie[] = {3, 3, 3}, none[] = {NAN, NAN, NAN};
    lts_tune_table_t *x = NULL;
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 4, cand, 3, s1, 1, tie, &x) == 0 && x && x->ranges[0].alg == nat, "tie");
    lts_tune_free(x);
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 4, cand, 3, s1, 1, none, &x) == LTS_ENOELIGIBLE, "no data");
    size_t unsorted[] = {8, 8};
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 4, cand, 3, unsorted, 2, md, &x) == LTS_EINVAL, "sizes must increase");
    /* boundary between 0 and 1: 0 counts as 1 -> the boundary is 1 */
    size_t s01[] = {0, 1};
    double m01[] = {1, 2, /*lin*/ 2, 1, /*bin*/ 3, 3};
    CHECK(lts_tune_decide(LTS_COLL_SCATTER, 4, cand, 3, s01, 2, m01, &x) == 0 && x->nranges == 2 && x->ranges[1].lo == 1,
          "0|1 boundary");
    lts_tune_free(x);
    lts_tune_free(t);

    /* the JSON reader: strict */
    CHECK(parses("{\"a\": [1, 2.5e3, -0, true, false, null, \"x\\u00e9\\ud83d\\ude00\"]}"), "valid JSON");
    CHECK(!parses("{\"a\": 1,}"), "trailing comma");
    CHECK(!parses("{\"a\": 1, \"a\": 2}"), "duplicate key");
    CHECK(!parses("[01]"), "leading zero");
    CHECK(!parses("[1.]"), "bare decimal point");
    CHECK(!parses("[NaN]"), "NaN");
    CHECK(!parses("{} {}"), "two values");
    CHECK(!parses("\"a\tb\""), "raw tab in a string");
    CHECK(!parses("[\"\\ud83d\"]"), "unpaired surrogate");
    CHECK(!parses("// c\n{}"), "comment");
    char deep[201];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    deep[200] = '\0';
    CHECK(!parses(deep), "nesting limit");   /* 100 > LTS_JV_MAX_DEPTH */
    deep[2 * LTS_JV_MAX_DEPTH - 2] = '\0';
    memset(deep, '[', LTS_JV_MAX_DEPTH - 1);
    memset(deep + LTS_JV_MAX_DEPTH - 1, ']', LTS_JV_MAX_DEPTH - 1);
    CHECK(parses(deep), "nesting just below the limit");
    lts_jv_t *v = NULL;
    CHECK(lts_jv_parse("{\n  \"k\": tru\n}", strlen("{\n  \"k\": tru\n}"), &v, msg, sizeof msg) != 0 && strstr(msg, "line 2"), "line in message: %s", msg);
    const char *nums = "[9223372036854775807, 9223372036854775808, 3e2]";
    CHECK(lts_jv_parse(nums, strlen(nums), &v, msg, sizeof msg) == 0, "numbers");
    if (v) {
        CHECK(v->items[0].is_integer && v->items[0].integer == 9223372036854775807LL, "int64 max");
        CHECK(!v->items[1].is_integer && !v->items[2].is_integer && v->items[2].num == 300, "not integers");
    }
    lts_jv_free(v);
    return 0;
}

/* ---- load / save -------------------------------------------------------------------------- */

static int cmd_load(int argc, char **argv) {
    const char *file = NULL, *save = NULL, *sizes = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--save") && i + 1 < argc) save = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else if (!file) file = argv[i];
        else { if (me == 0) fprintf(stderr, "tune-check: error: unexpected argument '%s'\n", argv[i]); return 2; }
    }
    if (!file) { if (me == 0) fprintf(stderr, "tune-check: error: load needs a FILE\n"); return 2; }
    /* a registered algorithm named in a table must exist before loading: the test registers one */
    lts_coll_register(LTS_COLL_SCATTER, "slowlinear", "test hook", (lts_coll_fn_t){.scatter = slowlinear});
    lts_tune_table_t *t = NULL;
    char msg[1024];
    int rc = lts_tune_load(file, &t, msg, sizeof msg);
    if (rc) {
        if (me == 0) fprintf(stderr, "tune-check: error: %s (%s)\n", msg, lts_strerror(rc));
        return 2;
    }
    if (sizes && me == 0) {
        size_t *s = NULL, n = 0;
        char m2[256];
        if (lts_parse_sizes(sizes, &s, &n, m2, sizeof m2)) { fprintf(stderr, "tune-check: error: --sizes: %s\n", m2); return 2; }
        for (size_t i = 0; i < n; i++) printf("%zu %s\n", s[i], lts_tune_lookup(t, s[i])->name);
        free(s);
    }
    if (save && me == 0 && (rc = lts_tune_save(t, save))) {
        fprintf(stderr, "tune-check: error: --save %s: %s\n", save, lts_strerror(rc));
        lts_tune_free(t);
        return 2;
    }
    lts_tune_free(t);
    return 0;
}

/* ---- decide from records ------------------------------------------------------------------ */

static double num_or_nan(const lts_jv_t *o, const char *k) {
    const lts_jv_t *v = lts_jv_get(o, k);
    return v && v->type == LTS_JV_NUM ? v->num : NAN;
}

static int cmd_decide(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "tune-check: error: decide needs one RESULTS file\n"); return 2; }
    FILE *f = fopen(argv[2], "r");
    if (!f) { fprintf(stderr, "tune-check: error: %s: cannot be read\n", argv[2]); return 2; }
    enum { MAXP = 4096 };
    static char line[1 << 16];
    const lts_coll_alg_t *cand[LTS_TUNE_MAX_CANDIDATES];
    size_t ncand = 0, nsz = 0, sizes[64], np = 0;
    struct { size_t c, s; lts_tune_obs_t o; } *pts = calloc(MAXP, sizeof *pts);
    double target = NAN;
    int op = -1, ranks = 1, rc = 0;
    char msg[4096] = "";
    while (!rc && fgets(line, sizeof line, f)) {
        lts_jv_t *v = NULL;
        if (lts_jv_parse(line, strlen(line), &v, msg, sizeof msg)) { rc = 2; break; }
        const lts_jv_t *ty = lts_jv_get(v, "type");
        if (ty && ty->type == LTS_JV_STR && !strcmp(ty->str, "meta")) {
            const lts_jv_t *o = lts_jv_get(v, "op"), *rp = lts_jv_get(v, "rep_policy");
            op = o && o->type == LTS_JV_STR ? lts_coll_op_find(o->str) : -1;
            ranks = (int)num_or_nan(v, "ranks");
            if (rp) target = num_or_nan(rp, "rel_err_target");
        } else if (ty && ty->type == LTS_JV_STR && !strcmp(ty->str, "point") && op >= 0 && np < MAXP) {
            const lts_jv_t *a = lts_jv_get(v, "alg"), *st = lts_jv_get(v, "stop_reason");
            const lts_coll_alg_t *alg = a && a->type == LTS_JV_STR ? lts_coll_find((lts_coll_op_t)op, a->str) : NULL;
            size_t size = (size_t)num_or_nan(v, "size_bytes"), c = 0, s = 0;
            if (!alg) { snprintf(msg, sizeof msg, "unknown algorithm in a point"); rc = 2; }
            while (c < ncand && cand[c] != alg) c++;
            if (!rc && c == ncand) cand[ncand++] = alg;
            while (s < nsz && sizes[s] != size) s++;
            if (!rc && s == nsz) sizes[nsz++] = size;
            int stop = 0;
            for (int r = LTS_STOP_CONVERGED; st && st->type == LTS_JV_STR && r <= LTS_STOP_FIXED; r++)
                if (!strcmp(st->str, lts_stop_reason_name((lts_stop_reason_t)r))) stop = r;
            double neg = num_or_nan(v, "negative_samples"), tot = num_or_nan(v, "reps_total");
            pts[np].c = c;
            pts[np].s = s;
            pts[np++].o = (lts_tune_obs_t){num_or_nan(v, "median_s"), num_or_nan(v, "ci_lo_s"), num_or_nan(v, "ci_hi_s"),
                                           num_or_nan(v, "rel_err"), (long)num_or_nan(v, "reps_valid"),
                                           isnan(tot) ? 0 : (long)tot, isnan(neg) ? 0 : (long)neg, stop};
        }
        lts_jv_free(v);
    }
    fclose(f);
    if (!rc && (op < 0 || !np)) { snprintf(msg, sizeof msg, "no tune points"); rc = 2; }
    lts_tune_table_t *t = NULL;
    if (!rc) {
        /* sizes ascending, obs[c * nsz + s] in that order; a pair never measured: NaN */
        size_t order[64];
        for (size_t i = 0; i < nsz; i++) order[i] = i;
        for (size_t i = 1; i < nsz; i++)
            for (size_t j = i; j > 0 && sizes[order[j]] < sizes[order[j - 1]]; j--) {
                size_t x = order[j]; order[j] = order[j - 1]; order[j - 1] = x;
            }
        size_t ssorted[64], rank_of[64];
        for (size_t i = 0; i < nsz; i++) { ssorted[i] = sizes[order[i]]; rank_of[order[i]] = i; }
        lts_tune_obs_t *obs = malloc(ncand * nsz * sizeof *obs);
        for (size_t i = 0; i < ncand * nsz; i++) obs[i] = (lts_tune_obs_t){NAN, NAN, NAN, NAN, 0, 0, 0, 0};
        for (size_t i = 0; i < np; i++) obs[pts[i].c * nsz + rank_of[pts[i].s]] = pts[i].o;
        rc = lts_tune_decide_obs((lts_coll_op_t)op, ranks, cand, ncand, ssorted, nsz, obs, target, &t, msg, sizeof msg);
        free(obs);
        if (rc == LTS_ENOELIGIBLE) rc = 2;
    }
    free(pts);
    if (rc) { fprintf(stderr, "tune-check: error: %s\n", msg); return rc == 2 ? 2 : 1; }
    rc = lts_tune_write(t, stdout);
    lts_tune_free(t);
    return rc ? 1 : 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int status = 0;
    if (argc >= 2 && !strcmp(argv[1], "run")) {
        if (argc == 4 && !strcmp(argv[2], "--delay-us")) delay_s = atof(argv[3]) * 1e-6;
        cmd_run();
    } else if (argc >= 2 && !strcmp(argv[1], "unit")) {
        cmd_unit();
    } else if (argc >= 2 && !strcmp(argv[1], "load")) {
        status = cmd_load(argc, argv);
    } else if (argc >= 2 && !strcmp(argv[1], "decide")) {
        status = me == 0 ? cmd_decide(argc, argv) : 0;
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (status == 0) {
            MPI_Finalize();
            return 0;
        }
    } else {
        if (me == 0) fprintf(stderr, "tune-check: error: usage: tune-check run [--delay-us D] | unit | load FILE [--save OUT] [--sizes LIST] | decide RESULTS\n");
        status = 2;
    }
    if (status == 0) {
        int any;
        MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (any) {
            if (me == 0) fprintf(stderr, "tune-check: %d check(s) failed\n", any);
            MPI_Finalize();
            return 1;
        }
        if (me == 0 && strcmp(argv[1], "load")) printf("ok\n");
    }
    MPI_Finalize();
    return status;
}
