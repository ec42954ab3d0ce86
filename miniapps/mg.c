/* MG mini-app (docs/miniapps.md "mg"): V-cycle multigrid for the 7-point Poisson
 * problem -lap u = f on the unit cube, zero Dirichlet boundary, n = 2^L intervals per dimension,
 * with a halo exchange on every level (seed 004 §4.2: MG among the communication-intensive NPB
 * codes; its coarse levels exchange ever smaller messages, which makes it latency-sensitive).
 *
 * f is the discrete operator applied to u*(x,y,z) = 64 x(1-x) y(1-y) z(1-z) (1 + xyz), so the
 * discrete solution is u* exactly (smooth, no libm: the same bits on any machine).
 * V(2,2) cycles: damped Jacobi smoothing, full-weighting restriction, trilinear prolongation,
 * an exact solve on the one-point coarsest grid (L = 1).
 *
 * Decomposition: z slabs. The finest level's interior planes 1..n-1 are split into P blocks;
 * coarse plane K of level l belongs to the owner of fine plane K 2^(L-l), so restriction and
 * prolongation need only neighbouring planes. A rank may own no plane on a coarse level; it then
 * still needs the two coarse planes around its fine planes for the prolongation. Each rank's
 * needed planes (its own +-1, or those two) are computed for every rank on every level, and an
 * exchange sends every owned plane to each rank that needs it: one message per pair, any P up
 * to n-1. Every point is computed by the same expression in the same operand order whatever the
 * decomposition, so the fields are bitwise independent of P; only the norms' sums over ranks
 * are not. */
#include "miniapp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int lo, hi;                /* owned interior planes [lo, hi]; empty when lo > hi */
    int nlo, nhi;              /* stored planes [nlo, nhi] (owned + needed); empty when nlo > nhi */
} mg_range;

typedef struct {
    int n;                     /* intervals: points 0..n per dimension, interior 1..n-1 */
    double h2;                 /* h^2 */
    size_t plane;              /* (n+1)^2 */
    mg_range *r;               /* every rank's range on this level (P entries) */
    double *u, *f, *res;       /* stored planes [nlo, nhi] of the own range */
} mg_level;

typedef struct {
    int L, P, me;
    mg_level *lv;              /* lv[1] (coarsest, n = 2) .. lv[L] (finest) */
    MPI_Comm comm;
    MPI_Request *req;          /* 2P requests for an exchange */
    double *psum;              /* per-plane sums of the finest level (mg_resid_norm) */
} mg_ctx;

/* ---- decomposition -------------------------------------------------------------------------- */

static int mg_ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Own and stored planes of every rank on every level (see the file comment). */
static void mg_ranges(mg_ctx *c) {
    int L = c->L, nf = 1 << L;
    for (int r = 0; r < c->P; r++) {
        long long lo0, cnt0;
        lts_mapp_split(nf - 1, c->P, r, &lo0, &cnt0);
        int lo = (int)lo0 + 1, cnt = (int)cnt0;   /* interior planes start at 1 */
        for (int l = L; l >= 1; l--) {
            mg_range *g = &c->lv[l].r[r];
            int s = 1 << (L - l), n = 1 << l;
            if (cnt > 0) {
                g->lo = mg_ceil_div(lo, s);
                g->hi = (lo + cnt - 1) / s;
            } else {
                g->lo = 1;
                g->hi = 0;
            }
            if (g->lo <= g->hi) {
                g->nlo = g->lo - 1;
                g->nhi = g->hi + 1;
            } else if (l < L && c->lv[l + 1].r[r].lo <= c->lv[l + 1].r[r].hi) {
                /* no own plane here: the two coarse planes around the fine ones, for prolongation */
                g->nlo = c->lv[l + 1].r[r].lo / 2;
                g->nhi = mg_ceil_div(c->lv[l + 1].r[r].hi, 2);
            } else {
                g->nlo = 1;
                g->nhi = 0;
            }
            if (g->nlo < 0) g->nlo = 0;
            if (g->nhi > n) g->nhi = n;
        }
    }
}

