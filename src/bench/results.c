#include "latscope/results.h"
#include "latscope/apps.h"
#include "latscope/clocksync.h"
#include "latscope/errors.h"
#include "latscope/hostload.h"
#include "latscope/stats.h"
#include "latscope/reps.h"
#include "latscope/registry.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef LTS_GIT_SHA
#define LTS_GIT_SHA "unknown"
#endif

/* Extra members appended to every record (apps.h: the application twins' pattern parameters). */
static lts_results_extra_fn extra_fn;
static void *extra_ud;
void lts_results_set_extra(lts_results_extra_fn fn, void *ud) {
    extra_fn = fn;
    extra_ud = ud;
}

/* Every record is one JSON object whose first field is its type (docs/results-schema.md)... */
static void record_begin(lts_json_t *j, const char *type) {
    lts_json_init(j);
    lts_json_obj_begin(j, NULL);
    lts_json_str(j, "type", type);
}

/* ...written as one line: 0 or the write error; j is freed either way. */
static int record_end(lts_json_t *j, FILE *f) {
    lts_json_obj_end(j);
    int rc = lts_json_emit(j, f);
    lts_json_free(j);
    return rc;
}

static void policy_json(lts_json_t *j, const lts_rep_policy_t *p) {
    lts_json_obj_begin(j, "rep_policy");
    lts_json_int(j, "warmup", p->warmup);
    lts_json_int(j, "min_reps", p->min_reps);
    lts_json_int(j, "max_reps", p->max_reps);
    lts_json_dbl(j, "confidence", p->confidence);
    lts_json_dbl(j, "rel_err_target", p->rel_err);
    if (p->budget_s > 0) lts_json_dbl(j, "budget_s", p->budget_s); else lts_json_null(j, "budget_s");
    lts_json_str(j, "stop_rule", p->rule == LTS_STOP_MEAN ? "mean" : "median");
    lts_json_bool(j, "fixed", p->min_reps == p->max_reps);
    /* LATSCOPE_QUICK=1: capped to a smoke-test size; such results are not full measurements */
    lts_json_bool(j, "quick", p->quick);
    lts_json_obj_end(j);
}

/* The batch job the run belongs to (docs/results-schema.md, "job"), from the environment the
 * launcher gave rank 0: Slurm's srun/sbatch export the job id and its node list (the older name
 * SLURM_NODELIST where SLURM_JOB_NODELIST is missing). null outside a batch job. */
static void job_json(lts_json_t *j) {
    const char *id = getenv("SLURM_JOB_ID");
    if (!id || !*id) {
        lts_json_null(j, "job");
        return;
    }
    const char *nodes = getenv("SLURM_JOB_NODELIST");
    if (!nodes || !*nodes) nodes = getenv("SLURM_NODELIST");
    lts_json_obj_begin(j, "job");
    lts_json_str(j, "scheduler", "slurm");
    lts_json_str(j, "id", id);
    lts_json_str(j, "nodelist", nodes && *nodes ? nodes : NULL);
    lts_json_obj_end(j);
}

