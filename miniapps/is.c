/* IS mini-app (docs/miniapps.md "is"): NPB IS — ranking of integer keys by a
 * bucket sort whose redistribution is one MPI_Alltoall of counts and one MPI_Alltoallv of keys
 * per iteration.
 *
 * Keys (NPB 3 spec, IS "create_seq"): key g = int(MAX_KEY/4 (r_4g + r_4g+1 + r_4g+2 + r_4g+3)) for
 * NPB's randlc stream r from seed 314159265 — four uniforms per key, so a rank enters the stream at
 * its first key by a jump a^(4 lo). Iteration i first sets key[i] = i and key[i + 10] =
 * MAX_KEY - i, then ranks every key.
 *
 * One iteration here: bucket counts, MPI_Allreduce of them (every rank then knows every bucket's
 * size), contiguous bucket ranges assigned to ranks by cumulative size (balanced key counts), keys
 * sent to the rank owning their bucket, and the received keys ranked by a counting sort over the
 * rank's key range. NPB's partial verification: the rank of 5 given keys must equal NPB's
 * published value shifted by the iteration (the switch below is NPB's); the full verification
 * after the timed loop places every key by its computed rank and checks the order across ranks, and
 * (added here) that the keys are the same multiset as before the exchange. */
#include "miniapp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IS_MAX_ITERATIONS 10   /* NPB's: the partial verification values hold for 1..10 */
#define IS_TEST_KEYS 5
#define IS_SEED 314159265ULL

typedef struct {
    const char *name;
    int total_keys_log2, max_key_log2, buckets_log2;
    long long test_index[IS_TEST_KEYS], test_rank[IS_TEST_KEYS];
} is_class;

/* NPB 3 IS classes S, W, A, B and their partial-verification tables. */
static const is_class is_classes[] = {
    {"S", 16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {"W", 20, 16, 10, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}},
    {"A", 23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760}, {104, 17523, 123928, 8288932, 8388264}},
    {"B", 25, 21, 10, {41869, 812306, 5102857, 18232239, 26860214}, {33422937, 10244, 59149, 33135281, 99}},
};
static const char *const is_class_names[] = {"S", "W", "A", "B", NULL};
_Static_assert(sizeof is_classes / sizeof is_classes[0] + 1 == sizeof is_class_names / sizeof is_class_names[0],
               "one name per class");

/* NPB's expected rank of test key t at iteration it: the published value, shifted per class by
 * how the iteration's two modified keys move it (NPB IS rank(), "partial verify test"). */
static long long is_expected_rank(const is_class *c, int t, int it) {
    long long r = c->test_rank[t];
    switch (c->name[0]) {
    case 'S': return t <= 2 ? r + it : r - it;
    case 'W': return t < 2 ? r + (it - 2) : r - it;
    case 'A': return t <= 2 ? r + (it - 1) : r - (it - 1);
    default: return t == 1 || t == 2 || t == 4 ? r + it : r - it;   /* B */
    }
}

typedef struct {
    const is_class *c;
    MPI_Comm comm;
    int rank, np, shift, nbuckets;
    long long nkeys, lo, cnt, max_key;
    int *key;           /* this rank's keys, global indices [lo, lo + cnt) */
    int *send, *recv;   /* keys grouped by destination; keys received */
    long long nrecv, cap;   /* keys received; room in recv */
    int *bcount, *ball; /* local and global bucket sizes */
    int *bstart;        /* scratch: bucket fill pointers */
    int *scount, *sdispl, *rcount, *rdispl;
    int *hist;          /* populations of the key values of this rank's range, then their prefix sums */
    long long kmin, kmax, below;   /* this rank's key range [kmin, kmax); number of keys on lower ranks */
    long long test_key[IS_TEST_KEYS];
    long long passed;   /* partial verification tests passed on this rank */
} is_state;

