/* FT mini-app (docs/miniapps.md "ft"): NPB FT's computation — a 3-D complex FFT
 * of NPB's pseudo-random initial field, then per time step t the field multiplied by
 * exp(-4 alpha pi^2 |k|^2 t) in spectral space and transformed back, with NPB's checksum of 1024
 * points — on a slab decomposition whose transpose is one MPI_Alltoall per transform (the
 * all-to-all exchange seed 004 §4.2 counts FT among the communication-intensive codes for).
 *
 * Slabs for any P: rank r owns z planes [r*zb, min(nz, (r+1)*zb)) with zb = ceil(nz/P) (layout A,
 * a[z][y][x]) and, after the transpose, y rows [r*yb, ...) with yb = ceil(ny/P) (layout B,
 * b[y][z][x]). Every all-to-all block is padded to zb*yb*nx values so one MPI_Alltoall serves
 * any P <= min(ny, nz). Every 1-D FFT is the same computation on the same line whatever P is, so
 * the spectrum is bitwise independent of P; only the checksum's sum over ranks is not. */
#include "miniapp.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double re, im;
} ft_cplx;

/* ---- NPB FT's constants ----------------------------------------------------------------------- */

#define FT_SEED UINT64_C(314159265)   /* NPB FT's seed */
#define FT_ALPHA 1.0e-6               /* NPB FT's diffusion constant */

/* ---- 1-D radix-2 FFT ------------------------------------------------------------------------- */

typedef struct {
    int n, logn;
    ft_cplx *w;   /* w[k] = exp(-2 pi i k / n), k < n/2 */
    int *rev;     /* bit reversal of 0..n-1 */
} ft_plan1;

static int ft_plan1_init(ft_plan1 *p, int n) {
    p->n = n;
    p->logn = 0;
    while ((1 << p->logn) < n) p->logn++;
    p->w = malloc(sizeof(ft_cplx) * (size_t)(n / 2 + 1));
    p->rev = malloc(sizeof(int) * (size_t)n);
    if (!p->w || !p->rev) return -1;
    const double pi = 3.141592653589793238462643383279502884;
    for (int k = 0; k < n / 2; k++) {
        double t = -2.0 * pi * (double)k / (double)n;
        p->w[k].re = cos(t);
        p->w[k].im = sin(t);
    }
    for (int i = 0; i < n; i++) {
        int r = 0;
        for (int b = 0; b < p->logn; b++) r |= ((i >> b) & 1) << (p->logn - 1 - b);
        p->rev[i] = r;
    }
    return 0;
}

static void ft_plan1_free(ft_plan1 *p) {
    free(p->w);
    free(p->rev);
}

/* In-place iterative Cooley-Tukey (decimation in time) on a contiguous line; sign -1 forward,
 * +1 inverse (conjugate twiddles, no scaling: NPB's checksums are of the unscaled inverse). */
