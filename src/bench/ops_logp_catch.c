/* latscope-bench logp's "catch": the lead a partner's send needs for a posted receive's MPI_Wait
 * to find the message at its first look (docs/barriers.md "The catch boundary, measured").
 *
 * Why: a receive posted ahead (MPI_Sendrecv's Irecv, Isend, Waitall; the gathers' Irecv ... Wait)
 * either finds its message at the wait's first pass of the progress engine (the wait returns
 * ~irecv_wait later) or misses it and enters MPICH's yielding loop (the wait floor, rwait - o_s,
 * ~0.6 us more here). Which of the two happens decides the state the barrier loop settles in
 * (tree-shm, the exchange rows). The loop simulation used to derive the boundary from L_poll
 * (a latency fitted from round trips, negative here), which put it 25-196 ns too early; this
 * measures it directly, in the same launch, on the pair.
 *
 * Method (a sweep of leads, each a Bernoulli trial): rank 0 does 30 us of work (seed 002 §4.3's
 * loop, as rtt_loop), posts MPI_Irecv, picks a call time T a few us ahead and publishes it through
 * an MPI-3 shared-memory window (the pair must share a node: one CLOCK_MONOTONIC for both), then
 * calls MPI_Wait at T; the partner starts its MPI_Send at T - lead. Leads run over a fixed grid
 * (LEAD_LO..LEAD_HI), interleaved, REPS trials each. A trial is "caught" when the wait returns
 * below the midpoint between the median wait at the largest lead (always caught: the message was
 * there long before) and at the smallest (always missed: sent after the call) -- both measured in
 * this sweep, no constant from elsewhere. The caught fraction F(lead), made monotone (pooling adjacent
 * violators), is the distribution function of the boundary B: a trial catches when lead >= B. The
 * samples returned are B's quantiles (k + 1/2)/N read off F by linear interpolation between grid
 * points, so a record's median is the lead caught half the time and its min/p90/p99 the spread
 * (the loop simulation draws B from them). Cost: GRID x REPS trials of ~35 us (~70 ms). */
#include "latscope/logp.h"
#include "latscope/errors.h"
#include "latscope/reps.h"
#include "latscope/util.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CATCH_TAG 0x4c58
#define LEAD_LO (-400e-9)   /* send 400 ns after the call: always missed */
#define LEAD_STEP 50e-9
#define GRID 29             /* up to +1 us before the call: always caught */
#define REPS 64
#define WORK_S 30e-6        /* seed 002 §4.3: the dummy work between two barriers */
#define AHEAD_S 3e-6        /* T is published this long before it (the partner's reaction) */

