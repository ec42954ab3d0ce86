/* Clock synchronisation methods (include/latscope/clocksync.h says what each one is).
 *
 * Every method is built from one exchange between a reference rank and a client: the reference
 * stamps s on its clock and sends; the client stamps tc on its own clock and replies at once; the
 * reference stamps r. If the two one-way delays are equal, the offset theta = ref - client at the
 * client's stamp is (s + r)/2 - tc; whatever the delays, s - tc <= theta <= r - tc. The
 * reference computes the client's model and sends it; clients never compute. */
#include "latscope/clocksync.h"
#include "latscope/errors.h"
#include "latscope/hooks.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG = 0x5359, TAG_MODEL = 0x535a, TAG_CHECK = 0x535b };

void lts_clocksync_opts_default(lts_clocksync_opts_t *o) {
    o->exchanges = 20;
    o->patience = 20;
    o->max_exchanges = 2000;
    o->rounds = 12;
    o->span_s = 0.05;
    o->residual_exchanges = 10;
}

void lts_clocksync_info_free(lts_clocksync_info_t *i) {
    free(i->residual_s);
    free(i->A);
    free(i->B);
    i->residual_s = i->A = i->B = NULL;
}

/* One exchange, reference side: returns s, r (reference clock) and tc (client clock). */
typedef double (*now_fn)(const void *);
static double timer_now(const void *t) { return lts_timer_now((const lts_timer_t *)t); }
static double clock_now(const void *c) { return lts_clock_now((const lts_clock_t *)c); }

static int ex_ref(MPI_Comm comm, int cli, now_fn now, const void *clk, double *s, double *r, double *tc) {
    double go = 1.0;
    *s = now(clk);
    if (MPI_Send(&go, 1, MPI_DOUBLE, cli, TAG, comm)) return LTS_EMPI;
    if (MPI_Recv(tc, 1, MPI_DOUBLE, cli, TAG, comm, MPI_STATUS_IGNORE)) return LTS_EMPI;
    *r = now(clk);
    return LTS_OK;
}

/* Wait for a request without spinning: a rank waiting for its turn sleeps between tests, so on
 * a node with more ranks than cores the pair that is exchanging gets the cores. */
static int lazy_wait(MPI_Request *rq) {
    int done = 0;
    struct timespec ts = {0, 20000};
    while (!done) {
        if (MPI_Test(rq, &done, MPI_STATUS_IGNORE)) return LTS_EMPI;
        if (!done) nanosleep(&ts, NULL);
    }
    return LTS_OK;
}

static int lazy_barrier(MPI_Comm comm) {
    MPI_Request rq;
    if (MPI_Ibarrier(comm, &rq)) return LTS_EMPI;
    return lazy_wait(&rq);
}

/* Client side: answer exchanges until the reference says stop (0). The first request (the
 * client's turn) is awaited lazily; the exchanges themselves spin. */
static int ex_client(MPI_Comm comm, int ref, now_fn now, const void *clk) {
    for (int first = 1;; first = 0) {
        double go;
        if (first) {
            MPI_Request rq;
            if (MPI_Irecv(&go, 1, MPI_DOUBLE, ref, TAG, comm, &rq) || lazy_wait(&rq)) return LTS_EMPI;
        } else if (MPI_Recv(&go, 1, MPI_DOUBLE, ref, TAG, comm, MPI_STATUS_IGNORE)) {
            return LTS_EMPI;
        }
        if (go == 0.0) return LTS_OK;
        double tc = now(clk);
        if (MPI_Send(&tc, 1, MPI_DOUBLE, ref, TAG, comm)) return LTS_EMPI;
    }
}

static int ex_stop(MPI_Comm comm, int cli) {
    double stop = 0.0;
    return MPI_Send(&stop, 1, MPI_DOUBLE, cli, TAG, comm) ? LTS_EMPI : LTS_OK;
}

static void spin_until(const lts_timer_t *t, double until) {
    while (lts_timer_now(t) < until) {
    }
}

/* min-RTT offset over up to n exchanges (mpibench-style when patience > 0: stop after `patience`
 * exchanges without a new minimum). *t_at: the client's stamp of the best exchange. */
static int min_rtt_offset(MPI_Comm comm, int cli, const lts_timer_t *tm, int n, int patience, double *theta,
                          double *t_at) {
    double best = INFINITY;
    int since = 0;
    for (int k = 0; k < n && (patience <= 0 || since < patience); k++) {
        double s = 0, r = 0, tc = 0;
        int rc = ex_ref(comm, cli, timer_now, tm, &s, &r, &tc);
        if (rc) return rc;
        since++;
        if (r - s < best) {
            best = r - s;
            since = 0;
            /* MPIBench: the message of the fastest round trip arrived half of it after sending */
            *theta = s + best / 2 - tc;
            *t_at = tc;
        }
    }
    return LTS_OK;
}

