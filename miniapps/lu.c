/* LU/SSOR-style wavefront mini-app (issue 13 item 1; docs/miniapps.md "lu").
 *
 * The communication pattern of NPB LU's blts/buts (seed 004 §4.2 names LU the application most
 * hurt by latency variation): symmetric successive over-relaxation on the 7-point Poisson operator
 * over an nx x ny x nz grid, decomposed over a 2-D px x py process grid in (x, y); z is not split.
 * The lower sweep visits points in ascending (k, j, i) order and uses the new values of the
 * (i-1, j-1, k-1) neighbours, so a rank can compute plane k only once its west and north
 * neighbours have computed theirs: per plane it receives one column and one row, computes, and
 * sends its east column and south row — a pipeline of nz small messages per direction and sweep.
 * The upper sweep runs the same in reverse (descending order, from the east and south).
 *
 * Every point is updated by one expression with its operands in one fixed order (sweep_plane), and
 * the operand values are the same whatever the decomposition (the old values of the "upper"
 * neighbours come from a face exchange before each sweep), so the result is bitwise independent of
 * the number of ranks: rank 0 can recompute the whole run serially with the same code (a 1 x 1
 * grid) and compare every value. */
#include "miniapp.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the grid block of one rank ------------------------------------------------------------- */

typedef struct {
    int nx, ny, nz;               /* global interior points */
    int i0, j0;                   /* global index of the first local interior point (0-based) */
    int lx, ly;                   /* local interior points in x and y */
    int west, east, north, south; /* neighbour ranks or MPI_PROC_NULL */
    MPI_Comm comm;
    double *u, *b;                /* (lx+2) x (ly+2) x (nz+2): one halo / boundary layer around */
    double *col, *row;            /* one plane's column (ly) and row (lx): the pipeline's messages */
    double *fsx, *frx, *fsy, *fry;/* face exchange buffers: ly*nz and lx*nz */
} lu_block;

#define LU_IDX(B, i, j, k) ((((size_t)(k) * (size_t)((B)->ly + 2)) + (size_t)(j)) * (size_t)((B)->lx + 2) + (size_t)(i))

/* The right-hand side: a hash of the global index (splitmix64's finaliser; no libm, the same
 * value on every rank). */
static double lu_rhs(int i, int j, int k) {
    uint64_t z = ((uint64_t)(uint32_t)i << 42) ^ ((uint64_t)(uint32_t)j << 21) ^ (uint64_t)(uint32_t)k;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static void lu_block_free(lu_block *B) {
    free(B->u); free(B->b); free(B->col); free(B->row);
    free(B->fsx); free(B->frx); free(B->fsy); free(B->fry);
    memset(B, 0, sizeof *B);
}

/* The block of process (cx, cy) of a px x py grid; rank r is at (r / py, r % py). 0 or -1 (out of
 * memory; the block is then freed). */
static int lu_block_init(lu_block *B, int nx, int ny, int nz, int px, int py, int rank, MPI_Comm comm) {
    int cx = rank / py, cy = rank % py;
    long long lo, cnt;
    memset(B, 0, sizeof *B);
    B->nx = nx; B->ny = ny; B->nz = nz; B->comm = comm;
    B->west = cx > 0 ? (cx - 1) * py + cy : MPI_PROC_NULL;
    B->east = cx < px - 1 ? (cx + 1) * py + cy : MPI_PROC_NULL;
    B->north = cy > 0 ? cx * py + cy - 1 : MPI_PROC_NULL;
    B->south = cy < py - 1 ? cx * py + cy + 1 : MPI_PROC_NULL;
    lts_mapp_split(nx, px, cx, &lo, &cnt);
    B->i0 = (int)lo; B->lx = (int)cnt;
    lts_mapp_split(ny, py, cy, &lo, &cnt);
    B->j0 = (int)lo; B->ly = (int)cnt;
    size_t n = (size_t)(B->lx + 2) * (size_t)(B->ly + 2) * (size_t)(nz + 2);
    size_t fx = (size_t)B->ly * (size_t)nz + 1, fy = (size_t)B->lx * (size_t)nz + 1;
    B->u = calloc(n, sizeof(double));
    B->b = calloc(n, sizeof(double));
    B->col = calloc((size_t)B->ly + 1, sizeof(double));
    B->row = calloc((size_t)B->lx + 1, sizeof(double));
    B->fsx = calloc(fx, sizeof(double)); B->frx = calloc(fx, sizeof(double));
    B->fsy = calloc(fy, sizeof(double)); B->fry = calloc(fy, sizeof(double));
    if (!B->u || !B->b || !B->col || !B->row || !B->fsx || !B->frx || !B->fsy || !B->fry) {
        lu_block_free(B);
        return -1;
    }
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= B->ly; j++)
            for (int i = 1; i <= B->lx; i++) B->b[LU_IDX(B, i, j, k)] = lu_rhs(B->i0 + i - 1, B->j0 + j - 1, k - 1);
    return 0;
}

