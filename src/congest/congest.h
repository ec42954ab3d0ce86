/* The background-load generator (seed 004 §5.1, Algorithm 3), as latscope-congest
 * (apps/latscope_congest.c) runs it: rank pairs 0->1, 2->3, ... over MPI_COMM_WORLD, the even
 * rank sending exponentially spaced messages that keep a fraction of the pair's one-way
 * bandwidth busy, until a duration or a stop flag. Private to the program (src/congest). */
#ifndef LTS_CONGEST_H
#define LTS_CONGEST_H
#include "mt64.h"
#include <mpi.h>
#include <signal.h>
#include <stddef.h>

typedef struct lts_congest_cfg {
    double load;                     /* fraction of the pair's one-way bandwidth, (0, 1] */
    size_t size;                     /* message size (bytes) */
    double duration_s;               /* <= 0: until *stop */
    unsigned long long seed;         /* each sender's gap stream: init_by_array64({seed, rank}) */
    volatile sig_atomic_t *stop;     /* non-zero (a signal handler sets it): stop, on every rank together */
    const char *ready_file;          /* test hook: each sender creates ready_file.<rank> once it has */
    double ready_msgs;               /* sent ready_msgs messages (NULL / empty: nothing) */
} lts_congest_cfg_t;

/* What each rank reports to rank 0 (REPORT_N doubles: gathered as MPI_DOUBLE). */
typedef struct lts_congest_report {
    double role, peer, bytes, messages, elapsed_s, bandwidth_Bps, requested_Bps;
} lts_congest_report_t;
#define LTS_CONGEST_REPORT_N ((int)(sizeof(lts_congest_report_t) / sizeof(double)))

/* This rank's role: 1 sender, 2 receiver, 0 idle (the last rank of an odd count); *peer its partner. */
int lts_congest_role(int me, int P, int *peer);
/* The pair's one-way bandwidth (bytes/s), all pairs at once (the load they will share); 0 idle. */
double lts_congest_bandwidth(int role, int peer, size_t size, char *sbuf, char *rbuf);
/* Run the load (collective over MPI_COMM_WORLD; all ranks stop in the same round). */
void lts_congest_run(const lts_congest_cfg_t *c, int role, int me, int peer, double bw, char *sbuf, char *rbuf,
                     lts_congest_report_t *rep);

/* The gap stream: seeded per rank, exponential gaps with mean size / (load x bandwidth). */
void lts_congest_stream_init(lts_mt64_t *g, unsigned long long seed, int rank);
double lts_congest_next_gap_ns(lts_mt64_t *g, double mean_ns);
double lts_congest_mean_gap_ns(size_t size, double load, double bw_Bps);

#endif
