/* Pure parts of the injector: strict parsers and the random streams (see table.h). */
#include "table.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LTS_INJ_EINVAL (-22)
#define LTS_INJ_EIO (-5)

#define LTS_INJ_ROW_(n, g) {#n, LTS_INJ_##g},
const lts_inject_call_t lts_inject_calls[LTS_INJECT_NCALLS] = {LTS_INJECT_CALL_LIST(LTS_INJ_ROW_)};
#undef LTS_INJ_ROW_
_Static_assert(sizeof lts_inject_calls / sizeof lts_inject_calls[0] == LTS_INJECT_NCALLS, "one row per call");

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Strict unsigned decimal: digits only, no sign, no overflow past UINT64_MAX. */
static int parse_u64(const char *s, size_t n, uint64_t *out) {
    if (n == 0) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -2;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Longest allowed delay: one second. Larger values are almost surely a units mistake (the
 * table is in nanoseconds), and ns * ticks-per-ns must not overflow. */
#define LTS_INJ_MAX_NS 1000000000ULL

int lts_inject_table_parse(const char *text, size_t len, const char *name,
                           uint64_t table[LTS_INJECT_TABLE_N], char *err, size_t errlen) {
    if (!name) name = "<table>";
    size_t pos = 0;
    int lineno = 0, data_lines = 0, n = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        const char *line = text + pos;
        size_t ll = end - pos;
        if (ll && line[ll - 1] == '\r') ll--;
        lineno++;
        pos = end + 1;
        if (memchr(line, '\0', ll))
            return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: NUL byte (not a text delay table)", name, lineno);
        if (lineno == 1) {
            size_t ml = strlen(LTS_INJECT_TABLE_MAGIC);
            size_t t = ll;
            while (t > 0 && (line[t - 1] == ' ' || line[t - 1] == '\t')) t--;
            if (t != ml || memcmp(line, LTS_INJECT_TABLE_MAGIC, ml) != 0)
                return fail(err, errlen, LTS_INJ_EINVAL,
                            "%s:1: first line must be '%s' (a latscope delay table, version 1)", name,
                            LTS_INJECT_TABLE_MAGIC);
            continue;
        }
        if (ll > 0 && line[0] == '#') {
            if (data_lines > 0)
                return fail(err, errlen, LTS_INJ_EINVAL,
                            "%s:%d: '#' header line after the first data line", name, lineno);
            continue;
        }
        /* a data line: exactly 8 non-negative integers separated by blanks */
        size_t i = 0;
        int cols = 0;
        int blank = 1;
        for (size_t k = 0; k < ll; k++)
            if (line[k] != ' ' && line[k] != '\t') { blank = 0; break; }
        if (blank) {
            size_t k = pos;   /* blank lines are tolerated only at the end of the file */
            while (k < len && isspace((unsigned char)text[k])) k++;
            if (k >= len) break;
            return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: empty line (expected 8 integers)", name, lineno);
        }
        if (data_lines >= LTS_INJECT_TABLE_LINES)
            return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: more than %d data lines (expected exactly %d)", name,
                        lineno, LTS_INJECT_TABLE_LINES, LTS_INJECT_TABLE_LINES);
        while (i < ll) {
            while (i < ll && (line[i] == ' ' || line[i] == '\t')) i++;
            if (i >= ll) break;
            size_t j = i;
            while (j < ll && line[j] != ' ' && line[j] != '\t') j++;
            cols++;
            if (cols > LTS_INJECT_TABLE_COLS)
                return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: more than %d values (expected exactly %d)", name,
                            lineno, LTS_INJECT_TABLE_COLS, LTS_INJECT_TABLE_COLS);
            uint64_t v;
            int rc = parse_u64(line + i, j - i, &v);
            int tl = (int)(j - i > 40 ? 40 : j - i);
            if (rc == -1 && line[i] == '-')
                return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: value %d '%.*s' is negative (delays are >= 0 ns)",
                            name, lineno, cols, tl, line + i);
            if (rc == -1)
                return fail(err, errlen, LTS_INJ_EINVAL,
                            "%s:%d: value %d '%.*s' is not a non-negative decimal integer (ns)", name, lineno, cols, tl,
                            line + i);
            if (rc == -2 || v > LTS_INJ_MAX_NS)
                return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: value %d '%.*s' is out of range (0..%llu ns)", name,
                            lineno, cols, tl, line + i, (unsigned long long)LTS_INJ_MAX_NS);
            table[n++] = v;
            i = j;
        }
        if (cols != LTS_INJECT_TABLE_COLS)
            return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: %d values (expected exactly %d)", name, lineno, cols,
                        LTS_INJECT_TABLE_COLS);
        data_lines++;
    }
    if (lineno == 0)
        return fail(err, errlen, LTS_INJ_EINVAL, "%s:1: empty file (first line must be '%s')", name,
                    LTS_INJECT_TABLE_MAGIC);
    if (data_lines != LTS_INJECT_TABLE_LINES)
        return fail(err, errlen, LTS_INJ_EINVAL, "%s:%d: %d data lines at end of file (expected exactly %d)", name,
                    lineno, data_lines, LTS_INJECT_TABLE_LINES);
    return 0;
}

