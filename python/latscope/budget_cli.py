"""`latscope budget`: where the time of a message goes (seed 000; docs/budget.md). Measures the
ladder of same-clock ping-pongs (latscope-bench budget, one launch per environment), derives the
components by differences with their uncertainty, checks closure; `latscope budget whatif FILE
--remove a,b` (or `--scale a=0.5`) projects the latency without or with scaled components (seed 000 §8), `latscope budget show FILE`
prints a file's table. Bad input: one line naming the value, exit 2."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_USAGE = 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "budget", help="latency budget: same-clock ping-pong ladder, components by difference, what-if",
        description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--rungs", help="rungs (a,b,-c; 'all'; default: the default ladder; --list shows them)")
    p.add_argument("--list", action="store_true", help="list the rungs and the components, then exit")
    p.add_argument("--size", default="20", help="payload bytes, 1..65000 (default 20, the seed's)")
    p.add_argument("--runs", type=int, default=2,
                   help="measure the ladder this many times; components whose runs disagree beyond their CIs "
                        "are flagged unstable (default 2)")
    p.add_argument("--repeat-unstable", type=int, default=2, metavar="N",
                   help="re-measure the rungs of unstable components up to N more times, interleaved, before "
                        "calling them unstable (0..10, default 2; the newest --runs runs decide)")
    p.add_argument("--table", help="JSON file adding or overriding components and closures (docs/budget.md)")
    p.add_argument("-o", "--output", help="write the budget records (latscope.budget/1 JSON Lines) here")
    p.add_argument("--keep", help="keep each launch's latscope-bench results in this directory")
    p.add_argument("--no-systime", action="store_true",
                   help="do not preload liblatscope_systime.so into the MPI-over-TCP launch")
    p.add_argument("--quick", action="store_true", help="smoke-test repetition counts (as LATSCOPE_QUICK=1)")
    p.add_argument("--net", action="store_true",
                   help="the veth rungs between nodes 0 and 1 of the kept emulated cluster ('latscope cluster up "
                        "--nodes 2 --rate 100mbit'), through its bridge, rate and MTU (docs/network.md)")
    p.add_argument("--json", action="store_true",
                   help="print the budget's records as JSON Lines instead of the table")
    for opt in ("--timer", "--warmup", "--min-reps", "--max-reps", "--rel-err", "--budget"):
        p.add_argument(opt, help=f"passed to latscope-bench budget ({opt})")
    sub = p.add_subparsers(dest="budget_cmd")
    w = sub.add_parser("whatif", help="project the latency without some components (seed 000 §8)")
    w.add_argument("file", help="a budget file (latscope budget -o FILE)")
    w.add_argument("--remove", help="components to remove, comma-separated (as --scale NAME=0)")
    w.add_argument("--scale", action="append", default=[], metavar="COMPONENT=FACTOR",
                   help="scale a component, e.g. firmware=0.5 (halved); 0 removes it; repeatable")
    w.add_argument("--total", help="the rung to project (default: every closure containing a removed component)")
    w.add_argument("--json", action="store_true", help="print the projections as JSON Lines")
    s = sub.add_parser("show", help="print a budget file's table")
    s.add_argument("file", help="a budget file (latscope budget -o FILE)")
    s.add_argument("--json", action="store_true", help="print the file's records as JSON Lines instead of the table")
    c = sub.add_parser("compare", help="do two budget files agree on every component within their CIs?")
    c.add_argument("files", nargs=2, help="two budget files")
    c.add_argument("--json", action="store_true", help="print one JSON object per component instead of the table")
    return p


def _fail(msg: str) -> int:
    print(f"latscope budget: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def main(args: argparse.Namespace) -> int:
    from latscope import budget, jsonio
    from latscope.run import LaunchError
    from latscope.units import fmt_time
    try:
        if args.budget_cmd == "show":
            meta, recs = budget.read(args.file)
            if args.json:
                for r in [meta, *recs]:
                    print(jsonio.dumps(r))
                return 0
            print(budget.text(meta, recs))
            return 0
        if args.budget_cmd == "compare":
            (_, ra), (_, rb) = budget.read(args.files[0]), budget.read(args.files[1])
            rows = budget.compare(ra, rb)
            if not rows:
                return _fail(f"{args.files[0]} and {args.files[1]} have no measured component in common")
            if args.json:
                for r in rows:
                    print(jsonio.dumps(r))
                return 0
            for r in rows:
                verdict = {True: "agree", False: "UNSTABLE", None: "no CI"}[r["stable"]]
                tol = "" if r["tolerance_s"] is None else f" (tolerance {fmt_time(r['tolerance_s'])})"
                print(f"{r['name']:<18} {fmt_time(r['a_s']):>10} {fmt_time(r['b_s']):>10}  "
                      f"diff {fmt_time(r['diff_s'])}{tol}  {verdict}")
            unstable = [r["name"] for r in rows if r["stable"] is False]
            print(f"unstable: {', '.join(unstable)}" if unstable else "every component agrees within its CIs")
            return 0
        if args.budget_cmd == "whatif":
            meta, recs = budget.read(args.file)
            remove = [x.strip() for x in (args.remove or "").split(",") if x.strip()]
            if args.remove is not None and not remove:
                return _fail(f"--remove '{args.remove}': name at least one component")
            scale: dict[str, float] = {}
            for item in args.scale:
                name, eq, val = item.partition("=")
                try:
                    fac = float(val)
                except ValueError:
                    fac = float("nan")
                if not eq or not name.strip() or not (fac >= 0.0 and fac < float("inf")):
                    return _fail(f"--scale '{item}': expected COMPONENT=FACTOR with a factor >= 0 "
                                 "(0.5 halves the component, 0 removes it)")
                scale[name.strip()] = fac
            if not remove and not scale:
                return _fail("whatif: give --remove COMPONENTS or --scale COMPONENT=FACTOR")
            res = budget.whatif(meta, recs, remove, args.total, scale)
            for r in res:
                if args.json:
                    print(jsonio.dumps(r))
                    continue
                ci = f" ± {fmt_time(r['projected_ci_half_s'])}" if r["projected_ci_half_s"] is not None else ""
                how = ", ".join(f"without {n}" if f == 0.0 else f"{n} x {f:g}" for n, f in r["scaled"].items())
                print(f"{r['total']}: {fmt_time(r['total_s'])} -> {fmt_time(r['projected_s'])}{ci} with "
                      f"{how} (saves {fmt_time(r['saving_s'])})")
            return 0
        size = budget.parse_size(args.size)
        if args.runs < 1 or args.runs > 20:
            return _fail(f"--runs {args.runs}: must be 1..20")
        if args.repeat_unstable < 0 or args.repeat_unstable > 10:
            return _fail(f"--repeat-unstable {args.repeat_unstable}: must be 0..10")
        comps, clos = budget.load_table(args.table)
        table = budget.rungs()
        if args.list:
            for rg in table:
                print(f"rung {rg.name:<16} {rg.launch:<10} {'blocking' if rg.blocking else 'polling':<9} "
                      f"{'' if rg.default else '(not default) '}{rg.help}")
            for c in comps:
                print(f"component {c['name']:<18} {c.get('kind', 'derived'):<9} {budget.formula(c)}")
            for cl in clos:
                print(f"closure {cl['name']}: {cl['total']} = {' + '.join(cl['parts'])} + residual")
            return 0
        budget.select_rungs(args.rungs, table)   # bad names refused before anything runs
        bench_args: list[str] = []
        for opt in ("timer", "warmup", "min_reps", "max_reps", "rel_err", "budget"):
            v = getattr(args, opt)
            if v is not None:
                bench_args += ["--" + opt.replace("_", "-"), str(v)]
        if args.quick:
            import os
            os.environ["LATSCOPE_QUICK"] = "1"
        out = Path(args.output) if args.output else None
        net = None
        if args.net:
            from latscope.net.launch import kept_cluster
            net = kept_cluster()
            if int(net["nodes"]) < 2:
                raise ValueError(f"--net: the kept cluster has {net['nodes']} node; the budget's two ranks need 2 "
                                 "('latscope cluster up --nodes 2')")
        meta, recs = budget.run_budget(args.rungs, size, args.runs, bench_args, args.table, out,
                                       Path(args.keep) if args.keep else None, systime=not args.no_systime,
                                       repeat_unstable=args.repeat_unstable, net=net)
        if args.json:
            for r in [meta, *recs]:
                print(jsonio.dumps(r))
            return 0
        print(budget.text(meta, recs))
        if out is not None:
            print(f"\nbudget records: {out}")
        return 0
    except budget.BudgetError as e:
        return _fail(str(e))
    except LaunchError as e:
        print(f"latscope budget: error: {e}", file=sys.stderr)
        return 3
