/* What else the machine is doing while we measure: the load average, CPUs and
 * ranks per host (oversubscription), and the CPU time other processes took during each point.
 * docs/results-schema.md ("Load and oversubscription") defines the fields these fill. */
#ifndef LATSCOPE_HOSTLOAD_H
#define LATSCOPE_HOSTLOAD_H
#include <mpi.h>
#ifdef __cplusplus
extern "C" {
#endif

/* /proc/loadavg: the 1/5/15-minute load averages and the runnable / total scheduling entities at
 * this instant (the reader itself is one of the runnable). LTS_ENOTSUP where there is none. */
typedef struct lts_loadavg {
    double load1, load5, load15;
    int runnable, tasks;
} lts_loadavg_t;
int lts_loadavg_read(lts_loadavg_t *out);

typedef struct lts_host_info {
    int ranks;           /* ranks of the communicator on this host (MPI_COMM_TYPE_SHARED) */
    int cpus_online;     /* sysconf(_SC_NPROCESSORS_ONLN) */
    int cpus_available;  /* CPUs in the union of those ranks' affinity masks (<= online) */
} lts_host_info_t;

/* Collective over comm. *mine: the calling rank's host; *worst (rank 0 of comm only): the host
 * with the most ranks per available CPU; *oversubscribed (rank 0 only): some host has more ranks
 * than available CPUs. Also starts the load monitor on rank 0 (lts_load_others). */
int lts_host_survey(MPI_Comm comm, lts_host_info_t *mine, lts_host_info_t *worst, int *oversubscribed);

/* On rank 0 of the communicator last surveyed: the CPUs (in units of one CPU busy all the time)
 * that processes other than that communicator's ranks on this host used, averaged over the time
 * since the last call, or over at least the last 0.2 s when that is shorter (/proc/stat counts
 * in 10 ms ticks); steal time counts as used by others. NAN where it cannot be known (no /proc,
 * another rank's process not visible, no survey). */
double lts_load_others(void);

#ifdef __cplusplus
}
#endif
#endif
