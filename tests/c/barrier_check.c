/* barrier-check: semantics of every barrier row of the registry (tree rows at k = 2, 3, 4 and
 * every release), valid at any number of ranks.
 *   - staggered entry: before each call rank r busy-waits ((r + it) % P) * delta, so the last
 *     rank to enter moves round the communicator; nobody may leave before the last one entered
 *     (CLOCK_MONOTONIC is one clock for every process of one host — MPI_Wtime is not: Open MPI's
 *     has a per-process origin — so every exit time must be >= the largest entry time);
 *   - back to back: bursts of barriers with no other synchronisation and uneven skews, then the
 *     staggered check again, then no message of ours may be left over (MPI_Iprobe);
 *   - the same on a duplicated communicator that is then freed (cached state released with it)
 *     and on a split communicator (even/odd ranks);
 *   - lts_coll_select: parameters, defaults, exclusions and the errors (k < 2, k not a number,
 *     a parameter on a row that takes none, an unknown name).
 * usage: barrier-check [iterations (default 20)] [delta_us (default 30)] [SPEC]
 *   SPEC: the rows to check (default: all rows, tree rows at k = 2, 3, 4); "null" must fail.
 * Prints "ok" on rank 0 and exits 0; otherwise what failed, exit 1 on every rank. */
#include "latscope/latscope.h"
#include "test_hooks.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_mpi.h"

/* host-wide clock: the entry/exit comparison below is across processes */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void spin(double s) {
    double t = now() + s;
    while (now() < t) {
    }
}

static int call(const lts_coll_alg_t *a, MPI_Comm c) { return a->barrier_k ? a->barrier_k(c, a->k) : a->fn.barrier(c); }

/* staggered entry on comm: returns the number of early exits seen on this rank */
static void staggered(const lts_coll_alg_t *a, MPI_Comm comm, int iters, double delta, const char *what) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(comm);
        spin(((r + it) % n) * delta);
        double enter = now();
        int rc = call(a, comm);
        double leave = now(), last;
        CHECK(rc == MPI_SUCCESS, "%s %s: rc %d", a->name, what, rc);
        MPI_Allreduce(&enter, &last, 1, MPI_DOUBLE, MPI_MAX, comm);
        CHECK(leave >= last, "%s %s it %d: left at %.9f before the last rank entered at %.9f (%.3g us early)", a->name,
              what, it, leave, last, (last - leave) * 1e6);
    }
}

/* bursts with uneven skews and no separating synchronisation, then nothing may be left over */
static void back_to_back(const lts_coll_alg_t *a, MPI_Comm comm, int iters, double delta, const char *what) {
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    for (int it = 0; it < iters; it++) {
        if ((it + r) % 3 == 0) spin(delta * 0.25);
        int rc = call(a, comm);
        CHECK(rc == MPI_SUCCESS, "%s %s back-to-back %d: rc %d", a->name, what, it, rc);
    }
    staggered(a, comm, 2, delta, what);
    MPI_Barrier(comm);
    spin(1e-4);
    MPI_Barrier(comm);
    int stray = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &stray, &st);
    CHECK(!stray, "%s %s: a message from rank %d tag %d was left over", a->name, what, stray ? st.MPI_SOURCE : -1,
          stray ? st.MPI_TAG : -1);
}

