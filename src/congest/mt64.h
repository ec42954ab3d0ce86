/* MT19937-64: the 64-bit Mersenne Twister (Matsumoto & Nishimura, ACM TOMACS 8(1), 1998; the
 * 64-bit variant by Nishimura, ACM TOMACS 10(4), 2000), written from the published reference
 * algorithm (mt19937-64.c). Seed 004 §5.1 draws the congestion generator's inter-message gaps
 * from a Mersenne Twister. State is a struct, so every rank (or thread) owns its stream.
 *
 * Reference check: lts_mt64_init(5489) yields 14514284786278117030, 4620546740167642908, ... and
 * its 10000th output is 9981545732273789042 (the value the C++ standard requires of
 * std::mt19937_64); tests/python/test_congest.py checks both through latscope-congest
 * --print-random. */
#ifndef LTS_CONGEST_MT64_H
#define LTS_CONGEST_MT64_H
#include <stddef.h>
#include <stdint.h>

#define LTS_MT64_NN 312

typedef struct lts_mt64 {
    uint64_t mt[LTS_MT64_NN];
    int mti;
} lts_mt64_t;

/* init_genrand64 */
void lts_mt64_init(lts_mt64_t *g, uint64_t seed);
/* init_by_array64: a stream from several words (latscope-congest uses {seed, rank}). */
void lts_mt64_init_array(lts_mt64_t *g, const uint64_t *key, size_t n);
/* genrand64_int64: uniform on [0, 2^64 - 1] */
uint64_t lts_mt64_next(lts_mt64_t *g);
/* genrand64_res53: uniform on [0, 1) with 53-bit resolution */
double lts_mt64_unit(lts_mt64_t *g);

#endif
