/* Point-to-point campaigns (MPIBlib §3): every group (pair or triplet) measured either one at a
 * time while the others wait (seq) or in rounds of disjoint groups in parallel (par). Results
 * travel to rank 0, which calls the point callback. */
#include "latscope/bench.h"
#include "latscope/errors.h"
#include "latscope/sched.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_TAG 4242

int lts_all_pairs(int P, int **out, size_t *npairs) {
    int R = lts_tournament_rounds(P);
    size_t n = (size_t)P * (size_t)(P - 1) / 2, k = 0;
    int *a = malloc((n ? n : 1) * 2 * sizeof *a);
    if (!a) return LTS_ENOMEM;
    for (int r = 0; r < R; r++)
        for (int i = 0; i < P; i++) {
            int j = lts_tournament_partner(P, r, i);
            if (j > i) { a[2 * k] = i; a[2 * k + 1] = j; k++; }
        }
    *out = a;
    *npairs = k;
    return LTS_OK;
}

int lts_all_triplets(int P, int **out, size_t *n) {
    size_t cnt = P >= 3 ? (size_t)P * (size_t)(P - 1) * (size_t)(P - 2) / 2 : 0, k = 0;
    int *a = malloc((cnt ? cnt : 1) * 3 * sizeof *a);
    if (!a) return LTS_ENOMEM;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            for (int l = j + 1; l < P; l++)
                if (i != j && i != l) { a[3 * k] = i; a[3 * k + 1] = j; a[3 * k + 2] = l; k++; }
    *out = a;
    *n = k;
    return LTS_OK;
}

/* Send one point's outcome (every scalar, then the samples) from the group's root to rank 0. */
static int send_point(MPI_Comm comm, const lts_measurement_t *m) {
    size_t len = LTS_MEASUREMENT_NSCALARS + m->n;
    double *b = malloc(len * sizeof *b);
    if (!b) return LTS_ENOMEM;
    lts_measurement_pack(m, b);
    memcpy(b + LTS_MEASUREMENT_NSCALARS, m->samples, m->n * sizeof *b);
    int rc = MPI_Send(b, (int)len, MPI_DOUBLE, 0, RESULT_TAG, comm) ? LTS_EMPI : LTS_OK;
    free(b);
    return rc;
}

static int recv_point(MPI_Comm comm, int src, lts_measurement_t *m) {
    MPI_Status st;
    int len;
    MPI_Probe(src, RESULT_TAG, comm, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &len);
    double *b = malloc((size_t)len * sizeof *b);
    if (!b) return LTS_ENOMEM;
    MPI_Recv(b, len, MPI_DOUBLE, src, RESULT_TAG, comm, MPI_STATUS_IGNORE);
    lts_measurement_unpack(b, m);
    m->nlocal = 0;   /* p2p has no per-rank statistics */
    m->samples = malloc((m->n ? m->n : 1) * sizeof *m->samples);
    if (!m->samples) { free(b); return LTS_ENOMEM; }
    memcpy(m->samples, b + LTS_MEASUREMENT_NSCALARS, m->n * sizeof *m->samples);
    free(b);
    return LTS_OK;
}