/* SSOR relaxation factor (NPB LU's omega is 1.2 too). */
#define LU_OMEGA 1.2

/* One point of over-relaxed Gauss-Seidel on 6u - sum(neighbours) = b. The operand order is
 * fixed (b, -x, +x, -y, +y, -z, +z) so every decomposition computes the same bits. */
static inline double lu_point(const lu_block *B, size_t c, size_t sx, size_t sy, size_t sz) {
    const double *u = B->u;
    double s = B->b[c] + u[c - sx] + u[c + sx] + u[c - sy] + u[c + sy] + u[c - sz] + u[c + sz];
    return (1.0 - LU_OMEGA) * u[c] + (LU_OMEGA / 6.0) * s;
}

/* Relax plane k: ascending (j, i) for the lower sweep, descending for the upper one. */
static void lu_sweep_plane(lu_block *B, int k, int upper) {
    size_t sx = 1, sy = (size_t)(B->lx + 2), sz = sy * (size_t)(B->ly + 2);
    if (!upper) {
        for (int j = 1; j <= B->ly; j++)
            for (int i = 1; i <= B->lx; i++) {
                size_t c = LU_IDX(B, i, j, k);
                B->u[c] = lu_point(B, c, sx, sy, sz);
            }
    } else {
        for (int j = B->ly; j >= 1; j--)
            for (int i = B->lx; i >= 1; i--) {
                size_t c = LU_IDX(B, i, j, k);
                B->u[c] = lu_point(B, c, sx, sy, sz);
            }
    }
}

/* Column i (all interior j) of plane k to / from the message buffer; row j likewise. */
static void lu_get_col(lu_block *B, int i, int k) { for (int j = 1; j <= B->ly; j++) B->col[j - 1] = B->u[LU_IDX(B, i, j, k)]; }
static void lu_put_col(lu_block *B, int i, int k) { for (int j = 1; j <= B->ly; j++) B->u[LU_IDX(B, i, j, k)] = B->col[j - 1]; }
static void lu_get_row(lu_block *B, int j, int k) { for (int i = 1; i <= B->lx; i++) B->row[i - 1] = B->u[LU_IDX(B, i, j, k)]; }
static void lu_put_row(lu_block *B, int j, int k) { for (int i = 1; i <= B->lx; i++) B->u[LU_IDX(B, i, j, k)] = B->row[i - 1]; }

enum { LU_TAG_FACE = 1, LU_TAG_LOWER = 2, LU_TAG_UPPER = 3 };

/* Face exchange before a sweep. A sweep reads, on the sides it does not receive from in the
 * pipeline, the neighbours' values as the previous sweep left them: before the lower sweep the
 * east and south halos, before the upper sweep the west and north ones. One message per face. */
