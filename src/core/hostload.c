/* Load and oversubscription of the hosts a run measures on (include/latscope/hostload.h). */
#include "latscope/hostload.h"
#include "latscope/errors.h"
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int lts_loadavg_read(lts_loadavg_t *out) {
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return LTS_ENOTSUP;
    int n = fscanf(f, "%lf %lf %lf %d/%d", &out->load1, &out->load5, &out->load15, &out->runnable, &out->tasks);
    fclose(f);
    return n == 5 ? LTS_OK : LTS_ENOTSUP;
}

/* ---- the load monitor (rank 0 of the surveyed communicator) ---------------------------------- */

typedef struct {
    unsigned long long total, busy, own;   /* clock ticks, summed over CPUs */
} tick_sample_t;

enum { RING = 256 };
/* Shorter windows are dominated by the 10 ms tick: a 50 ms point on 2 CPUs spans 10 ticks, so
 * one tick misattributed is 0.2 CPU. */
static const double MIN_WINDOW_TICKS = 20.0;

static struct {
    int on, ncpu;
    pid_t *pids;
    int npids;
    tick_sample_t ring[RING];
    size_t n;                              /* samples taken (ring holds the last RING) */
} mon;

/* The aggregate "cpu" line of /proc/stat and the number of per-CPU lines. */
static int read_stat(unsigned long long *total, unsigned long long *busy, int *ncpu) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    char line[512];
    int ok = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "cpu ", 4)) {
            unsigned long long v[8] = {0};
            if (sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                       &v[6], &v[7]) >= 4) {
                /* user nice system idle iowait irq softirq steal (guest time is inside user) */
                *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
                *busy = *total - v[3] - v[4];
                ok = 1;
            }
        } else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9') {
            n++;
        }
    }
    fclose(f);
    *ncpu = n;
    return ok && n > 0 ? 0 : -1;
}

/* utime + stime of a process, all its threads (fields 14 and 15 of /proc/PID/stat). */
static int read_proc_ticks(pid_t pid, unsigned long long *ticks) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    if (!p) return -1;
    unsigned long long ut, st;
    /* after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
    *ticks = ut + st;
    return 0;
}

static int take_sample(tick_sample_t *s) {
    int ncpu;
    if (read_stat(&s->total, &s->busy, &ncpu)) return -1;
    if (ncpu != mon.ncpu) return -1;   /* a CPU went on/offline: the totals no longer compare */
    s->own = 0;
    for (int i = 0; i < mon.npids; i++) {
        unsigned long long t;
        if (read_proc_ticks(mon.pids[i], &t)) return -1;
        s->own += t;
    }
    return 0;
}

static void monitor_start(const pid_t *pids, int npids) {
    free(mon.pids);
    memset(&mon, 0, sizeof mon);
    unsigned long long total, busy;
    if (read_stat(&total, &busy, &mon.ncpu)) return;
    mon.pids = malloc((size_t)npids * sizeof *mon.pids);
    if (!mon.pids) return;
    memcpy(mon.pids, pids, (size_t)npids * sizeof *pids);
    mon.npids = npids;
    tick_sample_t s;
    if (take_sample(&s)) return;
    mon.ring[0] = s;
    mon.n = 1;
    mon.on = 1;
}

double lts_load_others(void) {
    if (!mon.on) return NAN;
    tick_sample_t now;
    if (take_sample(&now)) return NAN;
    /* the newest sample at least MIN_WINDOW_TICKS old, else the oldest kept */
    size_t kept = mon.n < RING ? mon.n : RING;
    const tick_sample_t *base = NULL;
    for (size_t k = 1; k <= kept; k++) {
        const tick_sample_t *s = &mon.ring[(mon.n - k) % RING];
        base = s;
        if ((double)(now.total - s->total) / mon.ncpu >= MIN_WINDOW_TICKS) break;
    }
    mon.ring[mon.n % RING] = now;
    mon.n++;
    double elapsed = (double)(now.total - base->total) / mon.ncpu;   /* ticks of wall time */
    if (elapsed < 1.0) return NAN;
    double others = ((double)(now.busy - base->busy) - ((double)now.own - (double)base->own)) / elapsed;
    /* the per-process times and the per-CPU ticks are sampled differently: a near-idle machine can
     * come out slightly below zero */
    return others > 0 ? others : 0.0;
}

/* ---- the survey ---------------------------------------------------------------------------- */

int lts_host_survey(MPI_Comm comm, lts_host_info_t *mine, lts_host_info_t *worst, int *oversubscribed) {
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node) != MPI_SUCCESS) return LTS_EMPI;
    int nme, nP;
    MPI_Comm_rank(node, &nme);
    MPI_Comm_size(node, &nP);
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    /* the CPUs this host's ranks may run on: the union of their affinity masks */
    cpu_set_t set;
    CPU_ZERO(&set);
    int have_mask = sched_getaffinity(0, sizeof set, &set) == 0, all_mask;
    MPI_Allreduce(&have_mask, &all_mask, 1, MPI_INT, MPI_MIN, node);
    enum { NW = sizeof(cpu_set_t) / sizeof(unsigned long) };
    unsigned long words[NW];
    memcpy(words, &set, sizeof words);
    MPI_Allreduce(MPI_IN_PLACE, words, NW, MPI_UNSIGNED_LONG, MPI_BOR, node);
    memcpy(&set, words, sizeof words);
    int avail = all_mask ? CPU_COUNT(&set) : (int)online;
    if (online > 0 && avail > online) avail = (int)online;

    mine->ranks = nP;
    mine->cpus_online = online > 0 ? (int)online : avail;
    mine->cpus_available = avail;

    /* the load monitor: rank 0 subtracts the CPU time of its host's ranks (node rank 0 = rank 0,
     * the split is keyed by rank) */
    pid_t pid = getpid();
    pid_t *pids = nme == 0 ? malloc((size_t)nP * sizeof *pids) : NULL;
    int nomem = nme == 0 && !pids;
    MPI_Gather(&pid, (int)sizeof pid, MPI_BYTE, pids, (int)sizeof pid, MPI_BYTE, 0, node);
    if (me == 0 && !nomem) monitor_start(pids, nP);
    free(pids);
    MPI_Comm_free(&node);

    int trip[3] = {mine->ranks, mine->cpus_online, mine->cpus_available};
    int *all = me == 0 ? malloc((size_t)P * sizeof trip) : NULL;
    int bad = me == 0 && !all;
    MPI_Gather(trip, 3, MPI_INT, all, 3, MPI_INT, 0, comm);
    if (me != 0) return LTS_OK;
    if (bad) return LTS_ENOMEM;
    *worst = *mine;
    *oversubscribed = 0;
    for (int r = 0; r < P; r++) {
        const int *t = all + 3 * r;
        if (t[0] > t[2]) *oversubscribed = 1;
        /* most ranks per available CPU: t[0]/t[2] > worst.ranks/worst.cpus_available */
        if ((long)t[0] * worst->cpus_available > (long)worst->ranks * t[2]) {
            worst->ranks = t[0];
            worst->cpus_online = t[1];
            worst->cpus_available = t[2];
        }
    }
    free(all);
    return LTS_OK;
}
