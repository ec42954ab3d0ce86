/* The one point runner (include/latscope/bench.h, docs/architecture.md): every campaign --
 * point-to-point groups, collectives, application patterns -- says what to measure as jobs; this
 * file measures them, moves each result whole to rank 0 and emits it. One serialiser, so every
 * record kind carries every field of lts_measurement_t. */
#include "latscope/bench.h"
#include "latscope/errors.h"
#include <stdlib.h>
#include <string.h>

#define TAG_POINT 0x4c56

/* A measurement as one array of doubles: the scalars (lts_measurement_pack), the samples, the
 * per-rank statistics (4 per rank), the individual tasks. A failed measurement travels as one
 * double, its (negative) error code, so that rank 0 never waits for a point that will not come. */
static double *flatten(const lts_measurement_t *m, int rc, size_t *len) {
    if (rc) {
        double *b = malloc(sizeof *b);
        if (b) b[0] = rc;
        *len = 1;
        return b;
    }
    size_t nl = m->local ? 4 * (size_t)m->nlocal : 0, nt = m->tasks ? (size_t)m->ntasks : 0;
    *len = LTS_MEASUREMENT_NSCALARS + m->n + nl + nt;
    double *b = malloc(*len * sizeof *b);
    if (!b) return NULL;
    lts_measurement_pack(m, b);
    double *p = b + LTS_MEASUREMENT_NSCALARS;
    if (m->n) memcpy(p, m->samples, m->n * sizeof *p);
    if (nl) memcpy(p + m->n, m->local, nl * sizeof *p);
    if (nt) memcpy(p + m->n + nl, m->tasks, nt * sizeof *p);
    return b;
}

static int inflate(const double *b, size_t len, lts_measurement_t *m) {
    memset(m, 0, sizeof *m);
    if (len == 1) return b[0] < 0 ? (int)b[0] : LTS_EMPI;
    if (len < LTS_MEASUREMENT_NSCALARS) return LTS_EMPI;
    lts_measurement_unpack(b, m);
    size_t nl = 4 * (size_t)m->nlocal, nt = (size_t)m->ntasks;
    if (LTS_MEASUREMENT_NSCALARS + m->n + nl + nt != len) return LTS_EMPI;
    const double *p = b + LTS_MEASUREMENT_NSCALARS;
    m->samples = malloc((m->n ? m->n : 1) * sizeof *m->samples);
    m->local = nl ? malloc(nl * sizeof *m->local) : NULL;
    m->tasks = nt ? malloc(nt * sizeof *m->tasks) : NULL;
    if (!m->samples || (nl && !m->local) || (nt && !m->tasks)) { lts_measurement_free(m); return LTS_ENOMEM; }
    if (m->n) memcpy(m->samples, p, m->n * sizeof *p);
    if (nl) memcpy(m->local, p + m->n, nl * sizeof *p);
    if (nt) memcpy(m->tasks, p + m->n + nl, nt * sizeof *p);
    return LTS_OK;
}

static void emit_point(lts_point_job_t *job, lts_measurement_t *m, lts_point_cb emit, void *ud) {
    job->pt.m = m;
    if (emit) emit(ud, &job->pt);
    job->pt.m = NULL;
}

int lts_point_run(MPI_Comm comm, lts_point_job_t *jobs, size_t njobs, lts_point_cb emit, void *ud) {
    int me, rc = LTS_OK;
    MPI_Comm_rank(comm, &me);
    /* 1. measure the job this rank takes part in; the jobs of one call run side by side */
    lts_measurement_t mine;
    memset(&mine, 0, sizeof mine);
    size_t j_mine = njobs;
    for (size_t j = 0; j < njobs; j++) {
        if (!jobs[j].ctx) continue;
        lts_point_job_t *job = &jobs[j];
        j_mine = j;
        const lts_timing_desc_t *t = lts_timing_row(job->measure.timing);
        lts_measure_fn fn = job->fn ? job->fn : t && t->measure ? t->measure : lts_measure;
        rc = fn(job->op, job->ctx, &job->measure, &mine);
        if (job->settle) rc = job->settle(job, rc);
        break;
    }
    /* 2. each result to rank 0, in the order given; rank 0 emits */
    int lrc = rc;
    for (size_t j = 0; j < njobs; j++) {
        lts_point_job_t *job = &jobs[j];
        if (job->src == 0) {
            if (me == 0 && j == j_mine && rc == LTS_OK) emit_point(job, &mine, emit, ud);
        } else if (me == job->src && j == j_mine) {
            size_t len;
            double *b = flatten(&mine, rc, &len);
            double fail = LTS_ENOMEM;
            if (MPI_Send(b ? b : &fail, b ? (int)len : 1, MPI_DOUBLE, 0, TAG_POINT, comm)) lrc = LTS_EMPI;
            if (!b) lrc = LTS_ENOMEM;
            free(b);
        } else if (me == 0) {
            MPI_Status st;
            int len = 0;
            MPI_Probe(job->src, TAG_POINT, comm, &st);
            MPI_Get_count(&st, MPI_DOUBLE, &len);
            double *b = malloc((size_t)(len > 0 ? len : 1) * sizeof *b);
            if (!b) MPI_Abort(comm, 1);   /* the message must be taken, or its sender waits forever */
            MPI_Recv(b, len, MPI_DOUBLE, job->src, TAG_POINT, comm, MPI_STATUS_IGNORE);
            lts_measurement_t m;
            int prc = inflate(b, (size_t)len, &m);
            free(b);
            if (prc == LTS_OK) emit_point(job, &m, emit, ud);
            else if (lrc == LTS_OK) lrc = prc;
            lts_measurement_free(&m);
        }
    }
    lts_measurement_free(&mine);
    /* 3. one verdict: every rank returns the lowest code of any */
    MPI_Allreduce(&lrc, &rc, 1, MPI_INT, MPI_MIN, comm);
    return rc;
}