static int read_file(const char *path, char **buf, size_t *len, size_t max, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, LTS_INJ_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b) { fclose(f); return fail(err, errlen, LTS_INJ_EIO, "%s: out of memory", path); }
    for (;;) {
        if (n == cap) {
            if (cap >= max) { free(b); fclose(f); return fail(err, errlen, LTS_INJ_EINVAL, "%s: file larger than %zu bytes", path, max); }
            cap *= 2;
            char *nb = realloc(b, cap);
            if (!nb) { free(b); fclose(f); return fail(err, errlen, LTS_INJ_EIO, "%s: out of memory", path); }
            b = nb;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(b); return fail(err, errlen, LTS_INJ_EIO, "%s: read error", path); }
    *buf = b;
    *len = n;
    return 0;
}

int lts_inject_table_load(const char *path, uint64_t table[LTS_INJECT_TABLE_N], char *err, size_t errlen) {
    char *buf;
    size_t len;
    int rc = read_file(path, &buf, &len, 64u << 20, err, errlen);
    if (rc) return rc;
    rc = lts_inject_table_parse(buf, len, path, table, err, errlen);
    free(buf);
    return rc;
}

static int parse_seed_text(const char *s, size_t n, uint64_t *seed) {
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return parse_u64(s, n, seed);
}

int lts_inject_seed_parse(const char *spec, uint64_t *seed, char *err, size_t errlen) {
    if (!spec || !*spec)
        return fail(err, errlen, LTS_INJ_EINVAL, "LATSCOPE_INJECT_SEED is not set (a non-negative integer or a file holding one)");
    if (parse_seed_text(spec, strlen(spec), seed) == 0) return 0;
    char *buf;
    size_t len;
    char ferr[LTS_INJECT_ERRLEN];
    if (read_file(spec, &buf, &len, 4096, ferr, sizeof ferr) != 0)
        return fail(err, errlen, LTS_INJ_EINVAL,
                    "LATSCOPE_INJECT_SEED='%s' is neither a non-negative integer nor a readable seed file (%s)", spec,
                    ferr);
    int rc = parse_seed_text(buf, len, seed);
    free(buf);
    if (rc)
        return fail(err, errlen, LTS_INJ_EINVAL, "%s:1: seed file must hold one non-negative integer (< 2^64)", spec);
    return 0;
}

uint64_t lts_inject_splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t lts_inject_stream_init(uint64_t seed, int rank, unsigned thread) {
    /* Threads other than the first get their own stream: mix the thread number in through a
     * second splitmix64 so (rank, thread) pairs cannot collide by simple xor. */
    uint64_t s = lts_inject_splitmix64(seed ^ (uint64_t)(uint32_t)rank);
    if (thread) s = lts_inject_splitmix64(s ^ lts_inject_splitmix64((uint64_t)thread));
    return s;
}