static int mg_init(mg_ctx *c, int L, MPI_Comm comm) {
    memset(c, 0, sizeof *c);
    c->L = L;
    c->comm = comm;
    MPI_Comm_size(comm, &c->P);
    MPI_Comm_rank(comm, &c->me);
    c->lv = calloc((size_t)L + 1, sizeof(mg_level));
    c->req = malloc(sizeof(MPI_Request) * 2 * (size_t)c->P);
    c->psum = malloc(sizeof(double) * ((size_t)1 << L));
    if (!c->lv || !c->req || !c->psum) return -1;
    for (int l = 1; l <= L; l++) {
        mg_level *v = &c->lv[l];
        v->n = 1 << l;
        v->h2 = 1.0 / ((double)v->n * (double)v->n);
        v->plane = (size_t)(v->n + 1) * (size_t)(v->n + 1);
        v->r = calloc((size_t)c->P, sizeof(mg_range));
        if (!v->r) return -1;
    }
    mg_ranges(c);
    for (int l = 1; l <= L; l++) {
        mg_level *v = &c->lv[l];
        const mg_range *g = &v->r[c->me];
        size_t np = g->nhi >= g->nlo ? (size_t)(g->nhi - g->nlo + 1) : 0;
        v->u = calloc(np * v->plane + 1, sizeof(double));
        v->f = calloc(np * v->plane + 1, sizeof(double));
        v->res = calloc(np * v->plane + 1, sizeof(double));
        if (!v->u || !v->f || !v->res) return -1;
    }
    return 0;
}

static void mg_free(mg_ctx *c) {
    for (int l = 1; c->lv && l <= c->L; l++) {
        free(c->lv[l].r); free(c->lv[l].u); free(c->lv[l].f); free(c->lv[l].res);
    }
    free(c->lv);
    free(c->req);
    free(c->psum);
}

/* Address of point (x, y) of plane z of array a on level v (z within the stored planes). */
static inline double *mg_at(const mg_level *v, const mg_ctx *c, double *a, int z, int y, int x) {
    return a + (size_t)(z - v->r[c->me].nlo) * v->plane + (size_t)y * (size_t)(v->n + 1) + (size_t)x;
}

/* Send each owned plane of array a (u, f or res: by offset) to every rank that stores it, receive
 * every stored plane owned by another rank. Planes of one pair are contiguous: one message. */
static void mg_exchange(mg_ctx *c, int l, double *a) {
    mg_level *v = &c->lv[l];
    const mg_range *m = &v->r[c->me];
    int nr = 0;
    for (int r = 0; r < c->P; r++) {
        if (r == c->me) continue;
        const mg_range *o = &v->r[r];
        int lo = o->lo > m->nlo ? o->lo : m->nlo, hi = o->hi < m->nhi ? o->hi : m->nhi;   /* theirs I store */
        if (lo <= hi)
            MPI_Irecv(mg_at(v, c, a, lo, 0, 0), (int)((size_t)(hi - lo + 1) * v->plane), MPI_DOUBLE, r, l, c->comm,
                      &c->req[nr++]);
        lo = m->lo > o->nlo ? m->lo : o->nlo;                                              /* mine they store */
        hi = m->hi < o->nhi ? m->hi : o->nhi;
        if (lo <= hi)
            MPI_Isend(mg_at(v, c, a, lo, 0, 0), (int)((size_t)(hi - lo + 1) * v->plane), MPI_DOUBLE, r, l, c->comm,
                      &c->req[nr++]);
    }
    MPI_Waitall(nr, c->req, MPI_STATUSES_IGNORE);
}

/* ---- the operators ---------------------------------------------------------------------------- */

/* res = f - A u on the owned planes, A u = (6u - sum of the 6 neighbours) / h^2; u's stored
 * neighbour planes must be current. */
