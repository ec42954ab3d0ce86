/* Minimal assertion helpers for the C unit tests: every failure is printed, exit 1 if any. */
#ifndef LTS_TEST_CHECK_H
#define LTS_TEST_CHECK_H
#include <math.h>
#include <stdio.h>
static int lts_failures = 0, lts_checks = 0;
#define CHECK(cond) do { lts_checks++; if (!(cond)) { lts_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_NEAR(a, b, tol) do { double _a = (a), _b = (b); lts_checks++; \
    if (!(fabs(_a - _b) <= (tol))) { lts_failures++; \
    fprintf(stderr, "%s:%d: %s = %.12g, expected %.12g (tol %g)\n", __FILE__, __LINE__, #a, _a, _b, (double)(tol)); } } while (0)
#define CHECK_DONE() (printf("%d checks, %d failed\n", lts_checks, lts_failures), lts_failures ? 1 : 0)
#endif