int lts_inject_ranks_parse(const char *spec, int nranks, unsigned char *sel, char *err, size_t errlen) {
    memset(sel, 0, (size_t)nranks);
    const char *p = spec;
    if (!p || !*p)
        return fail(err, errlen, LTS_INJ_EINVAL, "LATSCOPE_INJECT_RANKS is empty (expected e.g. '0,3-5')");
    while (*p) {
        const char *q = p;
        while (*q && *q != ',') q++;
        const char *dash = memchr(p, '-', (size_t)(q - p));
        uint64_t a, b;
        int ok;
        if (dash) ok = parse_u64(p, (size_t)(dash - p), &a) == 0 && parse_u64(dash + 1, (size_t)(q - dash - 1), &b) == 0;
        else { ok = parse_u64(p, (size_t)(q - p), &a) == 0; b = a; }
        if (!ok || b < a)
            return fail(err, errlen, LTS_INJ_EINVAL,
                        "LATSCOPE_INJECT_RANKS: '%.*s' is not a rank or a range lo-hi (expected e.g. '0,3-5')",
                        (int)(q - p), p);
        if (b >= (uint64_t)nranks)
            return fail(err, errlen, LTS_INJ_EINVAL, "LATSCOPE_INJECT_RANKS: '%.*s' names a rank >= %d (the job size)",
                        (int)(q - p), p, nranks);
        for (uint64_t r = a; r <= b; r++) sel[r] = 1;
        p = *q ? q + 1 : q;
        if (*q && !*p)
            return fail(err, errlen, LTS_INJ_EINVAL, "LATSCOPE_INJECT_RANKS: trailing ','");
    }
    return 0;
}

int lts_inject_call_index(const char *name) {
    for (int i = 0; i < LTS_INJECT_NCALLS; i++)
        if (strcmp(lts_inject_calls[i].name, name) == 0) return i;
    return -1;
}

int lts_inject_calls_parse(const char *spec, unsigned char *enabled, char *err, size_t errlen) {
    int first = 1;
    memset(enabled, 1, LTS_INJECT_NCALLS);
    if (!spec || !*spec) return 0;
    const char *p = spec;
    while (1) {
        const char *q = p;
        while (*q && *q != ',') q++;
        char tok[64];
        size_t n = (size_t)(q - p);
        int neg = 0;
        if (n && *p == '-') { neg = 1; p++; n--; }
        if (n == 0 || n >= sizeof tok) {
            char valid[1200];
            size_t off = (size_t)snprintf(valid, sizeof valid, "p2p, coll, all");
            for (int i = 0; i < LTS_INJECT_NCALLS && off < sizeof valid; i++)
                off += (size_t)snprintf(valid + off, sizeof valid - off, ", %s", lts_inject_calls[i].name);
            return fail(err, errlen, LTS_INJ_EINVAL, "LATSCOPE_INJECT_CALLS: empty or overlong name in '%s' (valid: %s)",
                        spec, valid);
        }
        memcpy(tok, p, n);
        tok[n] = '\0';
        if (first) {
            if (!neg) memset(enabled, 0, LTS_INJECT_NCALLS);
            first = 0;
        }
        int group = strcmp(tok, "p2p") == 0 ? LTS_INJ_P2P : strcmp(tok, "coll") == 0 ? LTS_INJ_COLL
                  : strcmp(tok, "all") == 0 ? (LTS_INJ_P2P | LTS_INJ_COLL) : 0;
        if (group) {
            for (int i = 0; i < LTS_INJECT_NCALLS; i++)
                if (lts_inject_calls[i].group & group) enabled[i] = (unsigned char)!neg;
        } else {
            int i = lts_inject_call_index(tok);
            if (i < 0) {
                char valid[1200];
                size_t off = (size_t)snprintf(valid, sizeof valid, "p2p, coll, all");
                for (int k = 0; k < LTS_INJECT_NCALLS && off < sizeof valid; k++)
                    off += (size_t)snprintf(valid + off, sizeof valid - off, ", %s", lts_inject_calls[k].name);
                return fail(err, errlen, LTS_INJ_EINVAL, "LATSCOPE_INJECT_CALLS: unknown call '%s' (valid: %s)", tok,
                            valid);
            }
            enabled[i] = (unsigned char)!neg;
        }
        if (!*q) break;
        p = q + 1;
    }
    return 0;
}
