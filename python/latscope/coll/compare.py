"""`latscope coll compare`: every registry collective measured beside its LogGP and PLogP
predictions (docs/collectives.md, "Measured against the models").

The paired design of `barrier compare`'s bench: in one `mpiexec` (latscope-bench seq) the LogP
parameters are measured, then every collective, then the LogP parameters again, so the predictions
come from the state the collectives ran in and never from the collective runs themselves; the
two LogP runs are fitted together, and how far they disagree (RTT/2) is printed. Predictions:
latscope.models.collectives.schedule_time_s on the fitted LogGP parameters and on the PLogP
table of the same runs. Measured: the `max` timing (the last rank's finish after a synchronised
start: what a schedule's critical path predicts), its median and CI.

A consistency check needs no model: schedules that are the same messages (at P = 2 the linear and
binomial bcast, scatter and gather each send one message root -> 1) must measure equal within
their CIs; pairs that do not are flagged, because then the difference is the implementation's
(or the machine state's), not the schedule's."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from latscope.models import SCHEDULES, ModelError, ModelParams, schedule_time_s
from latscope.results import Results, noise_flag

OPS: tuple[str, ...] = ("bcast", "scatter", "gather", "reduce", "allreduce", "alltoall")
DEFAULT_SIZES = "8,1K,16K"
TIMING = "max"
STATE_MOVED = 0.05   # the two LogP runs' RTT/2 differing by more: the state moved in the launch

# (op, alg a, alg b, P): the same message schedule, so equal times within the CIs
SAME_SCHEDULE: tuple[tuple[str, str, str, int], ...] = (
    ("bcast", "linear", "binomial", 2),
    ("scatter", "linear", "binomial", 2),
    ("gather", "linear", "binomial", 2),
)


class CompareError(ValueError):
    """Bad input or files without collective records: the message says which."""


def measured(results: list[Results]) -> pd.DataFrame:
    """One row per (file, op, alg, P, size) of `max`-timed collective records (bench coll)."""
    rows = []
    for res in results:
        pts = res.points
        if pts.empty or "bench" not in pts:
            continue
        P = int(res.meta.get("ranks") or 0)
        sel = pts[(pts["bench"] == "coll") & (pts["op"].isin(OPS))]
        if "timing" in sel:
            sel = sel[sel["timing"].fillna(TIMING) == TIMING]
        for _, r in sel.iterrows():
            if str(r.get("alg")) == "null":
                continue
            rows.append({"file": str(res.path) if res.path else "", "op": str(r["op"]), "alg": str(r["alg"]), "P": P,
                         "size_bytes": int(r["size_bytes"]), "measured_s": _f(r.get("median_s")),
                         "ci_lo_s": _f(r.get("ci_lo_s")), "ci_hi_s": _f(r.get("ci_hi_s")), "noise": noise_flag(r)})
    return pd.DataFrame(rows, columns=["file", "op", "alg", "P", "size_bytes", "measured_s", "ci_lo_s", "ci_hi_s",
                                       "noise"])


def _f(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def predict(df: pd.DataFrame, models: dict[str, ModelParams]) -> pd.DataFrame:
    """Adds ``<model>_s`` (predicted, None where the schedule has no model) and ``<model>_err``
    ((predicted - measured) / measured; None without a prediction or a positive measurement)."""
    out = df.copy()
    for name, p in models.items():
        preds: list[float | None] = []
        errs: list[float | None] = []
        whys: list[str] = []
        for _, r in out.iterrows():
            t: float | None = None
            why = ""
            if (r["op"], r["alg"]) in SCHEDULES:
                try:
                    t = schedule_time_s(p, r["op"], r["alg"], int(r["P"]), float(r["size_bytes"]))
                except ModelError as e:   # e.g. a PLogP table whose g(m) < o_s(m) + o_r(m) at this size
                    t, why = None, str(e)
            whys.append(why)
            m = r["measured_s"]
            preds.append(t)
            errs.append(None if t is None or m is None or not m > 0 else (t - m) / m)
        out[f"{name}_s"] = preds
        out[f"{name}_err"] = errs
        out[f"{name}_why"] = whys
    return out


def consistency(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Pairs of identical schedules (SAME_SCHEDULE) per (file, size): ``agree`` when their CIs
    overlap, False (flagged) when not, None where a CI is missing."""
    out = []
    for op, a, b, P in SAME_SCHEDULE:
        sub = df[(df["op"] == op) & (df["P"] == P)]
        for (f, size), g in sub.groupby(["file", "size_bytes"], sort=True):
            ra, rb = g[g["alg"] == a], g[g["alg"] == b]
            if ra.empty or rb.empty:
                continue
            x, y = ra.iloc[0], rb.iloc[0]
            cis = [x["ci_lo_s"], x["ci_hi_s"], y["ci_lo_s"], y["ci_hi_s"]]
            agree = None if any(c is None or (isinstance(c, float) and math.isnan(c)) for c in cis) else \
                bool(x["ci_lo_s"] <= y["ci_hi_s"] and y["ci_lo_s"] <= x["ci_hi_s"])
            ratio = (y["measured_s"] / x["measured_s"]) if x["measured_s"] and y["measured_s"] else None
            out.append({"file": f, "op": op, "algs": [a, b], "P": P, "size_bytes": int(str(size)),
                        "a_s": x["measured_s"], "b_s": y["measured_s"], "ratio": ratio, "agree": agree,
                        "noise": "+".join(sorted({n for n in (x["noise"], y["noise"]) if n}))})
    return out