int lts_clocksync_choose_model(const double *t, const double *theta, size_t n, double *a, double *b) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += theta[i];
    *a = n ? sum / (double)n : 0.0;
    *b = 0.0;
    if (n < 3) return 0;
    size_t m = (2 * n) / 3;
    if (m < 2) m = 2;
    if (m >= n) m = n - 1;
    /* constant and least-squares line on samples [0, m) */
    double mt = 0, my = 0;
    for (size_t i = 0; i < m; i++) { mt += t[i]; my += theta[i]; }
    mt /= (double)m;
    my /= (double)m;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < m; i++) { sxx += (t[i] - mt) * (t[i] - mt); sxy += (t[i] - mt) * (theta[i] - my); }
    if (!(sxx > 0)) return 0;
    double bl = sxy / sxx, al = my - bl * mt;
    /* prediction error on the later samples [m, n): drift matters when extrapolating */
    double e_const = 0, e_line = 0;
    for (size_t i = m; i < n; i++) {
        double dc = theta[i] - my, dl = theta[i] - (al + bl * t[i]);
        e_const += dc * dc;
        e_line += dl * dl;
    }
    if (!(e_line < e_const)) return 0;
    /* keep the line: refit on everything */
    mt = my = 0;
    for (size_t i = 0; i < n; i++) { mt += t[i]; my += theta[i]; }
    mt /= (double)n;
    my /= (double)n;
    sxx = sxy = 0;
    for (size_t i = 0; i < n; i++) { sxx += (t[i] - mt) * (t[i] - mt); sxy += (t[i] - mt) * (theta[i] - my); }
    *b = sxy / sxx;
    *a = my - *b * mt;
    return 1;
}

/* Reference side of a drift-capable pairwise sync (jk, hca): `rounds` min-RTT offsets spread
 * over span_s, then the model choice. Returns the client's map to the reference's timer. */
static int pair_linear_ref(MPI_Comm comm, int cli, const lts_timer_t *tm, const lts_clocksync_opts_t *o, double *A,
                           double *B, int *drift_kept) {
    int R = o->rounds < 2 ? 2 : o->rounds;
    double *t = malloc((size_t)R * sizeof *t), *th = malloc((size_t)R * sizeof *th);
    if (!t || !th) { free(t); free(th); return LTS_ENOMEM; }
    int rc = LTS_OK;
    double t0 = lts_timer_now(tm);
    for (int k = 0; k < R && !rc; k++) {
        if (k) spin_until(tm, t0 + o->span_s * k / (R - 1));
        rc = min_rtt_offset(comm, cli, tm, o->exchanges, 0, &th[k], &t[k]);
    }
    if (!rc) rc = ex_stop(comm, cli);
    if (!rc) {
        double a, b;
        *drift_kept = lts_clocksync_choose_model(t, th, (size_t)R, &a, &b);
        *A = a;
        *B = 1.0 + b;   /* ref(t) = t + a + b t */
    }
    free(t);
    free(th);
    return rc;
}

/* ---- methods ---------------------------------------------------------------------------- */

/* The reference (rank 0) syncs every other rank in turn; `pair` returns the client's model. */
typedef int (*pair_fn)(MPI_Comm, int, const lts_timer_t *, const lts_clocksync_opts_t *, double *, double *, int *);

static int star(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clk, lts_clocksync_info_t *info, pair_fn pair,
                int drift_capable) {
    int me, P, rc = LTS_OK;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    clk->A = 0.0;
    clk->B = 1.0;
    int kept_any = 0, tried = 0;
    if (me == 0) {
        for (int c = 1; c < P; c++) {
            double m[3] = {0, 1, 0};
            int kept = 0;
            int r = pair(comm, c, clk->timer, o, &m[0], &m[1], &kept);
            if (r && !rc) rc = r;
            m[2] = r ? 1.0 : 0.0;
            tried += drift_capable;
            kept_any |= kept;
            MPI_Send(m, 3, MPI_DOUBLE, c, TAG_MODEL, comm);
        }
    } else {
        int r = ex_client(comm, 0, timer_now, clk->timer);
        double m[3];
        MPI_Recv(m, 3, MPI_DOUBLE, 0, TAG_MODEL, comm, MPI_STATUS_IGNORE);
        clk->A = m[0];
        clk->B = m[1];
        rc = r ? r : (m[2] != 0.0 ? LTS_EMPI : LTS_OK);
    }
    int flags[2] = {kept_any, tried}, g[2];
    MPI_Allreduce(flags, g, 2, MPI_INT, MPI_MAX, comm);
    info->model = g[1] ? (g[0] ? "drift" : "offset") : "offset";
    info->drift_rejected = g[1] && !g[0];
    return rc;
}

