/* Unit tests for the injector's pure parts: the strict delay-table parser, the seed and
 * rank/call grammars, and the per-rank LCG streams. No MPI. */
#include "table.h"
#include "check.h"
#include <stdlib.h>
#include <string.h>

static uint64_t tab[LTS_INJECT_TABLE_N];
static char err[LTS_INJECT_ERRLEN];

/* A valid table: header + 512 lines of 8 values, value = index. */
static char *make_table(void) {
    size_t cap = 64 * 1024;
    char *s = malloc(cap);
    size_t n = (size_t)snprintf(s, cap, "%s\n# units: ns\n", LTS_INJECT_TABLE_MAGIC);
    for (int l = 0; l < 512; l++) {
        for (int c = 0; c < 8; c++) n += (size_t)snprintf(s + n, cap - n, c ? " %d" : "%d", l * 8 + c);
        n += (size_t)snprintf(s + n, cap - n, "\n");
    }
    return s;
}

static int parse(const char *s) { err[0] = 0; return lts_inject_table_parse(s, strlen(s), "t", tab, err, sizeof err); }

/* Replace the data line number `line` (1-based file line) of a valid table by `repl`. */
static char *with_line(int line, const char *repl) {
    char *base = make_table();
    char *out = malloc(strlen(base) + strlen(repl) + 64);
    char *p = base;
    for (int i = 1; i < line; i++) p = strchr(p, '\n') + 1;
    char *e = strchr(p, '\n');
    size_t pre = (size_t)(p - base);
    memcpy(out, base, pre);
    strcpy(out + pre, repl);
    strcat(out, e);
    free(base);
    return out;
}

static void check_bad(char *s, const char *want_in_msg) {
    int rc = parse(s);
    CHECK(rc < 0);
    if (!strstr(err, want_in_msg)) {
        lts_failures++;
        fprintf(stderr, "message '%s' does not contain '%s'\n", err, want_in_msg);
    }
    free(s);
}

