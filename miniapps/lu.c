/* LU/SSOR-style wavefront mini-app (docs/miniapps.md "lu").
 *
 * The communication pattern of NPB LU's blts/buts (seed 004 §4.2 names LU the application most
 * hurt by latency variation): symmetric successive over-relaxation on the 7-point Poisson operator
 * over an nx x ny x nz grid, decomposed into a 2-D grid of vpx x vpy blocks in (x, y); z is not
 * split. The lower sweep visits points in ascending (k, j, i) order and uses the new values of the
 * (i-1, j-1, k-1) neighbours, so a block can compute plane k only once its west and north
 * neighbours have computed theirs: per plane it receives one column and one row, computes, and
 * sends its east column and south row — a pipeline of nz small messages per direction and sweep.
 * The upper sweep runs the same in reverse (descending order, from the east and south).
 *
 * The block grid is the process grid (one block per rank, MPI_Dims_create), except at np 2: a
 * 2 x 1 grid is one chain, where each plane's delay is *added* once and the mean of a sum does not
 * depend on the delays' spread, so a wavefront at np 2 could not show seed 004's finding at all
 * (docs/study.md, "Why a 2 x 2 block grid at np 2"). At np 2 the grid is 2 x 2 and each rank owns
 * two blocks of a checkerboard, so every message crosses ranks and, as on a 2 x 2 process grid,
 * block (1,1) waits for the *later* of two neighbours — the other rank's sends running beside this
 * rank's own.
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

/* ---- the block grid ------------------------------------------------------------------------- */

#define LU_MAX_BLOCKS 2          /* blocks one rank owns: 2 at np 2, else 1 */
enum { LU_W, LU_E, LU_N, LU_S }; /* neighbour directions */

/* The vpx x vpy block grid for P ranks; block (bx, by) is block id bx * vpy + by. */
static void lu_grid(int P, int *vpx, int *vpy) {
    if (P == 2) {
        *vpx = *vpy = 2;
        return;
    }
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    *vpx = dims[0];
    *vpy = dims[1];
}

/* The rank owning block (bx, by): the checkerboard at np 2 (no two neighbours on one rank), else
 * the block's own id (rank r at (r / vpy, r mod vpy)). */
static int lu_owner(int P, int vpy, int bx, int by) { return P == 2 ? (bx + by) % 2 : bx * vpy + by; }

/* ---- the grid block --------------------------------------------------------------------------- */

typedef struct {
    int nx, ny, nz;               /* global interior points */
    int bx, by;                   /* the block's place in the block grid */
    int slot;                     /* its index among its owner's blocks (block ids ascending) */
    int i0, j0;                   /* global index of the first local interior point (0-based) */
    int lx, ly;                   /* local interior points in x and y */
    int nrank[4], nslot[4];       /* per direction (LU_W..LU_S): the neighbour's owner or MPI_PROC_NULL, its slot */
    double *u, *b;                /* (lx+2) x (ly+2) x (nz+2): one halo / boundary layer around */
    double *col, *row;            /* one plane's column (ly) and row (lx) received in the pipeline */
    double *scol, *srow;          /* the ones sent (an Isend's buffer stays untouched until its wait) */
    double *fsx, *frx, *fsy, *fry;/* face exchange buffers: ly*nz and lx*nz */
} lu_block;

/* One rank's share of the block grid. */
typedef struct {
    int P, vpx, vpy, nb;
    lu_block blk[LU_MAX_BLOCKS];
    double *share;                /* all its blocks' interior values, packed for the gather */
    MPI_Comm comm;
} lu_dom;

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

/* Owner and slot of block (bx, by), or MPI_PROC_NULL outside the grid. */
static void lu_locate(const lu_dom *D, int bx, int by, int *rank, int *slot) {
    *rank = MPI_PROC_NULL;
    *slot = 0;
    if (bx < 0 || by < 0 || bx >= D->vpx || by >= D->vpy) return;
    *rank = lu_owner(D->P, D->vpy, bx, by);
    for (int v = 0; v < bx * D->vpy + by; v++)
        *slot += lu_owner(D->P, D->vpy, v / D->vpy, v % D->vpy) == *rank;
}

static void lu_block_free(lu_block *B) {
    free(B->u); free(B->b); free(B->col); free(B->row); free(B->scol); free(B->srow);
    free(B->fsx); free(B->frx); free(B->fsy); free(B->fry);
    memset(B, 0, sizeof *B);
}

static void lu_dom_free(lu_dom *D) {
    for (int s = 0; s < LU_MAX_BLOCKS; s++) lu_block_free(&D->blk[s]);
    free(D->share);
    D->share = NULL;
    D->nb = 0;
}