static void mg_residual(mg_ctx *c, int l) {
    mg_level *v = &c->lv[l];
    const mg_range *m = &v->r[c->me];
    size_t sx = 1, sy = (size_t)(v->n + 1), sz = v->plane;
    double inv = 1.0 / v->h2;
    for (int z = m->lo; z <= m->hi; z++)
        for (int y = 1; y < v->n; y++) {
            const double *u = mg_at(v, c, v->u, z, y, 0), *f = mg_at(v, c, v->f, z, y, 0);
            double *r = mg_at(v, c, v->res, z, y, 0);
            for (int x = 1; x < v->n; x++) {
                double au = (6.0 * u[x] - u[x - sx] - u[x + sx] - u[x - sy] - u[x + sy] - u[x - sz] - u[x + sz]) * inv;
                r[x] = f[x] - au;
            }
        }
}

/* Damped Jacobi: u += omega h^2/6 (f - A u). 0.8 is close to the best smoothing factor of damped
 * Jacobi for the 7-point operator (6/7). */
#define MG_OMEGA 0.8

static void mg_smooth(mg_ctx *c, int l) {
    mg_level *v = &c->lv[l];
    const mg_range *m = &v->r[c->me];
    mg_exchange(c, l, v->u);
    mg_residual(c, l);
    double w = MG_OMEGA * v->h2 / 6.0;
    for (int z = m->lo; z <= m->hi; z++)
        for (int y = 1; y < v->n; y++) {
            double *u = mg_at(v, c, v->u, z, y, 0);
            const double *r = mg_at(v, c, v->res, z, y, 0);
            for (int x = 1; x < v->n; x++) u[x] += w * r[x];
        }
}

/* Full weighting of level l's residual into level l-1's right-hand side: weight
 * prod_d (2 if offset_d = 0 else 1) / 64 over the 27 fine points around the coarse one. */
static void mg_restrict(mg_ctx *c, int l) {
    mg_level *fv = &c->lv[l], *cv = &c->lv[l - 1];
    const mg_range *m = &cv->r[c->me];
    mg_exchange(c, l, fv->res);
    static const double w1[3] = {1.0, 2.0, 1.0};
    for (int Z = m->lo; Z <= m->hi; Z++)
        for (int Y = 1; Y < cv->n; Y++)
            for (int X = 1; X < cv->n; X++) {
                double s = 0.0;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++) {
                        const double *r = mg_at(fv, c, fv->res, 2 * Z + dz, 2 * Y + dy, 2 * X);
                        double wzy = w1[dz + 1] * w1[dy + 1];
                        s += wzy * r[-1] + wzy * 2.0 * r[0] + wzy * r[1];
                    }
                *mg_at(cv, c, cv->f, Z, Y, X) = s / 64.0;
            }
    const mg_range *s = &cv->r[c->me];
    if (s->nhi >= s->nlo) memset(cv->u, 0, (size_t)(s->nhi - s->nlo + 1) * cv->plane * sizeof(double));
}

/* Trilinear interpolation of level l-1's correction, added to level l's u on the owned planes. */
static void mg_prolong(mg_ctx *c, int l) {
    mg_level *fv = &c->lv[l], *cv = &c->lv[l - 1];
    const mg_range *m = &fv->r[c->me];
    mg_exchange(c, l - 1, cv->u);
    for (int z = m->lo; z <= m->hi; z++) {
        int zc[2] = {z / 2, (z + 1) / 2};
        double wz = (z & 1) ? 0.5 : 1.0;
        int nzc = (z & 1) ? 2 : 1;
        for (int y = 1; y < fv->n; y++) {
            int yc[2] = {y / 2, (y + 1) / 2};
            double wy = (y & 1) ? 0.5 : 1.0;
            int nyc = (y & 1) ? 2 : 1;
            double *u = mg_at(fv, c, fv->u, z, y, 0);
            for (int x = 1; x < fv->n; x++) {
                int xc[2] = {x / 2, (x + 1) / 2};
                double wx = (x & 1) ? 0.5 : 1.0;
                int nxc = (x & 1) ? 2 : 1;
                double s = 0.0;
                for (int a = 0; a < nzc; a++)
                    for (int b = 0; b < nyc; b++)
                        for (int d = 0; d < nxc; d++) s += wz * wy * wx * *mg_at(cv, c, cv->u, zc[a], yc[b], xc[d]);
                u[x] += s;
            }
        }
    }
}

