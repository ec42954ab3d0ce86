/* The collective-algorithm registry: the built-in table (native.c) split into one view per
 * operation, plus rows registered at run time. Views are what lts_reg_select works on. */
#include "internal.h"
#include "latscope/errors.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

extern const lts_coll_alg_t lts_coll_builtin[];
extern const size_t lts_coll_builtin_count;

#define OP_ROW(id, help) {#id, help},
static const lts_reg_head_t op_rows[] = {LTS_COLL_OP_LIST(OP_ROW)};
_Static_assert(sizeof(op_rows) / sizeof(op_rows[0]) == LTS_COLL_NOPS, "one name per collective operation");
const lts_registry_t lts_coll_op_names = LTS_REGISTRY("collective operation", op_rows);

static lts_coll_alg_t rows[LTS_COLL_NOPS][LTS_REGISTRY_MAX];
static lts_registry_t views[LTS_COLL_NOPS];
static int ready;

static void init(void) {
    if (ready) return;
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        views[op].kind = "algorithm";
        views[op].rows = rows[op];
        views[op].stride = sizeof(lts_coll_alg_t);
        views[op].count = 0;
    }
    for (size_t i = 0; i < lts_coll_builtin_count; i++) {
        lts_coll_op_t op = lts_coll_builtin[i].op;
        rows[op][views[op].count++] = lts_coll_builtin[i];
    }
    ready = 1;
}

const lts_registry_t *lts_coll_registry(lts_coll_op_t op) {
    if ((int)op < 0 || op >= LTS_COLL_NOPS) return NULL;
    init();
    return &views[op];
}

const lts_coll_alg_t *lts_coll_find(lts_coll_op_t op, const char *name) {
    const lts_registry_t *r = lts_coll_registry(op);
    int i = r ? lts_reg_find(r, name) : LTS_ENOTFOUND;
    return i < 0 ? NULL : &rows[op][i];
}

int lts_coll_op_find(const char *name) { return lts_reg_find(&lts_coll_op_names, name); }

int lts_coll_register(lts_coll_op_t op, const char *name, const char *help, lts_coll_fn_t fn) {
    return lts_coll_register_flags(op, name, help, fn, 0);
}

int lts_coll_register_flags(lts_coll_op_t op, const char *name, const char *help, lts_coll_fn_t fn, unsigned flags) {
    const lts_registry_t *r = lts_coll_registry(op);
    if (!r || !name || !*name || !fn.barrier || !strcmp(name, "all")) return LTS_EINVAL;
    /* the selection grammar's ',' '-' ':' must not occur in names */
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '.'))
            return LTS_EINVAL;
    if (lts_reg_find(r, name) >= 0) return LTS_EINVAL;
    if (r->count >= LTS_REGISTRY_MAX) return LTS_ERANGE;
    char *nm = strdup(name), *hp = strdup(help ? help : "user-registered implementation");
    if (!nm || !hp) { free(nm); free(hp); return LTS_ENOMEM; }
    rows[op][views[op].count++] = (lts_coll_alg_t){nm, hp, op, fn, .flags = flags};
    return LTS_OK;
}

/* ---- selection with parameters ("tree:k=3") ----------------------------------------------
 * lts_reg_select works on bit masks, one bit per row, and ignores ":params": it cannot hold two
 * instances of one row. Here each item is parsed, parametrised rows are instantiated (one pool
 * row per distinct canonical name, shared by later selections), and the rows are returned in
 * selection order. */

#define POOL_MAX 256
static lts_coll_alg_t pool[POOL_MAX];
static char pool_names[POOL_MAX][48];
static size_t pool_n;

/* The instance of row `base` with arity k (created on first use). */
static const lts_coll_alg_t *instance(const lts_coll_alg_t *base, int k) {
    char nm[48];
    snprintf(nm, sizeof nm, "%s:k=%d", base->name, k);
    for (size_t i = 0; i < pool_n; i++)
        if (pool[i].op == base->op && !strcmp(pool_names[i], nm)) return &pool[i];
    if (pool_n == POOL_MAX) return NULL;
    memcpy(pool_names[pool_n], nm, sizeof nm);
    pool[pool_n] = *base;
    pool[pool_n].name = pool_names[pool_n];
    pool[pool_n].k = k;
    return &pool[pool_n++];
}

/* Parse "k=V[:...]" after a name; only k is known. 0, or LTS_EINVAL with bad filled in. */
static int parse_params(const char *item, size_t nn, size_t n, const lts_coll_alg_t *row, int *k, char *bad,
                        size_t badlen) {
    const char *p = item + nn;   /* at ':' or the end */
    const char *end = item + n;
    *k = row->k;
    while (p < end) {
        p++;   /* skip ':' */
        const char *q = p;
        while (q < end && *q != ':') q++;
        if (!row->barrier_k) {
            snprintf(bad, badlen, "'%.*s': %s takes no parameters", (int)n, item, row->name);
            return LTS_EINVAL;
        }
        if (q - p < 2 || p[0] != 'k' || p[1] != '=') {
            snprintf(bad, badlen, "'%.*s': unknown parameter '%.*s'; %s takes k=K (tree arity, integer 2..%d)", (int)n,
                     item, (int)(q - p), p, row->name, LTS_BARRIER_K_MAX);
            return LTS_EINVAL;
        }
        long v = 0;
        const char *d = p + 2;
        int digits = 0;
        for (; d < q && *d >= '0' && *d <= '9' && v <= LTS_BARRIER_K_MAX; d++, digits++) v = v * 10 + (*d - '0');
        if (!digits || d != q || v < 2 || v > LTS_BARRIER_K_MAX) {
            snprintf(bad, badlen, "'%.*s': k must be an integer from 2 to %d (the tree arity)", (int)n, item,
                     LTS_BARRIER_K_MAX);
            return LTS_EINVAL;
        }
        *k = (int)v;
        p = q;
    }
    return LTS_OK;
}