/* Key g of the unmodified sequence. */
static int is_gen_key(const is_state *s, uint64_t *seed) {
    double x = lts_npb_randlc(seed, LTS_NPB_A);
    x += lts_npb_randlc(seed, LTS_NPB_A);
    x += lts_npb_randlc(seed, LTS_NPB_A);
    x += lts_npb_randlc(seed, LTS_NPB_A);
    return (int)((double)(s->max_key / 4) * x);
}

static int is_alloc(is_state *s) {
    s->key = malloc(sizeof(int) * (size_t)(s->cnt ? s->cnt : 1));
    s->send = malloc(sizeof(int) * (size_t)(s->cnt ? s->cnt : 1));
    s->recv = NULL;
    s->bcount = malloc(sizeof(int) * (size_t)s->nbuckets);
    s->ball = malloc(sizeof(int) * (size_t)s->nbuckets);
    s->bstart = malloc(sizeof(int) * (size_t)s->nbuckets);
    s->scount = malloc(sizeof(int) * (size_t)s->np);
    s->sdispl = malloc(sizeof(int) * (size_t)s->np);
    s->rcount = malloc(sizeof(int) * (size_t)s->np);
    s->rdispl = malloc(sizeof(int) * (size_t)s->np);
    s->hist = malloc(sizeof(int) * (size_t)s->max_key);
    return s->key && s->send && s->bcount && s->ball && s->bstart && s->scount && s->sdispl && s->rcount &&
                   s->rdispl && s->hist ? 0 : -1;
}

static void is_free(is_state *s) {
    free(s->key); free(s->send); free(s->recv); free(s->bcount); free(s->ball); free(s->bstart);
    free(s->scount); free(s->sdispl); free(s->rcount); free(s->rdispl); free(s->hist);
}

/* The owner of bucket b: ranks take contiguous bucket ranges in proportion to the keys before. */
static int is_owner(const is_state *s, long long before) {
    int r = (int)(before * s->np / s->nkeys);
    return r < s->np ? r : s->np - 1;
}

