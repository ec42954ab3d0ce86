#!/usr/bin/env python3
"""Stop rules replayed offline on per-sample traces (docs/measurement.md "Steady
state", "Autocorrelated samples"). Reads the trace files `bench/steady_state_trace.py --keep DIR`
writes (DIR/trace_<size>.txt) and replays a rule from every --every-th sample, each replay judged
against the median of the --window repetitions around it (as bench/steady_state.py judges a run):
how many stopped more than --target from it, and the repetitions used, the warm-up (--warmup)
included. Every rule has the library's stationarity check (halves, newest quarter; the older half
dropped when they disagree, src/core/reps.c) and differs in the CI of the median it stops on:

  iid        the order-statistic CI, every sample counted as independent (the former rule);
  iat        its rank interval n/2 +- z sqrt(n tau)/2 widened by the integrated autocorrelation
             time tau = 1 + 2 sum_k rho_k of [x <= median] (Sokal's window --c; the median's variance
             is that of the fraction below it over the density squared), n/tau effective samples;
  batchesB   also the t-CI of B batch medians of n/B each (asked once the halves agree);
  blenL      also the t-CI of the medians of batches of L, at least 5 of them, no check before
             (the library's rule for back-to-back repetitions with L = 200);
  acf        blenL with L the first lag at which the run's own autocorrelation of [x <= median]
             is within the white-noise band.

The CI is computed at the checks the library makes (every ~2 % more samples), in numpy/scipy: the
order-statistic CI here is the normal approximation of the library's binomial one."""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path
from typing import Any

Z975 = 1.959964


def read_samples(path: Path) -> list[float]:
    return [float(line.split()[2]) for line in path.read_text().splitlines() if line and not line.startswith("#")]


def indicator_acf(x: Any, m: float, kmax: int) -> Any:
    """Autocorrelation of [x <= m] at lags 0..kmax (at most len(x) - 1), via the FFT; None when
    the indicator is constant."""
    import numpy as np
    i = (x <= m).astype(float)
    i -= i.mean()
    n = len(i)
    v = float(i @ i) / n
    if v <= 0:
        return None
    f = np.fft.rfft(i, 2 * n)
    return np.fft.irfft(f * np.conj(f))[:min(n, kmax + 1)] / n / v


def iat(x: Any, m: float, c: float, kmax: int) -> float:
    """Integrated autocorrelation time of [x <= m] (Sokal's window c)."""
    ac = indicator_acf(x, m, kmax)
    if ac is None:
        return 1.0
    tau = 1.0
    for k in range(1, len(ac)):
        tau += 2 * ac[k]
        if k >= c * tau:
            break
    return max(1.0, tau)


