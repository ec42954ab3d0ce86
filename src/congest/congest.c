/* The background-load generator of latscope-congest (seed 004 §5.1, Algorithm 3; the program,
 * its options and its output are apps/latscope_congest.c). How it works:
 *
 * Ranks pair up 0->1, 2->3, ...: the even rank sends, the odd rank receives. With an odd rank
 * count the last rank has no partner and idles (it only takes part in the stop agreement).
 * Each sender keeps a fraction `load` of its pair's one-way bandwidth busy: a leaky bucket
 * (Turner 1986, the paper's [33]) fills with elapsed time and pays for one message per
 * inter-message gap; the gaps are exponential (the paper: "long-tailed and highly variable
 * inter-message gaps", [1]) with mean size / (load x bandwidth), drawn from a 64-bit Mersenne
 * Twister (mt64.h) whose stream is init_by_array64({seed, rank}).
 *
 * The run ends after the duration or when the stop flag is set (by a signal handler): every
 * rank keeps a nonblocking MAX-allreduce of "I want to stop" in flight, so all ranks learn the
 * same verdict in the same round and nobody is left waiting. Then each sender sends a stop
 * message, and a receiver drains until it. */
#include "congest.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TAG_DATA 1
#define TAG_STOP 2
#define POLL_NS 1000000.0          /* one stop-agreement round per ms at most */