static void lu_exchange_faces(lu_block *B, int upper) {
    int nz = B->nz, ly = B->ly, lx = B->lx;
    int to_x = upper ? B->east : B->west, from_x = upper ? B->west : B->east;
    int send_i = upper ? lx : 1, halo_i = upper ? 0 : lx + 1;
    int to_y = upper ? B->south : B->north, from_y = upper ? B->north : B->south;
    int send_j = upper ? ly : 1, halo_j = upper ? 0 : ly + 1;
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ly; j++) B->fsx[(k - 1) * ly + j - 1] = B->u[LU_IDX(B, send_i, j, k)];
    for (int k = 1; k <= nz; k++)
        for (int i = 1; i <= lx; i++) B->fsy[(k - 1) * lx + i - 1] = B->u[LU_IDX(B, i, send_j, k)];
    MPI_Sendrecv(B->fsx, ly * nz, MPI_DOUBLE, to_x, LU_TAG_FACE, B->frx, ly * nz, MPI_DOUBLE, from_x, LU_TAG_FACE,
                 B->comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(B->fsy, lx * nz, MPI_DOUBLE, to_y, LU_TAG_FACE, B->fry, lx * nz, MPI_DOUBLE, from_y, LU_TAG_FACE,
                 B->comm, MPI_STATUS_IGNORE);
    if (from_x != MPI_PROC_NULL)
        for (int k = 1; k <= nz; k++)
            for (int j = 1; j <= ly; j++) B->u[LU_IDX(B, halo_i, j, k)] = B->frx[(k - 1) * ly + j - 1];
    if (from_y != MPI_PROC_NULL)
        for (int k = 1; k <= nz; k++)
            for (int i = 1; i <= lx; i++) B->u[LU_IDX(B, i, halo_j, k)] = B->fry[(k - 1) * lx + i - 1];
}

/* The pipelined sweep (NPB LU's blts / buts): per plane, wait for the upstream neighbours'
 * boundary, relax the plane, pass this block's boundary downstream. Blocking sends cannot
 * deadlock: the dependencies form a DAG over (rank, plane) and every rank takes planes in order. */
static void lu_sweep(lu_block *B, int upper) {
    int nz = B->nz, tag = upper ? LU_TAG_UPPER : LU_TAG_LOWER;
    int up_x = upper ? B->east : B->west, up_y = upper ? B->south : B->north;
    int dn_x = upper ? B->west : B->east, dn_y = upper ? B->north : B->south;
    int halo_i = upper ? B->lx + 1 : 0, halo_j = upper ? B->ly + 1 : 0;
    int edge_i = upper ? 1 : B->lx, edge_j = upper ? 1 : B->ly;
    for (int s = 0; s < nz; s++) {
        int k = upper ? nz - s : s + 1;
        if (up_x != MPI_PROC_NULL) {
            MPI_Recv(B->col, B->ly, MPI_DOUBLE, up_x, tag, B->comm, MPI_STATUS_IGNORE);
            lu_put_col(B, halo_i, k);
        }
        if (up_y != MPI_PROC_NULL) {
            MPI_Recv(B->row, B->lx, MPI_DOUBLE, up_y, tag, B->comm, MPI_STATUS_IGNORE);
            lu_put_row(B, halo_j, k);
        }
        lu_sweep_plane(B, k, upper);
        if (dn_x != MPI_PROC_NULL) {
            lu_get_col(B, edge_i, k);
            MPI_Send(B->col, B->ly, MPI_DOUBLE, dn_x, tag, B->comm);
        }
        if (dn_y != MPI_PROC_NULL) {
            lu_get_row(B, edge_j, k);
            MPI_Send(B->row, B->lx, MPI_DOUBLE, dn_y, tag, B->comm);
        }
    }
}

/* One SSOR iteration: face exchange, lower sweep, face exchange, upper sweep. */
static void lu_iterate(lu_block *B) {
    lu_exchange_faces(B, 0);
    lu_sweep(B, 0);
    lu_exchange_faces(B, 1);
    lu_sweep(B, 1);
}

/* ||b - A u||_2 over the whole grid (all four halos refreshed first). */
static double lu_resid_norm(lu_block *B) {
    lu_exchange_faces(B, 0);
    lu_exchange_faces(B, 1);
    size_t sx = 1, sy = (size_t)(B->lx + 2), sz = sy * (size_t)(B->ly + 2);
    const double *u = B->u;
    double s = 0.0;
    for (int k = 1; k <= B->nz; k++)
        for (int j = 1; j <= B->ly; j++)
            for (int i = 1; i <= B->lx; i++) {
                size_t c = LU_IDX(B, i, j, k);
                double r = B->b[c] - (6.0 * u[c] - u[c - sx] - u[c + sx] - u[c - sy] - u[c + sy] - u[c - sz] - u[c + sz]);
                s += r * r;
            }
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, B->comm);
    return sqrt(s);
}

