/* The Diamond-DAG wavefront of LoGPC §5.2, eq. (15), as an application twin (src/bench/ops_apps.c
 * runs it). */
#include "latscope/errors.h"
#include "latscope/timer.h"
#include "latscope/util.h"
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "latscope/apps_internal.h"

/* ---- Diamond DAG wavefront (LoGPC §5.2, eq. (15)) ---------------------------------------- */

/* One task: cell (i, j) from its north and west neighbours, then `rounds` rounds of an integer
 * mix (a dependent chain of multiplies the compiler cannot shorten) as the task's work. */
static inline uint64_t dag_cell(uint64_t north, uint64_t west, uint64_t i, uint64_t j, long rounds) {
    uint64_t x = north * 0x9E3779B97F4A7C15ull + (west ^ (west >> 29)) + ((i << 32) | j);
    x ^= x >> 31;
    for (long r = 0; r < rounds; r++) x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ull + (uint64_t)r;
    return x;
}
static inline uint64_t dag_north(uint64_t seed, uint64_t j) { return mix64(seed ^ 0x4e4f525448ull ^ (j << 20)); }
static inline uint64_t dag_west(uint64_t seed, uint64_t i) { return mix64(seed ^ 0x57455354ull ^ (i << 21)); }
/* padding bytes of a boundary value wider than 8 bytes (the "message size per element") */
static inline unsigned char dag_pad(uint64_t v) { return (unsigned char)(v ^ (v >> 8) ^ 0x5a); }

/* rows of rank r / columns of block c: n split into parts that differ by at most one */
static int part_start(int n, int parts, int k) { return k * (n / parts) + (k < n % parts ? k : n % parts); }

const char *lts_app_dag_variant(const lts_app_params_t *p) { (void)p; return "stripe"; }

int lts_app_dag_check(const lts_app_params_t *p, const size_t *sizes, size_t nsizes, const int *blocks, size_t nblocks,
                     int P, char *msg, size_t len) {
    const int n = p->grid;
    if (n < 1 || n > LTS_APP_MAX_GRID) {
        snprintf(msg, len, "--grid %d: must be in [1, %d] (rank 0 keeps the whole n x n serial grid to check the result)",
                 n, LTS_APP_MAX_GRID);
        return LTS_EINVAL;
    }
    if (n < P) {
        snprintf(msg, len, "--grid %d: must be at least the number of ranks (%d): every rank owns a stripe of one row "
                 "or more", n, P);
        return LTS_EINVAL;
    }
    if (!(p->task_work_s >= 0) || p->task_work_s > 1.0) {
        snprintf(msg, len, "--task-work %g s: must be in [0, 1 s]", p->task_work_s);
        return LTS_EINVAL;
    }
    for (size_t b = 0; b < nblocks; b++)
        if (blocks[b] < 1 || blocks[b] > n) {
            snprintf(msg, len, "--blocks %d: must be in [1, n = %d] (b blocks of n/b columns each)", blocks[b], n);
            return LTS_EINVAL;
        }
    for (size_t s = 0; s < nsizes; s++)
        if (sizes[s] < 8 || (double)sizes[s] * n > (double)LTS_APP_MAX_VOLUME_BYTES) {
            snprintf(msg, len, "--sizes %zu B: the bytes sent per boundary value must be in [8, %zu] for --grid %d "
                     "(8: the 64-bit cell value; more: padding; value bytes x n <= %zu MiB)", sizes[s],
                     LTS_APP_MAX_VOLUME_BYTES / (size_t)n, n, LTS_APP_MAX_VOLUME_BYTES >> 20);
            return LTS_EINVAL;
        }
    return LTS_OK;
}

/* Seconds per task with `rounds`: the fastest of a few passes over a row of m cells. */
static double dag_time_task(const lts_timer_t *tm, long rounds, int m) {
    double best = INFINITY;
    volatile uint64_t sink = 0;
    for (int trial = 0; trial < 5; trial++) {
        uint64_t w = 1;
        double t0 = lts_timer_now(tm);
        for (int j = 0; j < m; j++) w = dag_cell(w, (uint64_t)j, 3, (uint64_t)j, rounds);
        double t = lts_timer_now(tm) - t0;
        sink += w;
        if (t < best) best = t;
    }
    (void)sink;
    return best / m;
}