def corr_length(x: Any, m: float) -> int:
    """The first lag at which the autocorrelation of [x <= m] is within the white-noise band
    +-1.96 / sqrt(n) (Bartlett): samples that far apart are not measurably correlated."""
    ac = indicator_acf(x, m, len(x) // 5)
    if ac is None:
        return 1
    band = Z975 / math.sqrt(len(x))
    for k in range(1, len(ac)):
        if ac[k] < band:
            return k
    return len(x) // 5 + 1


def batch_half(x: Any, nb: int, L: int) -> float:
    """t-CI half-width of the median from nb batch medians of L samples (the newest nb * L)."""
    import numpy as np
    from scipy.stats import t as student
    meds = np.median(x[len(x) - nb * L:].reshape(nb, L), axis=1)
    return float(student.ppf(0.975, nb - 1)) * float(np.std(meds, ddof=1)) / math.sqrt(nb)


def one_state(x: Any, tol: float) -> bool:
    import numpy as np
    n = len(x)
    h, q = n // 2, n // 4
    m = float(np.median(x))
    return bool(abs(np.median(x[-h:]) - np.median(x[:h])) / m <= tol and abs(np.median(x[-q:]) - np.median(x[:-q])) / m <= tol)


def replay(x: Any, start: int, rule: str, c: float, tol: float, min_reps: int, max_used: int, guard: float = 0.0) -> tuple[float, int, str]:
    """The rule from x[start] on: its median, the timed repetitions used, why it stopped."""
    import numpy as np
    lo = start          # kept samples: x[lo:i]
    if rule.startswith("blen"):   # no check before the 5 batches (src/core/reps.c lts_rep_decide)
        min_reps = max(min_reps, 5 * int(rule[4:]))
    i = start + min_reps
    nxt = min_reps
    while i <= len(x) and i - start <= max_used:
        k = x[lo:i]
        n = len(k)
        if n >= nxt:
            nxt = n + max(1, n // 50)
            s = np.sort(k)
            m = float(s[n // 2]) if n % 2 else 0.5 * float(s[n // 2 - 1] + s[n // 2])
            tau = iat(k, m, c, n // 2) if rule == "iat" else 1.0
            d = Z975 * (n * tau) ** 0.5 / 2
            a, b = int(np.floor(n / 2 - d)), int(np.ceil(n / 2 + d))
            half = (s[min(n - 1, b)] - s[max(0, a)]) / 2 if a >= 0 and b < n else float("inf")
            if tau * guard > n:   # tau not estimable from n samples (Sokal: n >> tau)
                half = float("inf")
            if half / m <= tol:
                if one_state(k, tol):
                    # the library's order (src/core/reps.c): the batch CI once the halves agree
                    if rule == "acf":
                        L = corr_length(k, m)
                        half = max(half, batch_half(k, n // L, L) if n >= 5 * L else float("inf"))
                    elif rule.startswith("batches") or rule.startswith("blen"):
                        nb = int(rule[7:]) if rule.startswith("batches") else n // int(rule[4:])
                        # blenL: batches of L, at least 5 of them (src/core/reps.c batch_rel_err)
                        half = max(half, batch_half(k, nb, n // nb) if nb >= 5 else float("inf"))
                    if half / m <= tol:
                        return m, i - start, "converged"
                    i += 1
                    continue
                lo += n // 2
                nxt = max(min_reps, n - n // 2 + 1)
                i = max(i, lo + min_reps)
                continue
        i += 1
    k = x[lo:min(i, len(x))]
    return float(np.median(k)), min(i, len(x)) - start, "cap"


def main() -> int:
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+", type=Path, help="trace_<size>.txt files")
    ap.add_argument("--rule", default="iat", help="iid, iat, batchesB, blenL, acf (above)")
    ap.add_argument("--c", type=float, default=5.0, help="Sokal's window constant")
    ap.add_argument("--guard", type=float, default=0.0, help="stop only once n >= GUARD * tau")
    ap.add_argument("--rel-err", type=float, default=0.025)
    ap.add_argument("--min-reps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--max-used", type=int, default=20000, help="timed repetitions at most per replay")
    ap.add_argument("--target", type=float, default=0.03)
    ap.add_argument("--budget", type=int, default=1000, help="repetitions (warm-up included) a run may use")
    ap.add_argument("--window", type=int, default=10000)
    ap.add_argument("--every", type=int, default=200)
    a = ap.parse_args()
    tot_far = tot = tot_ok = 0
    allused: list[int] = []
    for p in a.traces:
        x = np.array(read_samples(p))
        far, used = 0, []
        starts = range(0, len(x) - a.window, a.every)
        for s0 in starts:
            m, u, _ = replay(x, s0, a.rule, a.c, a.rel_err, a.min_reps, a.max_used, a.guard)
            ctr = s0 + u // 2
            lo = max(0, min(ctr - a.window // 2, len(x) - a.window))
            ref = float(np.median(x[lo:lo + a.window]))
            far += abs(m / ref - 1) > a.target
            used.append(u + a.warmup)
            tot_ok += abs(m / ref - 1) <= a.target and used[-1] <= a.budget
        q = np.percentile(used, [50, 90, 99])
        print(f"{p.parent.name}/{p.name}: {len(used)} replays, beyond ±{a.target * 100:.0f}% {far} ({100 * far / len(used):.1f}%), "
              f"reps p50 {q[0]:.0f} p90 {q[1]:.0f} p99 {q[2]:.0f} max {max(used)}, > 1000: {sum(u > 1000 for u in used)}")
        tot_far += far
        tot += len(used)
        allused += used
    print(f"all: {tot} replays, missed {tot_far} ({100 * tot_far / tot:.2f}%), both met (±{a.target * 100:.0f}%, <= {a.budget}"
          f" repetitions) {100 * tot_ok / tot:.1f}%, reps p50 {statistics.median(allused):.0f}"
          f" p90 {np.percentile(allused, 90):.0f} max {max(allused)}, > 1000: {sum(u > 1000 for u in allused)} "
          f"({100 * sum(u > 1000 for u in allused) / tot:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
