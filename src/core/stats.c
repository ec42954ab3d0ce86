#include "latscope/stats.h"
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include "latscope/errors.h"
#include "latscope/util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Continued fraction for I_x(a,b) (modified Lentz), valid for x < (a+1)/(a+b+2). */
static double betacf(double a, double b, double x) {
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1 / d; h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d; if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c; if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps) break;
    }
    return h;
}

double lts_betainc(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2)) return exp(lbt) * betacf(a, b, x) / a;
    return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

/* Student t CDF: F(t) = 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t >= 0. */
static double t_cdf(double t, double df) {
    double tail = 0.5 * lts_betainc(df / 2, 0.5, df / (df + t * t));
    return t >= 0 ? 1 - tail : tail;
}

static double t_pdf(double t, double df) {
    return exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI) - (df + 1) / 2 * log1p(t * t / df));
}

double lts_t_quantile(double p, double df) {
    if (!(p > 0 && p < 1) || !(df > 0)) return NAN;
    if (p == 0.5) return 0;
    if (p < 0.5) return -lts_t_quantile(1 - p, df);
    /* Newton on the CDF from the normal quantile (a handful of steps: the stop rule calls this at
     * every check), kept inside a bracket; bisection finishes if Newton stalls. */
    double lo = 0, hi = 1;
    while (t_cdf(hi, df) < p) { lo = hi; hi *= 2; if (hi > 1e12) return INFINITY; }
    double t = lts_norm_quantile(p);
    if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
    for (int i = 0; i < 50; i++) {
        double f = t_cdf(t, df) - p;
        if (f < 0) lo = t; else hi = t;
        double step = f / t_pdf(t, df), nt = t - step;
        if (!(nt > lo && nt < hi)) nt = 0.5 * (lo + hi);
        if (fabs(nt - t) <= 1e-13 * nt) return nt;
        t = nt;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (t_cdf(mid, df) < p) lo = mid; else hi = mid;
    }
    return 0.5 * (lo + hi);
}

double lts_norm_quantile(double p) {
    if (!(p > 0 && p < 1)) return NAN;
    if (p < 0.5) return -lts_norm_quantile(1 - p);
    double lo = 0, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-14; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p) lo = mid; else hi = mid;
    }
    return 0.5 * (lo + hi);
}

double lts_quantile_sorted(const double *s, size_t n, double q) {
    if (n == 0) return NAN;
    double h = (double)(n - 1) * q;
    size_t i = (size_t)floor(h);
    if (i + 1 >= n) return s[n - 1];
    return s[i] + (h - (double)i) * (s[i + 1] - s[i]);
}

/* log of the binomial(n, 1/2) probability mass at k */
static double lbinom_half(size_t n, size_t k) {
    return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) - (double)n * log(2.0);
}

int lts_median_ci_index(size_t n, double confidence, size_t *lo, size_t *hi) {
    /* Symmetric interval [x_(j), x_(n-1-j)] covers the median with probability
     * 1 - 2 P(B <= j) for B ~ Bin(n, 1/2) (0-based j: P(B <= j) = sum_{k<=j}). Pick the largest j
     * whose coverage still reaches the confidence. */
    if (n == 0) return LTS_ENODATA;
    double alpha2 = (1 - confidence) / 2, cdf = 0;
    size_t j = 0;
    int found = 0;
    for (size_t k = 0; k < n / 2 + 1; k++) {
        cdf += exp(lbinom_half(n, k));
        if (cdf > alpha2) break;
        j = k;
        found = 1;
    }
    if (!found) return LTS_ENODATA;
    /* P(B <= j) <= alpha/2 means x_(j) (0-based, the (j+1)th) .. x_(n-1-j) covers >= conf */
    *lo = j;
    *hi = n - 1 - j;
    return LTS_OK;
}

int lts_summarize(const double *x, size_t n, double confidence, lts_stop_rule_t rule, lts_summary_t *s) {
    memset(s, 0, sizeof *s);
    s->n = n;
    s->ci_level = confidence;
    s->ci_of = (int)rule;
    s->min = s->max = s->mean = s->median = s->sd = s->p90 = s->p99 = NAN;
    s->ci_lo = s->ci_hi = s->ci_half = s->rel_err = NAN;
    if (n == 0) return LTS_ENODATA;
    double *v = malloc(n * sizeof *v);
    if (!v) return LTS_ENOMEM;
    memcpy(v, x, n * sizeof *v);
    qsort(v, n, sizeof *v, lts_cmp_double);
    /* Welford for a numerically stable variance */
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (v[i] - mean);
    }
    s->min = v[0];
    s->max = v[n - 1];
    s->mean = mean;
    s->median = lts_quantile_sorted(v, n, 0.5);
    s->p90 = lts_quantile_sorted(v, n, 0.90);
    s->p99 = lts_quantile_sorted(v, n, 0.99);
    if (n >= 2) s->sd = sqrt(m2 / (double)(n - 1));
    if (rule == LTS_STOP_MEAN) {
        if (n >= 2) {
            double h = lts_t_quantile(0.5 + confidence / 2, (double)(n - 1)) * s->sd / sqrt((double)n);
            s->ci_half = h; s->ci_lo = mean - h; s->ci_hi = mean + h;
            if (mean != 0) s->rel_err = h / fabs(mean);
        }
    } else {
        size_t lo, hi;
        if (lts_median_ci_index(n, confidence, &lo, &hi) == LTS_OK) {
            s->ci_lo = v[lo]; s->ci_hi = v[hi];
            s->ci_half = (v[hi] - v[lo]) / 2;
            if (s->median != 0) s->rel_err = s->ci_half / fabs(s->median);
        }
    }
    free(v);
    return LTS_OK;
}