static int mpibench_pair(MPI_Comm comm, int cli, const lts_timer_t *tm, const lts_clocksync_opts_t *o, double *A,
                         double *B, int *kept) {
    double theta = 0, tat;
    int rc = min_rtt_offset(comm, cli, tm, o->max_exchanges, o->patience, &theta, &tat);
    if (!rc) rc = ex_stop(comm, cli);
    *A = theta;
    *B = 1.0;
    *kept = 0;
    return rc;
}

static int skampi_pair(MPI_Comm comm, int cli, const lts_timer_t *tm, const lts_clocksync_opts_t *o, double *A,
                       double *B, int *kept) {
    double lo = -INFINITY, hi = INFINITY;
    int rc = LTS_OK;
    for (int k = 0; k < o->exchanges && !rc; k++) {
        double s = 0, r = 0, tc = 0;
        rc = ex_ref(comm, cli, timer_now, tm, &s, &r, &tc);
        if (s - tc > lo) lo = s - tc;
        if (r - tc < hi) hi = r - tc;
    }
    if (!rc) rc = ex_stop(comm, cli);
    *A = (lo + hi) / 2;
    *B = 1.0;
    *kept = 0;
    return rc;
}

static int sync_none(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clk, lts_clocksync_info_t *info) {
    clk->A = 0.0;
    clk->B = 1.0;
    info->model = "identity";
    return LTS_OK;
}
static int sync_mpibench(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clk, lts_clocksync_info_t *info) {
    return star(comm, o, clk, info, mpibench_pair, 0);
}
static int sync_skampi(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clk, lts_clocksync_info_t *info) {
    return star(comm, o, clk, info, skampi_pair, 0);
}
static int sync_jk(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clk, lts_clocksync_info_t *info) {
    return star(comm, o, clk, info, pair_linear_ref, 1);
}

/* Hierarchical: in round k (2^k < P) rank r with lowbit(r) = 2^k is the client of r - 2^k; the
 * pairs of a round are disjoint, so a round costs one pairwise sync. Then each rank's map to its
 * parent is composed with the parent's map to rank 0, from the top of the tree down. */
static int sync_hca(MPI_Comm comm, const lts_clocksync_opts_t *o, lts_clock_t *clk, lts_clocksync_info_t *info) {
    int me, P, rc = LTS_OK;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    double a = 0.0, b = 1.0;   /* this rank's map to its parent's timer */
    int low = me ? (me & -me) : 0, kept_any = 0, tried = 0;
    for (int d = 1; d < P; d <<= 1) {
        if (me == 0 || low > d) {            /* reference for child me + d */
            if (me + d < P) {
                double m[3] = {0, 1, 0};
                int kept = 0;
                int r = pair_linear_ref(comm, me + d, clk->timer, o, &m[0], &m[1], &kept);
                if (r && !rc) rc = r;
                m[2] = r ? 1.0 : 0.0;
                tried = 1;
                kept_any |= kept;
                MPI_Send(m, 3, MPI_DOUBLE, me + d, TAG_MODEL, comm);
            }
        } else if (low == d) {               /* client of me - d */
            int r = ex_client(comm, me - d, timer_now, clk->timer);
            double m[3];
            MPI_Recv(m, 3, MPI_DOUBLE, me - d, TAG_MODEL, comm, MPI_STATUS_IGNORE);
            a = m[0];
            b = m[1];
            if (r && !rc) rc = r;
            if (m[2] != 0.0 && !rc) rc = LTS_EMPI;
        }
    }
    /* composition, top down: global = A_p + B_p * (a + b t) */
    double AB[2] = {0.0, 1.0};
    if (me) {
        MPI_Recv(AB, 2, MPI_DOUBLE, me - low, TAG_MODEL + 8, comm, MPI_STATUS_IGNORE);
        AB[0] = AB[0] + AB[1] * a;
        AB[1] = AB[1] * b;
    }
    int top = 1;
    while (top < P) top <<= 1;
    for (int d = (me ? low : top) >> 1; d >= 1; d >>= 1)
        if (me + d < P) MPI_Send(AB, 2, MPI_DOUBLE, me + d, TAG_MODEL + 8, comm);
    clk->A = AB[0];
    clk->B = AB[1];
    int flags[2] = {kept_any, tried}, g[2];
    MPI_Allreduce(flags, g, 2, MPI_INT, MPI_MAX, comm);
    info->model = g[1] ? (g[0] ? "drift" : "offset") : "offset";
    info->drift_rejected = g[1] && !g[0];
    return rc;
}

