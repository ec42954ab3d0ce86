/* algos-check: every registered algorithm of bcast, scatter and gather moves exactly the data
 * the native MPI operation moves, for every root and several sizes (0 included), with a
 * contiguous and a strided datatype; the point-to-point rows of reduce, allreduce, allgather and
 * alltoall agree with the native ones; the native rows of the other collectives run; and the
 * registry itself (null rows, selection, run-time registration). Valid at any number of ranks.
 * Prints "ok" on rank 0 and exits 0; otherwise prints what failed and exits 1 on every rank. */
#include "latscope/latscope.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_mpi.h"

/* a value that depends on the owning rank, the element and the trial */
static int val(int rank, int i, int trial) { return (rank + 1) * 1000003 + i * 7 + trial * 131; }

/* "strided" type: 2 ints out of every 3 (extent 3 ints): exercises non-contiguous paths */
static MPI_Datatype strided;

static int user_calls;
static int user_bcast(void *b, int n, MPI_Datatype t, int r, MPI_Comm c) { user_calls++; return MPI_Bcast(b, n, t, r, c); }

static void check_bcast(const lts_coll_alg_t *alg, int count, int root, int trial) {
    int *a = malloc((size_t)(count + 1) * sizeof *a), *b = malloc((size_t)(count + 1) * sizeof *b);
    for (int i = 0; i < count; i++) a[i] = b[i] = me == root ? val(root, i, trial) : -1;
    CHECK(MPI_Bcast(a, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "native bcast");
    CHECK(alg->fn.bcast(b, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast:%s rc", alg->name);
    CHECK(!memcmp(a, b, (size_t)count * sizeof *a), "bcast:%s count %d root %d: data differ", alg->name, count, root);
    free(a);
    free(b);
}

static void check_scatter(const lts_coll_alg_t *alg, int count, int root, int trial, int in_place) {
    size_t n = (size_t)count * (size_t)P;
    int *s = malloc((n + 1) * sizeof *s), *ra = malloc(((size_t)count + 1) * sizeof *ra),
        *rb = malloc(((size_t)count + 1) * sizeof *rb);
    for (size_t i = 0; i < n; i++) s[i] = me == root ? val(root, (int)i, trial) : -1;
    for (int i = 0; i < count; i++) ra[i] = rb[i] = -1;
    CHECK(MPI_Scatter(s, count, MPI_INT, ra, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "native");
    void *dst = in_place && me == root ? MPI_IN_PLACE : rb;
    CHECK(alg->fn.scatter(s, count, MPI_INT, dst, count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "scatter:%s rc",
          alg->name);
    if (!(in_place && me == root))
        CHECK(!memcmp(ra, rb, (size_t)count * sizeof *ra), "scatter:%s count %d root %d: data differ", alg->name, count,
              root);
    free(s);
    free(ra);
    free(rb);
}

/* gather of `count` strided elements per rank into a contiguous int buffer at the root */
static void check_gather(const lts_coll_alg_t *alg, int count, int root, int trial, int in_place) {
    size_t n = (size_t)count * (size_t)P * 2;
    int *s = malloc(((size_t)count * 3 + 1) * sizeof *s), *ra = malloc((n + 1) * sizeof *ra),
        *rb = malloc((n + 1) * sizeof *rb);
    for (int i = 0; i < count * 3; i++) s[i] = val(me, i, trial);
    for (size_t i = 0; i < n; i++) ra[i] = rb[i] = -1;
    CHECK(MPI_Gather(s, count, strided, ra, 2 * count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS, "native");
    if (in_place && me == root) {
        memcpy(rb + (size_t)root * 2 * (size_t)count, ra + (size_t)root * 2 * (size_t)count, 2 * (size_t)count * sizeof *rb);
        CHECK(alg->fn.gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, 2 * count, MPI_INT, root, MPI_COMM_WORLD) ==
                  MPI_SUCCESS, "gather:%s in place rc", alg->name);
    } else {
        CHECK(alg->fn.gather(s, count, strided, rb, 2 * count, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS,
              "gather:%s rc", alg->name);
    }
    if (me == root)
        CHECK(!memcmp(ra, rb, n * sizeof *ra), "gather:%s count %d root %d%s: data differ", alg->name, count, root,
              in_place ? " (in place)" : "");
    free(s);
    free(ra);
    free(rb);
}

/* scatter from a contiguous root buffer into a strided receive type */
static void check_scatter_strided(const lts_coll_alg_t *alg, int count, int root, int trial) {
    size_t n = (size_t)count * 2 * (size_t)P;
    int *s = malloc((n + 1) * sizeof *s), *ra = malloc(((size_t)count * 3 + 1) * sizeof *ra),
        *rb = malloc(((size_t)count * 3 + 1) * sizeof *rb);
    for (size_t i = 0; i < n; i++) s[i] = val(root, (int)i, trial);
    for (int i = 0; i < count * 3; i++) ra[i] = rb[i] = -1;
    CHECK(MPI_Scatter(s, 2 * count, MPI_INT, ra, count, strided, root, MPI_COMM_WORLD) == MPI_SUCCESS, "native");
    CHECK(alg->fn.scatter(s, 2 * count, MPI_INT, rb, count, strided, root, MPI_COMM_WORLD) == MPI_SUCCESS, "rc");
    CHECK(!memcmp(ra, rb, (size_t)count * 3 * sizeof *ra), "scatter:%s strided count %d root %d: data differ",
          alg->name, count, root);
    free(s);
    free(ra);
    free(rb);
}

static void check_registry(void) {
    for (int op = 0; op < LTS_COLL_NOPS; op++) {
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        CHECK(r && r->count >= 2, "op %d: rows", op);
        CHECK(lts_coll_find((lts_coll_op_t)op, "native") != NULL, "op %d: no native row", op);
        const lts_coll_alg_t *nul = lts_coll_find((lts_coll_op_t)op, "null");
        CHECK(nul != NULL && nul->op == (lts_coll_op_t)op, "op %d: no null row", op);
        uint64_t mask = 0;
        CHECK(lts_reg_select(r, "all", &mask, NULL, 0) == 0, "select all");
        CHECK(!(mask & ((uint64_t)1 << lts_reg_find(r, "null"))), "op %d: null selected by all", op);
        CHECK(!strcmp(lts_reg_row(&lts_coll_op_names, (size_t)op)->name,
                      lts_reg_row(&lts_coll_op_registry, (size_t)op)->name), "op %d: names disagree", op);
    }
    CHECK(lts_coll_op_find("bcast") == LTS_COLL_BCAST && lts_coll_op_find("teleport") < 0, "op lookup");
    const lts_registry_t *r = lts_coll_registry(LTS_COLL_BCAST);
    uint64_t mask = 0;
    char bad[64] = "";
    CHECK(lts_reg_select(r, "-linear", &mask, bad, sizeof bad) == 0 &&
          mask == (((uint64_t)1 << lts_reg_find(r, "native")) | ((uint64_t)1 << lts_reg_find(r, "binomial"))),
          "-linear");
    CHECK(lts_reg_select(r, "native,warp", &mask, bad, sizeof bad) < 0 && !strcmp(bad, "warp"), "unknown name");
    CHECK(lts_coll_registry(LTS_COLL_NOPS) == NULL, "op out of range");
    /* run-time registration: validated, then usable and selectable by name */
    size_t before = r->count;
    lts_coll_fn_t fn = {.bcast = user_bcast};
    CHECK(lts_coll_register(LTS_COLL_BCAST, "user", "test", fn) == 0, "register");
    CHECK(lts_coll_register(LTS_COLL_BCAST, "user", "again", fn) == LTS_EINVAL, "duplicate accepted");
    CHECK(lts_coll_register(LTS_COLL_BCAST, "a,b", NULL, fn) == LTS_EINVAL, "bad name accepted");
    CHECK(lts_coll_register(LTS_COLL_BCAST, "all", NULL, fn) == LTS_EINVAL, "'all' accepted");
    CHECK(lts_coll_register(LTS_COLL_BCAST, "", NULL, fn) == LTS_EINVAL, "empty name accepted");
    CHECK(lts_coll_register(LTS_COLL_NOPS, "x", NULL, fn) == LTS_EINVAL, "bad op accepted");
    CHECK(lts_coll_register(LTS_COLL_BCAST, "nofn", NULL, (lts_coll_fn_t){0}) == LTS_EINVAL, "NULL fn accepted");
    CHECK(r->count == before + 1, "count after registration");
    CHECK(lts_reg_select(r, "user", &mask, bad, sizeof bad) == 0 && mask == (uint64_t)1 << before, "select user");
}

/* reduce, allreduce, allgather, alltoall: every point-to-point row against the native operation,
 * out of place and in place, every root; and a non-commutative op (left projection, a o b = a:
 * associative, the result is rank 0's vector) that only a rank-ordered reduction gets right */
static void left_op(void *in, void *inout, int *len, MPI_Datatype *dt) { memcpy(inout, in, (size_t)*len * sizeof(int)); }

static void check_p2p_rows(int count, int trial) {
    MPI_Op left;
    MPI_Op_create(left_op, 0, &left);
    size_t n = (size_t)count * (size_t)P + 1;
    int *s = malloc(n * sizeof *s), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) s[i] = val(me, (int)i, trial);
    for (int op = LTS_COLL_REDUCE; op <= LTS_COLL_ALLTOALL; op++) {
        if (op == LTS_COLL_SCATTER || op == LTS_COLL_GATHER) continue;   /* checked above */
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        for (size_t k = 0; k < r->count; k++) {
            const lts_coll_alg_t *alg = (const lts_coll_alg_t *)lts_reg_row(r, k);
            if (!strcmp(alg->name, "null") || !strcmp(alg->name, "native")) continue;
            for (int in_place = 0; in_place < 2; in_place++)
                for (int root = 0; root < (op == LTS_COLL_REDUCE ? P : 1); root++)
                    for (int nc = 0; nc < (op <= LTS_COLL_ALLREDUCE ? 2 : 1); nc++) {
                        MPI_Op o = nc ? left : MPI_SUM;
                        size_t m = op <= LTS_COLL_ALLREDUCE ? (size_t)count : (size_t)count * (size_t)P;
                        for (size_t i = 0; i < m; i++) a[i] = b[i] = -1;
                        int ip = in_place && (op != LTS_COLL_REDUCE || me == root);
                        if (op == LTS_COLL_ALLGATHER && ip) memcpy(b + (size_t)me * count, s, (size_t)count * sizeof *b);
                        if (op != LTS_COLL_ALLGATHER && ip) memcpy(b, s, m * sizeof *b);
                        const void *src = ip ? MPI_IN_PLACE : s;
                        int rc = 0;
                        if (op == LTS_COLL_REDUCE) {
                            MPI_Reduce(s, a, count, MPI_INT, o, root, MPI_COMM_WORLD);
                            rc = alg->fn.reduce(src, b, count, MPI_INT, o, root, MPI_COMM_WORLD);
                            if (me != root) m = 0;
                        } else if (op == LTS_COLL_ALLREDUCE) {
                            MPI_Allreduce(s, a, count, MPI_INT, o, MPI_COMM_WORLD);
                            rc = alg->fn.allreduce(src, b, count, MPI_INT, o, MPI_COMM_WORLD);
                        } else if (op == LTS_COLL_ALLGATHER) {
                            MPI_Allgather(s, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD);
                            rc = alg->fn.allgather(src, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD);
                        } else {
                            MPI_Alltoall(s, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD);
                            rc = alg->fn.alltoall(src, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD);
                        }
                        CHECK(rc == MPI_SUCCESS, "%s:%s rc %d", lts_reg_row(&lts_coll_op_names, (size_t)op)->name,
                              alg->name, rc);
                        CHECK(!memcmp(a, b, m * sizeof *a), "%s:%s count %d root %d%s%s: data differ",
                              lts_reg_row(&lts_coll_op_names, (size_t)op)->name, alg->name, count, root,
                              in_place ? " in place" : "", nc ? " non-commutative" : "");
                    }
        }
    }
    free(s);
    free(a);
    free(b);
    MPI_Op_free(&left);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Datatype v;
    MPI_Type_vector(1, 2, 3, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 3 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&v);

    check_registry();
    const int counts[] = {0, 1, 3, 1000};
    int trial = 0;
    for (int op = LTS_COLL_BCAST; op <= LTS_COLL_GATHER; op++) {
        if (op != LTS_COLL_BCAST && op != LTS_COLL_SCATTER && op != LTS_COLL_GATHER) continue;
        const lts_registry_t *r = lts_coll_registry((lts_coll_op_t)op);
        for (size_t a = 0; a < r->count; a++) {
            const lts_coll_alg_t *alg = (const lts_coll_alg_t *)lts_reg_row(r, a);
            if (!strcmp(alg->name, "null")) continue;
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (int root = 0; root < P; root++, trial++) {
                    if (op == LTS_COLL_BCAST) check_bcast(alg, counts[c], root, trial);
                    else if (op == LTS_COLL_SCATTER) {
                        check_scatter(alg, counts[c], root, trial, 0);
                        check_scatter(alg, counts[c], root, trial, 1);
                        check_scatter_strided(alg, counts[c], root, trial);
                    } else {
                        check_gather(alg, counts[c], root, trial, 0);
                        check_gather(alg, counts[c], root, trial, 1);
                    }
                }
        }
    }
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) check_p2p_rows(counts[c], trial++);
    CHECK(user_calls > 0, "the registered bcast never ran");
    /* the native rows of the other collectives: same result as calling MPI directly */
    {
        int x = me + 1, sum = 0, all = 0, *g = malloc((size_t)P * sizeof *g), *t = malloc((size_t)P * sizeof *t),
            *s = malloc((size_t)P * sizeof *s);
        for (int i = 0; i < P; i++) s[i] = me * P + i;
        CHECK(lts_coll_find(LTS_COLL_BARRIER, "native")->fn.barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
        lts_coll_find(LTS_COLL_REDUCE, "native")->fn.reduce(&x, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) CHECK(sum == P * (P + 1) / 2, "reduce");
        lts_coll_find(LTS_COLL_ALLREDUCE, "native")->fn.allreduce(&x, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(all == P * (P + 1) / 2, "allreduce");
        lts_coll_find(LTS_COLL_ALLGATHER, "native")->fn.allgather(&x, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < P; i++) CHECK(g[i] == i + 1, "allgather[%d]", i);
        lts_coll_find(LTS_COLL_ALLTOALL, "native")->fn.alltoall(s, 1, MPI_INT, t, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < P; i++) CHECK(t[i] == i * P + me, "alltoall[%d]", i);
        free(g);
        free(t);
        free(s);
    }
    MPI_Type_free(&strided);
    return check_mpi_finish("algos-check");
}