int lts_results_write_meta(FILE *f, MPI_Comm comm, const lts_run_info_t *in) {
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int hl;
    MPI_Get_processor_name(host, &hl);
    char *all = me == 0 ? calloc((size_t)P, MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
    /* load and oversubscription (docs/results-schema.md "Load and oversubscription"): also starts
     * rank 0's load monitor, which the point records read */
    lts_host_info_t mine, worst;
    int over = 0;
    int src = lts_host_survey(comm, &mine, &worst, &over);
    if (me != 0) return LTS_OK;
    if (!all) return LTS_ENOMEM;
    if (src) { free(all); return src; }

    lts_json_t j;
    record_begin(&j, "meta");
    lts_json_str(&j, "schema", LTS_RESULTS_SCHEMA);
    lts_json_str(&j, "tool", in->tool);
    lts_json_str(&j, "version", LTS_VERSION);
    lts_json_str(&j, "git_sha", LTS_GIT_SHA);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int ll, ver, sub;
    MPI_Get_library_version(lib, &ll);
    for (int i = 0; i < ll; i++) if (lib[i] == '\n') { lib[i] = '\0'; break; }  /* first line */
    MPI_Get_version(&ver, &sub);
    lts_json_str(&j, "mpi_library", lib);
    char sv[16];
    snprintf(sv, sizeof sv, "%d.%d", ver, sub);
    lts_json_str(&j, "mpi_standard", sv);
    lts_json_int(&j, "ranks", P);
    lts_json_arr_begin(&j, "hosts");
    int nh = 0;
    for (int r = 0; r < P; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++) seen = !strcmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
        if (!seen) { lts_json_str(&j, NULL, all + (size_t)r * MPI_MAX_PROCESSOR_NAME); nh++; }
    }
    lts_json_arr_end(&j);
    lts_json_arr_begin(&j, "rank_hosts");
    for (int r = 0; r < P; r++) lts_json_str(&j, NULL, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    lts_json_arr_end(&j);
    lts_json_obj_begin(&j, "timer");
    lts_json_str(&j, "name", in->timer->desc->name);
    lts_json_dbl(&j, "resolution_s", in->timer->resolution_s > 0 ? in->timer->resolution_s : NAN);
    lts_json_dbl(&j, "overhead_s", in->timer->overhead_s);
    lts_json_dbl(&j, "ticks_per_s", in->timer->ticks_per_s > 0 ? in->timer->ticks_per_s : NAN);
    lts_json_obj_end(&j);
    lts_json_str(&j, "timing_method", in->timing);
    /* the method only; each synchronisation writes its own "clock_sync" record with its error */
    lts_json_obj_begin(&j, "clock_sync");
    lts_json_str(&j, "method", in->clock_sync ? in->clock_sync : "none");
    lts_json_null(&j, "error_s");
    if (in->clock_sync && in->resync_s > 0) lts_json_dbl(&j, "resync_s", in->resync_s);
    else lts_json_null(&j, "resync_s");
    lts_json_obj_end(&j);
    lts_json_str(&j, "sync", in->sync);
    lts_json_str(&j, "sync_requested", in->sync_requested ? in->sync_requested : in->sync);
    policy_json(&j, in->policy);
    lts_json_str(&j, "bench", in->bench);
    lts_json_str(&j, "op", in->op);
    lts_json_str(&j, "mode", in->mode);
    lts_json_arr_begin(&j, "sizes_bytes");
    for (size_t s = 0; s < in->nsizes; s++) lts_json_int(&j, NULL, (long long)in->sizes[s]);
    lts_json_arr_end(&j);
    if (in->reply_bytes >= 0) lts_json_int(&j, "reply_bytes", in->reply_bytes); else lts_json_null(&j, "reply_bytes");
    /* p2p always has a window; a collective has none: null, never a zero */
    if (in->window > 0) lts_json_int(&j, "window", in->window); else lts_json_null(&j, "window");
    lts_json_int(&j, "seed", (long long)in->seed);
    lts_json_arr_begin(&j, "command_line");
    for (int a = 0; a < in->argc; a++) lts_json_str(&j, NULL, in->argv[a]);
    lts_json_arr_end(&j);
    char ts[32];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    lts_json_str(&j, "utc_time", ts);
    /* the host with the most ranks per available CPU; oversubscribed: some host has more ranks
     * than CPUs (busy-polling ranks then wait for the scheduler: README.md "Running on small
     * machines") */
    lts_json_int(&j, "ranks_per_host", worst.ranks);
    lts_json_int(&j, "cpus_online", worst.cpus_online);
    lts_json_int(&j, "cpus_available", worst.cpus_available);
    lts_json_bool(&j, "oversubscribed", over);
    lts_loadavg_t la;
    int have_la = lts_loadavg_read(&la) == LTS_OK;
    lts_json_obj_begin(&j, "load");
    lts_json_str(&j, "host", host);
    lts_json_dbl(&j, "load1", have_la ? la.load1 : NAN);
    lts_json_dbl(&j, "load5", have_la ? la.load5 : NAN);
    lts_json_dbl(&j, "load15", have_la ? la.load15 : NAN);
    if (have_la) lts_json_int(&j, "runnable", la.runnable); else lts_json_null(&j, "runnable");
    if (have_la) lts_json_int(&j, "tasks", la.tasks); else lts_json_null(&j, "tasks");
    lts_json_int(&j, "ranks", mine.ranks);
    lts_json_int(&j, "cpus_available", mine.cpus_available);
    lts_json_obj_end(&j);
    job_json(&j);
    /* the emulated Ethernet cluster the ranks run on (latscope --net: docs/network.md), as the
     * launcher line described it to the ranks; null elsewhere */
    const char *net = getenv("LATSCOPE_NET_CLUSTER");
    lts_json_str(&j, "emulated_network", net && *net ? net : NULL);
    if (extra_fn) extra_fn(&j, 1, extra_ud);
    free(all);
    return record_end(&j, f);
}

/* Repetitions run back to back are autocorrelated, so the order-statistic CI, which counts every
 * sample as independent, is too narrow for them; the stop rule judged their median by the CI of
 * batch medians as well (reps.h, docs/measurement.md "Autocorrelated samples"), and the record
 * reports the wider of the two, symmetric about the median, so that its ci_* and rel_err are the
 * uncertainty the run actually has. */
static void widen_to_batch_ci(lts_summary_t *s, const lts_measurement_t *m, const lts_rep_policy_t *pol) {
    int row = m->sync ? lts_reg_find(&lts_sync_registry, m->sync) : -1;
    /* a fixed count was never judged by a stop rule (and logp's catch returns quantiles, not
     * repetitions in order): its samples keep their own CI */
    if (row < 0 || m->stop_reason == LTS_STOP_FIXED || pol->rule != LTS_STOP_MEDIAN || !isfinite(s->median) ||
        s->median == 0)
        return;
    const lts_sync_desc_t *sy = (const lts_sync_desc_t *)lts_reg_row(&lts_sync_registry, (size_t)row);
    size_t L = lts_rep_ci_batch_len(pol, sy->per_rep == 0);
    if (!L) return;
    double b = lts_rep_batch_rel_err(m->samples, m->n, L, pol->confidence, s->median);
    if (!isfinite(b) || (isfinite(s->rel_err) && b <= s->rel_err)) return;
    s->rel_err = b;
    s->ci_half = b * fabs(s->median);
    s->ci_lo = s->median - s->ci_half;
    s->ci_hi = s->median + s->ci_half;
}

int lts_results_write_point(FILE *f, const lts_point_t *pt, const lts_run_info_t *in, int raw) {
    const lts_measurement_t *m = pt->m;
    lts_summary_t s;
    lts_summarize(m->samples, m->n, in->policy->confidence, in->policy->rule, &s);
    widen_to_batch_ci(&s, m, in->policy);
    lts_json_t j;
    record_begin(&j, "point");
    lts_json_str(&j, "bench", in->bench);
    lts_json_str(&j, "op", pt->op);
    if (pt->alg) {
        /* collective: all ranks take part; the algorithm and the root (world rank) say the rest */
        lts_json_str(&j, "alg", pt->alg);
        lts_json_int(&j, "root", pt->root);
        lts_json_int(&j, "size_bytes", (long long)pt->bytes);
    } else {
        lts_json_str(&j, "mode", in->mode);
        lts_json_arr_begin(&j, "group");
        for (int k = 0; k < pt->group_size; k++) lts_json_int(&j, NULL, pt->group[k]);
        lts_json_arr_end(&j);
        lts_json_int(&j, "round", pt->round);
        lts_json_int(&j, "size_bytes", (long long)pt->bytes);
        lts_json_int(&j, "reply_bytes", (long long)pt->reply_bytes);
        lts_json_int(&j, "window", pt->window);
    }
    lts_json_int(&j, "n", (long long)s.n);
    lts_json_dbl(&j, "min_s", s.min);
    lts_json_dbl(&j, "mean_s", s.mean);
    lts_json_dbl(&j, "median_s", s.median);
    lts_json_dbl(&j, "max_s", s.max);
    lts_json_dbl(&j, "sd_s", s.sd);
    lts_json_dbl(&j, "p90_s", s.p90);
    lts_json_dbl(&j, "p99_s", s.p99);
    lts_json_str(&j, "ci_of", s.ci_of == LTS_STOP_MEAN ? "mean" : "median");
    lts_json_dbl(&j, "ci_level", s.ci_level);
    lts_json_dbl(&j, "ci_lo_s", s.ci_lo);
    lts_json_dbl(&j, "ci_hi_s", s.ci_hi);
    lts_json_dbl(&j, "ci_half_s", s.ci_half);
    lts_json_dbl(&j, "rel_err", s.rel_err);
    lts_json_int(&j, "reps_valid", (long long)m->n);
    lts_json_int(&j, "reps_total", m->reps_total);
    if (pt->timing) {
        lts_json_str(&j, "timing", pt->timing);
        lts_json_int(&j, "reps_invalid", m->reps_invalid);
        /* root timing of a collective: the confirmation time that was subtracted, and how many
         * kept samples fell below zero after it (reported as they are, never clamped) */
        if (isfinite(m->confirm_s)) {
            lts_json_dbl(&j, "confirm_s", m->confirm_s);
            lts_json_int(&j, "negative_samples", m->negative);
        }
        if (isfinite(m->window_s)) lts_json_dbl(&j, "start_window_s", m->window_s);
        if (m->local && m->nlocal > 0) {
            /* seed 002 §4.3: per-rank min/avg/max, then averaged over ranks; IMB: min/avg/max over
             * ranks of each rank's average */
            double mn = 0, av = 0, mx = 0, tmin = INFINITY, tmax = -INFINITY;
            for (int r = 0; r < m->nlocal; r++) {
                const double *q = m->local + 4 * r;
                mn += q[0]; av += q[1]; mx += q[2];
                if (q[1] < tmin) tmin = q[1];
                if (q[1] > tmax) tmax = q[1];
            }
            lts_json_obj_begin(&j, "local");
            lts_json_dbl(&j, "min_s", mn / m->nlocal);
            lts_json_dbl(&j, "avg_s", av / m->nlocal);
            lts_json_dbl(&j, "max_s", mx / m->nlocal);
            lts_json_dbl(&j, "imb_t_min_s", tmin);
            lts_json_dbl(&j, "imb_t_avg_s", av / m->nlocal);
            lts_json_dbl(&j, "imb_t_max_s", tmax);
            lts_json_arr_begin(&j, "per_rank");
            for (int r = 0; r < m->nlocal; r++) {
                lts_json_obj_begin(&j, NULL);
                lts_json_dbl(&j, "min_s", m->local[4 * r]);
                lts_json_dbl(&j, "avg_s", m->local[4 * r + 1]);
                lts_json_dbl(&j, "max_s", m->local[4 * r + 2]);
                lts_json_dbl(&j, "median_s", m->local[4 * r + 3]);
                lts_json_obj_end(&j);
            }
            lts_json_arr_end(&j);
            lts_json_obj_end(&j);
        }
        if (pt->m->tasks) {
            /* individual tasks: rank (of the renumbered communicator, root = 0) -> median */
            lts_json_arr_begin(&j, "task_median_s");
            for (int r = 0; r < pt->m->ntasks; r++) lts_json_dbl(&j, NULL, pt->m->tasks[r]);
            lts_json_arr_end(&j);
        }
    }
    lts_json_str(&j, "stop_reason", lts_stop_reason_name((lts_stop_reason_t)m->stop_reason));
    /* how repetitions were separated, and the stationarity check (docs/measurement.md) */
    if (m->sync) lts_json_str(&j, "sync", m->sync);
    else lts_json_null(&j, "sync");
    lts_json_int(&j, "warmup_discarded", m->discarded);
    lts_json_bool(&j, "stationary", m->stationary);
    lts_json_dbl(&j, "wall_s", m->wall_s);
    /* the machine's load when the point completed (rank 0's host): the 1-min average, and the
     * CPUs other processes took while it ran (docs/results-schema.md: under load) */
    lts_loadavg_t la;
    lts_json_dbl(&j, "load1", lts_loadavg_read(&la) == LTS_OK ? la.load1 : NAN);
    lts_json_dbl(&j, "load_others", lts_load_others());
    /* streaming bandwidth: window * size / median time (only for the bandwidth operation) */
    if (!strcmp(pt->op, "bandwidth") && s.median > 0)
        lts_json_dbl(&j, "bandwidth_bytes_per_s", (double)pt->window * (double)pt->bytes / s.median);
    if (raw) {
        lts_json_arr_begin(&j, "samples_s");
        for (size_t i = 0; i < m->n; i++) lts_json_dbl(&j, NULL, m->samples[i]);
        lts_json_arr_end(&j);
    }
    if (extra_fn) extra_fn(&j, 0, extra_ud);
    return record_end(&j, f);
}

int lts_results_write_sync(FILE *f, const lts_clocksync_info_t *in) {
    lts_json_t j;
    record_begin(&j, "clock_sync");
    lts_json_str(&j, "method", in->method);
    lts_json_str(&j, "model", in->model);
    lts_json_bool(&j, "drift_rejected", in->drift_rejected);
    lts_json_dbl(&j, "cost_s", in->cost_s);
    lts_json_dbl(&j, "check_cost_s", in->check_cost_s);
    lts_json_dbl(&j, "residual_max_s", in->residual_max_s);
    lts_json_dbl(&j, "residual_bound_s", in->residual_bound_s);
    lts_json_arr_begin(&j, "residual_s");
    for (int r = 0; in->residual_s && r < in->nranks; r++) lts_json_dbl(&j, NULL, in->residual_s[r]);
    lts_json_arr_end(&j);
    /* each rank's map to the reference clock: at the end of the sync global - local = offset,
     * changing by drift per second (rank of the timed communicator, root = 0) */
    lts_json_arr_begin(&j, "offset_s");
    for (int r = 0; in->A && r < in->nranks; r++) lts_json_dbl(&j, NULL, in->A[r]);
    lts_json_arr_end(&j);
    lts_json_arr_begin(&j, "drift");
    for (int r = 0; in->B && r < in->nranks; r++) lts_json_dbl(&j, NULL, in->B[r] - 1.0);
    lts_json_arr_end(&j);
    return record_end(&j, f);
}
