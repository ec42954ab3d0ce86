"""`latscope coll compare`: collectives measured against their LogGP and PLogP predictions.

  latscope coll compare [--np 2 | --net | --launcher LINE] [--ops LIST] [--sizes LIST] [--keep DIR] [--json]
      one launch (latscope-bench seq): LogP, every registry algorithm of every op (`max` timing),
      LogP again; the predictions from the two LogP runs fitted together (LogGP and PLogP).
  latscope coll compare --params P.json [--params Q.json] FILES...
      the same comparison of results files of latscope-bench coll against given parameters.

Per op, algorithm, P and size: measured median [CI], each model's prediction and relative error,
the worst modelled point, and the consistency of identical schedules (docs/collectives.md,
"Measured against the models"). The logic is latscope.coll.compare."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

OPS_ALL = ("bcast", "scatter", "gather", "reduce", "allreduce", "alltoall")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("coll", help="collectives measured against their LogGP/PLogP predictions")
    cs = p.add_subparsers(dest="coll_cmd", required=True)
    c = cs.add_parser("compare", help="every registry algorithm measured vs predicted, per size; identical "
                                      "schedules checked against each other")
    c.add_argument("files", nargs="*", help="results files of latscope-bench coll (with --params); none: measure")
    c.add_argument("--params", action="append", default=[],
                   help="parameters to predict from (latscope fit logp --json / --plogp-json); repeatable")
    c.add_argument("--ops", default=",".join(OPS_ALL), help=f"ops to measure (default {','.join(OPS_ALL)})")
    c.add_argument("--sizes", default=None, help="message sizes (default 8,1K,16K)")
    c.add_argument("--budget", default="0.2", help="seconds per point, passed to latscope-bench (default 0.2)")
    c.add_argument("--keep", help="keep the launch's results files in this directory")
    from latscope.run import add_launcher_args
    add_launcher_args(c)
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _fail(msg: str) -> int:
    print(f"latscope coll: error: {msg}", file=sys.stderr)
    return 2


def main(args: argparse.Namespace) -> int:
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS_ALL]
    if bad or not ops:
        return _fail(f"--ops {args.ops!r}: use a list of {', '.join(OPS_ALL)}")
    np_ = args.np if (args.np is not None or args.launcher) else 2
    if np_ is not None and not 2 <= np_ <= 64:
        return _fail(f"--np {args.np}: must be 2..64 ranks")
    try:
        budget = float(args.budget)
    except ValueError:
        budget = -1.0
    if not budget > 0:
        return _fail(f"--budget {args.budget!r}: seconds per point, a number > 0")
    if args.files and not args.params:
        return _fail("files given: name the parameters to predict from with --params P.json")
    if not args.files and args.params:
        return _fail("--params is for comparing FILES; without files the parameters are measured")
    from latscope import jsonio, logp
    from latscope.coll import compare as C
    from latscope.models import ModelError, from_dict, load_params
    from latscope.results import ResultsError, load
    from latscope.run import LaunchError, run_program
    drift = ""
    try:
        if args.files:
            if not args.params:
                return _fail("files given: name the parameters to predict from with --params P.json")
            models = {}
            for pth in args.params:
                ps = load_params(pth)
                models[f"{ps.model.kind}:{Path(pth).name}" if len(args.params) > 1 else ps.model.kind] = ps.model
            res = [load(f) for f in args.files]
        else:
            if args.params:
                return _fail("--params is for comparing FILES; without files the parameters are measured")
            import re
            sizes = args.sizes or C.DEFAULT_SIZES
            tok = r"[0-9]+[KMG]?"
            if not all(re.fullmatch(f"{tok}(:{tok}:[x+]{tok})?", x) for x in sizes.split(",")):
                return _fail(f"--sizes {sizes!r}: a list of sizes in bytes (8,1K,64K) or ranges (1:4M:x2)")
            keep = Path(args.keep) if args.keep else None
            tmp = None
            if keep is None:
                tmp = tempfile.TemporaryDirectory(prefix="latscope-coll-")
                out = Path(tmp.name)
            else:
                out = keep
                out.mkdir(parents=True, exist_ok=True)
            try:
                bargs, m = C.bench_args(ops, sizes, ["--budget", str(budget)], "0,64,1K,16K,64K", out)
                print(f"latscope coll: np {np_ or 'of ' + repr(args.launcher)}: logp, {', '.join(ops)}, logp in one launch", file=sys.stderr,
                      flush=True)
                cp = run_program("latscope-bench", bargs, np_, args.launcher, args.hostfile,
                                 timeout=args.timeout or 600.0, oversubscribe=args.oversubscribe)
                if cp.returncode != 0:
                    print(f"latscope coll: error: latscope-bench failed (exit {cp.returncode})", file=sys.stderr)
                    return 3
                lp = [load(p) for p in m.logp]
                fit = logp.fit_logp(lp)
                fa, fb = (logp.fit_logp([r]) for r in lp)
                ha, hb = (f.o_s_s + f.L_s + f.o_r_s for f in (fa, fb))
                drift = (f"LogP before/after the collectives: RTT/2 {ha * 1e9:.0f}/{hb * 1e9:.0f} ns "
                         f"({100 * (hb / ha - 1):+.1f}%)" if ha > 0 else "")
                if ha > 0 and abs(hb / ha - 1) > C.STATE_MOVED:
                    drift = "STATE MOVED within the launch: " + drift
                models = {
                    "loggp": from_dict({"schema": "latscope.params/1", "model": "loggp",
                                        "params": fit.loggp_params()}).model,
                    "plogp": from_dict({"schema": "latscope.params/1", "model": "plogp",
                                        "params": fit.plogp_params()}).model,
                }
                res = [load(p) for p in m.coll]
            finally:
                if tmp is not None:
                    tmp.cleanup()
    except (ModelError, ResultsError, ValueError) as e:
        return _fail(str(e))
    except FileNotFoundError as e:
        from latscope.cli import no_such
        return _fail(no_such(e))
    except LaunchError as e:
        print(f"latscope coll: error: {e}", file=sys.stderr)
        return 3
    df = C.measured(res)
    if df.empty:
        return _fail(f"no collective records ({', '.join(C.OPS)}, timing {C.TIMING}) in the results")
    df = C.predict(df, models)
    cons = C.consistency(df)
    if args.json:
        print(jsonio.dumps({"points": df.to_dict(orient="records"), "consistency": cons,
                            "worst": {k: C.worst(df, k) for k in models}, "drift": drift or None},
                           indent=2, default=lambda x: None))
        return 0
    print_table(df, list(models), cons, drift)
    return 0


def print_table(df: Any, models: list[str], cons: list[dict[str, Any]], drift: str, out: Any = None) -> None:
    from latscope.units import fmt_time
    out = out or sys.stdout

    def t(v: Any) -> str:
        return "-" if v is None or v != v else fmt_time(v)

    def pct(v: Any) -> str:
        return "-" if v is None or v != v else f"{100 * v:+.0f}%"

    head = f"{'op':<10}{'alg':<13}{'P':>3}{'size':>8}{'measured':>11}{'CI':>24}"
    for m in models:
        head += f"{m[:10]:>11}{'err':>7}"
    print(head, file=out)
    for _, r in df.sort_values(["op", "P", "alg", "size_bytes"]).iterrows():
        ci = f"[{t(r['ci_lo_s'])}, {t(r['ci_hi_s'])}]" if r["ci_lo_s"] is not None else "-"
        line = f"{r['op']:<10}{r['alg']:<13}{r['P']:>3}{r['size_bytes']:>8}{t(r['measured_s']):>11}{ci:>24}"
        for m in models:
            line += f"{t(r[f'{m}_s']):>11}{pct(r[f'{m}_err']):>7}"
        if r["noise"]:
            line += f"  * {r['noise']}"
        print(line, file=out)
    unmodelled = sorted({f"{o}/{a}" for o, a in zip(df["op"], df["alg"]) if (o, a) not in _schedules()})
    if unmodelled:
        print(f"no model (the library's own schedule is unknown): {', '.join(unmodelled)}", file=out)
    from latscope.coll.compare import noisy_line, summary_line
    for m in models:
        print(summary_line(df, m), file=out)
        nl = noisy_line(df, m)
        if nl:
            print(nl, file=out)
    for c in cons:
        verdict = {True: "equal within their CIs", False: "NOT EQUAL beyond their CIs", None: "no CI"}[c["agree"]]
        ratio = "" if c["ratio"] is None else f" ({c['algs'][1]}/{c['algs'][0]} = {c['ratio']:.2f})"
        print(f"same schedule at P={c['P']}: {c['op']} {c['algs'][0]} {t(c['a_s'])} vs {c['algs'][1]} {t(c['b_s'])} "
              f"at {c['size_bytes']} B: {verdict}{ratio}" + (f"  * {c['noise']}" if c["noise"] else ""), file=out)
    flagged = [c for c in cons if c["agree"] is False]
    if cons:
        print(f"identical schedules: {len(flagged)} of {len(cons)} pairs differ beyond their CIs"
              + (" (the implementations or the machine state differ, not the schedule)" if flagged else ""), file=out)
    if drift:
        print(drift, file=out)


def _schedules() -> dict[tuple[str, str], str]:
    from latscope.models import SCHEDULES
    return SCHEDULES
