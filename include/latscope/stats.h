/* Statistics for repetition control and summaries. */
#ifndef LATSCOPE_STATS_H
#define LATSCOPE_STATS_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Quantile of Student's t distribution with df degrees of freedom (p in (0,1), df > 0). */
double lts_t_quantile(double p, double df);
/* Standard normal quantile. */
double lts_norm_quantile(double p);
/* Regularized incomplete beta I_x(a, b). */
double lts_betainc(double a, double b, double x);

typedef enum { LTS_STOP_MEAN = 0, LTS_STOP_MEDIAN = 1 } lts_stop_rule_t;

typedef struct lts_summary {
    size_t n;
    double min, max, mean, median, sd, p90, p99;
    double ci_level;
    int ci_of;              /* LTS_STOP_MEAN: t-CI of the mean; LTS_STOP_MEDIAN: order-statistic CI */
    double ci_lo, ci_hi;    /* NaN when undefined (n too small) */
    double ci_half;         /* (ci_hi - ci_lo) / 2 */
    double rel_err;         /* ci_half / |estimate|; NaN when undefined */
} lts_summary_t;

/* Summary of x[0..n) (x is not modified). rule selects which CI is reported. */
int lts_summarize(const double *x, size_t n, double confidence, lts_stop_rule_t rule, lts_summary_t *s);

/* Order-statistic CI for the median: 0-based indices lo <= hi into the sorted sample such that
 * P(x_(lo) <= median <= x_(hi)) >= confidence (binomial(n, 1/2)). Returns LTS_ENODATA when n is
 * too small to reach the confidence. */
int lts_median_ci_index(size_t n, double confidence, size_t *lo, size_t *hi);

/* Percentile with linear interpolation between order statistics (numpy's default). */
double lts_quantile_sorted(const double *sorted, size_t n, double q);

#ifdef __cplusplus
}
#endif
#endif