#define MG_NU1 2
#define MG_NU2 2

static void mg_vcycle(mg_ctx *c, int l) {
    mg_level *v = &c->lv[l];
    if (l == 1) {
        /* one interior point: 6u / h^2 = f */
        const mg_range *m = &v->r[c->me];
        if (m->lo <= m->hi) *mg_at(v, c, v->u, 1, 1, 1) = *mg_at(v, c, v->f, 1, 1, 1) * v->h2 / 6.0;
        return;
    }
    for (int s = 0; s < MG_NU1; s++) mg_smooth(c, l);
    mg_exchange(c, l, v->u);
    mg_residual(c, l);
    mg_restrict(c, l);
    mg_vcycle(c, l - 1);
    mg_prolong(c, l);
    for (int s = 0; s < MG_NU2; s++) mg_smooth(c, l);
}

/* ---- problem, norms ----------------------------------------------------------------------------- */

static double mg_exact(double x, double y, double z) {
    return 64.0 * x * (1.0 - x) * y * (1.0 - y) * z * (1.0 - z) * (1.0 + x * y * z);
}

/* f = A u* on the finest level's owned planes (u* itself in res, as scratch, with its
 * neighbour planes computed directly: no communication needed). */
static void mg_problem(mg_ctx *c) {
    mg_level *v = &c->lv[c->L];
    const mg_range *m = &v->r[c->me];
    double h = 1.0 / v->n;
    for (int z = m->nlo; z <= m->nhi; z++)
        for (int y = 0; y <= v->n; y++)
            for (int x = 0; x <= v->n; x++) *mg_at(v, c, v->res, z, y, x) = mg_exact(x * h, y * h, z * h);
    size_t sx = 1, sy = (size_t)(v->n + 1), sz = v->plane;
    double inv = 1.0 / v->h2;
    for (int z = m->lo; z <= m->hi; z++)
        for (int y = 1; y < v->n; y++) {
            const double *e = mg_at(v, c, v->res, z, y, 0);
            double *f = mg_at(v, c, v->f, z, y, 0);
            for (int x = 1; x < v->n; x++)
                f[x] = (6.0 * e[x] - e[x - sx] - e[x + sx] - e[x - sy] - e[x + sy] - e[x - sz] - e[x + sz]) * inv;
        }
    memset(v->res, 0, (size_t)(m->nhi - m->nlo + 1) * v->plane * sizeof(double));
}

/* ||f - A u||_2 over the finest grid's interior (root mean square: divided by the point count).
 * Summed plane by plane: each rank puts its planes' sums into a vector that is zero elsewhere,
 * the MPI_SUM of it is exact (x + 0 = x), and every rank adds the planes in order: the same bits
 * for any P (a plain sum over ranks differed by 7e-14 relative between np 1 and 2 at class A). */
static double mg_resid_norm(mg_ctx *c) {
    mg_level *v = &c->lv[c->L];
    const mg_range *m = &v->r[c->me];
    mg_exchange(c, c->L, v->u);
    mg_residual(c, c->L);
    memset(c->psum, 0, sizeof(double) * (size_t)v->n);
    for (int z = m->lo; z <= m->hi; z++) {
        double s = 0.0;
        for (int y = 1; y < v->n; y++) {
            const double *r = mg_at(v, c, v->res, z, y, 0);
            for (int x = 1; x < v->n; x++) s += r[x] * r[x];
        }
        c->psum[z] = s;
    }
    MPI_Allreduce(MPI_IN_PLACE, c->psum, v->n, MPI_DOUBLE, MPI_SUM, c->comm);
    double s = 0.0;
    for (int z = 1; z < v->n; z++) s += c->psum[z];
    double npts = (double)(v->n - 1) * (double)(v->n - 1) * (double)(v->n - 1);
    return sqrt(s / npts);
}

/* ---- classes, the run ------------------------------------------------------------------------- */