int lts_p2p_run(MPI_Comm comm, const lts_p2p_cfg_t *cfg) {
    const lts_op_desc_t *op = cfg->op;
    const int W = op->group_size;
    int P, me, rc = LTS_OK;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    if (P < W) return LTS_ETOOFEW;

    /* rounds: seq puts every group in a round of its own */
    int *round_of = malloc((cfg->ngroups ? cfg->ngroups : 1) * sizeof *round_of);
    if (!round_of) return LTS_ENOMEM;
    int R;
    if (cfg->mode == LTS_MODE_PAR) {
        R = lts_pack_rounds(P, cfg->groups, cfg->ngroups, W, round_of);
        if (R < 0) { free(round_of); return R; }
    } else {
        for (size_t g = 0; g < cfg->ngroups; g++) round_of[g] = (int)g;
        R = (int)cfg->ngroups;
    }

    /* my group in each round, and its communicator (created once, reused for every size) */
    int *my_group = malloc((R ? (size_t)R : 1) * sizeof *my_group);
    int *groups_in_round = calloc(R ? (size_t)R : 1, sizeof *groups_in_round);
    MPI_Comm *gcomm = malloc((R ? (size_t)R : 1) * sizeof *gcomm);
    if (!my_group || !gcomm || !groups_in_round) { rc = LTS_ENOMEM; goto out; }
    for (int r = 0; r < R; r++) { my_group[r] = -1; gcomm[r] = MPI_COMM_NULL; }
    for (size_t g = 0; g < cfg->ngroups; g++) groups_in_round[round_of[g]]++;
    for (size_t g = 0; g < cfg->ngroups; g++)
        for (int k = 0; k < W; k++)
            if (cfg->groups[g * (size_t)W + (size_t)k] == me) my_group[round_of[g]] = (int)g;
    MPI_Group world_grp;
    MPI_Comm_group(comm, &world_grp);
    for (int r = 0; r < R; r++) {
        if (my_group[r] < 0) continue;
        MPI_Group sub;
        MPI_Group_incl(world_grp, W, cfg->groups + (size_t)my_group[r] * (size_t)W, &sub);
        /* collective over the group only, so disjoint groups build theirs concurrently */
        MPI_Comm_create_group(comm, sub, r % 32768, &gcomm[r]);
        MPI_Group_free(&sub);
    }
    MPI_Group_free(&world_grp);

    size_t max_b = 0;
    for (size_t s = 0; s < cfg->nsizes; s++) if (cfg->sizes[s] > max_b) max_b = cfg->sizes[s];
    size_t max_reply = cfg->reply_bytes >= 0 ? (size_t)cfg->reply_bytes : max_b;
    size_t bsz = lts_op_bufsize(op, max_b, max_reply, cfg->window);
    char *sbuf = lts_buffer_alloc(bsz), *rbuf = lts_buffer_alloc(bsz);
    int lrc = (sbuf && rbuf) ? LTS_OK : LTS_ENOMEM;
    MPI_Allreduce(&lrc, &rc, 1, MPI_INT, MPI_MIN, comm);
    if (rc) goto out_buf;
    for (size_t i = 0; i < bsz; i++) sbuf[i] = (char)(i * 31 + me);
    memset(rbuf, 0, bsz);

    for (size_t s = 0; s < cfg->nsizes && rc == LTS_OK; s++) {
        for (int r = 0; r < R && rc == LTS_OK; r++) {
            lts_measurement_t m;
            memset(&m, 0, sizeof m);
            int g = my_group[r], mrc = LTS_OK;
            if (g >= 0) {
                lts_op_ctx_t ctx;
                memset(&ctx, 0, sizeof ctx);
                ctx.comm = gcomm[r];
                MPI_Comm_rank(ctx.comm, &ctx.rank);
                ctx.size = W;
                ctx.bytes = cfg->sizes[s];
                ctx.reply_bytes = cfg->reply_bytes >= 0 ? (size_t)cfg->reply_bytes : cfg->sizes[s];
                ctx.window = cfg->window;
                ctx.sbuf = sbuf;
                ctx.rbuf = rbuf;
                /* groups measured side by side start each repetition together (--sync auto) */
                lts_measure_cfg_t mc = cfg->measure;
                mc.sync = lts_sync_resolve(mc.sync, op, groups_in_round[r] > 1, 0);
                mrc = lts_measure(op, &ctx, &mc, &m);
                if (mrc == LTS_OK && ctx.rank == 0 && me != 0) mrc = send_point(comm, &m);
            }
            /* rank 0 collects every group of this round, in schedule order */
            if (me == 0) {
                for (size_t gg = 0; gg < cfg->ngroups; gg++) {
                    if (round_of[gg] != r) continue;
                    const int *grp = cfg->groups + gg * (size_t)W;
                    lts_measurement_t rm, *pm = &m;
                    if (grp[0] != 0) {
                        if (recv_point(comm, grp[0], &rm)) { mrc = LTS_ENOMEM; continue; }
                        pm = &rm;
                    }
                    if (cfg->on_point) {
                        lts_point_t pt = {op->name, grp, W, r, cfg->sizes[s],
                                          cfg->reply_bytes >= 0 ? (size_t)cfg->reply_bytes : cfg->sizes[s],
                                          cfg->window, pm, NULL, -1};
                        cfg->on_point(cfg->ud, &pt);
                    }
                    if (pm != &m) lts_measurement_free(&rm);
                }
            }
            lts_measurement_free(&m);
            /* rounds are separated: the next one starts when all groups are done */
            MPI_Allreduce(&mrc, &rc, 1, MPI_INT, MPI_MIN, comm);
        }
    }
out_buf:
    free(sbuf);
    free(rbuf);
    for (int r = 0; r < R; r++) if (gcomm[r] != MPI_COMM_NULL) MPI_Comm_free(&gcomm[r]);
out:
    free(gcomm);
    free(groups_in_round);
    free(my_group);
    free(round_of);
    return rc;
}
