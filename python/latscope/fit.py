"""Fitting point-to-point models to measured results.

Hockney: the one-way time of an m-byte message is T(m) = alpha + beta * m.
  * regression: least squares of the per-point medians of one-way latency over sizes, weighted
    by relative error (sigma proportional to T, scipy.optimize.curve_fit) so a sweep from 0 B to
    4 MiB fits the small messages as well as the large ones (unweighted, the largest sizes decide
    alpha and it can come out negative); CIs from the Student t quantile with n - 2 degrees of
    freedom and the scaled covariance;
  * two-roundtrip (MPIBlib §3): from the roundtrip times of an empty exchange, RTT(0) = 2 alpha,
    and of an m-byte message answered by an empty one, RTT(m, 0) = 2 alpha + beta m; so
    alpha = RTT(0) / 2 and beta = (RTT(m, 0) - RTT(0)) / m. CIs propagate the two points' CIs.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from latscope import jsonio
from latscope.results import Results


class FitError(ValueError):
    """The data cannot support the requested fit (the message says what is missing)."""


@dataclass
class HockneyFit:
    """Hockney parameters with confidence intervals (seconds, seconds per byte)."""

    method: str
    alpha_s: float
    beta_s_per_byte: float
    alpha_ci_s: tuple[float, float]
    beta_ci_s_per_byte: tuple[float, float]
    confidence: float
    n_points: int
    pair: tuple[int, ...] | None = None
    r2: float | None = None

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return 1.0 / self.beta_s_per_byte if self.beta_s_per_byte > 0 else math.nan

    def predict(self, size_bytes: float | np.ndarray) -> float | np.ndarray:
        return self.alpha_s + self.beta_s_per_byte * np.asarray(size_bytes, dtype=float)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["model"] = "hockney"
        d["bandwidth_bytes_per_s"] = self.bandwidth_bytes_per_s
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def _one_way(df: pd.DataFrame) -> pd.DataFrame:
    """Rows usable as one-way latency: pingpong (already RTT/2) or symmetric roundtrips (/2)."""
    if "op" not in df or "reply_bytes" not in df:   # not a p2p file (barrier, coll, app records)
        return df.iloc[0:0]
    pp = df[df["op"] == "pingpong"].copy()
    rt = df[(df["op"] == "roundtrip") & (df["reply_bytes"] == df["size_bytes"])].copy()
    for col in ("median_s", "ci_half_s"):
        if not rt.empty:
            rt[col] = rt[col] / 2
    return pd.concat([pp, rt], ignore_index=True)


def _ops_present(res: Results) -> str:
    """'; the file has ops barrier, ...': what the user gave instead of p2p latency points."""
    ops = sorted({str(o) for o in res.points["op"]}) if "op" in res.points else []
    return f"; {res.path or 'the file'} has " + (f"op {', '.join(ops)}" if ops else "no points")


def hockney_regression(res: Results, pair: tuple[int, int] | None = None, confidence: float = 0.95) -> HockneyFit:
    """Least-squares Hockney fit over sizes of one-way latency medians (all pairs pooled, or one)."""
    df = _one_way(res.points)
    if pair is not None:
        df = df[df["pair"] == tuple(pair)] if "pair" in df else df.iloc[0:0]
    if df.empty:
        raise FitError("no one-way latency points (op pingpong, or roundtrip with reply = size)"
                       + (f" for pair {pair[0]}:{pair[1]}" if pair else "") + _ops_present(res))
    x = df["size_bytes"].to_numpy(dtype=float)
    y = df["median_s"].to_numpy(dtype=float)
    if len(np.unique(x)) < 3:
        raise FitError(f"regression needs at least 3 distinct sizes, found {len(np.unique(x))}")
    (a, b), cov = optimize.curve_fit(lambda m, a, b: a + b * m, x, y, p0=(float(y.min()), 0.0), sigma=y,
                                     absolute_sigma=False)
    ea, eb = np.sqrt(np.diag(cov))
    t = stats.t.ppf(0.5 + confidence / 2, len(x) - 2)
    resid = y - (a + b * x)
    r2 = 1 - float(np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2)) if np.ptp(y) > 0 else 1.0
    return HockneyFit("regression", float(a), float(b), (float(a - t * ea), float(a + t * ea)),
                      (float(b - t * eb), float(b + t * eb)), confidence, len(x), tuple(pair) if pair else None, r2)


def hockney_two_roundtrip(res: Results, pair: tuple[int, int] | None = None, confidence: float = 0.95,
                          size_bytes: int | None = None) -> HockneyFit:
    """MPIBlib's two-roundtrip estimate. Uses roundtrip points with empty replies if the file has
    them (RTT(0) = 2a, RTT(m,0) = 2a + b m); otherwise one-way latencies at 0 and m bytes."""
    df = res.points
    if pair is not None:
        df = df[df["pair"] == tuple(pair)] if "pair" in df else df.iloc[0:0]
    rt = df[(df["op"] == "roundtrip") & (df["reply_bytes"] == 0)] if "reply_bytes" in df else df.iloc[0:0]
    if not rt.empty and (rt["size_bytes"] == 0).any() and (rt["size_bytes"] > 0).any():
        pts, halve_alpha = rt, True
    else:
        pts, halve_alpha = _one_way(df), False
    if pts.empty or not (pts["size_bytes"] == 0).any():
        raise FitError("two-roundtrip needs a 0-byte point (and one with m > 0 bytes)" + _ops_present(res))
    big = pts[pts["size_bytes"] > 0]
    if big.empty:
        raise FitError("two-roundtrip needs a point with m > 0 bytes")
    m = int(size_bytes if size_bytes is not None else big["size_bytes"].max())
    if m not in set(big["size_bytes"]):
        raise FitError(f"no point at {m} bytes; sizes present: {sorted(set(big['size_bytes']))}")
    z = pts[pts["size_bytes"] == 0]
    b = pts[pts["size_bytes"] == m]
    t0, h0 = float(z["median_s"].median()), float(z["ci_half_s"].median())
    tm, hm = float(b["median_s"].median()), float(b["ci_half_s"].median())
    if halve_alpha:
        alpha, ha = t0 / 2, h0 / 2
    else:
        alpha, ha = t0, h0
    beta = (tm - t0) / m
    hb = math.hypot(hm, h0) / m
    return HockneyFit("two-roundtrip", alpha, beta, (alpha - ha, alpha + ha), (beta - hb, beta + hb),
                      confidence, 2, tuple(pair) if pair else None, None)


def write_params(fits: list[HockneyFit], path: str, meta: dict[str, Any] | None = None) -> None:
    """A parameters file (docs/params-format.md, latscope.params/1) that `latscope model` and
    `latscope predict` read: the first fit is the model's parameters; every fit, with its CIs,
    is kept under source.fits."""
    if not fits:
        raise FitError("no fit to write")
    first = fits[0]
    params: dict[str, Any] = {"alpha_s": first.alpha_s, "beta_s_per_byte": first.beta_s_per_byte}
    if meta and meta.get("ranks"):
        params["P"] = int(meta["ranks"])
    source: dict[str, Any] = {"tool": "latscope fit hockney", "method": first.method,
                              "fits": [f.to_dict() for f in fits]}
    if meta:
        source.update({k: meta.get(k) for k in ("mpi_library", "git_sha", "utc_time", "hosts")})
    doc = {"schema": "latscope.params/1", "model": "hockney", "params": params, "source": source}
    with open(path, "w") as f:
        jsonio.dump(doc, f, indent=2)
        f.write("\n")