/* Rounds per task so that one task takes --task-work (calibrated on rank 0 and broadcast: the
 * result must be the same computation on every rank and in the serial check). */
static void dag_calibrate(const lts_timer_t *tm, double work_s, long *rounds, double *task_s) {
    int m = work_s > 0 ? (int)fmin(4096.0, fmax(16.0, 2e-3 / work_s)) : 4096;
    double base = dag_time_task(tm, 0, m);
    long r = 0;
    if (work_s > base) {
        const long R1 = 2000;
        double per = (dag_time_task(tm, R1, (int)fmax(16.0, m / 4.0)) - base) / R1;
        if (per > 0) r = lround((work_s - base) / per);
    }
    *rounds = r;
    *task_s = r ? dag_time_task(tm, r, m) : base;
}

static void dag_compute_serial(uint64_t *g, int n, uint64_t seed, long rounds) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            uint64_t north = i ? g[(size_t)(i - 1) * n + j] : dag_north(seed, (uint64_t)j);
            uint64_t west = j ? g[(size_t)i * n + j - 1] : dag_west(seed, (uint64_t)i);
            g[(size_t)i * n + j] = dag_cell(north, west, (uint64_t)i, (uint64_t)j, rounds);
        }
}

int lts_app_dag_setup(lts_app_run_state_t *st) {
    const int n = st->p->grid, P = st->P;
    st->row0 = part_start(n, P, st->me);
    st->nrows = part_start(n, P, st->me + 1) - st->row0;
    double cal[2] = {0, 0};
    if (st->me == 0) {
        long r;
        dag_calibrate(st->timer, st->p->task_work_s, &r, &cal[1]);
        cal[0] = (double)r;
    }
    if (MPI_Bcast(cal, 2, MPI_DOUBLE, 0, st->comm)) return LTS_EMPI;
    st->rounds = (long)cal[0];
    st->task_s = cal[1];
    /* The serial computation on rank 0; each rank gets its stripe of it to check against. */
    uint64_t *full = NULL;
    int *counts = NULL, *displs = NULL, ok = 1, all_ok;
    st->ref = malloc(((size_t)st->nrows * n + 1) * sizeof *st->ref);
    if (!st->ref) ok = 0;
    if (st->me == 0) {
        full = malloc((size_t)n * n * sizeof *full);
        counts = malloc((size_t)P * sizeof *counts);
        displs = malloc((size_t)P * sizeof *displs);
        if (!full || !counts || !displs) ok = 0;
        else {
            dag_compute_serial(full, n, st->p->seed, st->rounds);
            for (int r = 0; r < P; r++) {
                displs[r] = part_start(n, P, r) * n;
                counts[r] = (part_start(n, P, r + 1) - part_start(n, P, r)) * n;
            }
        }
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, st->comm);
    int rc = LTS_ENOMEM;
    if (all_ok)
        rc = lts_chk(MPI_Scatterv(full, counts, displs, MPI_UINT64_T, st->ref, st->nrows * n, MPI_UINT64_T, 0, st->comm));
    free(full);
    free(counts);
    free(displs);
    return rc;
}

void lts_app_dag_teardown(lts_app_run_state_t *st) {
    free(st->ref);
    st->ref = NULL;
}

static void dag_free(lts_app_run_state_t *st) {
    free(st->grid); free(st->dag_in); free(st->dag_out); free(st->req);
    st->grid = NULL; st->dag_in = st->dag_out = NULL; st->req = NULL;
}

static int dag_time_stripe(lts_app_run_state_t *st);

int lts_app_dag_init(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    const int n = st->p->grid, b = st->blocks;
    st->slot = st->bytes * (size_t)((n + b - 1) / b);
    st->grid = malloc(((size_t)st->nrows * n + 1) * sizeof *st->grid);
    st->dag_in = malloc(st->slot * (size_t)b + 1);
    st->dag_out = malloc(st->slot * (size_t)b + 1);
    st->req = malloc(2 * (size_t)b * sizeof *st->req);
    if (!st->grid || !st->dag_in || !st->dag_out || !st->req) { dag_free(st); return LTS_ENOMEM; }
    st->pending = 0;
    return dag_time_stripe(st);
}

