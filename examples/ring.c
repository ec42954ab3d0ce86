/* example-ring: a plain MPI application for trying latscope's injector and congestion generator on
 * (README "Injecting latency variation": the program in place of `./app`). Each of --rounds rounds
 * passes a --size message around the ring 0 -> 1 -> ... -> P-1 -> 0 with MPI_Sendrecv, then one
 * MPI_Allreduce checks the data; rank 0 prints the median time per round. Exit 0 ok, 1 wrong data,
 * 2 bad input (the same verdict on every rank: all ranks parse the same arguments). */
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: example-ring [--rounds N] [--size BYTES]\n"
    "  --rounds N     rounds around the ring (1..1000000, default 1000)\n"
    "  --size BYTES   message size in bytes (0..16777216, default 8)\n";

static int parse_long(int me, const char *flag, const char *s, long lo, long hi, long *out) {
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        if (me == 0) fprintf(stderr, "example-ring: error: %s '%s': must be an integer from %ld to %ld\n", flag, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long rounds = 1000, size = 8;
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--help")) {
            if (me == 0) fputs(USAGE, stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            bad = parse_long(me, "--rounds", argv[++i], 1, 1000000, &rounds) != 0;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            bad = parse_long(me, "--size", argv[++i], 0, 16 << 20, &size) != 0;
        } else {
            if (me == 0) fprintf(stderr, "example-ring: error: unknown or incomplete argument '%s'\n%s", argv[i], USAGE);
            bad = 1;
        }
    }
    /* every rank parsed the same arguments and reached the same verdict; rank 0 alone printed it */
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        MPI_Finalize();
        return 2;
    }
    unsigned char *sbuf = malloc((size_t)size + 1), *rbuf = malloc((size_t)size + 1);
    double *t = malloc((size_t)rounds * sizeof *t);
    if (!sbuf || !rbuf || !t) {
        fprintf(stderr, "example-ring: error: rank %d: out of memory\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int next = (me + 1) % P, prev = (me + P - 1) % P, wrong = 0;
    for (long r = 0; r < rounds; r++) {
        memset(sbuf, (int)((me + r) & 0xff), (size_t)size);
        double t0 = MPI_Wtime();
        MPI_Sendrecv(sbuf, (int)size, MPI_BYTE, next, 0, rbuf, (int)size, MPI_BYTE, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        t[r] = MPI_Wtime() - t0;
        for (long k = 0; k < size; k++)
            if (rbuf[k] != (unsigned char)((prev + r) & 0xff)) { wrong = 1; break; }
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)rounds, sizeof *t, cmp_dbl);
    if (me == 0)
        printf("example-ring: %d ranks, %ld rounds of %ld B: median %.3f us per exchange, %s\n", P, rounds, size,
               t[rounds / 2] * 1e6, wrong ? "WRONG DATA" : "ok");
    free(sbuf);
    free(rbuf);
    free(t);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
