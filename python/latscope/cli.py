"""The `latscope` command. Bad input: a message naming the value and what is allowed, exit 2."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from latscope import __version__, fit
from latscope.results import ResultsError, load
from latscope.run import LaunchError, run_program

EXIT_USAGE = 2

# Modules that add their own subcommands: every latscope/*_cli.py, each with add_parser(subparsers)
# and main(args) -> int. A new command is a new module; this file is not edited.
PLUGIN_MODULES = sorted(f"latscope.{p.stem}" for p in Path(__file__).parent.glob("*_cli.py"))


def _launcher_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("launching")
    g.add_argument("--np", type=int, default=None, help="ranks on this machine (default: 2)")
    g.add_argument("--launcher", help="your own launcher line, e.g. 'srun -N 4 -n 64' (replaces mpiexec -n)")
    g.add_argument("--hostfile", help="hostfile for mpiexec")
    g.add_argument("--timeout", type=float, default=None, help="kill the run after this many seconds")


def _pair(text: str) -> tuple[int, int]:
    try:
        i, j = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a pair: use I:J, e.g. 0:1") from None
    return (i, j)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="latscope", description="MPI latency: measure, decompose, model, perturb.")
    ap.add_argument("--version", action="version", version=f"latscope {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)

    b = sub.add_parser("bench", help="run a benchmark under MPI (options after the kind go to latscope-bench)")
    b.add_argument("kind", help="the latscope-bench command: p2p, coll, ... (latscope-bench --help lists them)")
    _launcher_args(b)
    b.add_argument("--launches", metavar="N", default=None,
                   help="repeat the run in N separate launches into one file (each record gets its 'launch'); "
                        "prints the launch-to-launch spread and a CI across launches, and warns when launches "
                        "disagree beyond their own CIs")

    c = sub.add_parser("characterize", help="the main job: p2p sweep, Hockney fit, report.html")
    _launcher_args(c)
    c.add_argument("--out", default="results/characterize", help="output directory")
    c.add_argument("--quick", action="store_true", help="fewer sizes and a shorter budget")
    c.add_argument("--timer", default="monotonic", help="wtime, monotonic or tsc")

    r = sub.add_parser("results", help="inspect results files")
    rsub = r.add_subparsers(dest="rcmd", required=True)
    rs = rsub.add_parser("summary", help="a table with automatic units")
    rs.add_argument("files", nargs="+")

    f = sub.add_parser("fit", help="fit models to results")
    fsub = f.add_subparsers(dest="model", required=True)
    fh = fsub.add_parser("hockney", help="alpha, beta with CIs (regression over sizes and two-roundtrip)")
    fh.add_argument("file")
    fh.add_argument("--method", choices=["regression", "two-roundtrip", "both"], default="both")
    fh.add_argument("--pair", type=_pair, help="only this pair I:J")
    fh.add_argument("--confidence", type=float, default=0.95)
    fh.add_argument("--json", help="write the fits as a parameters file")

    rp = sub.add_parser("report", help="build report.html from results files")
    rp.add_argument("files", nargs="+")
    rp.add_argument("--params", help="parameters file to include")
    rp.add_argument("-o", "--out", default="report.html")

    plugins: dict[str, Any] = {}
    fit_plugins: dict[str, Any] = {}
    results_plugins: dict[str, Any] = {}
    for modname in PLUGIN_MODULES:
        mod = importlib.import_module(modname)
        if hasattr(mod, "add_fit_parser"):   # `latscope fit NAME` from a plugin
            for name in mod.add_fit_parser(fsub):
                fit_plugins[name] = mod
        if hasattr(mod, "add_results_parser"):   # `latscope results NAME` from a plugin
            for name in mod.add_results_parser(rsub):
                results_plugins[name] = mod
        if not hasattr(mod, "add_parser"):
            continue
        before = set(sub.choices)
        mod.add_parser(sub)
        for name in set(sub.choices) - before:
            plugins[name] = mod
    ap.set_defaults(_plugins=plugins, _fit_plugins=fit_plugins, _results_plugins=results_plugins)
    return ap


def _value_options(ap: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """(options that take a value, every option string) over the parser and all its subparsers."""
    takes: set[str] = set()
    known: set[str] = set()
    stack = [ap]
    while stack:
        p = stack.pop()
        for act in p._actions:
            known.update(act.option_strings)
            if act.option_strings and act.nargs != 0:
                takes.update(act.option_strings)
            if isinstance(act, argparse._SubParsersAction):
                stack.extend(act.choices.values())
    return takes, known


def _join_dash_values(ap: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`--mean -5us` -> `--mean=-5us`, `--alg -linear` -> `--alg=-linear`.

    argparse takes a word that starts with '-' for an option unless it is a plain negative number,
    so a negative duration or an exclusion in the `a,b,-c` grammar reached the command as "expected
    one argument". Joining the value to its option lets the command itself judge it (and name it:
    "negative delay", "unknown algorithm"). Words after `--` belong to another program: untouched."""
    takes, known = _value_options(ap)
    out: list[str] = []
    for i, w in enumerate(argv):
        if w == "--":
            return out + argv[i:]
        prev = out[-1] if out else ""
        if (w.startswith("-") and len(w) > 1 and w not in known and not w.startswith("--")
                and prev in takes and prev.startswith("--") and "=" not in prev):
            out[-1] = f"{prev}={w}"
            continue
        out.append(w)
    return out


