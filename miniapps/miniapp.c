/* The mini-app suite's common part: command line, checks, reductions, the result line, exit
 * status (docs/miniapps.md "The common interface"). */
#include "miniapp.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAPP_OK = 0, MAPP_FAILED = 1, MAPP_BAD_ARGS = 2, MAPP_INTERNAL = 3 };

void lts_mapp_split(long long n, int p, int c, long long *lo, long long *cnt) {
    long long q = n / p, r = n % p;
    *cnt = q + (c < r);
    *lo = (long long)c * q + (c < r ? c : r);
}

#define NPB_MASK46 ((1ULL << 46) - 1)
#define NPB_MASK23 ((1ULL << 23) - 1)

/* a x mod 2^46 from 23-bit halves: every partial product fits in 64 bits. */
uint64_t lts_npb_mul46(uint64_t a, uint64_t x) {
    uint64_t a1 = (a >> 23) & NPB_MASK23, a2 = a & NPB_MASK23;
    uint64_t x1 = (x >> 23) & NPB_MASK23, x2 = x & NPB_MASK23;
    uint64_t mid = (a1 * x2 + a2 * x1) & NPB_MASK23;
    return ((mid << 23) + a2 * x2) & NPB_MASK46;
}

uint64_t lts_npb_pow46(uint64_t a, uint64_t n) {
    uint64_t r = 1;
    for (a &= NPB_MASK46; n; n >>= 1, a = lts_npb_mul46(a, a))
        if (n & 1) r = lts_npb_mul46(r, a);
    return r;
}

double lts_npb_randlc(uint64_t *x, uint64_t a) {
    *x = lts_npb_mul46(a, *x);
    return (double)*x * 0x1.0p-46;
}

int lts_mapp_close(double a, double b, double tol) {
    double scale = b != 0.0 ? fabs(b) : 1.0;
    return fabs(a - b) <= tol * scale;   /* false for NaN */
}

static void usage(FILE *f, const lts_mapp_desc *d) {
    fprintf(f, "usage: latscope-%s [--class ", d->app);
    for (int i = 0; d->classes[i]; i++) fprintf(f, "%s%s", i ? "|" : "", d->classes[i]);
    fprintf(f, "] %s[--json] [--inject-fault] [--help]\n", d->default_iters ? "[--iters N] " : "");
    fprintf(f, "%s (docs/miniapps.md)\n", d->summary);
    fprintf(f, "  --class C       problem class (default %s)\n", d->default_class);
    if (d->default_iters) {
        fprintf(f, "  --iters N       main-loop iterations (default per class:");
        for (int i = 0; d->classes[i]; i++) fprintf(f, " %s=%d", d->classes[i], d->default_iters(i));
        fprintf(f, ")\n");
    }
    fprintf(f, "  --json          the result as one JSON object\n"
               "  --inject-fault  perturb the computation so that verification fails (tests)\n"
               "  --describe      app, summary, classes and iterations as one JSON line\n"
               "exit: 0 verification passed, 1 failed, 2 bad arguments or np, 3 internal error\n");
}

static int class_index(const lts_mapp_desc *d, const char *name) {
    for (int i = 0; d->classes[i]; i++)
        if (strcmp(d->classes[i], name) == 0) return i;
    return -1;
}

static void allowed_classes(const lts_mapp_desc *d, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; d->classes[i] && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", d->classes[i]);
}

/* s as a JSON string body: quotes and backslashes escaped, control characters dropped. */
static void json_str(const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        if ((unsigned char)*s >= 0x20) putchar(*s);
    }
}

/* --describe: what `latscope apps list` shows, from the program itself (one JSON line). */
static void describe(const lts_mapp_desc *d) {
    printf("{\"app\": \"%s\", \"summary\": \"", d->app);
    json_str(d->summary);
    printf("\", \"default_class\": \"%s\", \"classes\": [", d->default_class);
    for (int i = 0; d->classes[i]; i++) printf("%s\"%s\"", i ? ", " : "", d->classes[i]);
    printf("], \"iters\": ");
    if (!d->default_iters) printf("null");
    else {
        printf("{");
        for (int i = 0; d->classes[i]; i++) printf("%s\"%s\": %d", i ? ", " : "", d->classes[i], d->default_iters(i));
        printf("}");
    }
    printf("}\n");
}

/* Parses argv into ctx; 0, 1 for --help, 4 for --describe, or MAPP_BAD_ARGS with msg set. Every rank parses the same
 * argv, so every rank reaches the same verdict without communicating. */