static double now_ns(void) {
    /* CLOCK_MONOTONIC, as in the paper's Algorithm 3 (a vDSO read, no trap into the kernel) */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the gap stream ------------------------------------------------------------------- */
void lts_congest_stream_init(lts_mt64_t *g, unsigned long long seed, int rank) {
    uint64_t key[2] = {seed, (uint64_t)rank};
    lts_mt64_init_array(g, key, 2);
}

/* Exponential with the given mean (inverse CDF; 1 - u lies in (0, 1], so the log is finite). */
double lts_congest_next_gap_ns(lts_mt64_t *g, double mean_ns) { return -mean_ns * log1p(-lts_mt64_unit(g)); }

double lts_congest_mean_gap_ns(size_t size, double load, double bw_Bps) { return (double)size / (load * bw_Bps) * 1e9; }

/* ---- agreeing to stop ------------------------------------------------------------------ */
typedef struct stopper {
    MPI_Request req;
    int in, out, stopped;
    double posted_ns;
} stopper_t;

static void stop_post(stopper_t *s, int want) {
    s->in = want;
    s->posted_ns = now_ns();
    MPI_Iallreduce(&s->in, &s->out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &s->req);
}

/* Rounds of a MAX-allreduce of "I want to stop": every rank sees the same result in the same
 * round, so all stop together. A new round starts at most every POLL_NS. */
static void stop_poll(stopper_t *s, int want) {
    if (s->stopped) return;
    if (s->req != MPI_REQUEST_NULL) {
        int done = 0;
        MPI_Test(&s->req, &done, MPI_STATUS_IGNORE);
        if (!done) return;
        if (s->out) { s->stopped = 1; return; }
    }
    if (now_ns() - s->posted_ns >= POLL_NS) stop_post(s, want);
}

/* ---- one-way bandwidth of each pair, all pairs at once --------------------------------- */
/* A window of nonblocking sends, acknowledged by a zero-byte reply, repeated; the best round
 * is the pair's capacity (slower rounds met other traffic). */
double lts_congest_bandwidth(int role, int peer, size_t size, char *sbuf, char *rbuf) {
    if (role == 0) return 0;
    size_t w = (4u << 20) / size;
    int win = w < 1 ? 1 : w > 64 ? 64 : (int)w;
    const int rounds = 30, warm = 3;
    MPI_Request *rq = malloc(sizeof *rq * (size_t)win);
    double best = 0;
    for (int r = 0; r < rounds + warm; r++) {
        if (role == 1) {
            double t0 = now_ns();
            for (int i = 0; i < win; i++) MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &rq[i]);
            MPI_Waitall(win, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double bw = (double)size * win / ((now_ns() - t0) * 1e-9);
            if (r >= warm && bw > best) best = bw;
        } else {
            /* every receive lands in the same buffer: the contents are never read */
            for (int i = 0; i < win; i++) MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &rq[i]);
            MPI_Waitall(win, rq, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        }
    }
    free(rq);
    /* the receiver reports the sender's figure too */
    if (role == 1) MPI_Send(&best, 1, MPI_DOUBLE, peer, TAG_DATA, MPI_COMM_WORLD);
    else MPI_Recv(&best, 1, MPI_DOUBLE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return best;
}

/* The test hook's file PATH.<rank>: empty, its existence is the news. */
static void touch_ready(const char *path, int me) {
    char fin[4096];
    snprintf(fin, sizeof fin, "%s.%d", path, me);
    FILE *f = fopen(fin, "w");
    if (f) fclose(f);
}

/* ---- Algorithm 3 --------------------------------------------------------------------- */
static void run_sender(const lts_congest_cfg_t *o, int me, int peer, double bw, char *buf, stopper_t *st, lts_congest_report_t *rep) {
    lts_mt64_t g;
    lts_congest_stream_init(&g, o->seed, me);
    double mean = lts_congest_mean_gap_ns(o->size, o->load, bw);
    double bucket = 0, delay = 0; /* delay 0: the first message leaves at once */
    double last = now_ns(), start = last;
    double deadline = o->duration_s > 0 ? start + o->duration_s * 1e9 : INFINITY;
    double bytes = 0, msgs = 0;
    const char *ready = o->ready_file;
    const double ready_at = o->ready_msgs;
    while (!st->stopped) {
        if (bucket >= delay) {
            MPI_Send(buf, (int)o->size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
            bytes += (double)o->size;
            msgs += 1;
            if (ready && *ready && msgs == ready_at) touch_ready(ready, me);
            bucket -= delay;
            delay = lts_congest_next_gap_ns(&g, mean);
        }
        double cur = now_ns();
        bucket += cur - last;
        last = cur;
        stop_poll(st, *o->stop || cur >= deadline);
    }
    double end = now_ns();
    MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_STOP, MPI_COMM_WORLD);
    *rep = (lts_congest_report_t){1, peer, bytes, msgs, (end - start) * 1e-9, bw, o->load * bw};
}

static void run_receiver(const lts_congest_cfg_t *o, int peer, double bw, char *buf, stopper_t *st, lts_congest_report_t *rep) {
    double start = now_ns(), deadline = o->duration_s > 0 ? start + o->duration_s * 1e9 : INFINITY;
    double bytes = 0, msgs = 0;
    MPI_Request rq;
    MPI_Irecv(buf, (int)o->size, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
    for (;;) {
        int done = 0;
        MPI_Status s;
        MPI_Test(&rq, &done, &s);
        if (done) {
            if (s.MPI_TAG == TAG_STOP) break; /* messages of a pair never overtake: all data is in */
            int n = 0;
            MPI_Get_count(&s, MPI_BYTE, &n);
            bytes += n;
            msgs += 1;
            MPI_Irecv(buf, (int)o->size, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
        }
        if (!st->stopped) stop_poll(st, *o->stop || now_ns() >= deadline);
    }
    *rep = (lts_congest_report_t){2, peer, bytes, msgs, (now_ns() - start) * 1e-9, bw, o->load * bw};
}

static void run_idle(const lts_congest_cfg_t *o, stopper_t *st, lts_congest_report_t *rep) {
    double deadline = o->duration_s > 0 ? now_ns() + o->duration_s * 1e9 : INFINITY;
    struct timespec ms = {0, 1000000};
    while (!st->stopped) {
        stop_poll(st, *o->stop || now_ns() >= deadline);
        nanosleep(&ms, NULL); /* an idle rank should not take a core from the pairs */
    }
    *rep = (lts_congest_report_t){0, -1, 0, 0, 0, 0, 0};
}

int lts_congest_role(int me, int P, int *peer) {
    /* 1 sender, 2 receiver, 0 idle (the odd rank out) */
    int role = me == P - 1 && P % 2 ? 0 : me % 2 == 0 ? 1 : 2;
    *peer = role == 1 ? me + 1 : role == 2 ? me - 1 : -1;
    return role;
}

void lts_congest_run(const lts_congest_cfg_t *o, int role, int me, int peer, double bw, char *sbuf, char *rbuf,
                     lts_congest_report_t *rep) {
    stopper_t st = {.req = MPI_REQUEST_NULL, .posted_ns = -INFINITY};
    MPI_Barrier(MPI_COMM_WORLD); /* pairs start together */
    if (role == 1) run_sender(o, me, peer, bw, sbuf, &st, rep);
    else if (role == 2) run_receiver(o, peer, bw, rbuf, &st, rep);
    else run_idle(o, &st, rep);
}