def _fail(msg: str) -> int:
    print(f"latscope: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """The command; an unexpected exception is one line and exit 1 (LATSCOPE_DEBUG=1: the traceback)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("latscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`latscope ... | head`): nothing left to say, and nowhere to say it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ResultsError as e:   # bad input file, whichever command read it
        return _fail(str(e))
    except FileNotFoundError as e:
        return _fail(f"{e.filename}: no such file")
    except Exception as e:  # noqa: BLE001 - no Python traceback reaches a user
        if os.environ.get("LATSCOPE_DEBUG") == "1":
            raise
        what = str(e).splitlines()[0] if str(e) else ""
        print(f"latscope: internal error: {type(e).__name__}{': ' + what if what else ''} "
              f"(run with LATSCOPE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1


def _main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    argv = _join_dash_values(ap, list(sys.argv[1:] if argv is None else argv))
    args, extra = ap.parse_known_args(argv)
    if extra and not (args.cmd == "bench"):
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.cmd in args._plugins:
            return int(args._plugins[args.cmd].main(args))
        if args.cmd == "bench":
            if args.np is not None and args.np < 1:
                return _fail(f"--np {args.np}: must be a positive number of ranks")
            np_ = args.np if (args.np or args.launcher) else 2
            if args.launches is not None:
                from latscope import launches
                n = launches.parse_launches(args.launches)
                return launches.run_launches(n, args.kind, extra, np_, args.launcher, args.hostfile, args.timeout)
            cp = run_program("latscope-bench", [args.kind] + extra, np_, args.launcher, args.hostfile, args.timeout)
            return cp.returncode
        if args.cmd == "characterize":
            from latscope import characterize
            if args.np is not None and args.np < 1:
                return _fail(f"--np {args.np}: must be a positive number of ranks")
            # LATSCOPE_QUICK=1 (smoke tests, the docs test) means --quick; latscope-bench caps each point too
            quick = args.quick or os.environ.get("LATSCOPE_QUICK") == "1"
            return characterize.run(Path(args.out), args.np, args.launcher, args.hostfile, quick, args.timer)
        if args.cmd == "results" and args.rcmd in args._results_plugins:
            return int(args._results_plugins[args.rcmd].results_main(args))
        if args.cmd == "results":
            for fn in args.files:
                res = load(fn)
                print(f"# {fn}: {res.meta.get('op')} on {res.meta.get('ranks')} ranks, {res.meta.get('mpi_library')}")
                print(res.summary().to_string(index=False) if not res.points.empty else "(no points)")
                if res.launches:
                    from latscope import launches
                    table = launches.launch_table(res)
                    if not table.empty:
                        launches.print_launch_table(table)
                    for w in launches.disagreement_warnings(table):
                        print(f"latscope: warning: {fn}: {w}", file=sys.stderr)
            return 0
        if args.cmd == "fit" and args.model in args._fit_plugins:
            return int(args._fit_plugins[args.model].fit_main(args))
        if args.cmd == "fit":
            if not 0 < args.confidence < 1:
                return _fail(f"--confidence {args.confidence}: must be in the open interval (0, 1)")
            res = load(args.file)
            fits = []
            if args.method in ("regression", "both"):
                fits.append(fit.hockney_regression(res, args.pair, args.confidence))
            if args.method in ("two-roundtrip", "both"):
                try:
                    fits.append(fit.hockney_two_roundtrip(res, args.pair, args.confidence))
                except fit.FitError as e:
                    if args.method == "two-roundtrip":
                        raise
                    print(f"latscope: note: two-roundtrip skipped: {e}", file=sys.stderr)
            for f in fits:
                print(f"{f.method:14s} alpha = {f.alpha_s * 1e6:.4f} us  [{f.alpha_ci_s[0] * 1e6:.4f}, "
                      f"{f.alpha_ci_s[1] * 1e6:.4f}]  beta = {f.beta_s_per_byte * 1e9:.5f} ns/B  "
                      f"[{f.beta_ci_s_per_byte[0] * 1e9:.5f}, {f.beta_ci_s_per_byte[1] * 1e9:.5f}]  "
                      f"({100 * f.confidence:g}% CI, {f.n_points} points)")
            if args.json:
                fit.write_params(fits, args.json, res.meta)
            return 0
        if args.cmd == "report":
            from latscope import report
            params = json.loads(Path(args.params).read_text()) if args.params else {}
            out = report.build([load(f) for f in args.files], Path(args.out), params)
            print(out)
            return 0
    except (ResultsError, fit.FitError, ValueError) as e:
        return _fail(str(e))
    except FileNotFoundError as e:
        return _fail(f"{e.filename}: no such file")
    except LaunchError as e:
        return _fail(str(e))
    return _fail(f"unknown command {args.cmd}")


if __name__ == "__main__":
    sys.exit(main())
