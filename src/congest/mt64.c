/* MT19937-64 (see mt64.h), from the reference algorithm: recurrence parameters n = 312,
 * m = 156, r = 31, twist matrix a = 0xB5026F5AA96619E9, tempering (u,d) = (29, 0x5555...),
 * (s,b) = (17, 0x71D67FFFEDA60000), (t,c) = (37, 0xFFF7EEE000000000), l = 43. */
#include "mt64.h"

#define NN LTS_MT64_NN
#define MM 156
#define MATRIX_A 0xB5026F5AA96619E9ULL
#define UM 0xFFFFFFFF80000000ULL /* most significant 33 bits */
#define LM 0x7FFFFFFFULL         /* least significant 31 bits */

void lts_mt64_init(lts_mt64_t *g, uint64_t seed) {
    g->mt[0] = seed;
    for (int i = 1; i < NN; i++)
        g->mt[i] = 6364136223846793005ULL * (g->mt[i - 1] ^ (g->mt[i - 1] >> 62)) + (uint64_t)i;
    g->mti = NN;
}

void lts_mt64_init_array(lts_mt64_t *g, const uint64_t *key, size_t n) {
    lts_mt64_init(g, 19650218ULL);
    uint64_t *mt = g->mt;
    size_t i = 1, j = 0;
    size_t k = n > NN ? n : NN;
    for (; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 62)) * 3935559000370003845ULL)) + key[j] + j;
        i++;
        j++;
        if (i >= NN) { mt[0] = mt[NN - 1]; i = 1; }
        if (j >= n) j = 0;
    }
    for (k = NN - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 62)) * 2862933555777941757ULL)) - i;
        i++;
        if (i >= NN) { mt[0] = mt[NN - 1]; i = 1; }
    }
    mt[0] = 1ULL << 63; /* MSB is 1: a non-zero initial array */
    g->mti = NN;
}

static inline uint64_t twist(uint64_t hi, uint64_t lo, uint64_t m) {
    uint64_t x = (hi & UM) | (lo & LM);
    return m ^ (x >> 1) ^ ((x & 1ULL) ? MATRIX_A : 0ULL);
}

uint64_t lts_mt64_next(lts_mt64_t *g) {
    uint64_t *mt = g->mt;
    if (g->mti >= NN) { /* generate NN words at one time */
        int i;
        for (i = 0; i < NN - MM; i++) mt[i] = twist(mt[i], mt[i + 1], mt[i + MM]);
        for (; i < NN - 1; i++) mt[i] = twist(mt[i], mt[i + 1], mt[i + (MM - NN)]);
        mt[NN - 1] = twist(mt[NN - 1], mt[0], mt[MM - 1]);
        g->mti = 0;
    }
    uint64_t x = mt[g->mti++];
    x ^= (x >> 29) & 0x5555555555555555ULL;
    x ^= (x << 17) & 0x71D67FFFEDA60000ULL;
    x ^= (x << 37) & 0xFFF7EEE000000000ULL;
    x ^= (x >> 43);
    return x;
}

double lts_mt64_unit(lts_mt64_t *g) { return (double)(lts_mt64_next(g) >> 11) * (1.0 / 9007199254740992.0); }