/* Every rank's interior values, on rank 0, into out[(k ny + j) nx + i] (global order); buf holds
 * nx*ny*nz values on rank 0 (unused elsewhere), counts/displs P ints. px, py: the process grid. */
static void lu_gather(lu_block *B, int px, int py, double *out, double *buf, int *counts, int *displs) {
    int me, P;
    MPI_Comm_rank(B->comm, &me);
    MPI_Comm_size(B->comm, &P);
    double *mine = B->b;   /* b is not needed any more: reuse it as the send buffer */
    int t = 0;
    for (int k = 1; k <= B->nz; k++)
        for (int j = 1; j <= B->ly; j++)
            for (int i = 1; i <= B->lx; i++) mine[t++] = B->u[LU_IDX(B, i, j, k)];
    long long i0[2], n0[2];
    if (me == 0)
        for (int r = 0, d = 0; r < P; r++) {
            lts_mapp_split(B->nx, px, r / py, &i0[0], &n0[0]);
            lts_mapp_split(B->ny, py, r % py, &i0[1], &n0[1]);
            counts[r] = (int)(n0[0] * n0[1]) * B->nz;
            displs[r] = d;
            d += counts[r];
        }
    MPI_Gatherv(mine, t, MPI_DOUBLE, buf, counts, displs, MPI_DOUBLE, 0, B->comm);
    if (me != 0) return;
    for (int r = 0; r < P; r++) {
        lts_mapp_split(B->nx, px, r / py, &i0[0], &n0[0]);
        lts_mapp_split(B->ny, py, r % py, &i0[1], &n0[1]);
        const double *src = buf + displs[r];
        for (int k = 0, s = 0; k < B->nz; k++)
            for (long long j = 0; j < n0[1]; j++)
                for (long long i = 0; i < n0[0]; i++)
                    out[((size_t)k * (size_t)B->ny + (size_t)(i0[1] + j)) * (size_t)B->nx + (size_t)(i0[0] + i)] = src[s++];
    }
}

/* ---- classes, the run ------------------------------------------------------------------------ */

/* ref_sum: lu_fingerprint of the final u after the class's iterations, from a serial run (np 1)
 * of this program; any decomposition gathers the same bits.
 * Each sweep is a pipeline of nz planes. At np 2 here: S 0.02 s, W 0.3 s, A 1.2-2 s. */
typedef struct {
    const char *name;
    int nx, ny, nz, iters;
    double ref_sum;
} lu_class;

static const lu_class LU_CLASSES[] = {
    {"S", 32, 32, 32, 100, 182433.33706408858},
    {"W", 48, 48, 48, 400, 1410559.4129960155},
    {"A", 96, 96, 96, 200, 22379111.512209475},
};
static const char *const LU_CLASS_NAMES[] = {"S", "W", "A", NULL};

static int lu_default_iters(int ci) { return LU_CLASSES[ci].iters; }

/* The px x py process grid for P ranks (MPI_Dims_create: as square as P allows, px >= py). */
static void lu_grid(int P, int *px, int *py) {
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    *px = dims[0];
    *py = dims[1];
}

static int lu_check(const lts_mapp_ctx *ctx, char *msg, size_t len) {
    const lu_class *k = &LU_CLASSES[ctx->cls_index];
    int px, py;
    lu_grid(ctx->np, &px, &py);
    if (px <= k->nx && py <= k->ny) return 0;
    snprintf(msg, len, "np %d: its %d x %d process grid has more ranks in x than class %s has points (%d); "
             "allowed: np <= %d, or a larger np whose most nearly square p x q has p <= %d", ctx->np, px, py, k->name,
             k->nx, k->nx, k->nx);
    return -1;
}

/* b . u over the whole grid in global (k, j, i) order: a fingerprint that any change of any
 * value moves (a plain sum does not: SSOR nearly conserves it, a perturbation's effects on
 * neighbouring ranks cancelled to 1e-16). */
