"""The seed's barrier benchmark and measured-vs-predicted (seed 002 §4.3, §5.1.2): the
latscope-bench arguments of the benchmark, the measured value of a record, and the comparison
of every measured algorithm with the closed form (latscope.models.barrier.row_time_s) and the
loop simulation (latscope.models.barrier_sim.row_loop_time_s). `latscope barrier` (barrier_cli)
parses and prints; the report part (parts/barrier.py) and bench/barrier.py use the same code.

Measured value: the seed averages each rank's mean over ranks; on a shared, noisy machine a mean
is dominated by scheduler outliers, so `compare` uses each rank's median averaged over ranks
(`local.per_rank[].median_s`; the record's median when the run had no local timing) and shows
the seed's mean-of-means alongside.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from latscope.models import ModelError
from latscope.models.barrier import row_loop_time_s, row_time_s
from latscope.models.barrier_sim import SimParams, resolve_bcast
from latscope.results import Results, load, noise_flag
from latscope.selection import screen, target_of
from latscope.units import parse_duration


def bench_args(alg: str, dummy_s: float, reps: int) -> list[str]:
    """latscope-bench arguments of the seed's benchmark."""
    return ["coll", "--op", "barrier", "--alg", alg, "--timing", "local", "--sync", "none",
            "--dummy-work", f"{dummy_s * 1e6:g}us", "--sizes", "0", "--min-reps", str(reps), "--max-reps", str(reps),
            "--warmup", "10"]


def measured_s(rec: pd.Series) -> tuple[float, float | None]:
    """(mean over ranks of each rank's median, the seed's mean over ranks of each rank's mean)."""
    loc = rec.get("local") if "local" in rec else None
    if isinstance(loc, dict) and loc.get("per_rank"):
        meds = [r.get("median_s") for r in loc["per_rank"] if r.get("median_s") is not None]
        avg = loc.get("avg_s")
        if meds:
            return float(sum(meds) / len(meds)), avg
    return float(rec["median_s"]), None


def dummy_work_s(meta: dict[str, Any], default: float = 30e-6) -> float:
    """The run's --dummy-work (from the metadata's command line), else ``default``."""
    cl = meta.get("command_line") or []
    if isinstance(cl, list):
        for i, a in enumerate(cl):
            v = cl[i + 1] if a == "--dummy-work" and i + 1 < len(cl) else (
                a.split("=", 1)[1] if isinstance(a, str) and a.startswith("--dummy-work=") else None)
            if v is not None:
                try:
                    return parse_duration(str(v))
                except ValueError:
                    return default
    return default


def compare(params: Any, paths: list[str], *, L_raw_s: float | None = None, post_s: float = 0.0,
            flag_s: float | None = None, bcast: str | None = None, mcast_s: float | None = None,
            poll_s: float | None = None, L_poll_s: float | None = None,
            wait_s: float | None = None, irecv_wait_s: float | None = None,
            L_poll_any_s: float | None = None, catch_s: float | None = None) -> pd.DataFrame:
    """One row per (file, algorithm): P, both predictions, measured, relative errors (None without
    a model)."""
    return compare_results(params, [load(p) for p in paths], L_raw_s=L_raw_s, post_s=post_s, flag_s=flag_s,
                           bcast=bcast, mcast_s=mcast_s, poll_s=poll_s, L_poll_s=L_poll_s, wait_s=wait_s,
                           irecv_wait_s=irecv_wait_s, L_poll_any_s=L_poll_any_s, catch_s=catch_s)


def _rel(pred: float | None, meas: float) -> float | None:
    return (pred - meas) / meas if pred is not None and meas > 0 else None


