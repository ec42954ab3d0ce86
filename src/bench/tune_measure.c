/* Measuring a decision table (include/latscope/tune.h, lts_tune): every candidate at every size
 * through the one collective driver (lts_coll_run), then the pure decision of
 * src/algos/tune_table.c (lts_tune_decide_obs) on every rank. MPIBlib's Opt_Scatter (seed 001 §4)
 * fills T[j][i] with medians; here each cell also keeps what eligibility needs (tune.h). */
#include "latscope/tune.h"
#include "latscope/errors.h"
#include "latscope/stats.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct collect {
    const lts_coll_alg_t *const *cand;
    size_t ncand;
    const size_t *sizes;
    size_t nsizes;
    lts_tune_obs_t *obs;
    const lts_rep_policy_t *policy;
    const lts_tune_opts_t *opts;
} collect_t;

/* lts_point_cb on rank 0: keep what selection needs of the point (the median MPIBlib's T[j][i]
 * holds, and its CI, precision, stop reason): lts_summarize with the run's confidence and stop
 * rule, exactly as results.c writes the record, so `decide` in Python sees the same numbers. */
static void collect(void *ud, const lts_point_t *pt) {
    collect_t *c = ud;
    size_t a = 0, s = 0;
    while (a < c->ncand && strcmp(c->cand[a]->name, pt->alg)) a++;
    while (s < c->nsizes && c->sizes[s] != pt->bytes) s++;
    if (a < c->ncand && s < c->nsizes) {
        lts_tune_obs_t *o = &c->obs[a * c->nsizes + s];
        lts_summary_t sm;
        if (pt->m->n > 0 && lts_summarize(pt->m->samples, pt->m->n, c->policy->confidence, c->policy->rule, &sm) == 0) {
            o->median_s = sm.median;
            o->ci_lo_s = sm.ci_lo;
            o->ci_hi_s = sm.ci_hi;
            o->rel_err = sm.rel_err;
        }
        o->reps_valid = (long)pt->m->n;
        o->reps_total = pt->m->reps_total;
        o->negative = pt->m->negative;
        o->stop_reason = pt->m->stop_reason;
    }
    if (c->opts && c->opts->on_point) c->opts->on_point(c->opts->ud, pt);
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static const char *timing_name(lts_timing_t t) {
    return (size_t)t < lts_timing_registry.count ? lts_reg_row(&lts_timing_registry, (size_t)t)->name : "unknown";
}

int lts_tune(MPI_Comm comm, lts_coll_op_t op, const char *alg_spec, const size_t *sizes, size_t n,
             const lts_measure_cfg_t *mcfg, lts_tune_table_t **out) {
    return lts_tune_ex(comm, op, alg_spec, sizes, n, mcfg, NULL, out);
}

/* Where and how the points were measured: the table's provenance fields, rank 0's values on
 * every rank (a fixed-size record, broadcast as bytes). */
typedef struct provenance {
    char timer[32], timing[32], mpi_library[256], utc_time[32];
} provenance_t;

static void provenance_here(provenance_t *pv, const lts_measure_cfg_t *mcfg) {
    memset(pv, 0, sizeof *pv);
    snprintf(pv->timer, sizeof pv->timer, "%s", mcfg->timer->desc->name);
    snprintf(pv->timing, sizeof pv->timing, "%s", timing_name(mcfg->timing));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int ll;
    MPI_Get_library_version(lib, &ll);
    lib[strcspn(lib, "\n")] = '\0';
    snprintf(pv->mpi_library, sizeof pv->mpi_library, "%.255s", lib);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(pv->utc_time, sizeof pv->utc_time, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

/* FNV-1a over what dispatch and the saved file depend on: the ranges, their rows, the points. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    for (const unsigned char *b = p; n--; b++) h = (h ^ *b) * 1099511628211ull;
    return h;
}
static uint64_t fingerprint(const lts_tune_table_t *t) {
    uint64_t h = 1469598103934665603ull;
    for (size_t r = 0; t && r < t->nranges; r++) {
        const lts_tune_range_t *R = &t->ranges[r];
        h = fnv(fnv(fnv(h, &R->lo, sizeof R->lo), &R->hi, sizeof R->hi), R->alg->name, strlen(R->alg->name));
        for (size_t p = 0; p < R->npoints; p++)
            h = fnv(fnv(h, &R->points[p].size_bytes, sizeof(size_t)), R->points[p].median_s, t->ncand * sizeof(double));
    }
    return h;
}

int lts_tune_ex(MPI_Comm comm, lts_coll_op_t op, const char *alg_spec, const size_t *sizes, size_t n,
                const lts_measure_cfg_t *mcfg, const lts_tune_opts_t *opts, lts_tune_table_t **out) {
    *out = NULL;
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    /* Argument checks first: every rank is given the same arguments, so all return the same
     * code here without communicating. */
    const lts_registry_t *reg = lts_coll_registry(op);
    int root = opts ? opts->root : 0;
    if (!reg || !mcfg || !mcfg->timer || !mcfg->sync || !sizes || n == 0 || root < 0 || root >= P) return LTS_EINVAL;
    /* the candidates in selection order; parametrised rows ("tree:k=3") become instances */
    const lts_coll_alg_t **cand = NULL;
    size_t ncand = 0;
    int rc = lts_coll_select(op, alg_spec ? alg_spec : "all", &cand, &ncand, NULL, 0);
    if (rc) return rc;
    if (ncand == 0 || ncand > LTS_TUNE_MAX_CANDIDATES) { free(cand); return ncand ? LTS_ERANGE : LTS_EINVAL; }
    size_t *sz = malloc(n * sizeof *sz);
    lts_tune_obs_t *med = malloc(ncand * n * sizeof *med);
    /* a local failure in a collective context: the other ranks would wait forever
     * (docs/architecture.md, errors) */
    if (!sz || !med || ncand * n * sizeof *med > (size_t)0x7fffffff) MPI_Abort(comm, 1);
    memcpy(sz, sizes, n * sizeof *sz);
    qsort(sz, n, sizeof *sz, cmp_size);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (ns == 0 || sz[i] != sz[ns - 1]) sz[ns++] = sz[i];
    for (size_t i = 0; i < ns; i++)
        if (!lts_coll_size_ok(op, sz[i], P) || sz[i] > (size_t)0x7fffffff) { free(sz); free(med); free(cand); return LTS_EINVAL; }
    for (size_t i = 0; i < ncand * ns; i++) med[i] = (lts_tune_obs_t){NAN, NAN, NAN, NAN, 0, 0, 0, 0};

    collect_t col = {cand, ncand, sz, ns, med, &mcfg->policy, opts};
    lts_coll_cfg_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.op = op;
    cfg.algs = cand;
    cfg.nalgs = ncand;
    cfg.root = root;
    cfg.sizes = sz;
    cfg.nsizes = ns;
    cfg.measure = *mcfg;
    cfg.on_point = collect;
    cfg.ud = &col;
    rc = lts_coll_run(comm, &cfg);
    int agreed;
    MPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, comm);

    /* The points arrived on rank 0. Every rank gets them as data (the cells, then where they were
     * measured) and runs the same pure decision on the same bytes, so all hold the identical table
     * and the tuned calls take the same branch everywhere (a rank choosing another algorithm would
     * deadlock); the fingerprint check below makes that agreement explicit. */
    provenance_t pv;
    if (!agreed) {
        if (me == 0) provenance_here(&pv, mcfg);
        MPI_Bcast(med, (int)(ncand * ns * sizeof *med), MPI_BYTE, 0, comm);
        MPI_Bcast(&pv, (int)sizeof pv, MPI_BYTE, 0, comm);
        rc = lts_tune_decide_obs(op, P, cand, ncand, sz, ns, med, mcfg->policy.rel_err, out,
                                 me == 0 && opts ? opts->msg : NULL, opts ? opts->msglen : 0);
        uint64_t h = rc ? 0 : fingerprint(*out), h0 = h;
        MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, comm);
        if (!rc && h != h0) rc = LTS_EMPI;
        MPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, comm);
    }
    free(sz);
    free(med);
    free(cand);
    if (agreed) {
        lts_tune_free(*out);
        *out = NULL;
        return agreed;
    }
    lts_tune_table_t *t = *out;
    memcpy(t->timer, pv.timer, sizeof t->timer);
    memcpy(t->timing, pv.timing, sizeof t->timing);
    memcpy(t->mpi_library, pv.mpi_library, sizeof t->mpi_library);
    memcpy(t->utc_time, pv.utc_time, sizeof t->utc_time);
    return LTS_OK;
}
