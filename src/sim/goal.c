/* GOAL schedules (Hoefler, Siebert & Lumsdaine, "Group Operation Assembly Language", ICPP 2009;
 * the text LogGOPSim's txt2bin and Schedgen read and write), docs/sim.md "GOAL":
 *
 *   num_ranks 2
 *   rank 0 {
 *     l1: send 8b to 1 tag 0          (optional: cpu N nic N, accepted and ignored)
 *     l2: recv 8b from 1 tag 0        (from -1: any source; tag -1: any tag; tag defaults to 0)
 *     l3: calc 100                    (time units, ns by default)
 *     l2 requires l1                  (l2 starts after l1 completes)
 *     l3 irequires l2                 (l3 starts after l2 started)
 *   }
 *
 * Comments: // to the end of the line, and C comments. Labels are local to their rank block and
 * may be used before the line that defines them (resolved at the block's end). Every error names
 * the file, the line and the bad token, and says what was expected. */
#include "sim.h"
#include "latscope/errors.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dep { uint32_t a, b; int ireq, line; char *la, *lb; } dep_t;
typedef struct label { char *name; uint32_t v; } label_t;

typedef struct parser {
    const char *name;
    char *err;
    size_t errlen;
    lts_goal_t *g;
    size_t cap;
    dep_t *deps;
    size_t nd, dcap, block_d0;   /* dependencies; first one of the current block */
    label_t *lab;
    size_t lcap, nlab;           /* the current block's labels (open addressing) */
} parser_t;