/* ref: the final residual norm after the class's V-cycles from a serial run (np 1) of this
 * program; every decomposition computes the same bits (fields and norm). At np 2 here: S 0.005 s,
 * W 0.03 s, A 0.3-0.6 s. */
typedef struct {
    const char *name;
    int L, cycles;
    double ref;
} mg_class;

static const mg_class MG_CLASSES[] = {
    {"S", 5, 10, 6.7373130853522903e-05},
    {"W", 6, 12, 7.3588365316165123e-06},
    {"A", 7, 12, 8.8170517778749026e-06},
};
static const char *const MG_CLASS_NAMES[] = {"S", "W", "A", NULL};

static int mg_default_iters(int ci) { return MG_CLASSES[ci].cycles; }

static int mg_check(const lts_mapp_ctx *ctx, char *msg, size_t len) {
    const mg_class *k = &MG_CLASSES[ctx->cls_index];
    int planes = (1 << k->L) - 1;
    if (ctx->np > planes) {
        snprintf(msg, len, "np %d: class %s has %d interior planes to split; allowed: 1 to %d ranks", ctx->np, k->name,
                 planes, planes);
        return -1;
    }
    return 0;
}

/* The V-cycles on a fresh problem; *r0, *r: the residual norm before and after; *t: the cycles'
 * elapsed time. fault: rank 0 adds 1 to one value of u before the last cycle. */
static int mg_solve(const mg_class *k, int cycles, int fault, MPI_Comm comm, double *r0, double *r, double *t) {
    mg_ctx c;
    int fail = mg_init(&c, k->L, comm) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, comm);
    if (fail) {
        mg_free(&c);
        return -1;
    }
    mg_problem(&c);
    *r0 = mg_resid_norm(&c);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int i = 0; i < cycles; i++) {
        if (fault && i == cycles - 1 && c.me == 0) *mg_at(&c.lv[k->L], &c, c.lv[k->L].u, 1, 1, 1) += 1.0;
        mg_vcycle(&c, k->L);
    }
    *t = MPI_Wtime() - t0;
    *r = mg_resid_norm(&c);
    mg_free(&c);
    return 0;
}

/* Checks (docs/miniapps.md "mg"): the residual norm against the class's stored serial one (or,
 * with --iters, rank 0's serial rerun of the same cycles), within 1e-12 (they are equal bits); and reduced by at least
 * 2 per cycle (up to 20 cycles; a V(2,2) cycle here reduces it about 3.5 times). value: the
 * final residual norm (root mean square over the interior points). */
static int mg_run(const lts_mapp_ctx *ctx, lts_mapp_result *res) {
    const mg_class *k = &MG_CLASSES[ctx->cls_index];
    double r0, r, t;
    if (mg_solve(k, ctx->iters, ctx->inject_fault, ctx->comm, &r0, &r, &t)) return -1;
    res->runtime_s = t;
    res->value = r;
    res->reference = k->ref;
    int ok = 1;
    if (ctx->iters_given) {
        double s0, ts;
        int fail = 0;
        if (ctx->rank == 0) fail = mg_solve(k, ctx->iters, 0, MPI_COMM_SELF, &s0, &res->reference, &ts) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, ctx->comm);
        if (fail) return -1;
    }
    if (ctx->rank == 0) {
        ok = lts_mapp_close(r, res->reference, 1e-12);
        double bound = pow(0.5, ctx->iters < 20 ? ctx->iters : 20);
        if (!(r <= bound * r0)) {
            fprintf(stderr, "latscope-mg: residual norm %.6e -> %.6e in %d cycles, not the factor %.3g\n", r0, r,
                    ctx->iters, bound);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, ctx->comm);
    res->verified = ok;
    return 0;
}

LTS_MAPP_MAIN(.app = "mg", .classes = MG_CLASS_NAMES, .default_iters = mg_default_iters, .check = mg_check, .run = mg_run,
              .summary = "V-cycle multigrid for 3-D Poisson (7-point), z slabs, a halo exchange per level and step")
