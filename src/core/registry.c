#include "latscope/registry.h"
#include "latscope/errors.h"
#include <stdio.h>
#include <string.h>

static size_t name_len(const char *s) {
    const char *colon = strchr(s, ':');
    return colon ? (size_t)(colon - s) : strlen(s);
}

static int find_n(const lts_registry_t *r, const char *name, size_t n) {
    for (size_t i = 0; i < r->count; i++) {
        const char *rn = lts_reg_row(r, i)->name;
        if (strlen(rn) == n && strncmp(rn, name, n) == 0) return (int)i;
    }
    return LTS_ENOTFOUND;
}

int lts_reg_find(const lts_registry_t *r, const char *name) {
    if (!name) return LTS_ENOTFOUND;
    return find_n(r, name, name_len(name));
}

void lts_reg_names(const lts_registry_t *r, char *buf, size_t len) {
    size_t used = 0;
    if (len == 0) return;
    buf[0] = '\0';
    for (size_t i = 0; i < r->count && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", lts_reg_row(r, i)->name);
        if (w < 0) break;
        used += (size_t)w;
    }
}

static uint64_t all_mask(const lts_registry_t *r) {
    uint64_t m = 0;
    for (size_t i = 0; i < r->count; i++)
        if (strncmp(lts_reg_row(r, i)->name, "null", 4) != 0) m |= (uint64_t)1 << i;
    return m;
}

int lts_reg_select(const lts_registry_t *r, const char *spec, uint64_t *mask, char *bad, size_t badlen) {
    uint64_t m = 0;
    int any_include = 0;
    const char *p = spec;
    if (!spec || !*spec) {
        if (bad && badlen) snprintf(bad, badlen, "(empty)");
        return LTS_EINVAL;
    }
    /* first pass: does the list include anything positively? */
    for (const char *q = spec; *q;) {
        if (*q != '-' && *q != ',') any_include = 1;
        const char *c = strchr(q, ',');
        if (!c) break;
        q = c + 1;
    }
    if (!any_include) m = all_mask(r);
    while (*p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        int neg = 0;
        if (n && *p == '-') { neg = 1; p++; n--; }
        size_t nn = n;
        for (size_t k = 0; k < n; k++) if (p[k] == ':') { nn = k; break; }
        if (nn == 0) {
            if (bad && badlen) snprintf(bad, badlen, "(empty name)");
            return LTS_EINVAL;
        }
        if (nn == 3 && strncmp(p, "all", 3) == 0) {
            m = neg ? 0 : (m | all_mask(r));
        } else {
            int idx = find_n(r, p, nn);
            if (idx < 0) {
                if (bad && badlen) snprintf(bad, badlen, "%.*s", (int)nn, p);
                return LTS_ENOTFOUND;
            }
            if (neg) m &= ~((uint64_t)1 << idx);
            else m |= (uint64_t)1 << idx;
        }
        if (!c) break;
        p = c + 1;
    }
    *mask = m;
    return LTS_OK;
}
