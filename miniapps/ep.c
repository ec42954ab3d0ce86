/* EP mini-app (docs/miniapps.md "ep"): NPB EP — Gaussian pairs by the Marsaglia
 * polar method from NPB's randlc stream, counted in square annuli; the only communication is one
 * MPI_Allreduce at the end. The control application of the study: nearly no messages, so latency
 * variation should not change its runtime (seed 004 §6).
 *
 * NPB 3 spec, EP: 2^(M+1) uniforms from seed 271828183 in batches of 2^17 (2^16 pairs); pair
 * (x1, x2) = (2 r - 1, 2 r' - 1) with t = x1^2 + x2^2 <= 1 gives the deviates x1 f, x2 f,
 * f = sqrt(-2 ln t / t); sx, sy are their sums, verified against NPB's published values (relative
 * 1e-8). Batch k starts at stream position 2^17 k, entered by a jump (seed a^(2^17 k)), so ranks
 * take contiguous blocks of batches and any np works. */
#include "miniapp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define EP_MK 16                 /* log2 of the pairs per batch */
#define EP_NK (1 << EP_MK)
#define EP_NQ 10                 /* annuli counted */
#define EP_SEED 271828183ULL
#define EP_VERIFY_TOL 1e-8       /* NPB's epsilon, relative */

typedef struct {
    const char *name;
    int m;                       /* 2^(m+1) uniforms, 2^m pairs */
    double sx_ref, sy_ref;
} ep_class;

static const ep_class ep_classes[] = {
    {"S", 24, -3.247834652034740e+3, -6.958407078382297e+3},
    {"W", 25, -2.863319731645753e+3, -6.320053679109499e+3},
    {"A", 28, -4.295875165629892e+3, -1.580732573678431e+4},
};
static const char *const ep_class_names[] = {"S", "W", "A", NULL};
_Static_assert(sizeof ep_classes / sizeof ep_classes[0] + 1 == sizeof ep_class_names / sizeof ep_class_names[0],
               "one name per class");

static int ep_run(const lts_mapp_ctx *ctx, lts_mapp_result *res) {
    const ep_class *c = &ep_classes[ctx->cls_index];
    long long batches = 1LL << (c->m - EP_MK), k0, nk;
    lts_mapp_split(batches, ctx->np, ctx->rank, &k0, &nk);
    double *x = malloc(sizeof(double) * 2 * EP_NK);
    int ok = x != NULL, allok;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (!allok) { free(x); return -1; }

    uint64_t an = lts_npb_pow46(LTS_NPB_A, 2ULL * EP_NK);   /* the jump of one batch */
    /* sums[0] = sx, sums[1] = sy, sums[2 + l] = pairs in annulus l */
    double sums[2 + EP_NQ] = {0};
    MPI_Barrier(ctx->comm);
    double t0 = MPI_Wtime();
    for (long long k = k0; k < k0 + nk; k++) {
        uint64_t seed = lts_npb_mul46(EP_SEED, lts_npb_pow46(an, (uint64_t)k));
        for (int i = 0; i < 2 * EP_NK; i++) x[i] = lts_npb_randlc(&seed, LTS_NPB_A);
        for (int i = 0; i < EP_NK; i++) {
            double x1 = 2.0 * x[2 * i] - 1.0, x2 = 2.0 * x[2 * i + 1] - 1.0;
            double t1 = x1 * x1 + x2 * x2;
            if (t1 <= 1.0) {
                double t2 = sqrt(-2.0 * log(t1) / t1), t3 = x1 * t2, t4 = x2 * t2;
                int l = (int)fmax(fabs(t3), fabs(t4));
                if (l < EP_NQ) sums[2 + l] += 1.0;
                sums[0] += t3;
                sums[1] += t4;
            }
        }
    }
    if (ctx->inject_fault && ctx->rank == 0) sums[0] += 1.0;   /* --inject-fault */
    MPI_Allreduce(MPI_IN_PLACE, sums, 2 + EP_NQ, MPI_DOUBLE, MPI_SUM, ctx->comm);
    res->runtime_s = MPI_Wtime() - t0;
    free(x);
    res->value = sums[0];
    res->reference = c->sx_ref;
    res->verified = lts_mapp_close(sums[0], c->sx_ref, EP_VERIFY_TOL) && lts_mapp_close(sums[1], c->sy_ref, EP_VERIFY_TOL);
    return 0;
}

LTS_MAPP_MAIN(.app = "ep", .classes = ep_class_names, .run = ep_run,
              .summary = "NPB EP: Gaussian pairs from NPB's random stream, one allreduce at the end (the control)")
