"""Comparing runs: the same points measured in two results files, their medians, the ratio of
medians with a two-sample confidence interval, a verdict, and what differs in the metadata
(docs/compare.md).

The ratio is run / baseline (below 1: the run is faster). Its interval comes from the best
evidence both files hold, in this order:

  - ``launches``: both files have two or more launches (`latscope bench --launches N`) of the
    point: Welch's two-sample t interval on the logarithms of the launch medians, exponentiated
    (each launch is one draw of the launch state, and one launch's CI does not bound the next:
    docs/measurement.md); scipy.stats.ttest_ind(equal_var=False).confidence_interval;
  - ``bootstrap``: both files have the point's raw samples (`--raw`): the bootstrap of the ratio
    of the two medians, each sample resampled on its own (scipy.stats.bootstrap, two independent
    samples, percentile interval; at most MAX_BOOT samples of each, drawn evenly, so a 100,000
    repetition point costs what a 20,000 one does, the interval only a little wider);
  - ``point CIs``: otherwise, the two points' own median CIs combined on the log scale
    (half-widths added in quadrature), an approximation stated as such in the output.

The verdict at the requested confidence: ``faster`` when the whole interval is below 1,
``slower`` when it is above, else ``no difference``; ``n/a`` where a median is not positive
(an invalid value is never compared)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from latscope.results import Results, noisy
from latscope.text import mpi_version, quick_run

# The columns that name a point (those present in a file), as latscope.launches.KEY_COLUMNS
KEY_COLUMNS = ["bench", "op", "alg", "timing", "mode", "pair", "root", "size_bytes", "reply_bytes", "window"]
MAX_BOOT = 20000
N_RESAMPLES = 2000
SEED = 1


@dataclass
class PointComparison:
    """One point present in both files."""

    key: dict[str, Any]
    size_bytes: int
    baseline_median_s: float | None
    median_s: float | None
    ratio: float | None
    ratio_ci: tuple[float, float] | None
    method: str                    # launches | bootstrap | point CIs | none
    verdict: str                   # faster | slower | no difference | n/a
    reason: str = ""               # why n/a, or a caveat
    noisy: bool = False            # under load or oversubscribed in either file

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["key"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.key.items()}
        d["ratio_ci"] = list(self.ratio_ci) if self.ratio_ci else None
        return d


@dataclass
class Comparison:
    """A run against a baseline."""

    baseline: str
    run: str
    confidence: float
    points: list[PointComparison] = field(default_factory=list)
    meta_diffs: list[tuple[str, str, str]] = field(default_factory=list)   # (what, baseline, run)
    unmatched: tuple[int, int] = (0, 0)   # points only in the baseline, only in the run

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([p.to_dict() for p in self.points])

    def counts(self) -> dict[str, int]:
        out = {"faster": 0, "slower": 0, "no difference": 0, "n/a": 0}
        for p in self.points:
            out[p.verdict] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "run": self.run, "confidence": self.confidence,
                "counts": self.counts(), "unmatched": {"baseline_only": self.unmatched[0],
                                                        "run_only": self.unmatched[1]},
                "meta_diffs": [{"what": w, "baseline": a, "run": b} for w, a, b in self.meta_diffs],
                "points": [p.to_dict() for p in self.points]}


def _key_cols(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    return [c for c in KEY_COLUMNS if c in a.columns and c in b.columns]


def _norm(v: Any) -> Any:
    """A key value that compares equal across files (NaN/None/NA alike, lists as tuples)."""
    if isinstance(v, list):
        return tuple(v)
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v


def _groups(res: Results, cols: list[str]) -> dict[tuple[Any, ...], list[int]]:
    """key -> row positions (several with --launches)."""
    out: dict[tuple[Any, ...], list[int]] = {}
    df = res.points.reset_index(drop=True)
    for i in range(len(df)):
        k = tuple(_norm(df.at[i, c]) for c in cols)
        out.setdefault(k, []).append(i)
    return out


def _positive(x: Any) -> bool:
    return x is not None and not pd.isna(x) and float(x) > 0 and math.isfinite(float(x))


def _verdict(ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "n/a"
    lo, hi = ci
    if hi < 1:
        return "faster"
    if lo > 1:
        return "slower"
    return "no difference"


def _thin(x: np.ndarray) -> np.ndarray:
    if len(x) <= MAX_BOOT:
        return x
    out: np.ndarray = x[np.linspace(0, len(x) - 1, MAX_BOOT).astype(int)]
    return out


def bootstrap_ratio(run: np.ndarray, base: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """The percentile bootstrap interval of median(run) / median(base), two independent samples."""
    a, b = _thin(np.asarray(run, float)), _thin(np.asarray(base, float))
    if len(a) < 2 or len(b) < 2:
        return None

    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.median(x, axis=axis) / np.median(y, axis=axis))

    r = stats.bootstrap((a, b), stat, paired=False, vectorized=True, n_resamples=N_RESAMPLES,
                        confidence_level=confidence, method="percentile",
                        random_state=np.random.default_rng(SEED))
    lo, hi = float(r.confidence_interval.low), float(r.confidence_interval.high)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0:
        return None
    return lo, hi


def launches_ratio(run: np.ndarray, base: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """Welch's t interval of mean(log run) - mean(log base), exponentiated: the ratio of the
    geometric means of the launch medians."""
    a, b = np.log(np.asarray(run, float)), np.log(np.asarray(base, float))
    if len(a) < 2 or len(b) < 2:
        return None
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        d = float(a.mean() - b.mean())
        return math.exp(d), math.exp(d)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(confidence)
    return math.exp(float(ci.low)), math.exp(float(ci.high))


def point_ci_ratio(run: pd.Series, base: pd.Series, confidence: float) -> tuple[float, float] | None:
    """From the two points' own CIs: log-scale half-widths (rescaled to `confidence`) added in
    quadrature; an approximation (it assumes symmetric, normal-ish CIs)."""
    hs = []
    for r in (run, base):
        lo, hi, lvl, med = r.get("ci_lo_s"), r.get("ci_hi_s"), r.get("ci_level"), r.get("median_s")
        if not (_positive(lo) and _positive(hi) and _positive(med)) or pd.isna(lvl):
            return None
        z = float(stats.norm.ppf(0.5 + float(lvl) / 2))
        se = (math.log(cast(float, hi)) - math.log(cast(float, lo))) / (2 * z) if z > 0 else float("nan")
        if not math.isfinite(se):
            return None
        hs.append(se)
    zc = stats.norm.ppf(0.5 + confidence / 2)
    d = math.log(float(run["median_s"])) - math.log(float(base["median_s"]))
    h = zc * math.hypot(hs[0], hs[1])
    return math.exp(d - h), math.exp(d + h)


def _median_of(res: Results, rows: list[int]) -> float | None:
    """The point's median: its one record's, or the median of its launch medians."""
    vals = [float(res.points.iloc[i]["median_s"]) for i in rows]
    return float(np.median(vals)) if vals else None


def compare_point(base: Results, run: Results, brows: list[int], rrows: list[int],
                  confidence: float) -> tuple[float | None, float | None, tuple[float, float] | None, str, str]:
    """(baseline median, run median, ratio CI, method, reason)."""
    bdf, rdf = base.points, run.points
    bmed, rmed = _median_of(base, brows), _median_of(run, rrows)
    bmeds = [bdf.iloc[i]["median_s"] for i in brows]
    rmeds = [rdf.iloc[i]["median_s"] for i in rrows]
    if not all(_positive(v) for v in bmeds + rmeds):
        bad = next(v for v in bmeds + rmeds if not _positive(v))
        what = "missing" if bad is None or pd.isna(bad) else f"{float(bad) * 1e6:.3g} µs, not positive"
        return bmed, rmed, None, "none", f"invalid median ({what})"
    if len(brows) >= 2 and len(rrows) >= 2:
        return bmed, rmed, launches_ratio(np.array(rmeds, float), np.array(bmeds, float), confidence), "launches", ""
    braw = [base.raw[i] for i in brows if i in base.raw]
    rraw = [run.raw[i] for i in rrows if i in run.raw]
    if len(braw) == len(brows) and len(rraw) == len(rrows) and braw and rraw:
        b = np.concatenate([np.asarray(x, float) for x in braw])
        r = np.concatenate([np.asarray(x, float) for x in rraw])
        if np.median(b) > 0 and np.median(r) > 0:
            return (float(np.median(b)), float(np.median(r)), bootstrap_ratio(r, b, confidence),
                    "bootstrap", "")
    if len(brows) == 1 and len(rrows) == 1:
        ci = point_ci_ratio(rdf.iloc[rrows[0]], bdf.iloc[brows[0]], confidence)
        return bmed, rmed, ci, "point CIs", "" if ci else "a point has no CI"
    return bmed, rmed, None, "none", "one launch in one file, several in the other, no raw samples"


def meta_diffs(base: Results, run: Results) -> list[tuple[str, str, str]]:
    """What differs between the two runs' metadata that can change a latency."""
    def desc(r: Results) -> dict[str, str]:
        m = r.meta
        t = m.get("timer") or {}
        ld = m.get("load") or {}
        load1 = ld.get("load1")
        return {
            "MPI": mpi_version(m.get("mpi_library")),
            "hosts": ", ".join(m.get("hosts") or []) or "n/a",
            "ranks": str(m.get("ranks")),
            "timer": str(t.get("name")),
            "timing": str(m.get("timing_method")),
            "sync": str(m.get("sync")),
            "load (1-min average at start)": "n/a" if load1 is None else f"{float(load1):.2f}",
            "oversubscribed": str(m.get("oversubscribed")),
            "quick run": "yes" if quick_run(m) else "no",
            "points under load or oversubscribed": str(int(noisy(r.points).sum())) if not r.points.empty else "0",
            "latscope": f"{m.get('version')} ({m.get('git_sha')})",
        }
    a, b = desc(base), desc(run)
    return [(k, a[k], b[k]) for k in a if a[k] != b[k]]