/* Block (bx, by) of the domain. 0 or -1 (out of memory; the block is then freed). */
static int lu_block_init(lu_block *B, const lu_dom *D, int nx, int ny, int nz, int bx, int by) {
    long long lo, cnt;
    int r;
    memset(B, 0, sizeof *B);
    B->nx = nx; B->ny = ny; B->nz = nz; B->bx = bx; B->by = by;
    lu_locate(D, bx, by, &r, &B->slot);
    lu_locate(D, bx - 1, by, &B->nrank[LU_W], &B->nslot[LU_W]);
    lu_locate(D, bx + 1, by, &B->nrank[LU_E], &B->nslot[LU_E]);
    lu_locate(D, bx, by - 1, &B->nrank[LU_N], &B->nslot[LU_N]);
    lu_locate(D, bx, by + 1, &B->nrank[LU_S], &B->nslot[LU_S]);
    lts_mapp_split(nx, D->vpx, bx, &lo, &cnt);
    B->i0 = (int)lo; B->lx = (int)cnt;
    lts_mapp_split(ny, D->vpy, by, &lo, &cnt);
    B->j0 = (int)lo; B->ly = (int)cnt;
    size_t n = (size_t)(B->lx + 2) * (size_t)(B->ly + 2) * (size_t)(nz + 2);
    size_t fx = (size_t)B->ly * (size_t)nz + 1, fy = (size_t)B->lx * (size_t)nz + 1;
    B->u = calloc(n, sizeof(double));
    B->b = calloc(n, sizeof(double));
    B->col = calloc((size_t)B->ly + 1, sizeof(double)); B->scol = calloc((size_t)B->ly + 1, sizeof(double));
    B->row = calloc((size_t)B->lx + 1, sizeof(double)); B->srow = calloc((size_t)B->lx + 1, sizeof(double));
    B->fsx = calloc(fx, sizeof(double)); B->frx = calloc(fx, sizeof(double));
    B->fsy = calloc(fy, sizeof(double)); B->fry = calloc(fy, sizeof(double));
    if (!B->u || !B->b || !B->col || !B->row || !B->scol || !B->srow || !B->fsx || !B->frx || !B->fsy || !B->fry) {
        lu_block_free(B);
        return -1;
    }
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= B->ly; j++)
            for (int i = 1; i <= B->lx; i++) B->b[LU_IDX(B, i, j, k)] = lu_rhs(B->i0 + i - 1, B->j0 + j - 1, k - 1);
    return 0;
}

/* Rank `me`'s blocks of the grid for P ranks (P = 1 on MPI_COMM_SELF: the serial rerun), in block
 * id order. 0 or -1 (out of memory; everything freed). */
