"""`latscope barrier`: the seed's barrier benchmark and measured-vs-predicted (issue 4).

  latscope barrier bench [--np N] [--alg LIST] [--dummy-work 30us] [--reps 100] [-o FILE] [-- extra]
      seed 002 §4.3, Fig. 4: repeat {t0; barrier; t1; dummy work}, back to back (no other
      synchronisation), each rank timing itself; per-rank min/avg/max, averaged over ranks. It is
      `latscope-bench coll --op barrier --timing local --sync none --dummy-work D --sizes 0`.
  latscope barrier compare --params P.json RESULTS... [--json]
      every algorithm at every P measured: predicted (latscope.models.barrier.row_time_s from the
      LogP parameters), measured, relative error.

Measured value: the seed averages each rank's mean over ranks; on a shared, noisy machine a mean
is dominated by scheduler outliers, so `compare` uses each rank's median averaged over ranks
(`local.per_rank[].median_s`; the record's median when the run had no local timing) and shows
the seed's mean-of-means alongside.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from latscope.models import ModelError, load_params
from latscope.models.barrier import row_time_s
from latscope.results import Results, ResultsError, load
from latscope.run import LaunchError, run_program
from latscope.units import fmt_time, parse_duration


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


def compare(params: Any, paths: list[str]) -> pd.DataFrame:
    """One row per (file, algorithm): P, predicted, measured, relative error (None without a model)."""
    return compare_results(params, [load(p) for p in paths])


def compare_results(params: Any, results: list[Results]) -> pd.DataFrame:
    """compare() on loaded results (barrier records of any of them; others are ignored)."""
    rows = []
    for res in results:
        p = res.path
        df = res.points
        if df.empty or "alg" not in df:
            continue
        df = df[(df["bench"] == "coll") & (df["op"] == "barrier")]
        P = int(res.meta.get("ranks") or 0)
        for _, r in df.iterrows():
            meas, seed_avg = measured_s(r)
            try:
                pred = row_time_s(params, P, str(r["alg"]))
            except ModelError:
                pred = None   # a user-registered algorithm: no model
            rel = (pred - meas) / meas if pred is not None and meas > 0 else None
            rows.append({"alg": r["alg"], "P": P, "predicted_s": pred, "measured_s": meas,
                         "seed_mean_of_means_s": seed_avg, "rel_err": rel, "file": str(p)})
    return pd.DataFrame(rows)


def mean_abs_rel_err(df: pd.DataFrame) -> float:
    e = df["rel_err"].dropna() if not df.empty else pd.Series(dtype=float)
    return float(e.abs().mean()) if len(e) else math.nan


def add_parser(sub: Any) -> None:
    p = sub.add_parser("barrier", help="the seed's barrier benchmark; measured vs predicted barrier times")
    bs = p.add_subparsers(dest="barrier_cmd", required=True)
    b = bs.add_parser("bench", help="seed 002 Fig. 4: {t0; barrier; t1; dummy work}, per-rank min/avg/max")
    b.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    b.add_argument("--alg", default="all", help="barrier rows: all, or a,b,-c; tree rows take :k=K")
    b.add_argument("--dummy-work", default="30us", help="busy-wait after each barrier (default 30us)")
    b.add_argument("--reps", type=int, default=100, help="barriers per algorithm (default 100, as the seed)")
    b.add_argument("-o", "--output", default="-", help="results file (default: standard output)")
    b.add_argument("--timeout", type=float, default=None, help="kill the run after this many seconds")
    b.add_argument("extra", nargs="*", help="more latscope-bench coll options (after --)")
    c = bs.add_parser("compare", help="every algorithm at every P measured: predicted, measured, relative error")
    c.add_argument("--params", required=True, help="LogP/LogGP/PLogP parameters (latscope fit logp --json)")
    c.add_argument("files", nargs="+", help="results files of latscope barrier bench / coll --op barrier")
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _fail(msg: str) -> int:
    print(f"latscope barrier: error: {msg}", file=sys.stderr)
    return 2


def print_table(df: pd.DataFrame, out: Any = sys.stdout) -> None:
    print(f"{'algorithm':<16} {'P':>3} {'predicted':>10} {'measured':>10} {'rel.err':>8}  seed mean-of-means", file=out)
    for _, r in df.sort_values(["P", "alg"]).iterrows():
        pr = "-" if r["predicted_s"] is None or pd.isna(r["predicted_s"]) else fmt_time(r["predicted_s"])
        re = "-" if r["rel_err"] is None or pd.isna(r["rel_err"]) else f"{100 * r['rel_err']:+.0f}%"
        sm = "-" if r["seed_mean_of_means_s"] is None or pd.isna(r["seed_mean_of_means_s"]) else fmt_time(
            r["seed_mean_of_means_s"])
        print(f"{r['alg']:<16} {r['P']:>3} {pr:>10} {fmt_time(r['measured_s']):>10} {re:>8}  {sm}", file=out)
    print(f"mean |predicted - measured| / measured over {int(df['rel_err'].notna().sum())} modelled points: "
          f"{100 * mean_abs_rel_err(df):.0f}%", file=out)


def main(args: argparse.Namespace) -> int:
    if args.barrier_cmd == "bench":
        if args.np < 1:
            return _fail(f"--np {args.np}: must be a positive number of ranks")
        if args.reps < 1:
            return _fail(f"--reps {args.reps}: must be a positive number of barriers")
        try:
            d = parse_duration(args.dummy_work)
        except ValueError as e:
            return _fail(f"--dummy-work: {e}")
        if d < 0:
            return _fail(f"--dummy-work {args.dummy_work}: must be >= 0")
        try:
            cp = run_program("latscope-bench", bench_args(args.alg, d, args.reps) + ["-o", args.output] + args.extra,
                             args.np, timeout=args.timeout)
        except LaunchError as e:
            return _fail(str(e))
        return cp.returncode
    try:
        ps = load_params(args.params)
        df = compare(ps.model, args.files)
    except (ModelError, ResultsError) as e:
        return _fail(str(e))
    except FileNotFoundError as e:
        return _fail(f"{e.filename}: no such file")
    if df.empty:
        return _fail(f"no barrier records (bench coll, op barrier) in {', '.join(args.files)}")
    if args.json:
        print(json.dumps({"points": df.to_dict(orient="records"), "mean_abs_rel_err": mean_abs_rel_err(df)},
                         indent=2, default=lambda x: None))
    else:
        print_table(df)
    return 0
