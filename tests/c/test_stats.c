#include "latscope/latscope.h"
#include "check.h"
#include <stdlib.h>
#include <string.h>

/* xorshift for reproducible synthetic samples */
static unsigned long long rs = 88172645463325252ULL;
static double urand(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (rs >> 11) * (1.0 / 9007199254740992.0); }
static double nrand(void) { double u = urand(), v = urand(); return sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v); }

static size_t run_rule(const lts_rep_policy_t *p, double (*gen)(void), lts_stop_reason_t *why) {
    lts_rep_ctl_t c;
    lts_rep_ctl_init(&c, p);
    lts_stop_reason_t r;
    while ((r = lts_rep_decide(&c, 0.0)) == LTS_STOP_CONTINUE) lts_rep_add(&c, gen());
    size_t n = c.n;
    *why = r;
    lts_rep_ctl_free(&c);
    return n;
}
static double tight(void) { return 1e-6 * (1 + 0.01 * nrand()); }            /* CV 1 % */
static double noisy(void) { return 1e-6 * (1 + 0.3 * fabs(nrand())); }        /* CV ~ 20 % */
static double outliers(void) { return urand() < 0.05 ? 1e-3 : 1e-6 * (1 + 0.01 * nrand()); }

int main(void) {
    /* Student t quantiles against tabulated values (two-sided 95 %, one-sided 95 %) */
    CHECK_NEAR(lts_t_quantile(0.975, 1), 12.706204736, 1e-6);
    CHECK_NEAR(lts_t_quantile(0.975, 2), 4.302652730, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.975, 5), 2.570581836, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.975, 10), 2.228138852, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.975, 30), 2.042272456, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.975, 100), 1.983971519, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.95, 5), 2.015048373, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.995, 20), 2.845339710, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.025, 10), -2.228138852, 1e-8);
    CHECK_NEAR(lts_t_quantile(0.975, 1e7), 1.959963985, 1e-6);
    CHECK_NEAR(lts_t_quantile(0.5, 7), 0.0, 0);
    CHECK(isnan(lts_t_quantile(1.0, 5)));
    CHECK(isnan(lts_t_quantile(0.9, 0)));
    CHECK_NEAR(lts_norm_quantile(0.975), 1.959963985, 1e-8);
    CHECK_NEAR(lts_betainc(2, 3, 0.4), 0.5248, 1e-12);

    /* median CI order statistics: n = 10 at 95 % -> 2nd and 9th (0-based 1 and 8) */
    size_t lo, hi;
    CHECK(lts_median_ci_index(10, 0.95, &lo, &hi) == LTS_OK);
    CHECK(lo == 1 && hi == 8);
    CHECK(lts_median_ci_index(5, 0.95, &lo, &hi) == LTS_ENODATA);   /* 1/32 > 2.5 % */
    CHECK(lts_median_ci_index(6, 0.95, &lo, &hi) == LTS_OK && lo == 0 && hi == 5);

    /* summary: known sample */
    double x[] = {5, 1, 4, 2, 3};
    lts_summary_t s;
    CHECK(lts_summarize(x, 5, 0.95, LTS_STOP_MEAN, &s) == LTS_OK);
    CHECK_NEAR(s.mean, 3, 1e-15);
    CHECK_NEAR(s.median, 3, 1e-15);
    CHECK_NEAR(s.sd, sqrt(2.5), 1e-15);
    CHECK_NEAR(s.p90, 4.6, 1e-12);
    CHECK_NEAR(s.ci_half, 2.776445105 * sqrt(2.5) / sqrt(5.0), 1e-8);
    CHECK(x[0] == 5);   /* input untouched */
    CHECK(lts_summarize(x, 1, 0.95, LTS_STOP_MEAN, &s) == LTS_OK && isnan(s.sd) && isnan(s.ci_half));
    CHECK(lts_summarize(x, 0, 0.95, LTS_STOP_MEAN, &s) == LTS_ENODATA);

    /* stop rules on synthetic samples: the mean rule (MPIBlib §3) */
    lts_rep_policy_t p;
    lts_rep_policy_default(&p);
    CHECK(p.rule == LTS_STOP_MEDIAN && p.min_reps == 200);   /* the defaults docs/measurement.md explains */
    p.rule = LTS_STOP_MEAN;
    p.min_reps = 20;
    p.budget_s = 0;
    lts_stop_reason_t why;
    size_t n_tight = run_rule(&p, tight, &why);
    CHECK(why == LTS_STOP_CONVERGED);
    CHECK(n_tight <= (size_t)p.min_reps + 1);   /* already tight at min_reps */
    size_t n_noisy = run_rule(&p, noisy, &why);
    CHECK(why == LTS_STOP_CONVERGED);
    CHECK(n_noisy > 100 && n_noisy < 2000);     /* (1.96 * 0.18 / 0.025)^2 ~ 200 */
    /* the achieved error really is within the target */
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        while (lts_rep_decide(&c, 0) == LTS_STOP_CONTINUE) lts_rep_add(&c, noisy());
        CHECK(lts_summarize(c.samples, c.n, 0.95, LTS_STOP_MEAN, &s) == LTS_OK);
        CHECK(s.rel_err <= 0.025 * 1.05);
        lts_rep_ctl_free(&c);
    }
    /* outliers defeat the mean rule (hits max_reps) but not the median rule */
    p.max_reps = 3000;
    p.min_reps = 200;   /* enough that the 5 % outliers are surely in the first check */
    run_rule(&p, outliers, &why);
    CHECK(why == LTS_STOP_MAX_REPS);
    p.rule = LTS_STOP_MEDIAN;
    size_t n_med = run_rule(&p, outliers, &why);
    CHECK(why == LTS_STOP_CONVERGED && n_med < 3000);
    /* fixed count: exactly that many */
    p.min_reps = p.max_reps = 137;
    CHECK(run_rule(&p, noisy, &why) == 137 && why == LTS_STOP_FIXED);
    /* steady state (docs/measurement.md): the default policy on a stationary series stops at
     * min_reps with nothing discarded */
    lts_rep_policy_default(&p);
    p.budget_s = 0;
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        lts_stop_reason_t r;
        while ((r = lts_rep_decide(&c, 0)) == LTS_STOP_CONTINUE) lts_rep_add(&c, tight());
        CHECK(r == LTS_STOP_CONVERGED && c.stationary && c.discarded == 0 && c.n <= (size_t)p.min_reps + 1);
        lts_rep_ctl_free(&c);
    }
    /* a slow start (the first 150 samples 30 % slower, a cold path) fits inside the first 200:
     * its halves disagree, it is dropped as warm-up, and the median is that of the steady part.
     * Without the check the median of the first 200 would be the slow state's (150 of 200). */
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        size_t k = 0;
        while (lts_rep_decide(&c, 0) == LTS_STOP_CONTINUE) lts_rep_add(&c, tight() * (k++ < 150 ? 1.3 : 1.0));
        CHECK(c.stationary && c.discarded >= 100);
        CHECK(lts_summarize(c.samples, c.n, 0.95, LTS_STOP_MEDIAN, &s) == LTS_OK);
        CHECK(fabs(s.median / 1e-6 - 1) < 0.01);
        lts_rep_ctl_free(&c);
    }
    /* a state change in the last quarter (from sample 160 on, 30 % slower, and staying so): the
     * halves agree (the newer half is still mostly the old state), the newest quarter does not;
     * the rule goes on and reports the new state, not the one the process has left */
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        size_t k = 0;
        while (lts_rep_decide(&c, 0) == LTS_STOP_CONTINUE) lts_rep_add(&c, tight() * (k++ < 160 ? 1.0 : 1.3));
        CHECK(c.stationary && c.discarded >= 100 && c.n + c.discarded > 200);
        CHECK(lts_summarize(c.samples, c.n, 0.95, LTS_STOP_MEDIAN, &s) == LTS_OK);
        CHECK(fabs(s.median / 1.3e-6 - 1) < 0.01);
        lts_rep_ctl_free(&c);
    }
    /* a drift that never settles (5 % per 100 samples) is never declared stationary: the rule
     * runs to max_reps, kept + discarded, and says so */
    p.max_reps = 5000;
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        size_t k = 0;
        lts_stop_reason_t r;
        while ((r = lts_rep_decide(&c, 0)) == LTS_STOP_CONTINUE) lts_rep_add(&c, 1e-6 * exp(5e-4 * (double)k++) * (1 + 0.001 * nrand()));
        CHECK(r == LTS_STOP_MAX_REPS && !c.stationary && c.n + c.discarded == 5000 && c.discarded > 0);
        lts_rep_ctl_free(&c);
    }
    /* a fixed count is kept whole; the check is only reported */
    p.min_reps = p.max_reps = 400;
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        size_t k = 0;
        while (lts_rep_decide(&c, 0) == LTS_STOP_CONTINUE) lts_rep_add(&c, tight() * (k++ < 200 ? 1.3 : 1.0));
        CHECK(c.n == 400 && c.discarded == 0 && !c.stationary);
        lts_rep_ctl_free(&c);
    }
    /* budget */
    lts_rep_policy_default(&p);
    p.budget_s = 1.0;
    {
        lts_rep_ctl_t c;
        lts_rep_ctl_init(&c, &p);
        lts_rep_add(&c, 1.0);
        CHECK(lts_rep_decide(&c, 2.0) == LTS_STOP_BUDGET);
        lts_rep_ctl_free(&c);
    }
    /* policy validation names the bad value */
    char msg[256];
    lts_rep_policy_default(&p);
    p.min_reps = 10; p.max_reps = 5;
    CHECK(lts_rep_policy_check(&p, msg, sizeof msg) == LTS_EINVAL && strstr(msg, "--max-reps 5"));
    lts_rep_policy_default(&p);
    p.confidence = 1.5;
    CHECK(lts_rep_policy_check(&p, msg, sizeof msg) == LTS_EINVAL && strstr(msg, "1.5"));
    lts_rep_policy_default(&p);
    CHECK(lts_rep_policy_check(&p, msg, sizeof msg) == LTS_OK);
    return CHECK_DONE();
}
