"""`latscope barrier`: the seed's barrier benchmark and measured-vs-predicted (docs/barriers.md).

  latscope barrier bench [--np N | --net | --launcher LINE] [--alg LIST] [--dummy-work 30us] [--reps 100] [-o FILE] [-- extra]
      seed 002 §4.3, Fig. 4: repeat {t0; barrier; t1; dummy work}, back to back (no other
      synchronisation), each rank timing itself; per-rank min/avg/max, averaged over ranks. It is
      `latscope-bench coll --op barrier --timing local --sync none --dummy-work D --sizes 0`.
  latscope barrier compare --params P.json RESULTS... [--post T] [--flag T] [--json]
      every algorithm at every P measured, two predictions from the LogP parameters side by side:
        closed form  latscope.models.barrier.row_time_s: the seed's §5.1.2 critical path of one
                     barrier entered by every rank at once;
        loop         latscope.models.barrier_sim.row_loop_time_s: the row's message schedule
                     simulated under LogP through the benchmark's own loop in steady state
                     (what is measured); the relative error is the loop prediction's.
      The simulation uses the fit's raw L = RTT/2 - o_s - o_r (the file's source.L_raw_s), which
      may be negative; --post (receive posting cost) and --flag (shared-memory flag latency) default
      to the file's source.post_s / source.flag_s (latscope-bench logp's post and flag, written
      by latscope fit logp), else 0 and max(L, 0); --bcast says how MPI_Bcast releases the
      *-bcast/*-2net rows: p2p (the binomial tree of messages the closed form assumes), flag,
      mcast (the seed's multicast exit at the library's broadcast latency, source.mcast_s) or
      auto (default: mcast where that broadcast beats a message and the ranks share one host,
      which is MPICH's shared-memory release; else p2p), chosen per results file.

The logic (the benchmark's arguments, the measured value, the comparison) is latscope.barrier.
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from latscope.loop_options import add_loop_options
from latscope.units import fmt_time

if TYPE_CHECKING:   # pandas: imported by latscope.barrier when a comparison is made
    import pandas as pd


def add_parser(sub: Any) -> None:
    p = sub.add_parser("barrier", help="the seed's barrier benchmark; measured vs predicted barrier times")
    bs = p.add_subparsers(dest="barrier_cmd", required=True)
    b = bs.add_parser("bench", help="seed 002 Fig. 4: {t0; barrier; t1; dummy work}, per-rank min/avg/max")
    b.add_argument("--alg", default="all", help="barrier rows: all, or a,b,-c; tree rows take :k=K")
    b.add_argument("--dummy-work", default="30us", help="busy-wait after each barrier (default 30us)")
    b.add_argument("--reps", type=int, default=100, help="barriers per algorithm (default 100, as the seed)")
    b.add_argument("-o", "--output", default="-", help="results file (default: standard output)")
    from latscope.run import add_launcher_args
    add_launcher_args(b)
    b.add_argument("extra", nargs="*", help="more latscope-bench coll options (after --)")
    c = bs.add_parser("compare", help="every algorithm at every P measured: predicted, measured, relative error")
    c.add_argument("--params", required=True, help="LogP/LogGP/PLogP parameters (latscope fit logp --json)")
    c.add_argument("files", nargs="+", help="results files of latscope barrier bench / coll --op barrier")
    add_loop_options(c, "the loop simulation", "auto")
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _fail(msg: str) -> int:
    print(f"latscope barrier: error: {msg}", file=sys.stderr)
    return 2


def _undefined(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _t(v: Any) -> str:
    return "-" if _undefined(v) else fmt_time(v)


def _pct(v: Any) -> str:
    return "-" if _undefined(v) else f"{100 * v:+.0f}%"


def _or_null(v: float) -> float | None:
    return None if _undefined(v) else v


def _mean_pct(v: float) -> str:
    return "none (no modelled point)" if _undefined(v) else f"{100 * v:.0f}%"


def print_table(df: pd.DataFrame, out: Any = None) -> None:
    import pandas as pd
    from latscope.barrier import mean_abs_rel_err
    out = out or sys.stdout   # at call time: a default bound at import misses a redirected stdout
    print(f"{'algorithm':<16} {'P':>3} {'closed form':>11} {'loop':>10} {'measured':>10} {'err(loop)':>9} "
          f"{'err(closed)':>11}  seed mean-of-means", file=out)
    noise = df["noise"].fillna("") if "noise" in df else pd.Series("", index=df.index)
    for i, r in df.sort_values(["P", "alg"]).iterrows():
        nz = str(noise.loc[i])   # type: ignore[call-overload]
        mark = f"  * {nz}" if nz else ""
        print(f"{r['alg']:<16} {r['P']:>3} {_t(r['closed_form_s']):>11} {_t(r['predicted_s']):>10} "
              f"{fmt_time(r['measured_s']):>10} {_pct(r['rel_err']):>9} {_pct(r['closed_form_rel_err']):>11}  "
              f"{_t(r['seed_mean_of_means_s'])}{mark}", file=out)
    clean = noise == ""
    n = int((df["rel_err"].notna() & clean).sum())
    nn = int((df["rel_err"].notna() & ~clean).sum())
    if n:
        print(f"mean |predicted - measured| / measured over {n} modelled points: loop simulation (the prediction "
              f"compared) {_mean_pct(mean_abs_rel_err(df, noisy=False))}, closed form (seed §5.1.2, one simultaneous "
              f"entry) {_mean_pct(mean_abs_rel_err(df, 'closed_form_rel_err', noisy=False))}", file=out)
    else:
        why = (f"all {nn} modelled points were measured under load or oversubscribed" if nn
               else "no point has a prediction")
        print(f"mean |predicted - measured| / measured: none ({why})", file=out)
    if nn:
        print(f"* measured under load or oversubscribed (docs/results-schema.md): {nn} modelled points left out "
              f"of the figures above; over them the loop simulation is off by {_mean_pct(mean_abs_rel_err(df, noisy=True))}",
              file=out)
    if "best" in df:
        for (f, P), g in df.groupby(["file", "P"], sort=True):
            b = g[g["best"].astype(bool)]
            print(f"best measured at P = {P}: " + (f"{b['alg'].iloc[0]} {fmt_time(b['measured_s'].iloc[0])}" if len(b)
                  else "none eligible") + f" ({f})", file=out)
            for _, r in g[g["set_aside"] != ""].iterrows():
                print(f"  set aside at P = {P}: {r['alg']}: {r['set_aside']}", file=out)


def main(args: argparse.Namespace) -> int:
    from latscope import jsonio
    from latscope.barrier import bench_args, compare, mean_abs_rel_err
    from latscope.loop_options import loop_options
    from latscope.models import ModelError, load_params
    from latscope.models.barrier_sim import loop_latency_s
    from latscope.results import ResultsError
    from latscope.run import LaunchError, run_program
    from latscope.units import parse_duration
    if args.barrier_cmd == "bench":
        np_ = args.np if (args.np is not None or args.launcher) else 2
        if np_ is not None and np_ < 1:
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
                             np_, args.launcher, args.hostfile, timeout=args.timeout,
                             oversubscribe=args.oversubscribe)
        except LaunchError as e:
            return _fail(str(e))
        return cp.returncode
    try:
        ps = load_params(args.params)
        lo = loop_options(args, ps.source)
        df = compare(ps.model, args.files, L_raw_s=loop_latency_s(ps.source), post_s=lo.post_s, flag_s=lo.flag_s,
                     bcast=lo.bcast, mcast_s=lo.mcast_s, poll_s=lo.poll_s, L_poll_s=lo.L_poll_s, wait_s=lo.wait_s,
                     irecv_wait_s=lo.irecv_wait_s, L_poll_any_s=lo.L_poll_any_s, catch_s=lo.catch_s)
    except (ModelError, ResultsError) as e:
        return _fail(str(e))
    except FileNotFoundError as e:
        from latscope.cli import no_such
        return _fail(no_such(e))
    if df.empty:
        return _fail(f"no barrier records (bench coll, op barrier) in {', '.join(args.files)}")
    if args.json:
        print(jsonio.dumps({"points": df.to_dict(orient="records"),
                            "mean_abs_rel_err": _or_null(mean_abs_rel_err(df, noisy=False)),
                            "mean_abs_rel_err_noisy": _or_null(mean_abs_rel_err(df, noisy=True)),
                            "noisy_points": int((df["noise"] != "").sum())},
                           indent=2, default=lambda x: None))
    else:
        print_table(df)
    return 0
