/* What a fuzz harness needs: the libFuzzer entry point (the same file builds under libFuzzer or
 * under tests/fuzz/driver.c) and an invariant check that fails the way a sanitizer does (abort:
 * both libFuzzer and our driver save the input that triggered it). */
#ifndef LTS_FUZZ_H
#define LTS_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                  \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* The input as a NUL-terminated string in a buffer of exactly size + 1 bytes (so an over-read
 * is an ASan report); an embedded NUL simply ends the string early, as it would for argv. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    for (size_t i = 0; i < size; i++) s[i] = (char)data[i];
    s[size] = '\0';
    return s;
}

#endif