/* NPB rank(it). */
static void is_rank(is_state *s, int it, int fault) {
    const is_class *c = s->c;
    if (it >= s->lo && it < s->lo + s->cnt) s->key[it - s->lo] = it;
    if (it + IS_MAX_ITERATIONS >= s->lo && it + IS_MAX_ITERATIONS < s->lo + s->cnt)
        s->key[it + IS_MAX_ITERATIONS - s->lo] = (int)(s->max_key - it);

    memset(s->bcount, 0, sizeof(int) * (size_t)s->nbuckets);
    for (long long i = 0; i < s->cnt; i++) s->bcount[s->key[i] >> s->shift]++;
    MPI_Allreduce(s->bcount, s->ball, s->nbuckets, MPI_INT, MPI_SUM, s->comm);

    /* Bucket ownership, send counts, this rank's key range and the keys below it. */
    memset(s->scount, 0, sizeof(int) * (size_t)s->np);
    long long before = 0;
    s->kmin = s->kmax = 0;
    s->below = -1;
    for (int b = 0; b < s->nbuckets; b++) {
        int o = is_owner(s, before);
        s->scount[o] += s->bcount[b];
        if (o == s->rank) {
            if (s->below < 0) { s->below = before; s->kmin = (long long)b << s->shift; }
            s->kmax = (long long)(b + 1) << s->shift;
        }
        before += s->ball[b];
    }
    if (s->below < 0) s->below = 0;
    s->sdispl[0] = 0;
    for (int r = 1; r < s->np; r++) s->sdispl[r] = s->sdispl[r - 1] + s->scount[r - 1];
    /* Buckets in ascending order are destinations in ascending order: one pass groups the keys. */
    int pos = 0;
    for (int b = 0; b < s->nbuckets; b++) { s->bstart[b] = pos; pos += s->bcount[b]; }
    for (long long i = 0; i < s->cnt; i++) s->send[s->bstart[s->key[i] >> s->shift]++] = s->key[i];

    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, s->comm);
    long long nrecv = 0;
    for (int r = 0; r < s->np; r++) { s->rdispl[r] = (int)nrecv; nrecv += s->rcount[r]; }
    if (nrecv > s->cap || !s->recv) {
        /* No agreement round in the timed loop for an allocation failure: it is fatal (MPI_Abort). */
        free(s->recv);
        s->cap = nrecv + nrecv / 8 + 1;
        s->recv = malloc(sizeof(int) * (size_t)s->cap);
        if (!s->recv) {
            fprintf(stderr, "latscope-is: out of memory for %lld received keys\n", nrecv);
            MPI_Abort(s->comm, 3);
        }
    }
    s->nrecv = nrecv;
    MPI_Alltoallv(s->send, s->scount, s->sdispl, MPI_INT, s->recv, s->rcount, s->rdispl, MPI_INT, s->comm);
    if (fault && nrecv > 0)   /* --inject-fault: one key changed to another of this rank's range */
        s->recv[0] = s->recv[0] != (int)s->kmin ? (int)s->kmin : (int)s->kmin + 1;

    /* Ranking: populations of the range's key values, then prefix sums: hist[k - kmin] = keys <= k. */
    long long width = s->kmax - s->kmin;
    memset(s->hist, 0, sizeof(int) * (size_t)(width > 0 ? width : 1));
    for (long long i = 0; i < nrecv; i++) s->hist[s->recv[i] - s->kmin]++;
    for (long long k = 1; k < width; k++) s->hist[k] += s->hist[k - 1];

    /* Partial verification by the rank holding key value k - 1 (NPB: key_rank = keys < k). */
    for (int t = 0; t < IS_TEST_KEYS; t++) {
        long long k = s->test_key[t];
        if (k > 0 && k <= s->nkeys - 1 && k - 1 >= s->kmin && k - 1 < s->kmax) {
            long long key_rank = s->below + s->hist[k - 1 - s->kmin];
            if (key_rank == is_expected_rank(c, t, it)) s->passed++;
        }
    }
}

/* splitmix64 finaliser: the multiset checksum adds it over the keys. */
static uint64_t is_mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* NPB full_verify after the last rank(): place every received key at its computed rank, check the
 * order within and across ranks, and that the keys are the ones sent. 1 passed, 0 failed, -1 OOM. */
static int is_full_verify(is_state *s) {
    int *sorted = malloc(sizeof(int) * (size_t)(s->nrecv ? s->nrecv : 1));
    int ok = sorted != NULL, allok;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, s->comm);
    if (!ok) { free(sorted); return -1; }
    long long bad = 0;
    for (long long i = 0; i < s->nrecv; i++) {
        long long k = s->recv[i] - s->kmin;
        long long at = --s->hist[k];   /* hist[k] = keys <= k: the last free place of key k */
        if (at < 0 || at >= s->nrecv) { bad++; continue; }
        sorted[at] = s->recv[i];
    }
    for (long long i = 1; i < s->nrecv; i++) bad += sorted[i - 1] > sorted[i];
    /* Across ranks: each non-empty rank's first key >= the last key of the nearest non-empty rank below. */
    long long edge[3] = {s->nrecv, s->nrecv ? sorted[0] : 0, s->nrecv ? sorted[s->nrecv - 1] : 0};
    long long *edges = malloc(sizeof(long long) * 3 * (size_t)s->np);
    ok = edges != NULL;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, s->comm);
    if (!allok) { free(sorted); free(edges); return -1; }
    MPI_Allgather(edge, 3, MPI_LONG_LONG, edges, 3, MPI_LONG_LONG, s->comm);
    long long last = -1, total = 0;
    for (int r = 0; r < s->np; r++) {
        total += edges[3 * r];
        if (edges[3 * r] == 0) continue;
        if (edges[3 * r + 1] < last) bad++;
        last = edges[3 * r + 2];
    }
    uint64_t sum[2] = {0, 0};
    for (long long i = 0; i < s->cnt; i++) sum[0] += is_mix((uint64_t)s->key[i]);
    for (long long i = 0; i < s->nrecv; i++) sum[1] += is_mix((uint64_t)sorted[i]);
    long long badall = 0;
    MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_UINT64_T, MPI_SUM, s->comm);
    MPI_Allreduce(&bad, &badall, 1, MPI_LONG_LONG, MPI_SUM, s->comm);
    free(sorted);
    free(edges);
    return badall == 0 && total == s->nkeys && sum[0] == sum[1];
}

