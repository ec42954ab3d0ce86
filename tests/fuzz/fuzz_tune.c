/* Fuzz harness: the decision-table reader (src/algos/tune_json.c lts_tune_parse, docs/tune-format.md),
 * which walks the JSON reader's tree against the collective registry, and its writer. Invariants
 * beyond "no sanitizer report": a rejected table returns a negative code, no table and a message;
 * an accepted one has sorted contiguous ranges from 0 to open, each range's algorithm is what
 * lts_tune_lookup returns inside it, and writing it, reading that back and writing again gives
 * the same bytes (tune.h: "loading a saved table and saving it again gives the same bytes"). The
 * same input is also an --alg selection (lts_coll_select, src/algos/registry.c: "a,b,-c",
 * "tree:k=3"): an accepted one lists distinct rows, each of which selected by its own name is
 * that row again. No MPI call is made: parsing needs only the registry tables. */
#include "fuzz.h"
#include "latscope/errors.h"
#include "latscope/tune.h"
#include <string.h>

static void check_select(const uint8_t *data, size_t size) {
    char *spec = fuzz_cstr(data, size);
    lts_coll_op_t op = (lts_coll_op_t)(size % LTS_COLL_NOPS);
    const lts_coll_alg_t **rows = NULL;
    size_t n = 0;
    char bad[256];
    bad[0] = '\0';
    int rc = lts_coll_select(op, spec, &rows, &n, bad, sizeof bad);
    if (rc == LTS_OK) {
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(rows[i] && rows[i]->name && rows[i]->name[0], "row %zu of '%s'", i, spec);
            for (size_t j = 0; j < i; j++) FUZZ_CHECK(rows[i] != rows[j], "'%s' selects %s twice", spec, rows[i]->name);
            const lts_coll_alg_t **one = NULL;
            size_t m = 0;
            FUZZ_CHECK(lts_coll_select(op, rows[i]->name, &one, &m, bad, sizeof bad) == LTS_OK && m == 1 && one[0] == rows[i],
                       "'%s' selected by its own name is another row", rows[i]->name);
            free(one);
        }
    } else {
        FUZZ_CHECK(rc < 0 && (rc == LTS_ENOMEM || bad[0]), "selection error %d without a message", rc);
    }
    free(rows);
    free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_select(data, size);
    lts_tune_table_t *t = (lts_tune_table_t *)&size;
    char msg[1024];
    msg[0] = '\0';
    int rc = lts_tune_parse((const char *)data, size, &t, msg, sizeof msg);
    if (rc != LTS_OK) {
        FUZZ_CHECK(rc < 0 && t == NULL, "error %d with a table", rc);
        FUZZ_CHECK(rc == LTS_ENOMEM || msg[0], "error %d without a message", rc);
        return 0;
    }
    FUZZ_CHECK(t && t->ncand >= 1 && t->nranges >= 1 && t->ranks >= 1, "table shape");
    for (size_t r = 0; r < t->nranges; r++) {
        const lts_tune_range_t *R = &t->ranges[r];
        FUZZ_CHECK(r ? R->lo == t->ranges[r - 1].hi : R->lo == 0, "range %zu starts at %zu", r, R->lo);
        FUZZ_CHECK((r + 1 == t->nranges) == (R->hi == LTS_TUNE_OPEN), "range %zu end", r);
        FUZZ_CHECK(R->hi > R->lo, "range %zu empty", r);
        FUZZ_CHECK(lts_tune_lookup(t, R->lo) == R->alg, "lookup(%zu) is not range %zu's algorithm", R->lo, r);
        FUZZ_CHECK(lts_tune_lookup(t, R->hi - 1) == R->alg, "lookup(%zu) is not range %zu's algorithm", R->hi - 1, r);
    }
    char *a = NULL, *b = NULL;
    FUZZ_CHECK(lts_tune_to_json(t, &a) == LTS_OK && a, "an accepted table cannot be written");
    lts_tune_table_t *u = NULL;
    rc = lts_tune_parse(a, strlen(a), &u, msg, sizeof msg);
    FUZZ_CHECK(rc == LTS_OK, "the written table does not load: %s\n%s", msg, a);
    FUZZ_CHECK(lts_tune_to_json(u, &b) == LTS_OK && !strcmp(a, b), "load + save changed the bytes:\n%s\n---\n%s", a, b);
    free(a);
    free(b);
    lts_tune_free(u);
    lts_tune_free(t);
    return 0;
}