def compare(base: Results, run: Results, confidence: float = 0.95) -> Comparison:
    """`run` against `base`, point by point (ValueError for a confidence outside (0, 1))."""
    if not 0 < confidence < 1:
        raise ValueError(f"--confidence {confidence}: must be between 0 and 1 (e.g. 0.95)")
    out = Comparison(str(base.path), str(run.path), confidence, meta_diffs=meta_diffs(base, run))
    if base.points.empty or run.points.empty:
        out.unmatched = (len(base.points), len(run.points))
        return out
    cols = _key_cols(base.points, run.points)
    bg, rg = _groups(base, cols), _groups(run, cols)
    bnoisy, rnoisy = noisy(base.points).to_numpy(), noisy(run.points).to_numpy()
    for k in [k for k in bg if k in rg]:
        bmed, rmed, ci, method, reason = compare_point(base, run, bg[k], rg[k], confidence)
        ratio = (rmed / bmed if bmed is not None and rmed is not None and _positive(bmed) and _positive(rmed)
                 and not reason.startswith("invalid") else None)
        key = dict(zip(cols, k))
        out.points.append(PointComparison(
            key=key, size_bytes=int(key.get("size_bytes") or 0), baseline_median_s=bmed, median_s=rmed,
            ratio=ratio, ratio_ci=ci, method=method, verdict=_verdict(ci) if ratio is not None else "n/a",
            reason=reason, noisy=bool(bnoisy[bg[k]].any() or rnoisy[rg[k]].any())))
    out.unmatched = (sum(1 for k in bg if k not in rg), sum(1 for k in rg if k not in bg))
    return out


def point_name(key: dict[str, Any]) -> str:
    """'pingpong 0->1' (the size is a column of its own)."""
    op = str(key.get("op"))
    if key.get("alg"):
        op += f":{key['alg']}"
    pair = key.get("pair")
    where = "->".join(map(str, pair)) if isinstance(pair, tuple) else (
        f"root {key['root']}" if key.get("root") is not None else "")
    return f"{op} {where}".strip()