static void ft_fft1(const ft_plan1 *p, ft_cplx *x, int sign) {
    int n = p->n;
    for (int i = 0; i < n; i++) {
        int r = p->rev[i];
        if (r > i) {
            ft_cplx t = x[i];
            x[i] = x[r];
            x[r] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        int half = len >> 1, step = n / len;
        for (int s = 0; s < n; s += len)
            for (int k = 0; k < half; k++) {
                ft_cplx w = p->w[k * step];
                if (sign > 0) w.im = -w.im;
                ft_cplx *a = &x[s + k], *b = &x[s + k + half];
                double tr = w.re * b->re - w.im * b->im, ti = w.re * b->im + w.im * b->re;
                b->re = a->re - tr;
                b->im = a->im - ti;
                a->re += tr;
                a->im += ti;
            }
    }
}

/* FFT of `count` lines of length p->n whose elements are `stride` apart, consecutive lines
 * `lstride` apart, through a contiguous scratch line (one cache-friendly pass per line). */
static void ft_fft_lines(const ft_plan1 *p, ft_cplx *base, size_t stride, size_t lstride, size_t count, int sign,
                         ft_cplx *scratch) {
    int n = p->n;
    for (size_t l = 0; l < count; l++) {
        ft_cplx *line = base + l * lstride;
        if (stride == 1) {
            ft_fft1(p, line, sign);
            continue;
        }
        for (int i = 0; i < n; i++) scratch[i] = line[(size_t)i * stride];
        ft_fft1(p, scratch, sign);
        for (int i = 0; i < n; i++) line[(size_t)i * stride] = scratch[i];
    }
}

/* ---- the distributed 3-D transform ------------------------------------------------------------ */

typedef struct {
    int nx, ny, nz, P, me;
    int zb, yb;            /* slab heights (padded block sizes) */
    int z0, zn, y0, yn;    /* own z planes [z0, z0+zn) (layout A) and y rows [y0, y0+yn) (layout B) */
    size_t block;          /* complex values per all-to-all block: zb*yb*nx */
    ft_plan1 px, py, pz;
    ft_cplx *sbuf, *rbuf, *scratch;
    MPI_Comm comm;
    MPI_Datatype cplx;
} ft_ctx;

static void ft_range(int n, int b, int r, int *lo, int *cnt) {
    *lo = r * b;
    int hi = *lo + b < n ? *lo + b : n;
    *cnt = hi > *lo ? hi - *lo : 0;
}

static int ft_ctx_init(ft_ctx *c, int nx, int ny, int nz, MPI_Comm comm) {
    memset(c, 0, sizeof *c);
    c->nx = nx; c->ny = ny; c->nz = nz; c->comm = comm;
    MPI_Comm_size(comm, &c->P);
    MPI_Comm_rank(comm, &c->me);
    c->zb = (nz + c->P - 1) / c->P;
    c->yb = (ny + c->P - 1) / c->P;
    ft_range(nz, c->zb, c->me, &c->z0, &c->zn);
    ft_range(ny, c->yb, c->me, &c->y0, &c->yn);
    c->block = (size_t)c->zb * (size_t)c->yb * (size_t)nx;
    MPI_Type_contiguous(2, MPI_DOUBLE, &c->cplx);
    MPI_Type_commit(&c->cplx);
    if (ft_plan1_init(&c->px, nx) || ft_plan1_init(&c->py, ny) || ft_plan1_init(&c->pz, nz)) return -1;
    int mx = nx > ny ? nx : ny;
    mx = mx > nz ? mx : nz;
    c->sbuf = malloc(sizeof(ft_cplx) * c->block * (size_t)c->P);
    c->rbuf = malloc(sizeof(ft_cplx) * c->block * (size_t)c->P);
    c->scratch = malloc(sizeof(ft_cplx) * (size_t)mx);
    return !c->sbuf || !c->rbuf || !c->scratch ? -1 : 0;
}

static void ft_ctx_free(ft_ctx *c) {
    ft_plan1_free(&c->px); ft_plan1_free(&c->py); ft_plan1_free(&c->pz);
    free(c->sbuf); free(c->rbuf); free(c->scratch);
    MPI_Type_free(&c->cplx);
}

static size_t ft_size_a(const ft_ctx *c) { return (size_t)c->zb * (size_t)c->ny * (size_t)c->nx; }
static size_t ft_size_b(const ft_ctx *c) { return (size_t)c->yb * (size_t)c->nz * (size_t)c->nx; }

/* Row (z, y) of nx values in layout A (a[zl][y][x], zl local) or B (b[yl][z][x], yl local); NULL
 * when this rank does not hold it (a padding slot of an all-to-all block). */
static ft_cplx *ft_row_a(const ft_ctx *c, ft_cplx *a, int zl, int y) {
    return zl < c->zn && y < c->ny ? a + ((size_t)zl * (size_t)c->ny + (size_t)y) * (size_t)c->nx : NULL;
}
static ft_cplx *ft_row_b(const ft_ctx *c, ft_cplx *b, int yl, int z) {
    return yl < c->yn && z < c->nz ? b + ((size_t)yl * (size_t)c->nz + (size_t)z) * (size_t)c->nx : NULL;
}

/* Slot (zl, yl) of the all-to-all block for / from rank q in buf. */
static ft_cplx *ft_slot(const ft_ctx *c, ft_cplx *buf, int q, int zl, int yl) {
    return buf + (size_t)q * c->block + ((size_t)zl * (size_t)c->yb + (size_t)yl) * (size_t)c->nx;
}

/* The transpose between layouts, one MPI_Alltoall. Slot (zl, yl) of the block exchanged with
 * rank q holds row (z, y) with z = the z-slab owner's plane zl, y = the y-slab owner's row yl:
 * A -> B sends my plane zl, q's row yl and receives p's plane zl, my row yl; B -> A the reverse. */
static void ft_transpose(ft_ctx *c, int to_b, ft_cplx *a, ft_cplx *b) {
    size_t row = (size_t)c->nx * sizeof(ft_cplx);
    for (int q = 0; q < c->P; q++)
        for (int zl = 0; zl < c->zb; zl++)
            for (int yl = 0; yl < c->yb; yl++) {
                ft_cplx *dst = ft_slot(c, c->sbuf, q, zl, yl);
                const ft_cplx *src = to_b ? ft_row_a(c, a, zl, q * c->yb + yl) : ft_row_b(c, b, yl, q * c->zb + zl);
                if (src) memcpy(dst, src, row);
                else memset(dst, 0, row);
            }
    MPI_Alltoall(c->sbuf, (int)c->block, c->cplx, c->rbuf, (int)c->block, c->cplx, c->comm);
    for (int p = 0; p < c->P; p++)
        for (int zl = 0; zl < c->zb; zl++)
            for (int yl = 0; yl < c->yb; yl++) {
                ft_cplx *dst = to_b ? ft_row_b(c, b, yl, p * c->zb + zl) : ft_row_a(c, a, zl, p * c->yb + yl);
                if (dst) memcpy(dst, ft_slot(c, c->rbuf, p, zl, yl), row);
            }
}

/* Forward 3-D FFT: x and y lines in the z slabs, transpose, z lines in the y slabs. a is
 * overwritten (it is the x/y work array). */
static void ft_forward(ft_ctx *c, ft_cplx *a, ft_cplx *b) {
    size_t nx = (size_t)c->nx, ny = (size_t)c->ny, nz = (size_t)c->nz;
    for (int zl = 0; zl < c->zn; zl++) {
        ft_cplx *plane = a + (size_t)zl * ny * nx;
        ft_fft_lines(&c->px, plane, 1, nx, ny, -1, c->scratch);
        ft_fft_lines(&c->py, plane, nx, 1, nx, -1, c->scratch);
    }
    ft_transpose(c, 1, a, b);
    for (int yl = 0; yl < c->yn; yl++) ft_fft_lines(&c->pz, b + (size_t)yl * nz * nx, nx, 1, nx, -1, c->scratch);
}

/* Inverse (unscaled) 3-D FFT: z lines in the y slabs (b is overwritten), transpose, y and x. */
static void ft_inverse(ft_ctx *c, ft_cplx *b, ft_cplx *a) {
    size_t nx = (size_t)c->nx, ny = (size_t)c->ny, nz = (size_t)c->nz;
    for (int yl = 0; yl < c->yn; yl++) ft_fft_lines(&c->pz, b + (size_t)yl * nz * nx, nx, 1, nx, +1, c->scratch);
    ft_transpose(c, 0, a, b);
    for (int zl = 0; zl < c->zn; zl++) {
        ft_cplx *plane = a + (size_t)zl * ny * nx;
        ft_fft_lines(&c->py, plane, nx, 1, nx, +1, c->scratch);
        ft_fft_lines(&c->px, plane, 1, nx, ny, +1, c->scratch);
    }
}

/* NPB's stream at this rank's first plane: seed a^(2 nx ny z0) (two values per point). */
static uint64_t ft_stream_at(const ft_ctx *c) {
    return lts_npb_mul46(FT_SEED, lts_npb_pow46(LTS_NPB_A, (uint64_t)2 * (uint64_t)c->nx * (uint64_t)c->ny * (uint64_t)c->z0));
}

/* NPB FT's initial field in layout A: element m = x + nx (y + ny z) of the global field is
 * (r[2m], r[2m+1]) with r[n] = (seed a^(n+1) mod 2^46) 2^-46 — NPB's one continuous stream,
 * entered at this rank's first plane by a jump of a^(2 nx ny z0). */
static void ft_initial(const ft_ctx *c, ft_cplx *a) {
    uint64_t x = ft_stream_at(c);
    size_t n = (size_t)c->zn * (size_t)c->ny * (size_t)c->nx;
    for (size_t m = 0; m < n; m++) {
        a[m].re = lts_npb_randlc(&x, LTS_NPB_A);
        a[m].im = lts_npb_randlc(&x, LTS_NPB_A);
    }
}

/* NPB FT's evolution factor exp(-4 alpha pi^2 (ii^2 + jj^2 + kk^2)) per spectral point of
 * layout B, with the wave numbers folded to [-n/2, n/2). One time step multiplies by it once. */
static void ft_twiddle(const ft_ctx *c, double *tw) {
    const double pi = 3.141592653589793238462643383279502884, ap = -4.0 * FT_ALPHA * pi * pi;
    size_t t = 0;
    for (int yl = 0; yl < c->yn; yl++) {
        int y = c->y0 + yl, jj = (y + c->ny / 2) % c->ny - c->ny / 2;
        for (int z = 0; z < c->nz; z++) {
            int kk = (z + c->nz / 2) % c->nz - c->nz / 2;
            for (int x = 0; x < c->nx; x++) {
                int ii = (x + c->nx / 2) % c->nx - c->nx / 2;
                tw[t++] = exp(ap * (double)(ii * ii + jj * jj + kk * kk));
            }
        }
    }
}

/* NPB FT's checksum: sum over j = 1..1024 of u(j mod nx, 3j mod ny, 5j mod nz), divided by the
 * number of points. Each rank writes the points of its z slab into a vector that is zero
 * elsewhere; the MPI_SUM of it is exact (x + 0 = x) and every rank adds the points in NPB's
 * order, so the checksum is the same bits for any P (and as a serial run's). */
static ft_cplx ft_checksum(const ft_ctx *c, const ft_cplx *a, double *pts) {
    memset(pts, 0, sizeof(double) * 2 * 1024);
    for (int j = 1; j <= 1024; j++) {
        int x = j % c->nx, y = (3 * j) % c->ny, z = (5 * j) % c->nz;
        if (z < c->z0 || z >= c->z0 + c->zn) continue;
        const ft_cplx *v = &a[((size_t)(z - c->z0) * (size_t)c->ny + (size_t)y) * (size_t)c->nx + (size_t)x];
        pts[2 * (j - 1)] = v->re;
        pts[2 * (j - 1) + 1] = v->im;
    }
    MPI_Allreduce(MPI_IN_PLACE, pts, 2 * 1024, MPI_DOUBLE, MPI_SUM, c->comm);
    ft_cplx s = {0.0, 0.0};
    for (int j = 0; j < 1024; j++) {
        s.re += pts[2 * j];
        s.im += pts[2 * j + 1];
    }
    double n = (double)c->nx * (double)c->ny * (double)c->nz;
    return (ft_cplx){s.re / n, s.im / n};
}

/* max |a / N - initial field| over this rank's slab, walking NPB's stream again (no copy of the
 * field is kept: class A's is 134 MB). */
static double ft_roundtrip_error(const ft_ctx *c, const ft_cplx *a) {
    uint64_t x = ft_stream_at(c);
    size_t n = (size_t)c->zn * (size_t)c->ny * (size_t)c->nx;
    double inv = 1.0 / ((double)c->nx * (double)c->ny * (double)c->nz), e = 0.0;
    for (size_t m = 0; m < n; m++) {
        double re = lts_npb_randlc(&x, LTS_NPB_A), im = lts_npb_randlc(&x, LTS_NPB_A);
        double d = fabs(a[m].re * inv - re) + fabs(a[m].im * inv - im);
        if (d > e) e = d;
    }
    return e;
}

/* ---- classes, the run ------------------------------------------------------------------------- */

/* NPB FT's classes with their published checksums (NPB 3 ft verify(): real, imaginary per time
 * step). At np 2 here: S 0.04 s, W 0.08 s, A 2 s. */
#define FT_STEPS 6
typedef struct {
    const char *name;
    int nx, ny, nz;
    double ref[FT_STEPS][2];
} ft_class;

static const ft_class FT_CLASSES[] = {
    {"S", 64, 64, 64,
     {{5.546087004964e+02, 4.845363331978e+02}, {5.546385409189e+02, 4.865304269511e+02},
      {5.546148406171e+02, 4.883910722336e+02}, {5.545423607415e+02, 4.901273169046e+02},
      {5.544255039624e+02, 4.917475857993e+02}, {5.542683411902e+02, 4.932597244941e+02}}},
    {"W", 128, 128, 32,
     {{5.673612178944e+02, 5.293246849175e+02}, {5.631436885271e+02, 5.282149986629e+02},
      {5.594024089970e+02, 5.270996558037e+02}, {5.560698047020e+02, 5.260027904925e+02},
      {5.530898991250e+02, 5.249400845633e+02}, {5.504159734538e+02, 5.239212247086e+02}}},
    {"A", 256, 256, 128,
     {{5.046735008193e+02, 5.114047905510e+02}, {5.059412319734e+02, 5.098809666433e+02},
      {5.069376896287e+02, 5.098144042213e+02}, {5.077892868474e+02, 5.101336130759e+02},
      {5.085233095391e+02, 5.104914655194e+02}, {5.091487099959e+02, 5.107917842803e+02}}},
};
static const char *const FT_CLASS_NAMES[] = {"S", "W", "A", NULL};

static int ft_default_iters(int ci) {
    (void)ci;
    return FT_STEPS;
}

static int ft_check(const lts_mapp_ctx *ctx, char *msg, size_t len) {
    const ft_class *k = &FT_CLASSES[ctx->cls_index];
    int most = k->ny < k->nz ? k->ny : k->nz;
    if (ctx->np > most) {
        snprintf(msg, len, "np %d: class %s (%d x %d x %d) has %d planes to split; allowed: 1 to %d ranks", ctx->np,
                 k->name, k->nx, k->ny, k->nz, most, most);
        return -1;
    }
    if (ctx->iters > FT_STEPS) {
        snprintf(msg, len, "--iters %d: NPB's published checksums cover %d time steps; allowed: 1 to %d", ctx->iters,
                 FT_STEPS, FT_STEPS);
        return -1;
    }
    return 0;
}

/* NPB's criterion: |checksum - reference| / |reference| <= 1e-12, as complex numbers. */
static int ft_close(ft_cplx v, const double ref[2]) {
    double dr = v.re - ref[0], di = v.im - ref[1];
    return sqrt(dr * dr + di * di) <= 1e-12 * sqrt(ref[0] * ref[0] + ref[1] * ref[1]);
}

/* Untimed: forward + inverse of the initial field must give it back (within 1e-12). Timed (NPB
 * FT's loop): the forward transform, then per time step the spectrum times the evolution factor,
 * its inverse transform and the checksum, compared with NPB's. value / reference: the last
 * step's checksum's real part. --inject-fault: rank 0 adds 1 to the spectrum's k = 0 coefficient
 * before the last step. */
static int ft_run(const lts_mapp_ctx *ctx, lts_mapp_result *res) {
    const ft_class *k = &FT_CLASSES[ctx->cls_index];
    ft_ctx c;
    int fail = ft_ctx_init(&c, k->nx, k->ny, k->nz, ctx->comm) != 0;
    size_t na = ft_size_a(&c), nb = ft_size_b(&c);
    ft_cplx *u1 = malloc(sizeof(ft_cplx) * (na + 1)), *u0 = malloc(sizeof(ft_cplx) * (nb + 1));
    ft_cplx *w = malloc(sizeof(ft_cplx) * (nb + 1));
    double *tw = malloc(sizeof(double) * (nb + 1)), *pts = malloc(sizeof(double) * 2 * 1024);
    fail |= !u1 || !u0 || !w || !tw || !pts;
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, ctx->comm);
    int rc = -1;
    if (fail) goto out;
    size_t ns = (size_t)c.yn * (size_t)c.nz * (size_t)c.nx;   /* spectral values held */

    ft_initial(&c, u1);
    ft_forward(&c, u1, u0);
    memcpy(w, u0, ns * sizeof *w);
    ft_inverse(&c, w, u1);
    double err = ft_roundtrip_error(&c, u1);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
    int ok = err <= 1e-12;
    if (!ok && ctx->rank == 0) fprintf(stderr, "latscope-ft: forward + inverse transform is off by %.3e\n", err);
    ft_twiddle(&c, tw);
    ft_initial(&c, u1);

    MPI_Barrier(ctx->comm);
    double t0 = MPI_Wtime();
    ft_forward(&c, u1, u0);
    ft_cplx sum = {0.0, 0.0};
    for (int t = 1; t <= ctx->iters; t++) {
        if (ctx->inject_fault && t == ctx->iters && ctx->rank == 0 && ns > 0) u0[0].re += 1.0;
        for (size_t m = 0; m < ns; m++) {
            u0[m].re *= tw[m];
            u0[m].im *= tw[m];
            w[m] = u0[m];
        }
        ft_inverse(&c, w, u1);
        sum = ft_checksum(&c, u1, pts);
        if (!ft_close(sum, k->ref[t - 1])) {
            if (ok && ctx->rank == 0)
                fprintf(stderr, "latscope-ft: step %d checksum (%.12e, %.12e), NPB's (%.12e, %.12e)\n", t, sum.re, sum.im,
                        k->ref[t - 1][0], k->ref[t - 1][1]);
            ok = 0;
        }
    }
    res->runtime_s = MPI_Wtime() - t0;
    res->value = sum.re;
    res->reference = k->ref[ctx->iters - 1][0];
    res->verified = ok;
    rc = 0;
out:
    free(u1); free(u0); free(w); free(tw); free(pts);
    ft_ctx_free(&c);
    return rc;
}

LTS_MAPP_MAIN(.app = "ft", .classes = FT_CLASS_NAMES, .default_iters = ft_default_iters, .check = ft_check, .run = ft_run,
              .summary = "NPB FT: 3-D FFT time steps, slab decomposition, one all-to-all transpose per transform")
