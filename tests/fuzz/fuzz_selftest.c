/* The driver's own test (tests/fuzz/selftest.sh, a ctest of build-asan): a harness with planted
 * bugs, so that every way a real harness can fail is seen to fail, with the input saved. Input
 * "OVF": heap overflow (ASan); "LEAK": a leak (LeakSanitizer); "UBSAN": signed overflow (UBSan);
 * "ABORT": a failed invariant. "F!" is a heap overflow behind two nested comparisons, for the
 * mutation search to find from an unrelated seed (coverage feedback keeps "F?" once reached).
 * Anything else passes. */
#include "fuzz.h"
#include <string.h>

static int is(const uint8_t *d, size_t n, const char *w) { return n == strlen(w) && !memcmp(d, w, n); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (is(data, size, "OVF") || (size >= 2 && data[0] == 'F' && data[1] == '!')) {
        char *p = malloc(4);
        char *volatile q = p;   /* hides the size from UBSan's object-size check: ASan must see it */
        q[4 + size % 4] = 1;
        free(p);
    }
    if (is(data, size, "LEAK")) {
        void *volatile p = malloc(40);
        p = NULL;
    }
    if (is(data, size, "UBSAN")) {
        volatile int big = 0x7fffffff;
        int x = big + (int)size;
        if (x == 0) return 1;
    }
    if (is(data, size, "ABORT")) FUZZ_CHECK(size == 0, "planted invariant failure (%zu bytes)", size);
    return 0;
}
