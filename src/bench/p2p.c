/* Point-to-point campaigns (MPIBlib §3): every group (pair or triplet) measured either one at a
 * time while the others wait (seq) or in rounds of disjoint groups in parallel (par). The campaign
 * says what each round measures; the point runner (point.c) measures, moves to rank 0, emits. */
#include "latscope/bench.h"
#include "latscope/errors.h"
#include "latscope/sched.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

    /* the jobs of one round: its groups in schedule order (rank 0 reports them so) */
    size_t maxg = 1;
    for (int r = 0; r < R; r++) if ((size_t)groups_in_round[r] > maxg) maxg = (size_t)groups_in_round[r];
    lts_point_job_t *jobs = calloc(maxg, sizeof *jobs);
    if (!jobs) MPI_Abort(comm, 1);   /* every rank needs its job list: no way to agree without it */
    lts_op_ctx_t ctx;
    for (size_t s = 0; s < cfg->nsizes && rc == LTS_OK; s++) {
        for (int r = 0; r < R && rc == LTS_OK; r++) {
            size_t nj = 0;
            for (size_t gg = 0; gg < cfg->ngroups; gg++) {
                if (round_of[gg] != r) continue;
                const int *grp = cfg->groups + gg * (size_t)W;
                lts_point_job_t *job = &jobs[nj++];
                memset(job, 0, sizeof *job);
                job->pt = (lts_point_t){.op = op->name, .group = grp, .group_size = W, .round = r,
                                        .bytes = cfg->sizes[s],
                                        .reply_bytes = cfg->reply_bytes >= 0 ? (size_t)cfg->reply_bytes : cfg->sizes[s],
                                        .window = cfg->window, .root = -1};
                job->src = grp[0];
                if ((int)gg != my_group[r]) continue;
                memset(&ctx, 0, sizeof ctx);
                ctx.comm = gcomm[r];
                MPI_Comm_rank(ctx.comm, &ctx.rank);
                ctx.size = W;
                ctx.bytes = cfg->sizes[s];
                ctx.reply_bytes = job->pt.reply_bytes;
                ctx.window = cfg->window;
                ctx.sbuf = sbuf;
                ctx.rbuf = rbuf;
                job->op = op;
                job->ctx = &ctx;
                job->measure = cfg->measure;
                /* groups measured side by side start each repetition together, and so does a
                 * timing method that needs a common start (max, global) (--sync auto) */
                job->measure.sync = lts_sync_resolve(job->measure.sync, op, groups_in_round[r] > 1,
                                                     lts_timing_row(job->measure.timing)->sync_start);
            }
            /* rounds are separated: the runner returns when every group of the round is done */
            rc = lts_point_run(comm, jobs, nj, cfg->on_point, cfg->ud);
        }
    }
    free(jobs);
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