int main(void) {
    /* valid */
    char *ok = make_table();
    CHECK(parse(ok) == 0);
    CHECK(tab[0] == 0 && tab[4095] == 4095 && tab[1234] == 1234);
    /* CRLF and a trailing blank line are accepted */
    free(ok);

    /* bad inputs, each naming the line */
    check_bad(with_line(1, "# not-a-table 1"), "t:1:");
    check_bad(with_line(3, "0 1 2 3 4 5 6"), "t:3: 7 values");
    check_bad(with_line(4, "0 1 2 3 4 5 6 7 8"), "t:4: more than 8");
    check_bad(with_line(5, "0 1 2 -3 4 5 6 7"), "t:5: value 4 '-3' is negative");
    check_bad(with_line(6, "0 1 2 3 4.5 5 6 7"), "t:6: value 5 '4.5' is not");
    check_bad(with_line(7, "0 1 2 3 x 5 6 7"), "t:7:");
    check_bad(with_line(8, "0 1 2 3 4 5 6 99999999999999999999999"), "t:8: value 8");
    check_bad(with_line(9, "0 1 2 3 4 5 6 +7"), "t:9:");
    check_bad(with_line(10, ""), "t:10: empty line");
    check_bad(with_line(11, "# late comment"), "t:11:");
    {   /* too few data lines: drop the last line */
        char *s = make_table();
        s[strlen(s) - 1] = 0;
        *(strrchr(s, '\n') + 1) = 0;
        check_bad(s, "511 data lines");
    }
    {   /* too many */
        char *s = make_table();
        s = realloc(s, strlen(s) + 32);
        strcat(s, "1 2 3 4 5 6 7 8\n");
        check_bad(s, "more than 512 data lines");
    }
    CHECK(parse("") < 0);
    CHECK(lts_inject_table_load("/nonexistent/lts-table", tab, err, sizeof err) < 0 && strstr(err, "cannot open"));

    /* seed */
    uint64_t seed = 0;
    CHECK(lts_inject_seed_parse("42", &seed, err, sizeof err) == 0 && seed == 42);
    CHECK(lts_inject_seed_parse(" 7\n", &seed, err, sizeof err) == 0 && seed == 7);
    CHECK(lts_inject_seed_parse("-1", &seed, err, sizeof err) < 0);
    CHECK(lts_inject_seed_parse("", &seed, err, sizeof err) < 0);
    CHECK(lts_inject_seed_parse("/nonexistent/seed", &seed, err, sizeof err) < 0);
    {
        char path[] = "/tmp/lts-seed-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");
        fprintf(f, "123456789\n");
        fclose(f);
        CHECK(lts_inject_seed_parse(path, &seed, err, sizeof err) == 0 && seed == 123456789);
        f = fopen(path, "w");
        fprintf(f, "12 34\n");
        fclose(f);
        CHECK(lts_inject_seed_parse(path, &seed, err, sizeof err) < 0);
        remove(path);
    }

    /* LCG streams: same seed -> same sequence; different ranks -> different streams */
    {
        enum { N = 1 << 16 };
        uint64_t a = lts_inject_stream_init(99, 3, 0), b = lts_inject_stream_init(99, 3, 0);
        uint64_t c = lts_inject_stream_init(99, 4, 0), d = lts_inject_stream_init(100, 3, 0);
        uint64_t t1 = lts_inject_stream_init(99, 3, 1);
        int same_ab = 1, same_ac = 0, same_ad = 0, same_at1 = 0;
        static unsigned counts[LTS_INJECT_TABLE_N];
        static unsigned seq_a[N];
        for (int i = 0; i < N; i++) {
            unsigned ia = lts_inject_next_index(&a), ib = lts_inject_next_index(&b);
            unsigned ic = lts_inject_next_index(&c), id = lts_inject_next_index(&d);
            unsigned it = lts_inject_next_index(&t1);
            seq_a[i] = ia;
            same_ab &= ia == ib;
            same_ac += ia == ic;
            same_ad += ia == id;
            same_at1 += ia == it;
            CHECK(ia < LTS_INJECT_TABLE_N);
            counts[ia]++;
        }
        CHECK(same_ab);
        /* unrelated streams agree by chance about N/4096 = 16 times */
        CHECK(same_ac < 64);
        CHECK(same_ad < 64);
        CHECK(same_at1 < 64);
        /* uniform enough: chi-square over 4096 cells, 4095 dof (mean 4095, sd ~90.5):
         * accept below mean + 5 sd */
        double chi2 = 0, e = (double)N / LTS_INJECT_TABLE_N;
        for (int i = 0; i < LTS_INJECT_TABLE_N; i++) chi2 += (counts[i] - e) * (counts[i] - e) / e;
        CHECK(chi2 < 4095 + 5 * 90.5);
        /* and not a fixed permutation cycle (the raw low 12 state bits would repeat every 4096) */
        int rep = 1;
        for (int i = 0; i < 4096; i++) rep &= seq_a[i] == seq_a[i + 4096];
        CHECK(!rep);
    }

    /* ranks grammar */
    unsigned char sel[8];
    CHECK(lts_inject_ranks_parse("0,3-5", 8, sel, err, sizeof err) == 0);
    CHECK(sel[0] && !sel[1] && !sel[2] && sel[3] && sel[4] && sel[5] && !sel[6] && !sel[7]);
    CHECK(lts_inject_ranks_parse("8", 8, sel, err, sizeof err) < 0 && strstr(err, "'8'"));
    CHECK(lts_inject_ranks_parse("5-3", 8, sel, err, sizeof err) < 0);
    CHECK(lts_inject_ranks_parse("a", 8, sel, err, sizeof err) < 0);
    CHECK(lts_inject_ranks_parse("1,", 8, sel, err, sizeof err) < 0);

    /* calls grammar */
    unsigned char en[LTS_INJECT_NCALLS];
    CHECK(lts_inject_calls_parse(NULL, en, err, sizeof err) == 0 && en[LTS_CALL_send] && en[LTS_CALL_ibarrier]);
    CHECK(lts_inject_calls_parse("p2p,coll,-barrier", en, err, sizeof err) == 0);
    CHECK(en[LTS_CALL_send] && en[LTS_CALL_startall] && en[LTS_CALL_bcast] && !en[LTS_CALL_barrier] && en[LTS_CALL_ibarrier]);
    CHECK(lts_inject_calls_parse("-p2p,-coll", en, err, sizeof err) == 0);
    {
        int any = 0;
        for (int i = 0; i < LTS_INJECT_NCALLS; i++) any |= en[i];
        CHECK(!any);
    }
    CHECK(lts_inject_calls_parse("send,ibcast", en, err, sizeof err) == 0);
    CHECK(en[LTS_CALL_send] && en[LTS_CALL_ibcast] && !en[LTS_CALL_isend] && !en[LTS_CALL_bcast]);
    CHECK(lts_inject_calls_parse("-isend", en, err, sizeof err) == 0 && en[LTS_CALL_send] && !en[LTS_CALL_isend]);
    CHECK(lts_inject_calls_parse("send,bogus", en, err, sizeof err) < 0 && strstr(err, "'bogus'") &&
          strstr(err, "sendrecv_replace"));
    CHECK(lts_inject_call_index("iexscan") == LTS_CALL_iexscan);
    return CHECK_DONE();
}