static int perr(parser_t *p, int line, const char *fmt, ...) {
    if (p->err && p->errlen) {
        int n = snprintf(p->err, p->errlen, "%s:%d: ", p->name, line);
        if (n < 0) n = 0;
        if ((size_t)n < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return LTS_EINVAL;
}

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static void labels_clear(parser_t *p) {
    for (size_t i = 0; i < p->lcap; i++) { free(p->lab[i].name); p->lab[i].name = NULL; }
    p->nlab = 0;
}

static int label_put(parser_t *p, const char *name, uint32_t v, int line) {
    if (2 * (p->nlab + 1) > p->lcap) {   /* grow, rehash */
        size_t nc = p->lcap ? p->lcap * 2 : 64;
        label_t *nl = calloc(nc, sizeof *nl);
        if (!nl) return LTS_ENOMEM;
        for (size_t i = 0; i < p->lcap; i++)
            if (p->lab[i].name) {
                size_t j = hash(p->lab[i].name) & (nc - 1);
                while (nl[j].name) j = (j + 1) & (nc - 1);
                nl[j] = p->lab[i];
            }
        free(p->lab);
        p->lab = nl;
        p->lcap = nc;
    }
    size_t j = hash(name) & (p->lcap - 1);
    while (p->lab[j].name) {
        if (!strcmp(p->lab[j].name, name)) return perr(p, line, "label '%s' defined twice in this rank", name);
        j = (j + 1) & (p->lcap - 1);
    }
    p->lab[j].name = strdup(name);
    if (!p->lab[j].name) return LTS_ENOMEM;
    p->lab[j].v = v;
    p->nlab++;
    return 0;
}

static long label_get(const parser_t *p, const char *name) {
    if (!p->lcap) return -1;
    size_t j = hash(name) & (p->lcap - 1);
    while (p->lab[j].name) {
        if (!strcmp(p->lab[j].name, name)) return (long)p->lab[j].v;
        j = (j + 1) & (p->lcap - 1);
    }
    return -1;
}

static int grow_vertices(parser_t *p) {
    lts_goal_t *g = p->g;
    if (g->nv < p->cap) return 0;
    size_t nc = p->cap ? p->cap * 2 : 256;
    if (nc >= LTS_GOAL_IREQ) return LTS_ERANGE;
#define GROW(f) do { void *n_ = realloc(g->f, nc * sizeof *g->f); if (!n_) return LTS_ENOMEM; g->f = n_; } while (0)
    GROW(kind); GROW(rank); GROW(peer); GROW(tag); GROW(line); GROW(size); GROW(ndeps);
#undef GROW
    p->cap = nc;
    return 0;
}

/* tokens of one logical line (comments removed) */
#define MAXTOK 16
typedef struct toks { int n; char t[MAXTOK][96]; } toks_t;

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
    if (!*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi || !(isdigit((unsigned char)s[0]) || s[0] == '-')) return -1;
    *out = v;
    return 0;
}

static int is_ident(const char *s) {
    if (!isalpha((unsigned char)s[0])) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* "8b" -> 8 */
static int parse_bytes(const char *s, long long *out) {
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != 'b') return -1;
    char buf[96];
    memcpy(buf, s, n - 1);
    buf[n - 1] = '\0';
    return parse_int(buf, 0, (long long)1 << 50, out);
}

static int op_line(parser_t *p, toks_t *tk, int i, int rank, const char *label, int line) {
    lts_goal_t *g = p->g;
    const char *what = tk->t[i];
    int rc = grow_vertices(p);
    if (rc) return rc == LTS_ERANGE ? perr(p, line, "more than 2^31 operations") : rc;
    size_t v = g->nv;
    long long size = 0, peer = 0, tag = 0, x;
    int kind;
    if (!strcmp(what, "calc")) {
        kind = LTS_GOAL_CALC;
        if (i + 1 >= tk->n || parse_int(tk->t[i + 1], 0, (long long)1 << 50, &size))
            return perr(p, line, "calc needs a non-negative integer time, not '%s'", i + 1 < tk->n ? tk->t[i + 1] : "");
        i += 2;
    } else if (!strcmp(what, "send") || !strcmp(what, "recv")) {
        int send = what[0] == 's';
        kind = send ? LTS_GOAL_SEND : LTS_GOAL_RECV;
        if (i + 1 >= tk->n || parse_bytes(tk->t[i + 1], &size))
            return perr(p, line, "%s needs a size in bytes like '8b', not '%s'", what, i + 1 < tk->n ? tk->t[i + 1] : "");
        const char *dir = send ? "to" : "from";
        if (i + 2 >= tk->n || strcmp(tk->t[i + 2], dir))
            return perr(p, line, "expected '%s' after '%s %s', not '%s'", dir, what, tk->t[i + 1],
                        i + 2 < tk->n ? tk->t[i + 2] : "");
        if (i + 3 >= tk->n || parse_int(tk->t[i + 3], send ? 0 : -1, (long long)g->P - 1, &peer))
            return perr(p, line, "%s %s rank '%s': valid: %s0..%d", what, dir, i + 3 < tk->n ? tk->t[i + 3] : "",
                        send ? "" : "-1 (any source) or ", g->P - 1);
        i += 4;
        if (i < tk->n && !strcmp(tk->t[i], "tag")) {
            if (i + 1 >= tk->n || parse_int(tk->t[i + 1], send ? 0 : -1, INT32_MAX, &tag))
                return perr(p, line, "tag '%s': valid: %san integer 0..%d", i + 1 < tk->n ? tk->t[i + 1] : "",
                            send ? "" : "-1 (any tag) or ", INT32_MAX);
            i += 2;
        }
    } else {
        return perr(p, line, "unknown operation '%s' (expected send, recv, calc, or 'A requires B')", what);
    }
    while (i < tk->n) {   /* cpu N / nic N: LogGOPSim's resource numbers; one CPU and NIC per rank here */
        if ((strcmp(tk->t[i], "cpu") && strcmp(tk->t[i], "nic")) || i + 1 >= tk->n ||
            parse_int(tk->t[i + 1], 0, 255, &x))
            return perr(p, line, "unexpected '%s' at the end of '%s' (allowed: tag N, cpu N, nic N)", tk->t[i], what);
        i += 2;
    }
    g->kind[v] = (uint8_t)kind;
    g->rank[v] = rank;
    g->peer[v] = (int32_t)peer;
    g->tag[v] = (int32_t)tag;
    g->size[v] = size;
    g->line[v] = line;
    g->ndeps[v] = 0;
    g->nv++;
    if (label) return label_put(p, label, (uint32_t)v, line);
    return 0;
}

static int resolve_block(parser_t *p) {
    for (size_t i = p->block_d0; i < p->nd; i++) {
        dep_t *d = &p->deps[i];
        long a = label_get(p, d->la), b = label_get(p, d->lb);
        if (a < 0 || b < 0)
            return perr(p, d->line, "'%s %s %s': label '%s' is not defined in this rank", d->la,
                        d->ireq ? "irequires" : "requires", d->lb, a < 0 ? d->la : d->lb);
        if (a == b) return perr(p, d->line, "'%s' depends on itself", d->la);
        d->a = (uint32_t)a;
        d->b = (uint32_t)b;
        free(d->la);
        free(d->lb);
        d->la = d->lb = NULL;
    }
    p->block_d0 = p->nd;
    labels_clear(p);
    return 0;
}

/* Split text into lines with comments removed, tokenise, and feed the grammar. */
static int parse(parser_t *p, const char *text, size_t len) {
    lts_goal_t *g = p->g;
    int line = 0, in_block = 0, rank = -1, in_comment = 0, rc;
    int have_num = 0;
    unsigned char *seen = NULL;
    size_t pos = 0;
    char buf[1024];
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        line++;
        /* strip comments into buf */
        size_t n = 0;
        for (size_t k = pos; k < end; k++) {
            char c = text[k];
            if (in_comment) {
                if (c == '*' && k + 1 < end && text[k + 1] == '/') { in_comment = 0; k++; }
                continue;
            }
            if (c == '/' && k + 1 < end && text[k + 1] == '/') break;
            if (c == '/' && k + 1 < end && text[k + 1] == '*') { in_comment = 1; k++; continue; }
            if (c == '\0') { free(seen); return perr(p, line, "NUL byte (not a GOAL text file)"); }
            if (n + 4 >= sizeof buf) { free(seen); return perr(p, line, "line longer than %zu characters", sizeof buf - 4); }
            /* braces and colons are tokens of their own */
            if (c == '{' || c == '}' || c == ':') { buf[n++] = ' '; buf[n++] = c; buf[n++] = ' '; }
            else buf[n++] = c == '\t' || c == '\r' ? ' ' : c;
        }
        buf[n] = '\0';
        pos = end + 1;
        toks_t tk = {0};
        for (char *s = strtok(buf, " "); s; s = strtok(NULL, " ")) {
            if (tk.n == MAXTOK) { free(seen); return perr(p, line, "too many words (at most %d)", MAXTOK); }
            if (strlen(s) >= sizeof tk.t[0]) { free(seen); return perr(p, line, "word '%.40s...' too long", s); }
            strcpy(tk.t[tk.n++], s);
        }
        if (!tk.n) continue;
        long long x;
        if (!strcmp(tk.t[0], "num_ranks")) {
            if (have_num) { free(seen); return perr(p, line, "num_ranks given twice"); }
            if (tk.n != 2 || parse_int(tk.t[1], 1, (1 << 30), &x)) {
                free(seen);
                return perr(p, line, "num_ranks needs one integer 1..%d, not '%s'", 1 << 30, tk.n > 1 ? tk.t[1] : "");
            }
            g->P = (int)x;
            have_num = 1;
            seen = calloc((size_t)g->P, 1);
            if (!seen) return LTS_ENOMEM;
            continue;
        }
        if (!strcmp(tk.t[0], "rank")) {
            if (!have_num) { free(seen); return perr(p, line, "'rank' before 'num_ranks N'"); }
            if (in_block) { free(seen); return perr(p, line, "'rank' inside rank %d's block (missing '}')", rank); }
            if (tk.n < 3 || parse_int(tk.t[1], 0, g->P - 1, &x) || strcmp(tk.t[2], "{") || tk.n > 3) {
                free(seen);
                return perr(p, line, "expected 'rank R {' with R in 0..%d, not '%s %s'", g->P - 1,
                            tk.n > 1 ? tk.t[1] : "", tk.n > 2 ? tk.t[2] : "");
            }
            rank = (int)x;
            if (seen[rank]) { free(seen); return perr(p, line, "rank %d has two blocks", rank); }
            seen[rank] = 1;
            in_block = 1;
            continue;
        }
        if (!strcmp(tk.t[0], "}")) {
            if (!in_block || tk.n > 1) { free(seen); return perr(p, line, "unexpected '}'%s", in_block ? " (one per line)" : " (no open rank block)"); }
            if ((rc = resolve_block(p))) { free(seen); return rc; }
            in_block = 0;
            continue;
        }
        if (!in_block) { free(seen); return perr(p, line, "'%s' outside a 'rank R { ... }' block", tk.t[0]); }
        if (tk.n >= 3 && (!strcmp(tk.t[1], "requires") || !strcmp(tk.t[1], "irequires"))) {
            if (tk.n != 3 || !is_ident(tk.t[0]) || !is_ident(tk.t[2])) {
                free(seen);
                return perr(p, line, "expected 'LABEL %s LABEL'", tk.t[1]);
            }
            if (p->nd == p->dcap) {
                size_t nc = p->dcap ? p->dcap * 2 : 256;
                dep_t *nd = realloc(p->deps, nc * sizeof *nd);
                if (!nd) { free(seen); return LTS_ENOMEM; }
                p->deps = nd;
                p->dcap = nc;
            }
            dep_t *d = &p->deps[p->nd++];
            memset(d, 0, sizeof *d);
            d->ireq = tk.t[1][0] == 'i';
            d->line = line;
            d->la = strdup(tk.t[0]);
            d->lb = strdup(tk.t[2]);
            if (!d->la || !d->lb) { free(seen); return LTS_ENOMEM; }
            continue;
        }
        const char *label = NULL;
        int i = 0;
        if (tk.n >= 2 && !strcmp(tk.t[1], ":")) {
            if (!is_ident(tk.t[0])) { free(seen); return perr(p, line, "label '%s': letters, digits, '_' (a letter first)", tk.t[0]); }
            label = tk.t[0];
            i = 2;
            if (i >= tk.n) { free(seen); return perr(p, line, "label '%s' with no operation", label); }
        }
        if ((rc = op_line(p, &tk, i, rank, label, line))) { free(seen); return rc; }
    }
    free(seen);
    if (in_comment) return perr(p, line, "unterminated /* comment");
    if (in_block) return perr(p, line, "end of file inside rank %d's block (missing '}')", rank);
    if (!have_num) return perr(p, line ? line : 1, "no 'num_ranks N' line (not a GOAL schedule)");
    return 0;
}

