#include "latscope/sched.h"
#include "latscope/errors.h"
#include <stdlib.h>
#include <string.h>

int lts_tournament_rounds(int P) {
    if (P < 2) return 0;
    return (P % 2 == 0) ? P - 1 : P;
}

/* Circle method on N = P rounded up to even: position N-1 is fixed, the others rotate. In round
 * r, slot 0 pairs the fixed position with r; slots k = 1..N/2-1 pair (r+k) and (r-k) mod (N-1).
 * For odd P the extra position N-1 is a bye. */
int lts_tournament_partner(int P, int round, int rank) {
    if (P < 2 || round < 0 || rank < 0 || rank >= P) return -1;
    int N = P + (P & 1), M = N - 1;
    if (round >= M) return -1;
    int partner;
    if (rank == M) partner = round;
    else if (rank == round) partner = M;
    else {
        /* rank = round + k or round - k (mod M); partner is the mirror */
        partner = ((2 * round - rank) % M + M) % M;
    }
    return partner >= P ? -1 : partner;
}

int lts_pack_rounds(int P, const int *ranks, size_t ngroups, int width, int *round_of) {
    if (P < 1 || width < 1) return LTS_EINVAL;
    /* busy[r*P + rank]: grows as rounds are opened */
    size_t cap = 16, nrounds = 0;
    unsigned char *busy = calloc(cap * (size_t)P, 1);
    if (!busy) return LTS_ENOMEM;
    for (size_t g = 0; g < ngroups; g++) {
        const int *gr = ranks + g * (size_t)width;
        size_t r;
        for (r = 0; r < nrounds; r++) {
            int ok = 1;
            for (int k = 0; k < width && ok; k++) if (busy[r * (size_t)P + (size_t)gr[k]]) ok = 0;
            if (ok) break;
        }
        if (r == nrounds) {
            if (nrounds == cap) {
                unsigned char *b = realloc(busy, 2 * cap * (size_t)P);
                if (!b) { free(busy); return LTS_ENOMEM; }
                memset(b + cap * (size_t)P, 0, cap * (size_t)P);
                busy = b; cap *= 2;
            }
            nrounds++;
        }
        for (int k = 0; k < width; k++) busy[r * (size_t)P + (size_t)gr[k]] = 1;
        round_of[g] = (int)r;
    }
    free(busy);
    return (int)nrounds;
}