static int lu_dom_init(lu_dom *D, int nx, int ny, int nz, int P, int me, MPI_Comm comm) {
    memset(D, 0, sizeof *D);
    D->P = P; D->comm = comm;
    lu_grid(P, &D->vpx, &D->vpy);
    for (int v = 0; v < D->vpx * D->vpy; v++) {
        int bx = v / D->vpy, by = v % D->vpy;
        if (lu_owner(P, D->vpy, bx, by) != me) continue;
        if (lu_block_init(&D->blk[D->nb], D, nx, ny, nz, bx, by) != 0) {
            lu_dom_free(D);
            return -1;
        }
        D->nb++;
    }
    size_t total = 1;
    for (int s = 0; s < D->nb; s++) total += (size_t)D->blk[s].lx * (size_t)D->blk[s].ly * (size_t)nz;
    if (!(D->share = malloc(total * sizeof(double)))) {
        lu_dom_free(D);
        return -1;
    }
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

/* Column i (all interior j) of plane k to the send buffer / from the receive buffer; row j likewise. */
static void lu_get_col(lu_block *B, int i, int k) { for (int j = 1; j <= B->ly; j++) B->scol[j - 1] = B->u[LU_IDX(B, i, j, k)]; }
static void lu_put_col(lu_block *B, int i, int k) { for (int j = 1; j <= B->ly; j++) B->u[LU_IDX(B, i, j, k)] = B->col[j - 1]; }
static void lu_get_row(lu_block *B, int j, int k) { for (int i = 1; i <= B->lx; i++) B->srow[i - 1] = B->u[LU_IDX(B, i, j, k)]; }
static void lu_put_row(lu_block *B, int j, int k) { for (int i = 1; i <= B->lx; i++) B->u[LU_IDX(B, i, j, k)] = B->row[i - 1]; }

/* A message's tag: its kind, its axis (0: a column, x; 1: a row, y) and the receiving block's slot,
 * so that two blocks on one rank never take each other's messages (at most 15 < MPI's 32767). */
enum { LU_TAG_FACE = 1, LU_TAG_LOWER = 2, LU_TAG_UPPER = 3 };
static int lu_tag(int kind, int axis, int slot) { return kind + 4 * axis + 8 * slot; }

/* Face exchange before a sweep. A sweep reads, on the sides it does not receive from in the
 * pipeline, the neighbours' values as the previous sweep left them: before the lower sweep the
 * east and south halos, before the upper sweep the west and north ones. One message per face;
 * all of a rank's blocks at once (nonblocking: at np 2 each rank's two blocks both wait on the
 * other rank's two). */
static void lu_exchange_faces(lu_dom *D, int upper) {
    MPI_Request req[LU_MAX_BLOCKS * 4];
    int nr = 0;
    int to_x = upper ? LU_E : LU_W, from_x = upper ? LU_W : LU_E;
    int to_y = upper ? LU_S : LU_N, from_y = upper ? LU_N : LU_S;
    for (int s = 0; s < D->nb; s++) {
        lu_block *B = &D->blk[s];
        int nz = B->nz, ly = B->ly, lx = B->lx;
        int send_i = upper ? lx : 1, send_j = upper ? ly : 1;
        MPI_Irecv(B->frx, ly * nz, MPI_DOUBLE, B->nrank[from_x], lu_tag(LU_TAG_FACE, 0, B->slot), D->comm, &req[nr++]);
        MPI_Irecv(B->fry, lx * nz, MPI_DOUBLE, B->nrank[from_y], lu_tag(LU_TAG_FACE, 1, B->slot), D->comm, &req[nr++]);
        for (int k = 1; k <= nz; k++)
            for (int j = 1; j <= ly; j++) B->fsx[(k - 1) * ly + j - 1] = B->u[LU_IDX(B, send_i, j, k)];
        for (int k = 1; k <= nz; k++)
            for (int i = 1; i <= lx; i++) B->fsy[(k - 1) * lx + i - 1] = B->u[LU_IDX(B, i, send_j, k)];
        MPI_Isend(B->fsx, ly * nz, MPI_DOUBLE, B->nrank[to_x], lu_tag(LU_TAG_FACE, 0, B->nslot[to_x]), D->comm, &req[nr++]);
        MPI_Isend(B->fsy, lx * nz, MPI_DOUBLE, B->nrank[to_y], lu_tag(LU_TAG_FACE, 1, B->nslot[to_y]), D->comm, &req[nr++]);
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    for (int s = 0; s < D->nb; s++) {
        lu_block *B = &D->blk[s];
        int nz = B->nz, ly = B->ly, lx = B->lx;
        int halo_i = upper ? 0 : lx + 1, halo_j = upper ? 0 : ly + 1;
        if (B->nrank[from_x] != MPI_PROC_NULL)
            for (int k = 1; k <= nz; k++)
                for (int j = 1; j <= ly; j++) B->u[LU_IDX(B, halo_i, j, k)] = B->frx[(k - 1) * ly + j - 1];
        if (B->nrank[from_y] != MPI_PROC_NULL)
            for (int k = 1; k <= nz; k++)
                for (int i = 1; i <= lx; i++) B->u[LU_IDX(B, i, halo_j, k)] = B->fry[(k - 1) * lx + i - 1];
    }
}

/* The pipelined sweep (NPB LU's blts / buts): per plane, wait for the upstream neighbours'
 * boundary, relax the plane, pass this block's boundary downstream. A rank with several blocks
 * takes them in wavefront order: at step s, a block d diagonals further from the sweep's corner
 * than the rank's first block relaxes plane s - d, so at np 2 rank 0 relaxes block (0,0)'s plane s
 * beside block (1,1)'s plane s - 2 while rank 1 relaxes (1,0) and (0,1)'s plane s - 1 — both ranks
 * working (and delaying their sends) at once. Sends are nonblocking, each completed before its
 * buffer is reused; the blocking receives cannot deadlock: the dependencies form a DAG over
 * (block, plane) and every rank takes its (step, block) pairs in an order that respects it. */
static void lu_sweep(lu_dom *D, int upper) {
    int kind = upper ? LU_TAG_UPPER : LU_TAG_LOWER;
    int up_x = upper ? LU_E : LU_W, up_y = upper ? LU_S : LU_N;
    int dn_x = upper ? LU_W : LU_E, dn_y = upper ? LU_N : LU_S;
    int diag[LU_MAX_BLOCKS], order[LU_MAX_BLOCKS], first = 1 << 30, span = 0;
    MPI_Request req[LU_MAX_BLOCKS][2];
    for (int s = 0; s < D->nb; s++) {
        const lu_block *B = &D->blk[s];
        diag[s] = upper ? (D->vpx - 1 - B->bx) + (D->vpy - 1 - B->by) : B->bx + B->by;
        first = diag[s] < first ? diag[s] : first;
        order[s] = s;
        req[s][0] = req[s][1] = MPI_REQUEST_NULL;
    }
    for (int a = 0; a < D->nb; a++)          /* blocks by diagonal (insertion sort of <= 2) */
        for (int b = a; b > 0 && diag[order[b]] < diag[order[b - 1]]; b--) {
            int t = order[b]; order[b] = order[b - 1]; order[b - 1] = t;
        }
    for (int s = 0; s < D->nb; s++) span = diag[s] - first > span ? diag[s] - first : span;
    for (int step = 0; step < D->blk[0].nz + span; step++)
        for (int o = 0; o < D->nb; o++) {
            int s = order[o];
            lu_block *B = &D->blk[s];
            int p = step - (diag[s] - first), nz = B->nz;
            if (p < 0 || p >= nz) continue;
            int k = upper ? nz - p : p + 1;
            if (B->nrank[up_x] != MPI_PROC_NULL) {
                MPI_Recv(B->col, B->ly, MPI_DOUBLE, B->nrank[up_x], lu_tag(kind, 0, B->slot), D->comm, MPI_STATUS_IGNORE);
                lu_put_col(B, upper ? B->lx + 1 : 0, k);
            }
            if (B->nrank[up_y] != MPI_PROC_NULL) {
                MPI_Recv(B->row, B->lx, MPI_DOUBLE, B->nrank[up_y], lu_tag(kind, 1, B->slot), D->comm, MPI_STATUS_IGNORE);
                lu_put_row(B, upper ? B->ly + 1 : 0, k);
            }
            lu_sweep_plane(B, k, upper);
            if (B->nrank[dn_x] != MPI_PROC_NULL) {
                MPI_Wait(&req[s][0], MPI_STATUS_IGNORE);
                lu_get_col(B, upper ? 1 : B->lx, k);
                MPI_Isend(B->scol, B->ly, MPI_DOUBLE, B->nrank[dn_x], lu_tag(kind, 0, B->nslot[dn_x]), D->comm, &req[s][0]);
            }
            if (B->nrank[dn_y] != MPI_PROC_NULL) {
                MPI_Wait(&req[s][1], MPI_STATUS_IGNORE);
                lu_get_row(B, upper ? 1 : B->ly, k);
                MPI_Isend(B->srow, B->lx, MPI_DOUBLE, B->nrank[dn_y], lu_tag(kind, 1, B->nslot[dn_y]), D->comm, &req[s][1]);
            }
        }
    for (int s = 0; s < D->nb; s++) MPI_Waitall(2, req[s], MPI_STATUSES_IGNORE);
}

/* One SSOR iteration: face exchange, lower sweep, face exchange, upper sweep. */
static void lu_iterate(lu_dom *D) {
    lu_exchange_faces(D, 0);
    lu_sweep(D, 0);
    lu_exchange_faces(D, 1);
    lu_sweep(D, 1);
}

/* ||b - A u||_2 over the whole grid (all four halos refreshed first). */
static double lu_resid_norm(lu_dom *D) {
    lu_exchange_faces(D, 0);
    lu_exchange_faces(D, 1);
    double s = 0.0;
    for (int b = 0; b < D->nb; b++) {
        const lu_block *B = &D->blk[b];
        size_t sx = 1, sy = (size_t)(B->lx + 2), sz = sy * (size_t)(B->ly + 2);
        const double *u = B->u;
        for (int k = 1; k <= B->nz; k++)
            for (int j = 1; j <= B->ly; j++)
                for (int i = 1; i <= B->lx; i++) {
                    size_t c = LU_IDX(B, i, j, k);
                    double r = B->b[c] - (6.0 * u[c] - u[c - sx] - u[c + sx] - u[c - sy] - u[c + sy] - u[c - sz] - u[c + sz]);
                    s += r * r;
                }
    }
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, D->comm);
    return sqrt(s);
}

/* Every rank's interior values, on rank 0, into out[(k ny + j) nx + i] (global order); buf holds
 * nx*ny*nz values on rank 0 (unused elsewhere), counts/displs P ints. Each rank sends its blocks
 * in slot order; rank 0 walks the block ids the same way. */
static void lu_gather(lu_dom *D, double *out, double *buf, int *counts, int *displs) {
    int me, P;
    MPI_Comm_rank(D->comm, &me);
    MPI_Comm_size(D->comm, &P);
    const lu_block *B0 = &D->blk[0];
    int nx = B0->nx, ny = B0->ny, nz = B0->nz, t = 0;
    double *mine = D->share;
    for (int b = 0; b < D->nb; b++) {
        const lu_block *B = &D->blk[b];
        for (int k = 1; k <= nz; k++)
            for (int j = 1; j <= B->ly; j++)
                for (int i = 1; i <= B->lx; i++) mine[t++] = B->u[LU_IDX(B, i, j, k)];
    }
    long long i0, n0, j0, m0;
    if (me == 0) {
        for (int r = 0; r < P; r++) counts[r] = 0;
        for (int v = 0; v < D->vpx * D->vpy; v++) {
            lts_mapp_split(nx, D->vpx, v / D->vpy, &i0, &n0);
            lts_mapp_split(ny, D->vpy, v % D->vpy, &j0, &m0);
            counts[lu_owner(D->P, D->vpy, v / D->vpy, v % D->vpy)] += (int)(n0 * m0) * nz;
        }
        for (int r = 0, d = 0; r < P; r++) {
            displs[r] = d;
            d += counts[r];
        }
    }
    MPI_Gatherv(mine, t, MPI_DOUBLE, buf, counts, displs, MPI_DOUBLE, 0, D->comm);
    if (me != 0) return;
    for (int r = 0; r < P; r++) {
        const double *src = buf + displs[r];
        size_t s = 0;
        for (int v = 0; v < D->vpx * D->vpy; v++) {
            int bx = v / D->vpy, by = v % D->vpy;
            if (lu_owner(D->P, D->vpy, bx, by) != r) continue;
            lts_mapp_split(nx, D->vpx, bx, &i0, &n0);
            lts_mapp_split(ny, D->vpy, by, &j0, &m0);
            for (int k = 0; k < nz; k++)
                for (long long j = 0; j < m0; j++)
                    for (long long i = 0; i < n0; i++)
                        out[((size_t)k * (size_t)ny + (size_t)(j0 + j)) * (size_t)nx + (size_t)(i0 + i)] = src[s++];
        }
    }
}

/* ---- classes, the run ------------------------------------------------------------------------ */

/* ref_sum: lu_fingerprint of the final u after the class's iterations, from a serial run (np 1)
 * of this program; any decomposition gathers the same bits.
 * Each sweep is a pipeline of nz planes. At np 2 here (a 2 x 2 block grid): S 0.05-0.13 s, W 0.46 s. */
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
    int me = ctx->rank, serial = ctx->iters_given;
    size_t n = (size_t)k->nx * (size_t)k->ny * (size_t)k->nz;
    lu_dom B, S;
    memset(&S, 0, sizeof S);
    double *all = NULL, *buf = NULL, *ser = NULL;
    int *counts = NULL, *displs = NULL;
    int fail = lu_dom_init(&B, k->nx, k->ny, k->nz, ctx->np, me, ctx->comm) != 0;
    if (me == 0) {
        all = malloc(n * sizeof(double));
        buf = malloc(n * sizeof(double));
        counts = malloc((size_t)ctx->np * sizeof(int));
        displs = malloc((size_t)ctx->np * sizeof(int));
        fail |= !all || !buf || !counts || !displs;
        if (serial) {
            fail |= lu_dom_init(&S, k->nx, k->ny, k->nz, 1, 0, MPI_COMM_SELF) != 0;
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
        if (ctx->inject_fault && it == ctx->iters - 1 && me == ctx->np - 1) B.blk[0].u[LU_IDX(&B.blk[0], 1, 1, 1)] += 1e-3;
        lu_iterate(&B);
    }
    res->runtime_s = MPI_Wtime() - t0;
    double resid = lu_resid_norm(&B);
    lu_gather(&B, all, buf, counts, displs);
    int ok = 1;
    if (me == 0) {
        double sum = lu_fingerprint(k, all);
        res->value = sum;
        if (serial) {
            for (int it = 0; it < ctx->iters; it++) lu_iterate(&S);
            lu_gather(&S, ser, buf, counts, displs);
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
    lu_dom_free(&B);
    lu_dom_free(&S);
    free(all); free(buf); free(ser); free(counts); free(displs);
    return rc;
}

LTS_MAPP_MAIN(.app = "lu", .classes = LU_CLASS_NAMES, .default_iters = lu_default_iters, .check = lu_check, .run = lu_run,
              .summary = "LU/SSOR wavefront: pipelined point-to-point sweeps over a 2-D decomposition")
