/* Fuzz harness: the injector's delay-table parser (src/inject/table.c, docs/delay-table.md) and
 * the LATSCOPE_INJECT_RANKS / _CALLS grammars beside it. Invariants beyond "no sanitizer
 * report": an accepted table fills all LTS_INJECT_TABLE_N entries, each at most one second (1e9
 * ns); a rejected one returns a negative code and a message that starts with the table's name
 * (file:line). The table parser gets the bytes in a buffer of exactly their length, no NUL after
 * them, as it gets a file's contents. */
#include "fuzz.h"
#include "table.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static uint64_t table[LTS_INJECT_TABLE_N];
    char err[LTS_INJECT_ERRLEN];
    memset(table, 0xff, sizeof table);   /* UINT64_MAX: above any accepted delay, so an unfilled entry shows */
    err[0] = '\0';
    int rc = lts_inject_table_parse((const char *)data, size, "fuzz.tbl", table, err, sizeof err);
    if (rc == 0) {
        for (size_t i = 0; i < LTS_INJECT_TABLE_N; i++)
            FUZZ_CHECK(table[i] <= 1000000000ull, "entry %zu = %llu ns", i, (unsigned long long)table[i]);
    } else {
        FUZZ_CHECK(rc < 0, "error code %d", rc);
        FUZZ_CHECK(!strncmp(err, "fuzz.tbl:", 9), "message does not name the table: '%s'", err);
    }

    char *s = fuzz_cstr(data, size);
    enum { NRANKS = 16 };
    unsigned char sel[NRANKS];
    err[0] = '\0';
    rc = lts_inject_ranks_parse(s, NRANKS, sel, err, sizeof err);
    if (rc == 0) {
        int any = 0;
        for (int r = 0; r < NRANKS; r++) { FUZZ_CHECK(sel[r] <= 1, "sel[%d] = %d", r, sel[r]); any |= sel[r]; }
        FUZZ_CHECK(any, "an accepted rank list selects no rank: '%s'", s);
    } else FUZZ_CHECK(rc < 0 && err[0], "rank list error %d without a message", rc);

    unsigned char on[LTS_INJECT_NCALLS];
    err[0] = '\0';
    rc = lts_inject_calls_parse(s, on, err, sizeof err);
    if (rc == 0) for (int i = 0; i < LTS_INJECT_NCALLS; i++) FUZZ_CHECK(on[i] <= 1, "enabled[%d] = %d", i, on[i]);
    else FUZZ_CHECK(rc < 0 && err[0], "call list error %d without a message", rc);
    free(s);
    return 0;
}