static int is_default_iters(int ci) { (void)ci; return IS_MAX_ITERATIONS; }

static int is_check(const lts_mapp_ctx *ctx, char *msg, size_t len) {
    if (ctx->iters > IS_MAX_ITERATIONS) {
        snprintf(msg, len, "--iters %d: NPB IS's verification values hold for 1 to %d iterations; allowed: 1 to %d",
                 ctx->iters, IS_MAX_ITERATIONS, IS_MAX_ITERATIONS);
        return 1;
    }
    return 0;
}

static int is_run(const lts_mapp_ctx *ctx, lts_mapp_result *res) {
    is_state s;
    memset(&s, 0, sizeof s);
    s.c = &is_classes[ctx->cls_index];
    s.comm = ctx->comm;
    s.rank = ctx->rank;
    s.np = ctx->np;
    s.nkeys = 1LL << s.c->total_keys_log2;
    s.max_key = 1LL << s.c->max_key_log2;
    s.nbuckets = 1 << s.c->buckets_log2;
    s.shift = s.c->max_key_log2 - s.c->buckets_log2;
    lts_mapp_split(s.nkeys, s.np, s.rank, &s.lo, &s.cnt);
    int ok = is_alloc(&s) == 0, allok;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, s.comm);
    if (!allok) { is_free(&s); return -1; }

    uint64_t seed = lts_npb_mul46(IS_SEED, lts_npb_pow46(LTS_NPB_A, 4ULL * (uint64_t)s.lo));
    for (long long i = 0; i < s.cnt; i++) s.key[i] = is_gen_key(&s, &seed);
    /* The test keys' values, from the stream by a jump on every rank (no test index is one of the
     * indices 1..20 that the iterations modify). */
    for (int t = 0; t < IS_TEST_KEYS; t++) {
        uint64_t ts = lts_npb_mul46(IS_SEED, lts_npb_pow46(LTS_NPB_A, 4ULL * (uint64_t)s.c->test_index[t]));
        s.test_key[t] = is_gen_key(&s, &ts);
    }

    is_rank(&s, 1, 0);   /* NPB: one untimed iteration */
    s.passed = 0;
    MPI_Barrier(s.comm);
    double t0 = MPI_Wtime();
    for (int it = 1; it <= ctx->iters; it++) is_rank(&s, it, ctx->inject_fault);
    res->runtime_s = MPI_Wtime() - t0;
    int full = is_full_verify(&s);
    if (full < 0) { is_free(&s); return -1; }
    long long passed = s.passed + (s.rank == 0 ? full : 0), all = 0;
    MPI_Allreduce(&passed, &all, 1, MPI_LONG_LONG, MPI_SUM, s.comm);
    /* NPB: verified when 5 partial tests per iteration and the full test passed. */
    res->value = (double)all;
    res->reference = (double)(IS_TEST_KEYS * ctx->iters + 1);
    res->verified = all == IS_TEST_KEYS * ctx->iters + 1;
    is_free(&s);
    return 0;
}

LTS_MAPP_MAIN(.app = "is", .classes = is_class_names, .default_iters = is_default_iters, .check = is_check, .run = is_run,
              .summary = "NPB IS: integer bucket sort, keys redistributed by MPI_Alltoallv every iteration")
