/* Fuzz harness: the message-size grammar (src/core/sizes.c: lts_parse_sizes, lts_parse_size,
 * lts_parse_duration), as typed after --sizes / --duration. Invariants beyond "no sanitizer
 * report": an accepted list has 1..LTS_SIZES_MAX_COUNT sizes, each at most LTS_SIZE_MAX_BYTES; a
 * range item yields strictly increasing sizes from its start to at most its end; the list written
 * back as plain decimals parses to the same sizes; a rejected one returns a negative code and a
 * non-empty message, and leaves the outputs alone. */
#include "fuzz.h"
#include "latscope/errors.h"
#include "latscope/sizes.h"
#include <math.h>
#include <string.h>

#define MSGLEN 256

static void check_item(const char *item) {
    size_t *a = NULL, n = 0;
    char msg[MSGLEN];
    if (lts_parse_sizes(item, &a, &n, msg, sizeof msg) != LTS_OK) return;   /* the list parse already judged it */
    const char *c1 = strchr(item, ':');
    if (c1) {
        *(char *)c1 = '\0';
        size_t lo, hi;
        const char *c2 = strchr(c1 + 1, ':');
        *(char *)c2 = '\0';
        FUZZ_CHECK(lts_parse_size(item, &lo) == LTS_OK && lts_parse_size(c1 + 1, &hi) == LTS_OK, "range ends of an accepted range");
        FUZZ_CHECK(a[0] == lo, "range starts at %zu, not at its start %zu", a[0], lo);
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(a[i] <= hi, "size %zu beyond the range end %zu", a[i], hi);
            FUZZ_CHECK(i == 0 || a[i] > a[i - 1], "range not increasing at %zu: %zu after %zu", i, a[i], a[i - 1]);
        }
    } else {
        size_t v;
        FUZZ_CHECK(n == 1 && lts_parse_size(item, &v) == LTS_OK && v == a[0], "single item parses alone to %zu", a[0]);
    }
    free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fuzz_cstr(data, size);
    size_t *a = (size_t *)&size, n = 7;   /* sentinels: a failed parse must not touch them */
    char msg[MSGLEN];
    msg[0] = '\0';
    int rc = lts_parse_sizes(s, &a, &n, msg, sizeof msg);
    if (rc == LTS_OK) {
        FUZZ_CHECK(a && n >= 1 && n <= LTS_SIZES_MAX_COUNT, "count %zu", n);
        for (size_t i = 0; i < n; i++) FUZZ_CHECK(a[i] <= LTS_SIZE_MAX_BYTES, "size %zu above the maximum", a[i]);
        if (n <= 256) {
            /* written back as decimals, the list means the same */
            char *text = malloc(n * 12 + 1), *p = text;
            for (size_t i = 0; i < n; i++) p += sprintf(p, "%s%zu", i ? "," : "", a[i]);
            size_t *b = NULL, m = 0;
            FUZZ_CHECK(lts_parse_sizes(text, &b, &m, msg, sizeof msg) == LTS_OK && m == n && !memcmp(a, b, n * sizeof *a),
                       "'%s' does not parse back to itself", text);
            free(b);
            free(text);
            /* each comma-separated item on its own (strtok_r skips empty items, as the parser does) */
            char *save = NULL;
            for (char *it = strtok_r(s, ",", &save); it; it = strtok_r(NULL, ",", &save)) check_item(it);
        }
        free(a);
    } else {
        FUZZ_CHECK(rc < 0, "error code %d", rc);
        FUZZ_CHECK(a == (size_t *)&size && n == 7, "outputs written on error");
        FUZZ_CHECK(msg[0] != '\0' || rc == LTS_ENOMEM, "no message for error %d", rc);
    }
    free(s);

    s = fuzz_cstr(data, size);
    size_t v = 0;
    if (lts_parse_size(s, &v) == LTS_OK) FUZZ_CHECK(v <= LTS_SIZE_MAX_BYTES, "size %zu", v);
    double d = -1;
    if (lts_parse_duration(s, &d) == LTS_OK) FUZZ_CHECK(isfinite(d) && d >= 0 && d <= 3600.0, "duration %g s", d);
    free(s);
    return 0;
}