/* Block k of this rank's stripe (rows [row0, row0 + nrows), columns [c0, c1)), its north
 * inputs for the first row in `above` (rank > 0). */
static void dag_block(lts_app_run_state_t *st, int k, const unsigned char *above, int corrupt) {
    const int n = st->p->grid, b = st->blocks, me = st->me;
    const int c0 = part_start(n, b, k), c1 = part_start(n, b, k + 1);
    const size_t vb = st->bytes;
    const uint64_t seed = st->p->seed;
    for (int ii = 0; ii < st->nrows; ii++) {
        const uint64_t i = (uint64_t)(st->row0 + ii);
        uint64_t *row = st->grid + (size_t)ii * n;
        for (int j = c0; j < c1; j++) {
            uint64_t north;
            if (ii) north = row[j - n];
            else if (me > 0) memcpy(&north, above + (size_t)(j - c0) * vb, 8);
            else north = dag_north(seed, (uint64_t)j);
            /* testing the verifier: a damaged input to this rank's first task */
            if (corrupt && ii == 0 && j == 0) north ^= 1;
            uint64_t west = j ? row[j - 1] : dag_west(seed, i);
            row[j] = dag_cell(north, west, i, (uint64_t)j, st->rounds);
        }
    }
}

/* Pack block k's last row for the rank below (the aggregation cost alpha n/b in eq. (15)'s W). */
static unsigned char *dag_pack(lts_app_run_state_t *st, int k) {
    const int n = st->p->grid, b = st->blocks;
    const int c0 = part_start(n, b, k), c1 = part_start(n, b, k + 1);
    const size_t vb = st->bytes;
    unsigned char *out = st->dag_out + (size_t)k * st->slot;
    const uint64_t *bottom = st->grid + (size_t)(st->nrows - 1) * n;
    for (int j = c0; j < c1; j++) {
        unsigned char *e = out + (size_t)(j - c0) * vb;
        memcpy(e, &bottom[j], 8);
        if (vb > 8) memset(e + 8, dag_pad(bottom[j]), vb - 8);
    }
    return out;
}

/* The computation of the stripe alone, as the run does it for this b (every block computed and
 * packed, no message): the fastest of a few passes, the slowest rank's value. This measures eq.
 * (15)'s W = w_a + alpha n / b for this block shape directly, so the per-block costs of the loop
 * and the packing and the cache behaviour of blocks n/b columns wide are in it (the calibrated
 * task_s is one task in a tight loop over a row); it is a microbenchmark of the computation,
 * untimed by the driver and run before the repetitions, never derived from the DAG's timings. */
static double last_stripe_s = -1.0, last_stripe_last_s = -1.0;
double lts_app_dag_stripe_compute_s(void) { return last_stripe_s; }
/* the last rank's (it packs nothing: its W is the computation alone) */
double lts_app_dag_stripe_last_s(void) { return last_stripe_last_s; }

static int dag_time_stripe(lts_app_run_state_t *st) {
    const int b = st->blocks, last = st->me == st->P - 1;
    memset(st->dag_in, 0, st->slot * (size_t)b);
    double best = INFINITY;
    for (int pass = 0; pass < 5; pass++) {
        double t0 = lts_timer_now(st->timer);
        for (int k = 0; k < b; k++) {
            dag_block(st, k, st->dag_in + (size_t)k * st->slot, 0);
            if (!last) (void)dag_pack(st, k);
        }
        double t = lts_timer_now(st->timer) - t0;
        if (t < best) best = t;
        if (pass >= 1 && best * (pass + 1) > 0.1) break;   /* long stripes: two passes are enough */
    }
    double all, lastv = best;
    if (MPI_Allreduce(&best, &all, 1, MPI_DOUBLE, MPI_MAX, st->comm)) return LTS_EMPI;
    if (MPI_Bcast(&lastv, 1, MPI_DOUBLE, st->P - 1, st->comm)) return LTS_EMPI;
    last_stripe_s = all;
    last_stripe_last_s = lastv;
    return LTS_OK;
}