int lts_coll_select(lts_coll_op_t op, const char *spec, const lts_coll_alg_t ***rows_out, size_t *n_out, char *bad,
                    size_t badlen) {
    char dummy[8];
    if (!bad || !badlen) { bad = dummy; badlen = sizeof dummy; }
    bad[0] = '\0';
    const lts_registry_t *r = lts_coll_registry(op);
    if (!r || !rows_out || !n_out) return LTS_EINVAL;
    if (!spec || !*spec) { snprintf(bad, badlen, "(empty)"); return LTS_EINVAL; }
    size_t cap = r->count + 64, n = 0;
    const lts_coll_alg_t **sel = malloc(cap * sizeof *sel);
    if (!sel) return LTS_ENOMEM;
    int any_include = 0, rc = LTS_OK;
    for (const char *q = spec; *q;) {
        if (*q != '-' && *q != ',') any_include = 1;
        const char *c = strchr(q, ',');
        if (!c) break;
        q = c + 1;
    }
    /* add row i (instantiated at its default k when parametrised) unless already there */
#define ADD(row_)                                                                            \
    do {                                                                                     \
        const lts_coll_alg_t *a_ = (row_);                                                   \
        size_t j_ = 0;                                                                       \
        while (j_ < n && sel[j_] != a_) j_++;                                                \
        if (j_ == n) {                                                                       \
            if (n == cap) {                                                                  \
                const lts_coll_alg_t **g_ = realloc(sel, 2 * cap * sizeof *sel);             \
                if (!g_) { rc = LTS_ENOMEM; goto out; }                                      \
                sel = g_;                                                                    \
                cap *= 2;                                                                    \
            }                                                                                \
            sel[n++] = a_;                                                                   \
        }                                                                                    \
    } while (0)
#define ROW(i_) (&rows[op][(i_)])
#define INST(row_, k_) (row_)->barrier_k ? instance((row_), (k_)) : (row_)
    if (!any_include)
        for (size_t i = 0; i < r->count; i++)
            if (strncmp(ROW(i)->name, "null", 4)) {
                const lts_coll_alg_t *a = INST(ROW(i), ROW(i)->k);
                if (!a) { rc = LTS_ERANGE; goto out; }
                ADD(a);
            }
    for (const char *p = spec; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        int neg = 0;
        if (len && *p == '-') { neg = 1; p++; len--; }
        size_t nn = 0;
        while (nn < len && p[nn] != ':') nn++;
        if (nn == 0) {
            snprintf(bad, badlen, "(empty name)");
            rc = LTS_EINVAL;
            goto out;
        }
        if (nn == 3 && !strncmp(p, "all", 3) && nn == len) {
            if (neg) n = 0;
            else
                for (size_t i = 0; i < r->count; i++)
                    if (strncmp(ROW(i)->name, "null", 4)) {
                        const lts_coll_alg_t *a = INST(ROW(i), ROW(i)->k);
                        if (!a) { rc = LTS_ERANGE; goto out; }
                        ADD(a);
                    }
        } else {
            int idx = -1;
            for (size_t i = 0; i < r->count && idx < 0; i++)
                if (strlen(ROW(i)->name) == nn && !strncmp(ROW(i)->name, p, nn)) idx = (int)i;
            if (idx < 0) {
                snprintf(bad, badlen, "%.*s", (int)nn, p);
                rc = LTS_ENOTFOUND;
                goto out;
            }
            const lts_coll_alg_t *row = ROW(idx);
            int k;
            if ((rc = parse_params(p, nn, len, row, &k, bad, badlen))) goto out;
            if (neg && nn == len) {
                /* "-tree": every instance of the row */
                size_t w = 0;
                for (size_t j = 0; j < n; j++) {
                    const char *sn = sel[j]->name;
                    int same = sel[j] == row || (row->barrier_k && strlen(sn) > nn && !strncmp(sn, row->name, nn) &&
                                                 sn[nn] == ':');
                    if (!same) sel[w++] = sel[j];
                }
                n = w;
            } else {
                const lts_coll_alg_t *a = INST(row, k);
                if (!a) {
                    snprintf(bad, badlen, "more than %d distinct parametrised algorithms", POOL_MAX);
                    rc = LTS_ERANGE;
                    goto out;
                }
                if (neg) {
                    size_t w = 0;
                    for (size_t j = 0; j < n; j++)
                        if (sel[j] != a) sel[w++] = sel[j];
                    n = w;
                } else {
                    ADD(a);
                }
            }
        }
        if (!c) break;
        p = c + 1;
    }
#undef ADD
#undef ROW
#undef INST
out:
    if (rc) { free(sel); return rc; }
    *rows_out = sel;
    *n_out = n;
    return LTS_OK;
}