def compare_results(params: Any, results: list[Results], *, L_raw_s: float | None = None, post_s: float = 0.0,
                    flag_s: float | None = None, bcast: str | None = None,
                    mcast_s: float | None = None, poll_s: float | None = None,
                    L_poll_s: float | None = None, wait_s: float | None = None,
                    irecv_wait_s: float | None = None, L_poll_any_s: float | None = None,
                    catch_s: float | None = None,
                    jitter: Mapping[str, tuple[tuple[float, float], ...]] | None = None) -> pd.DataFrame:
    """compare() on loaded results (barrier records of any of them; others are ignored).

    Columns: ``closed_form_s`` (the seed's single-entry critical path, row_time_s),
    ``predicted_s`` (the steady-state loop simulation, row_loop_time_s: the same loop, dummy work
    and statistic as the measurement), ``measured_s``, ``rel_err`` (of ``predicted_s``),
    ``closed_form_rel_err``, ``bcast`` (the MPI_Bcast model used: ``bcast``, or for None / "auto"
    resolve_bcast's choice for each file's hosts)."""
    rows: list[dict[str, Any]] = []
    for res in results:
        p = res.path
        df = res.points
        if df.empty or "alg" not in df:
            continue
        df = df[(df["bench"] == "coll") & (df["op"] == "barrier")]
        P = int(res.meta.get("ranks") or 0)
        dummy = dummy_work_s(res.meta)
        hosts = res.meta.get("rank_hosts") or res.meta.get("hosts") or []
        try:
            sp = SimParams.from_params(params, L_raw_s=L_raw_s)
            model = resolve_bcast(bcast, mcast_s=mcast_s, hop_s=sp.hop_s, one_host=len(set(hosts)) <= 1)
        except ModelError:
            model = "p2p"
        first = len(rows)
        recs: dict[str, Any] = {}
        vals: dict[str, float] = {}
        for _, r in df.iterrows():
            meas, seed_avg = measured_s(r)
            recs[str(r["alg"])], vals[str(r["alg"])] = r, meas
            try:
                closed = row_time_s(params, P, str(r["alg"]))
                loop = row_loop_time_s(params, P, str(r["alg"]), dummy_s=dummy, L_raw_s=L_raw_s, post_s=post_s,
                                       flag_s=flag_s, bcast=model, mcast_s=mcast_s, poll_s=poll_s,
                                       L_poll_s=L_poll_s, wait_s=wait_s, irecv_wait_s=irecv_wait_s,
                                       L_poll_any_s=L_poll_any_s, catch_s=catch_s, jitter=jitter)
            except ModelError:
                closed = loop = None   # a user-registered algorithm: no model
            rows.append({"alg": r["alg"], "P": P, "predicted_s": loop, "closed_form_s": closed, "measured_s": meas,
                         "seed_mean_of_means_s": seed_avg, "rel_err": _rel(loop, meas),
                         "closed_form_rel_err": _rel(closed, meas), "bcast": model, "file": str(p),
                         # measured under load or oversubscribed (results.noise_flag): not in the headline
                         "noise": noise_flag(r)})
        # the best barrier of this file: the eligible row with the smallest measured time
        # (latscope.selection: negative, zero-like or non-converged times never win)
        sc = screen(list(recs), recs, target_of(res.meta), values=vals)
        for row in rows[first:]:
            row["best"] = row["alg"] == sc.winner
            row["set_aside"] = sc.set_aside.get(str(row["alg"]), "")
    return pd.DataFrame(rows)


def best_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Per (file, P) the best eligible row of compare_results (none where nothing is eligible)."""
    return df[df["best"].astype(bool)] if "best" in df else df.iloc[0:0]


def mean_abs_rel_err(df: pd.DataFrame, column: str = "rel_err", noisy: bool | None = None) -> float:
    """Mean |predicted - measured| / measured over the modelled points (``rel_err``: the loop
    prediction's; ``closed_form_rel_err``: the closed form's). ``noisy``: None all points, False
    only those measured without load or oversubscription, True only the others."""
    if noisy is not None and not df.empty and "noise" in df:
        df = df[(df["noise"].fillna("") != "") == noisy]
    e = pd.to_numeric(df[column], errors="coerce").dropna() if not df.empty else pd.Series(dtype=float)
    return float(e.abs().mean()) if len(e) else math.nan