static double mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static void until(double t) {
    while (mono() < t) {
    }
}
static double median_of(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, lts_cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* F made nondecreasing in the lead (it is B's distribution function) by pooling adjacent
 * violators (isotonic regression, equal weights): a running maximum would let one noisy early
 * grid point lift every later one */
static void monotone(double *F) {
    double val[GRID];
    int len[GRID], nb = 0;
    for (int k = 0; k < GRID; k++) {
        val[nb] = F[k];
        len[nb++] = 1;
        while (nb > 1 && val[nb - 2] > val[nb - 1]) {
            val[nb - 2] = (val[nb - 2] * len[nb - 2] + val[nb - 1] * len[nb - 1]) / (len[nb - 2] + len[nb - 1]);
            len[nb - 2] += len[nb - 1];
            nb--;
        }
    }
    for (int b = 0, k = 0; b < nb; b++)
        for (int i = 0; i < len[b]; i++) F[k++] = val[b];
}

/* the sweep on the pair `pair` (ranks 0, 1; one node); rank 0 fills wait[GRID][REPS] */
static int sweep(MPI_Comm pair, int me, double (*wait)[REPS]) {
    MPI_Win win;
    void *base;
    MPI_Aint sz;
    int du, rc = LTS_OK;
    if (MPI_Win_allocate_shared(me == 0 ? 4 * 64 : 0, 1, MPI_INFO_NULL, pair, &base, &win)) return LTS_EMPI;
    if (MPI_Win_shared_query(win, 0, &sz, &du, &base)) {
        MPI_Win_free(&win);
        return LTS_EMPI;
    }
    int off = (int)((64 - ((uintptr_t)base & 63)) & 63);
    MPI_Bcast(&off, 1, MPI_INT, 0, pair);
    /* one 64-byte line each: go (rank 0 -> 1, with T), done (1 -> 0) */
    volatile uint64_t *go = (volatile uint64_t *)((char *)base + off), *done = go + 16;
    volatile double *Tp = (volatile double *)(go + 1);
    if (me == 0) *go = *done = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_sync(win);
    MPI_Barrier(pair);
    uint64_t seq = 0;
    for (int r = 0; r < REPS && rc == LTS_OK; r++)
        for (int k0 = 0; k0 < GRID && rc == LTS_OK; k0++) {
            int k = (k0 * 7 + r) % GRID;   /* interleaved leads: a slow spell spreads over the grid */
            double lead = LEAD_LO + k * LEAD_STEP;
            seq++;
            if (me == 0) {
                MPI_Request rq;
                double w0 = mono();
                until(w0 + WORK_S);
                if ((rc = lts_chk(MPI_Irecv(NULL, 0, MPI_BYTE, 1, CATCH_TAG, pair, &rq)))) break;
                double T = mono() + AHEAD_S;
                *Tp = T;
                __atomic_store_n(go, seq, __ATOMIC_RELEASE);
                until(T);
                double t0 = mono();
                rc = lts_chk(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                wait[k][r] = mono() - t0;
                while (__atomic_load_n(done, __ATOMIC_ACQUIRE) < seq) {
                }
            } else {
                while (__atomic_load_n(go, __ATOMIC_ACQUIRE) < seq) {
                }
                until(*Tp - lead);
                rc = lts_chk(MPI_Send(NULL, 0, MPI_BYTE, 0, CATCH_TAG, pair));
                __atomic_store_n(done, seq, __ATOMIC_RELEASE);
            }
        }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    return rc;
}

int lts_logp_catch(MPI_Comm comm, const int group[2], lts_measurement_t *m) {
    int me, ok = 1;
    MPI_Comm_rank(comm, &me);
    int role = me == group[0] ? 0 : me == group[1] ? 1 : -1;
    MPI_Comm pair;
    if (MPI_Comm_split(comm, role < 0 ? MPI_UNDEFINED : 0, role, &pair)) return LTS_EMPI;
    static double wait[GRID][REPS];
    double F[GRID];
    int rc = LTS_OK;
    memset(m, 0, sizeof *m);
    m->rel_err = m->confirm_s = m->window_s = NAN;
    m->sync = "none";
    double t_start = mono();
    if (role >= 0) {
        rc = sweep(pair, role, wait);
        MPI_Comm_free(&pair);
    }
    size_t n = (size_t)GRID * REPS;
    double *s = malloc(n * sizeof *s);
    if (!s) ok = 0;
    if (role == 0 && rc == LTS_OK && s) {
        /* the threshold: midway between always-caught and always-missed waits of this sweep */
        double hi[REPS], lo[REPS];
        memcpy(hi, wait[0], sizeof hi);
        memcpy(lo, wait[GRID - 1], sizeof lo);
        double missed = median_of(hi, REPS), caught = median_of(lo, REPS), thr = 0.5 * (missed + caught);
        for (int k = 0; k < GRID; k++) {
            int c = 0;
            for (int r = 0; r < REPS; r++) c += wait[k][r] < thr;
            F[k] = (double)c / REPS;
        }
        monotone(F);
        /* B's quantiles: the lead at which F reaches (i + 1/2)/N, linear between grid points */
        for (size_t i = 0; i < n; i++) {
            double q = ((double)i + 0.5) / (double)n, x = LEAD_LO + (GRID - 1) * LEAD_STEP;
            if (q <= F[0]) x = LEAD_LO;
            else
                for (int k = 1; k < GRID; k++)
                    if (F[k] >= q) {
                        double f = F[k] > F[k - 1] ? (q - F[k - 1]) / (F[k] - F[k - 1]) : 1.0;
                        x = LEAD_LO + (k - 1 + f) * LEAD_STEP;
                        break;
                    }
            s[i] = x;
        }
    }
    /* everyone learns the outcome (world rank 0 writes the record) */
    int root = group[0], st[2] = {rc, ok};
    MPI_Bcast(st, 2, MPI_INT, root, comm);
    if (st[0] != LTS_OK || !st[1] || !s) {
        free(s);
        return st[0] != LTS_OK ? st[0] : LTS_ENOMEM;
    }
    MPI_Bcast(s, (int)n, MPI_DOUBLE, root, comm);
    m->samples = s;
    m->n = n;
    m->reps_total = (long)n;
    m->stop_reason = LTS_STOP_FIXED;   /* a fixed sweep, not a stop rule */
    m->stationary = 1;
    m->wall_s = mono() - t_start;
    return LTS_OK;
}