/* Stripe partitioning (LoGPC §5.2.1, Fig. 8): this rank owns rows [row0, row0 + nrows); the
 * stripe is cut into b column blocks. Block c needs the last row of block c of the rank above
 * (one message of value-bytes x columns, received into its own slot, all receives posted up
 * front as bulk transfers land without the receiver's help), is computed row by row, and its
 * last row is packed (the aggregation cost alpha n/b of eq. (15)'s W) and sent down. */
int lts_app_dag_run(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    const int n = st->p->grid, b = st->blocks, me = st->me, last = me == st->P - 1;
    const size_t vb = st->bytes;
    MPI_Request *rin = st->req, *rout = st->req + b;
    const int corrupt = st->p->corrupt_rank == me;
    st->pending = 1;
    for (int k = 0; k < b; k++) {
        int cols = part_start(n, b, k + 1) - part_start(n, b, k);
        rin[k] = rout[k] = MPI_REQUEST_NULL;
        if (me > 0 && MPI_Irecv(st->dag_in + (size_t)k * st->slot, (int)(cols * vb), MPI_BYTE, me - 1, TAG_DAG, st->comm,
                                &rin[k])) return LTS_EMPI;
    }
    for (int k = 0; k < b; k++) {
        const int cols = part_start(n, b, k + 1) - part_start(n, b, k);
        if (me > 0 && MPI_Wait(&rin[k], MPI_STATUS_IGNORE)) return LTS_EMPI;
        dag_block(st, k, st->dag_in + (size_t)k * st->slot, corrupt);
        if (!last) {
            unsigned char *out = dag_pack(st, k);
            if (MPI_Isend(out, (int)((size_t)cols * vb), MPI_BYTE, me + 1, TAG_DAG, st->comm, &rout[k]))
                return LTS_EMPI;
        }
    }
    return lts_chk(MPI_Waitall(b, rout, MPI_STATUSES_IGNORE));
}

/* This rank's stripe equals the serial computation's; received padding is intact. */
static void dag_verify(lts_app_run_state_t *st) {
    if (!st->pending) return;
    st->pending = 0;
    const int n = st->p->grid, b = st->blocks;
    const size_t vb = st->bytes;
    for (size_t q = 0; q < (size_t)st->nrows * n && !st->failed; q++)
        if (st->grid[q] != st->ref[q])
            lts_app_fail_verify(st, "dag cell (%d, %d) = 0x%016llx, the serial computation on rank 0 gives 0x%016llx",
                        st->row0 + (int)(q / (size_t)n), (int)(q % (size_t)n), (unsigned long long)st->grid[q],
                        (unsigned long long)st->ref[q]);
    for (int k = 0; k < b && st->me > 0 && vb > 8 && !st->failed; k++) {
        int cols = part_start(n, b, k + 1) - part_start(n, b, k);
        for (int j = 0; j < cols && !st->failed; j++) {
            const unsigned char *e = st->dag_in + (size_t)k * st->slot + (size_t)j * vb;
            uint64_t v;
            memcpy(&v, e, 8);
            for (size_t t = 8; t < vb; t++)
                if (e[t] != dag_pad(v)) {
                    lts_app_fail_verify(st, "dag block %d from rank %d: value %d, padding byte %zu is 0x%02x, expected 0x%02x", k,
                                st->me - 1, j, t, e[t], dag_pad(v));
                    break;
                }
        }
    }
    memset(st->grid, POISON, (size_t)st->nrows * n * sizeof *st->grid);
    if (st->me > 0) memset(st->dag_in, POISON, st->slot * (size_t)b);
}

int lts_app_dag_prepare(lts_op_ctx_t *c) {
    dag_verify(c->state);
    return LTS_OK;
}

void lts_app_dag_fini(lts_op_ctx_t *c) {
    lts_app_run_state_t *st = c->state;
    dag_verify(st);
    dag_free(st);
}