static int build_csr(parser_t *p) {
    lts_goal_t *g = p->g;
    g->dep_off = calloc(g->nv + 1, sizeof *g->dep_off);
    g->dep_list = malloc((p->nd ? p->nd : 1) * sizeof *g->dep_list);
    if (!g->dep_off || !g->dep_list) return LTS_ENOMEM;
    for (size_t i = 0; i < p->nd; i++) g->dep_off[p->deps[i].b + 1]++;
    for (size_t v = 0; v < g->nv; v++) g->dep_off[v + 1] += g->dep_off[v];
    size_t *fill = malloc((g->nv + 1) * sizeof *fill);
    if (!fill) return LTS_ENOMEM;
    memcpy(fill, g->dep_off, (g->nv + 1) * sizeof *fill);
    for (size_t i = 0; i < p->nd; i++) {   /* b's dependents, in file order */
        const dep_t *d = &p->deps[i];
        g->dep_list[fill[d->b]++] = d->a | (d->ireq ? LTS_GOAL_IREQ : 0);
        g->ndeps[d->a]++;
    }
    free(fill);
    return 0;
}

int lts_goal_parse(const char *text, size_t len, const char *name, lts_goal_t **out, char *err, size_t errlen) {
    parser_t p;
    memset(&p, 0, sizeof p);
    p.name = name ? name : "<goal>";
    p.err = err;
    p.errlen = errlen;
    p.g = calloc(1, sizeof *p.g);
    if (!p.g) return LTS_ENOMEM;
    p.g->name = strdup(p.name);
    int rc = p.g->name ? parse(&p, text, len) : LTS_ENOMEM;
    if (!rc) rc = build_csr(&p);
    for (size_t i = 0; i < p.nd; i++) { free(p.deps[i].la); free(p.deps[i].lb); }
    free(p.deps);
    labels_clear(&p);
    free(p.lab);
    if (rc == LTS_ENOMEM && err && errlen) snprintf(err, errlen, "%s: out of memory", p.name);
    if (rc) { lts_goal_free(p.g); return rc; }
    *out = p.g;
    return 0;
}

int lts_goal_load(const char *path, lts_goal_t **out, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return LTS_EIO;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) { fclose(f); snprintf(err, errlen, "%s: out of memory", path); return LTS_ENOMEM; }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        cap *= 2;
        char *nb = realloc(b, cap);
        if (!nb) free(b);
        b = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(b); snprintf(err, errlen, "%s: read error", path); return LTS_EIO; }
    int rc = lts_goal_parse(b, n, path, out, err, errlen);
    free(b);
    return rc;
}

int lts_goal_nranks(const lts_goal_t *g) { return g->P; }
size_t lts_goal_nops(const lts_goal_t *g) { return g->nv; }

void lts_goal_free(lts_goal_t *g) {
    if (!g) return;
    free((void *)g->name);
    free(g->kind); free(g->rank); free(g->peer); free(g->tag); free(g->line); free(g->size); free(g->ndeps);
    free(g->dep_off); free(g->dep_list);
    free(g);
}
