/* The mini-app suite's common part (docs/miniapps.md "The common interface").
 *
 * Each mini-app is one file miniapps/<app>.c whose main is its descriptor, given to LTS_MAPP_MAIN:
 *
 *     LTS_MAPP_MAIN(.app = "cg", .classes = cg_classes, .default_iters = cg_iters, .check = cg_check,
 *                   .run = cg_run, .summary = "...")
 *
 * lts_mapp_main owns everything around the kernel: MPI_Init/Finalize, the command line
 * (`--class C --iters N --json --inject-fault --help`), the checks every rank makes identically
 * (so all agree on exit 2 without talking), the reductions of the verdict and the runtime, the one
 * result line on rank 0 and the exit status (0 passed, 1 verification failed, 2 bad arguments or an
 * np the kernel does not allow, 3 an internal error such as out of memory). */
#ifndef LTS_MINIAPP_H
#define LTS_MINIAPP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* What the kernel is asked to run. Identical on every rank. */
typedef struct {
    const char *cls;   /* the class name, one of the descriptor's classes (e.g. "S") */
    int cls_index;     /* its index in the descriptor's class list */
    int iters;         /* iterations of the main loop: the class default unless --iters was given */
    int iters_given;   /* 1 when --iters was given (a non-default count: the app may verify differently) */
    int inject_fault;  /* --inject-fault: perturb the computation so that verification must fail */
    MPI_Comm comm;     /* the communicator to run on (a private duplicate of MPI_COMM_WORLD) */
    int rank, np;
} lts_mapp_ctx;

/* What the kernel reports. Filled on every rank; value/reference are taken from rank 0. */
typedef struct {
    double runtime_s;  /* this rank's elapsed time of the timed section (the printed runtime is the max) */
    int verified;      /* 1 passed, 0 failed (the printed verdict is passed only if every rank says 1) */
    double value;      /* the verified quantity (app-specific, docs/miniapps.md) */
    double reference;  /* what it is compared with; NaN when there is none (printed as null) */
} lts_mapp_result;

typedef struct {
    const char *app;               /* "cg": program latscope-cg, the app= field */
    const char *summary;           /* one line for --help and `latscope apps list` */
    const char *const *classes;    /* NULL-terminated list of class names, e.g. {"S", "W", NULL} */
    const char *default_class;     /* NULL: the first of classes */
    /* Default iteration count for a class index; NULL: the app has no iteration loop and rejects
     * --iters. */
    int (*default_iters)(int cls_index);
    /* Whether the kernel can run this (np, class, iters). 0 = yes; otherwise write one line naming
     * the bad value and what is allowed into msg and return nonzero. Must depend only on ctx (every
     * rank decides identically). NULL: every np >= 1 and iters >= 1 is fine. */
    int (*check)(const lts_mapp_ctx *ctx, char *msg, size_t msg_len);
    /* The kernel: 0, or a negative LTS_E* style code on an internal error (every rank returns). */
    int (*run)(const lts_mapp_ctx *ctx, lts_mapp_result *res);
} lts_mapp_desc;

int lts_mapp_main(int argc, char **argv, const lts_mapp_desc *desc);

/* An app's main(): its descriptor's fields, designated, and nothing else; the rest is
 * lts_mapp_main's, so no app repeats the program around its kernel. */
#define LTS_MAPP_MAIN(...)                                                                      \
    int main(int argc, char **argv) {                                                           \
        static const lts_mapp_desc lts_mapp_desc_ = {__VA_ARGS__};                              \
        return lts_mapp_main(argc, argv, &lts_mapp_desc_);                                      \
    }

/* Block distribution of n items over p parts: part c owns [*lo, *lo + *cnt). The first n % p
 * parts get one more. */
void lts_mapp_split(long long n, int p, int c, long long *lo, long long *cnt);

/* NPB's pseudo-random generator (NPB 3 spec, "randlc"): x_{k+1} = a x_k mod 2^46, uniform value
 * x_{k+1} 2^-46. Exact integer arithmetic, so the stream is bit-identical to NPB's double-precision
 * one and can be entered anywhere by a jump x_0 a^n (lts_npb_pow46). */
#define LTS_NPB_A 1220703125ULL   /* 5^13, the multiplier of CG, IS, EP, FT */
uint64_t lts_npb_mul46(uint64_t a, uint64_t x);
uint64_t lts_npb_pow46(uint64_t a, uint64_t n);
double lts_npb_randlc(uint64_t *x, uint64_t a);

/* |a - b| <= tol * |b| (tol * 1 when b == 0). */
int lts_mapp_close(double a, double b, double tol);

#endif
