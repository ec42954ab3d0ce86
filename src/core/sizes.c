#include "latscope/sizes.h"
#include "latscope/errors.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lts_parse_size(const char *s, size_t *out) {
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p)) return LTS_EINVAL;    /* also rejects '-' */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno == ERANGE) return LTS_ERANGE;
    unsigned long long mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ULL << 10; end++; break;
    case 'm': case 'M': mul = 1ULL << 20; end++; break;
    case 'g': case 'G': mul = 1ULL << 30; end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return LTS_EINVAL;
    if (v > LTS_SIZE_MAX_BYTES / mul) return LTS_ERANGE;
    v *= mul;
    if (v > LTS_SIZE_MAX_BYTES) return LTS_ERANGE;
    *out = (size_t)v;
    return LTS_OK;
}

static int push(size_t **a, size_t *n, size_t *cap, size_t v) {
    if (*n >= LTS_SIZES_MAX_COUNT) return LTS_ERANGE;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        size_t *b = realloc(*a, nc * sizeof *b);
        if (!b) return LTS_ENOMEM;
        *a = b; *cap = nc;
    }
    (*a)[(*n)++] = v;
    return LTS_OK;
}

#define LTS_SIZES_MAX_STEPS (10 * LTS_SIZES_MAX_COUNT)

#define ALLOWED "sizes are non-negative byte counts up to 1G with optional K/M/G suffix; " \
                "a list \"0,8,1K\", a geometric range \"1:4M:x2\" or an arithmetic range \"0:100K:+1K\""

static int size_err(int rc, const char *item, char *msg, size_t len) {
    if (rc == LTS_ERANGE)
        snprintf(msg, len, "size '%s' is too large: at most 1G (1073741824 bytes) per message", item);
    else
        snprintf(msg, len, "size '%s' is not valid: " ALLOWED, item);
    return rc;
}

int lts_parse_sizes(const char *spec, size_t **out, size_t *count, char *msg, size_t msglen) {
    size_t *a = NULL, n = 0, cap = 0;
    int rc = LTS_OK;
    if (!spec || !*spec) { snprintf(msg, msglen, "empty size list: " ALLOWED); return LTS_EINVAL; }
    char *copy = strdup(spec);
    if (!copy) return LTS_ENOMEM;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(item, ':');
        if (!c1) {
            size_t v;
            if ((rc = lts_parse_size(item, &v))) { size_err(rc, item, msg, msglen); goto fail; }
            if ((rc = push(&a, &n, &cap, v))) goto count_fail;
            continue;
        }
        char *c2 = strchr(c1 + 1, ':');
        if (!c2 || strchr(c2 + 1, ':')) {
            rc = LTS_EINVAL;
            snprintf(msg, msglen, "size range '%s' is not valid: a range is FROM:TO:xFACTOR or FROM:TO:+STEP", item);
            goto fail;
        }
        char full[256];
        snprintf(full, sizeof full, "%s", item);
        *c1 = '\0'; *c2 = '\0';
        size_t lo, hi;
        if ((rc = lts_parse_size(item, &lo))) { size_err(rc, item, msg, msglen); goto fail; }
        if ((rc = lts_parse_size(c1 + 1, &hi))) { size_err(rc, c1 + 1, msg, msglen); goto fail; }
        if (hi < lo) {
            rc = LTS_EINVAL;
            snprintf(msg, msglen, "size range '%s': end %zu is below start %zu", full, hi, lo);
            goto fail;
        }
        const char *st = c2 + 1;
        if (*st == 'x' || *st == '*') {
            char *end;
            errno = 0;
            double f = strtod(st + 1, &end);
            if (*end || errno || !(f > 1.0) || f > 1e6) {
                rc = LTS_EINVAL;
                snprintf(msg, msglen, "size range '%s': factor '%s' must be a number > 1", full, st + 1);
                goto fail;
            }
            if (lo == 0) {
                rc = LTS_EINVAL;
                snprintf(msg, msglen, "size range '%s': a geometric range cannot start at 0 (list 0 separately: \"0,1:%s:%s\")", full, c1 + 1, st);
                goto fail;
            }
            double v = (double)lo;
            size_t last = 0, steps = 0;
            int first = 1;
            while (v <= (double)hi * (1 + 1e-12)) {
                /* A factor barely above 1 repeats each size for many steps before the next
                 * (1:1G:x1.0000000000000002 would need ~1e17 of them): bound the steps, not
                 * only the sizes kept. */
                if (++steps > LTS_SIZES_MAX_STEPS) {
                    rc = LTS_EINVAL;
                    snprintf(msg, msglen, "size range '%s': factor '%s' is too close to 1 (more than %d steps "
                             "from %zu to %zu); for every size use an arithmetic range \"%zu:%zu:+1\"", full, st + 1,
                             LTS_SIZES_MAX_STEPS, lo, hi, lo, hi);
                    goto fail;
                }
                size_t s = (size_t)(v + 0.5);
                if (first || s != last) {
                    if ((rc = push(&a, &n, &cap, s))) goto count_fail;
                }
                last = s; first = 0;
                v *= f;
            }
        } else if (*st == '+') {
            size_t step;
            if ((rc = lts_parse_size(st + 1, &step)) || step == 0) {
                rc = LTS_EINVAL;
                snprintf(msg, msglen, "size range '%s': step '%s' must be a positive size", full, st + 1);
                goto fail;
            }
            for (size_t v = lo; v <= hi; v += step)
                if ((rc = push(&a, &n, &cap, v))) goto count_fail;
        } else {
            rc = LTS_EINVAL;
            snprintf(msg, msglen, "size range '%s': step '%s' must be xFACTOR (geometric) or +STEP (arithmetic)", full, st);
            goto fail;
        }
    }
    if (n == 0) { rc = LTS_EINVAL; snprintf(msg, msglen, "size list '%s' has no sizes: " ALLOWED, spec); goto fail; }
    free(copy);
    *out = a;
    *count = n;
    return LTS_OK;
count_fail:
    if (rc == LTS_ERANGE)
        snprintf(msg, msglen, "size list '%s' has more than %d sizes", spec, LTS_SIZES_MAX_COUNT);
fail:
    free(copy);
    free(a);
    return rc ? rc : LTS_EINVAL;
}

int lts_parse_duration(const char *s, double *seconds) {
    if (!s) return LTS_EINVAL;
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p) && *p != '.') return LTS_EINVAL;   /* also rejects '-' */
    if (strpbrk(p, "xXpP")) return LTS_EINVAL;   /* decimal only: strtod would read 0x10 as 16 s */
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (errno || end == p || !isfinite(v)) return LTS_EINVAL;
    double mul = 1.0;
    if (!strcmp(end, "ns")) mul = 1e-9;
    else if (!strcmp(end, "us")) mul = 1e-6;
    else if (!strcmp(end, "ms")) mul = 1e-3;
    else if (!strcmp(end, "s") || !*end) mul = 1.0;
    else return LTS_EINVAL;
    v *= mul;
    if (v > 3600.0) return LTS_ERANGE;
    *seconds = v;
    return LTS_OK;
}