static double lu_fingerprint(const lu_class *k, const double *u) {
    double s = 0.0;
    size_t q = 0;
    for (int z = 0; z < k->nz; z++)
        for (int y = 0; y < k->ny; y++)
            for (int x = 0; x < k->nx; x++) s += lu_rhs(x, y, z) * u[q++];
    return s;
}

/* The timed SSOR iterations, then the checks (docs/miniapps.md "lu"). value: lu_fingerprint of
 * the gathered u. Reference: the class's stored sum, or with --iters rank 0's serial rerun of the same
 * iterations (the same code on a 1 x 1 grid), compared value by value, bitwise. --inject-fault:
 * the last rank adds 1e-3 to one of its values before the last iteration. */
static int lu_run(const lts_mapp_ctx *ctx, lts_mapp_result *res) {
    const lu_class *k = &LU_CLASSES[ctx->cls_index];
    int px, py, me = ctx->rank, serial = ctx->iters_given;
    lu_grid(ctx->np, &px, &py);
    size_t n = (size_t)k->nx * (size_t)k->ny * (size_t)k->nz;
    lu_block B, S;
    memset(&S, 0, sizeof S);
    double *all = NULL, *buf = NULL, *ser = NULL;
    int *counts = NULL, *displs = NULL;
    int fail = lu_block_init(&B, k->nx, k->ny, k->nz, px, py, me, ctx->comm) != 0;
    if (me == 0) {
        all = malloc(n * sizeof(double));
        buf = malloc(n * sizeof(double));
        counts = malloc((size_t)ctx->np * sizeof(int));
        displs = malloc((size_t)ctx->np * sizeof(int));
        fail |= !all || !buf || !counts || !displs;
        if (serial) {
            fail |= lu_block_init(&S, k->nx, k->ny, k->nz, 1, 1, 0, MPI_COMM_SELF) != 0;
            fail |= !(ser = malloc(n * sizeof(double)));
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, ctx->comm);
    int rc = -1;
    if (fail) goto out;

    double resid0 = lu_resid_norm(&B);
    MPI_Barrier(ctx->comm);
    double t0 = MPI_Wtime();
    for (int it = 0; it < ctx->iters; it++) {
        if (ctx->inject_fault && it == ctx->iters - 1 && me == ctx->np - 1) B.u[LU_IDX(&B, 1, 1, 1)] += 1e-3;
        lu_iterate(&B);
    }
    res->runtime_s = MPI_Wtime() - t0;
    double resid = lu_resid_norm(&B);
    lu_gather(&B, px, py, all, buf, counts, displs);
    int ok = 1;
    if (me == 0) {
        double sum = lu_fingerprint(k, all);
        res->value = sum;
        if (serial) {
            for (int it = 0; it < ctx->iters; it++) lu_iterate(&S);
            lu_gather(&S, 1, 1, ser, buf, counts, displs);
            long mismatches = 0;
            for (size_t q = 0; q < n; q++) mismatches += memcmp(&ser[q], &all[q], sizeof(double)) != 0;
            res->reference = lu_fingerprint(k, ser);
            ok = mismatches == 0;
            if (mismatches) fprintf(stderr, "latscope-lu: %ld of %zu values differ from the serial run\n", mismatches, n);
        } else {
            res->reference = k->ref_sum;
            ok = lts_mapp_close(sum, k->ref_sum, 1e-12);
        }
        if (!(resid < resid0)) {
            fprintf(stderr, "latscope-lu: the residual norm did not decrease (%.6e -> %.6e)\n", resid0, resid);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, ctx->comm);
    res->verified = ok;
    rc = 0;
out:
    lu_block_free(&B);
    lu_block_free(&S);
    free(all); free(buf); free(ser); free(counts); free(displs);
    return rc;
}

LTS_MAPP_MAIN(.app = "lu", .classes = LU_CLASS_NAMES, .default_iters = lu_default_iters, .check = lu_check, .run = lu_run,
              .summary = "LU/SSOR wavefront: pipelined point-to-point sweeps over a 2-D decomposition")