static void check_select(void) {
    const lts_coll_alg_t **rows = NULL;
    size_t n = 0;
    char bad[256];
    int rc = lts_coll_select(LTS_COLL_BARRIER, "tree:k=3,tree,dissemination,tree:k=3", &rows, &n, bad, sizeof bad);
    CHECK(rc == 0 && n == 3, "select tree:k=3,tree,...: rc %d n %zu", rc, n);
    if (!rc && n == 3) {
        CHECK(!strcmp(rows[0]->name, "tree:k=3") && rows[0]->k == 3, "instance name %s k %d", rows[0]->name, rows[0]->k);
        CHECK(!strcmp(rows[1]->name, "tree:k=4") && rows[1]->k == 4, "default k: %s", rows[1]->name);
        CHECK(!strcmp(rows[2]->name, "dissemination"), "plain row %s", rows[2]->name);
    }
    free(rows);
    rows = NULL;
    rc = lts_coll_select(LTS_COLL_BARRIER, "all,-tree,-tree-bcast:k=4,-native", &rows, &n, bad, sizeof bad);
    CHECK(rc == 0, "exclusions rc %d (%s)", rc, bad);
    for (size_t i = 0; !rc && i < n; i++) {
        CHECK(strncmp(rows[i]->name, "tree:", 5) && strcmp(rows[i]->name, "tree-bcast:k=4") &&
                  strcmp(rows[i]->name, "native") && strncmp(rows[i]->name, "null", 4),
              "excluded row %s selected", rows[i]->name);
    }
    free(rows);
    rows = NULL;
    struct { const char *spec; int rc; const char *needle; } bads[] = {
        {"tree:k=1", LTS_EINVAL, "k must be an integer from 2"},
        {"tree:k=x", LTS_EINVAL, "k must be an integer from 2"},
        {"tree:k=", LTS_EINVAL, "k must be an integer from 2"},
        {"tree:z=3", LTS_EINVAL, "unknown parameter"},
        {"dissemination:k=3", LTS_EINVAL, "takes no parameters"},
        {"warp", LTS_ENOTFOUND, "warp"},
        {"tree,,linear", LTS_EINVAL, "empty name"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        rc = lts_coll_select(LTS_COLL_BARRIER, bads[i].spec, &rows, &n, bad, sizeof bad);
        CHECK(rc == bads[i].rc && strstr(bad, bads[i].needle), "select '%s': rc %d '%s'", bads[i].spec, rc, bad);
        if (!rc) free(rows);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    lts_test_hooks_t hooks;
    char hmsg[256];
    CHECK(lts_test_hooks_from_env(&hooks, hmsg, sizeof hmsg) == 0, "%s", hmsg);
    lts_set_test_hooks(&hooks);   /* LATSCOPE_TEST_SHM_NODE_SIZE: fake nodes for the shm rows */
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    double delta = (argc > 2 ? atof(argv[2]) : 30.0) * 1e-6;
    if (iters < 1) iters = 1;
    check_select();
    /* every row (tree rows at k = 2, 3, 4), plus the native one */
    const lts_coll_alg_t **rows = NULL;
    size_t n = 0;
    char bad[256];
    const char *spec = argc > 3 ? argv[3]
                                : "all,tree:k=2,tree:k=3,tree-bcast:k=2,tree-bcast:k=3,tree-shm:k=2,tree-shm:k=3,"
                                  "tree-2net:k=2,tree-2net:k=4";
    int rc = lts_coll_select(LTS_COLL_BARRIER, spec, &rows, &n, bad, sizeof bad);
    CHECK(rc == 0 && n >= (argc > 3 ? 1u : 20u), "selecting '%s': rc %d n %zu %s", spec, rc, n, bad);
    if (me == 0)
        for (size_t i = 0; i < n; i++) fprintf(stderr, "checking %s\n", rows[i]->name);
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &split);
    for (size_t i = 0; i < n && !rc; i++) {
        const lts_coll_alg_t *a = rows[i];
        staggered(a, MPI_COMM_WORLD, iters, delta, "world");
        back_to_back(a, MPI_COMM_WORLD, iters, delta, "world");
        /* cached state on a communicator that is then freed, and on a subset */
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        staggered(a, dup, 2, delta, "dup");
        back_to_back(a, dup, 4, delta, "dup");
        MPI_Comm_free(&dup);
        staggered(a, split, 2, delta, "split");
    }
    MPI_Comm_free(&split);
    free(rows);
    return check_mpi_finish("barrier-check");
}