def worst(df: pd.DataFrame, model: str, noisy: bool = False) -> dict[str, Any] | None:
    """The clean (not under load, not oversubscribed; ``noisy``: the flagged ones instead) row
    with the largest |error| of ``model``."""
    col = f"{model}_err"
    if col not in df:
        return None
    sub = df[((df["noise"] != "") if noisy else (df["noise"] == "")) & df[col].notna()]
    if sub.empty:
        return None
    i = int(sub[col].abs().astype(float).to_numpy().argmax())
    return {str(k): v for k, v in sub.iloc[i].items()}


def noisy_line(df: pd.DataFrame, model: str) -> str | None:
    """The same figures over the flagged points (shown apart, never the headline), or None."""
    col = f"{model}_err"
    if col not in df:
        return None
    sub = df[(df["noise"] != "") & df[col].notna()]
    w = worst(df, model, noisy=True)
    if sub.empty or w is None:
        return None
    e = sub[col].abs().astype(float)
    return (f"* {model} over the {len(sub)} points measured under load or oversubscribed (left out above): median "
            f"|error| {100 * float(e.median()):.0f}%, worst {w['op']}/{w['alg']} P={w['P']} {w['size_bytes']} B: "
            f"{100 * float(w[col]):+.0f}%")


def summary_line(df: pd.DataFrame, model: str) -> str:
    """Median and worst |error| over the clean modelled rows, or 'none' with the reason."""
    col = f"{model}_err"
    modelled = df[df[col].notna()] if col in df else df.iloc[0:0]
    clean = modelled[modelled["noise"] == ""]
    if clean.empty:
        reasons = [w for w in df.get(f"{model}_why", pd.Series(dtype=str)) if w]
        why = (f"all {len(modelled)} modelled points were measured under load or oversubscribed" if len(modelled)
               else "no point has a prediction" + (f": {reasons[0]}" if reasons else ""))
        return f"{model}: none ({why})"
    e = clean[col].abs().astype(float)
    w = worst(df, model)
    assert w is not None
    return (f"{model}: median |error| {100 * float(e.median()):.0f}% over {len(clean)} modelled points; worst "
            f"{w['op']}/{w['alg']} P={w['P']} {w['size_bytes']} B: {100 * float(w[col]):+.0f}%")


@dataclass
class Measurement:
    """One measuring launch's files."""

    np_: int
    logp: list[Path] = field(default_factory=list)
    coll: list[Path] = field(default_factory=list)


def bench_args(ops: list[str], sizes: str, reps: list[str], lp_sizes: str, out: Path) -> tuple[list[str], Measurement]:
    """latscope-bench seq: logp, every op (every registry algorithm, `max` timing), logp again."""
    # only what the LogGP and PLogP fits read (o_s, o_r, the round trip, the gap), at sizes that
    # span the collectives' (PLogP interpolates between them)
    lp = ["logp", "--sizes", lp_sizes, "--ops", "o_s,o_r,rtt,g", "--stop-rule", "median"] + reps
    m = Measurement(0, [out / "logp_before.jsonl", out / "logp_after.jsonl"], [out / f"coll_{op}.jsonl" for op in ops])
    args = ["seq"] + lp + ["-o", str(m.logp[0])]
    for op, path in zip(ops, m.coll):
        args += ["--then", "coll", "--op", op, "--alg", "all", "--sizes", sizes, "--timing", TIMING] + reps + ["-o", str(path)]
    args += ["--then"] + lp + ["-o", str(m.logp[1])]
    return args, m