static const lts_clocksync_desc_t methods[] = {
    {"none", "no synchronisation: the timer is taken as global (one host, or MPI_WTIME_IS_GLOBAL)", sync_none},
    {"mpibench", "MPIBench: min-RTT offset, iterate until no new minimum (offset only, O(P) sequential)", sync_mpibench},
    {"skampi", "SKaMPI: intersected offset bounds over many exchanges, midpoint (offset only, O(P))", sync_skampi},
    {"jk", "Jones-Koenig: min-RTT offsets over a time span, linear drift fit (validated), O(P)", sync_jk},
    {"hca", "hierarchical (HCA-like): pairwise linear models in ceil(log2 P) rounds, composed, O(log P)", sync_hca},
};
_Static_assert(sizeof(methods) / sizeof(methods[0]) <= LTS_REGISTRY_MAX, "clock sync registry too large");
const lts_registry_t lts_clocksync_registry = LTS_REGISTRY("clock sync method", methods);

int lts_clocksync_check(MPI_Comm comm, const lts_clock_t *clk, int exchanges, lts_clocksync_info_t *info) {
    int me, P, rc = LTS_OK;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    double t0 = MPI_Wtime();
    info->nranks = P;
    info->residual_max_s = 0.0;
    info->residual_bound_s = 0.0;
    if (me == 0) {
        free(info->residual_s);
        info->residual_s = calloc((size_t)P, sizeof(double));
        if (!info->residual_s) MPI_Abort(comm, 1);
    }
    for (int c = 1; c < P; c++) {
        if (me == 0) {
            double lo = -INFINITY, hi = INFINITY;
            for (int k = 0; k < exchanges && !rc; k++) {
                double s = 0, r = 0, tc = 0;
                rc = ex_ref(comm, c, clock_now, clk, &s, &r, &tc);
                if (s - tc > lo) lo = s - tc;
                if (r - tc < hi) hi = r - tc;
            }
            if (!rc) rc = ex_stop(comm, c);
            /* what is left: the midpoint of the intersected bounds; its uncertainty: half width */
            double res = (lo + hi) / 2, bound = fabs(hi - lo) / 2;
            info->residual_s[c] = res;
            if (fabs(res) > info->residual_max_s) info->residual_max_s = fabs(res);
            if (bound > info->residual_bound_s) info->residual_bound_s = bound;
        } else if (me == c) {
            rc = ex_client(comm, 0, clock_now, clk);
        }
    }
    lazy_barrier(comm);
    double v[2] = {info->residual_max_s, info->residual_bound_s};
    MPI_Bcast(v, 2, MPI_DOUBLE, 0, comm);
    info->residual_max_s = v[0];
    info->residual_bound_s = v[1];
    info->check_cost_s = MPI_Wtime() - t0;
    return rc;
}

int lts_clocksync(MPI_Comm comm, const char *method, const lts_clocksync_opts_t *o, const lts_timer_t *timer,
                  lts_clock_t *clk, lts_clocksync_info_t *info) {
    int i = lts_reg_find(&lts_clocksync_registry, method);
    if (i < 0) return LTS_ENOTFOUND;
    const lts_clocksync_desc_t *d = (const lts_clocksync_desc_t *)lts_reg_row(&lts_clocksync_registry, (size_t)i);
    lts_clocksync_opts_t def;
    if (!o) { lts_clocksync_opts_default(&def); o = &def; }
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    lts_clocksync_info_free(info);
    memset(info, 0, sizeof *info);
    info->method = d->name;
    clk->timer = timer;
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    int rc = d->sync(comm, o, clk, info);
    if (!rc) rc = lazy_barrier(comm);
    int grc;
    MPI_Allreduce(&rc, &grc, 1, MPI_INT, MPI_MIN, comm);
    info->cost_s = MPI_Wtime() - t0;
    if (grc) return grc;
    /* the offset now (global - local at this instant) and the rate: an intercept at the timer's
     * epoch would say little when the epoch is far away */
    double now = lts_timer_now(timer);
    double ab[2] = {clk->A + (clk->B - 1.0) * now, clk->B};
    double *all = me == 0 ? malloc(2 * (size_t)P * sizeof *all) : NULL;
    MPI_Gather(ab, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, comm);
    if (me == 0) {
        info->A = malloc((size_t)P * sizeof(double));
        info->B = malloc((size_t)P * sizeof(double));
        if (!all || !info->A || !info->B) MPI_Abort(comm, 1);
        for (int r = 0; r < P; r++) { info->A[r] = all[2 * r]; info->B[r] = all[2 * r + 1]; }
        free(all);
    }
    return lts_clocksync_check(comm, clk, o->residual_exchanges, info);
}

int lts_timer_apply_test_skew(lts_timer_t *t, int rank) {
    const lts_test_hooks_t *h = lts_test_hooks();
    if (!h->clock_skew) return 0;
    t->skew_offset_s = rank * h->skew_offset_s;
    t->skew_drift = rank * h->skew_drift;
    /* the host-wide epoch (boot), so that on one host the injected skew is the only difference
     * between the ranks' clocks and the tests know the true offsets */
    t->epoch_s = 0.0;
    t->epoch_ticks = 0;
    return 1;
}