static int parse(int argc, char **argv, const lts_mapp_desc *d, lts_mapp_ctx *ctx, int *json, char *msg,
                 size_t msg_len) {
    const char *cls = d->default_class;
    const char *iters_arg = NULL;
    char allowed[256];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const char *eq = strchr(a, '=');
        char name[64];
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name) nl = sizeof name - 1;
        memcpy(name, a, nl);
        name[nl] = '\0';
        int takes = strcmp(name, "--class") == 0 || strcmp(name, "--iters") == 0;
        if (takes) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else {
                snprintf(msg, msg_len, "%s: needs a value", name);
                return MAPP_BAD_ARGS;
            }
        } else if (eq) {
            snprintf(msg, msg_len, "%s: takes no value", name);
            return MAPP_BAD_ARGS;
        }
        if (strcmp(name, "--class") == 0) cls = val;
        else if (strcmp(name, "--iters") == 0) iters_arg = val;
        else if (strcmp(name, "--json") == 0) *json = 1;
        else if (strcmp(name, "--inject-fault") == 0) ctx->inject_fault = 1;
        else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) return 1;
        else if (strcmp(name, "--describe") == 0) return 4;
        else {
            snprintf(msg, msg_len, "unknown argument '%s'; allowed: --class, %s--json, --inject-fault, --help", a,
                     d->default_iters ? "--iters, " : "");
            return MAPP_BAD_ARGS;
        }
    }
    int ci = class_index(d, cls);
    if (ci < 0) {
        allowed_classes(d, allowed, sizeof allowed);
        snprintf(msg, msg_len, "--class %s: unknown class; allowed: %s", cls, allowed);
        return MAPP_BAD_ARGS;
    }
    ctx->cls = d->classes[ci];
    ctx->cls_index = ci;
    ctx->iters = d->default_iters ? d->default_iters(ci) : 1;
    if (iters_arg) {
        if (!d->default_iters) {
            snprintf(msg, msg_len, "--iters %s: %s has no iteration loop; leave --iters out", iters_arg, d->app);
            return MAPP_BAD_ARGS;
        }
        char *end;
        errno = 0;
        long v = strtol(iters_arg, &end, 10);
        if (errno || end == iters_arg || *end || v < 1 || v > 1000000) {
            snprintf(msg, msg_len, "--iters %s: must be an integer from 1 to 1000000", iters_arg);
            return MAPP_BAD_ARGS;
        }
        ctx->iters = (int)v;
        ctx->iters_given = 1;
    }
    if (d->check && d->check(ctx, msg, msg_len)) return MAPP_BAD_ARGS;
    return 0;
}

/* %.15g, or null for a value that is not finite (JSON has no NaN). */
static void num(char *buf, size_t n, double v) {
    if (isfinite(v)) snprintf(buf, n, "%.15g", v);
    else snprintf(buf, n, "null");
}

int lts_mapp_main(int argc, char **argv, const lts_mapp_desc *desc) {
    lts_mapp_desc resolved = *desc;
    if (!resolved.default_class) resolved.default_class = resolved.classes[0];
    const lts_mapp_desc *d = &resolved;
    MPI_Init(&argc, &argv);
    lts_mapp_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctx.comm);
    MPI_Comm_rank(ctx.comm, &ctx.rank);
    MPI_Comm_size(ctx.comm, &ctx.np);
    int json = 0;
    char msg[512] = "";
    int rc = parse(argc, argv, d, &ctx, &json, msg, sizeof msg);
    if (rc == 1 || rc == 4) {
        if (ctx.rank == 0) {
            if (rc == 1) usage(stdout, d);
            else describe(d);
        }
        MPI_Comm_free(&ctx.comm);
        MPI_Finalize();
        return 0;
    }
    if (rc == MAPP_BAD_ARGS) {
        if (ctx.rank == 0) fprintf(stderr, "latscope-%s: %s\n", d->app, msg);
        MPI_Comm_free(&ctx.comm);
        MPI_Finalize();
        return MAPP_BAD_ARGS;
    }

    lts_mapp_result res = {0.0, 0, NAN, NAN};
    int krc = d->run(&ctx, &res);
    /* One reduction carries the error flag, the verdict and the runtime: MIN of (rc, verified) and
     * MAX of the runtime, so every rank leaves with the same exit status. */
    int flags[2] = {krc < 0 ? -1 : 0, res.verified ? 1 : 0}, all[2];
    double t = res.runtime_s, tmax = 0.0;
    MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MIN, ctx.comm);
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, ctx.comm);
    int status;
    if (all[0] < 0) {
        if (ctx.rank == 0) fprintf(stderr, "latscope-%s: internal error (out of memory?) on some rank\n", d->app);
        status = MAPP_INTERNAL;
    } else {
        status = all[1] ? MAPP_OK : MAPP_FAILED;
        if (ctx.rank == 0) {
            char v[40], r[40], rt[40];
            num(v, sizeof v, res.value);
            num(r, sizeof r, res.reference);
            snprintf(rt, sizeof rt, "%.6g", tmax);
            char it[16] = "null";   /* an app without an iteration loop has no count */
            if (d->default_iters) snprintf(it, sizeof it, "%d", ctx.iters);
            const char *verdict = all[1] ? "passed" : "failed";
            if (json)
                printf("{\"kind\": \"latscope-miniapp\", \"app\": \"%s\", \"class\": \"%s\", \"np\": %d, \"iters\": %s, "
                       "\"runtime_s\": %s, \"verification\": \"%s\", \"value\": %s, \"reference\": %s}\n",
                       d->app, ctx.cls, ctx.np, it, rt, verdict, v, r);
            else
                printf("latscope-miniapp app=%s class=%s np=%d runtime_s=%s verification=%s value=%s reference=%s\n",
                       d->app, ctx.cls, ctx.np, rt, verdict, v, r);
            fflush(stdout);
        }
    }
    MPI_Comm_free(&ctx.comm);
    MPI_Finalize();
    return status;
}
