/* OS-noise traces for the simulator (docs/sim.md "Variation", trace-driven noise): a text file of
 * detours (start, duration), repeated cyclically, applied to each rank's CPU from a phase of the
 * rank's own (LogGOPSim's noise model: Hoefler, Schneider & Lumsdaine, "Characterizing the
 * Influence of System Noise on Large-Scale Applications by Simulation", SC10, §3: a detour
 * trace, e.g. from a selfish-detour loop, replayed on every process with a random offset).
 *
 * Format (seconds, one detour a line, `#` to the end of a line a comment):
 *   span 1e-3        optional, first: the trace's length (it repeats every span); default: the
 *                    end of the last detour
 *   0.0001 2.5e-5    a detour: start duration; starts in increasing order, detours not
 *                    overlapping, each ending within the span, and the CPU free part of it */
#include "sim.h"
#include "latscope/errors.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int nfail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return LTS_EINVAL;
}

/* one time in seconds from *p (advanced past it), as ps; -1 when there is none or it is bad */
static int64_t seconds_ps(const char **p) {
    while (**p == ' ' || **p == '\t') (*p)++;
    char *end;
    errno = 0;
    double v = strtod(*p, &end);
    if (end == *p || errno || !isfinite(v) || v < 0 || v > 9.2e6) return -1;
    *p = end;
    return llround(v * 1e12);
}

int lts_sim_noise_parse(const char *text, size_t len, const char *name, lts_sim_noise_t *out, char *err,
                        size_t errlen) {
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    int64_t span = -1, prev_end = 0, busy = 0;
    int line = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n') j++;
        line++;
        char buf[256];
        size_t n = j - i;
        if (n >= sizeof buf) { lts_sim_noise_free(out); return nfail(err, errlen, "%s:%d: line too long", name, line); }
        memcpy(buf, text + i, n);
        buf[n] = '\0';
        i = j + 1;
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        const char *p = buf;
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p) continue;
        if (!strncmp(p, "span", 4) && (p[4] == ' ' || p[4] == '\t')) {
            p += 4;
            if (span >= 0 || out->n) {
                lts_sim_noise_free(out);
                return nfail(err, errlen, "%s:%d: 'span' must come once, before the detours", name, line);
            }
            span = seconds_ps(&p);
            while (*p == ' ' || *p == '\t' || *p == '\r') p++;
            if (span <= 0 || *p)
                return nfail(err, errlen, "%s:%d: expected 'span SECONDS' (> 0, e.g. span 1e-3)", name, line);
            continue;
        }
        int64_t st = seconds_ps(&p), du = st < 0 ? -1 : seconds_ps(&p);
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (st < 0 || du < 0 || *p) {
            lts_sim_noise_free(out);
            return nfail(err, errlen, "%s:%d: expected 'START DURATION' (seconds >= 0, e.g. 1e-4 2.5e-5) or 'span SECONDS'",
                         name, line);
        }
        if (st < prev_end) {
            lts_sim_noise_free(out);
            return nfail(err, errlen, "%s:%d: detour at %.9g s starts before the previous one ends (%.9g s): starts must "
                         "increase, detours not overlap", name, line, (double)st * 1e-12, (double)prev_end * 1e-12);
        }
        if (span >= 0 && st + du > span) {
            lts_sim_noise_free(out);
            return nfail(err, errlen, "%s:%d: detour ends at %.9g s, after the span (%.9g s)", name, line,
                         (double)(st + du) * 1e-12, (double)span * 1e-12);
        }
        prev_end = st + du;
        if (!du) continue;   /* a zero-length detour takes nothing */
        if (out->n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            int64_t *nd = realloc(out->det, nc * 2 * sizeof *nd);
            if (!nd) { lts_sim_noise_free(out); return nfail(err, errlen, "%s: out of memory", name); }
            out->det = nd;
            cap = nc;
        }
        out->det[2 * out->n] = st;
        out->det[2 * out->n + 1] = du;
        out->n++;
        busy += du;
    }
    out->span = span >= 0 ? span : prev_end;
    if (out->n && busy >= out->span) {
        lts_sim_noise_free(out);
        return nfail(err, errlen, "%s: the detours fill the whole span (%.9g s): the CPU would never be free; give a "
                     "longer 'span'", name, (double)out->span * 1e-12);
    }
    return 0;
}

int lts_sim_noise_load(const char *path, lts_sim_noise_t *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return nfail(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            else buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) return nfail(err, errlen, "%s: out of memory", path);
    if (bad) { free(buf); return nfail(err, errlen, "%s: read error", path); }
    int rc = lts_sim_noise_parse(buf, n, path, out, err, errlen);
    free(buf);
    return rc;
}

void lts_sim_noise_free(lts_sim_noise_t *nz) {
    if (nz) {
        free(nz->det);
        nz->det = NULL;
        nz->n = 0;
    }
}
