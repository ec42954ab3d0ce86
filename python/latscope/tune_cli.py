"""``latscope tune``: a size -> algorithm decision table for one collective (seed 001 §4, MPIBlib's
Opt_Scatter), measured by ``latscope-bench tune`` under MPI and printed as text.

    latscope tune --op scatter --alg native,linear,binomial --sizes 0,1K:1M:x4 --np 4 -o table.json
    latscope tune --show table.json
    latscope tune --decide points.jsonl [-o table.json]

The table file (schema ``latscope.tune/1``, docs/tune-format.md) is what a C program loads with
``lts_tune_load`` and dispatches through ``lts_scatter_tuned``. latscope.tune reads tables and
decides again from results records (``--decide``), by the same rule as the C library."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from latscope.run import LaunchError, add_launcher_args, run_program

EXIT_USAGE = 2
PROG = "latscope tune"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser("tune", help="size -> algorithm decision table for a collective (latscope.tune/1)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", default="scatter", help="the collective (default scatter)")
    p.add_argument("--alg", default="all", help="candidates, e.g. native,linear,binomial (default all)")
    p.add_argument("--sizes", help="sizes in the op's convention (scatter/gather: the root's whole buffer, "
                                   "multiples of the rank count), e.g. 0,1K:1M:x4")
    p.add_argument("--timing", help="root (default, as Opt_Scatter) or max")
    p.add_argument("--timer", help="wtime, monotonic (default) or tsc")
    p.add_argument("--root", help="the root while measuring (default 0)")
    for opt in ("--warmup", "--min-reps", "--max-reps", "--budget", "--rel-err"):
        p.add_argument(opt, help="as latscope-bench (repetition control)")
    p.add_argument("--progress", action="store_true", help="one line per point on standard error")
    p.add_argument("-o", "--out", help="the table file to write (default tune_OP.json)")
    p.add_argument("--json", action="store_true",
                   help="print the decision table as JSON (docs/tune-format.md) instead of the text table")
    p.add_argument("--results", help="also keep the measured points (JSON Lines) in this file")
    p.add_argument("--show", metavar="TABLE", help="print an existing table file instead of measuring")
    p.add_argument("--decide", metavar="RESULTS", help="decide the table again from the records of a tune run "
                                                       "(--results) by the same rule, instead of measuring; -o writes it")
    add_launcher_args(p)
    return p


def _print(table: Any, as_json: bool) -> None:
    """The table for people (to_text) or, with --json, its document (the table file's format)."""
    if as_json:
        from latscope import jsonio
        print(jsonio.dumps(table.to_doc()))
    else:
        print(table.to_text())


def _fail(msg: str) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def main(args: argparse.Namespace) -> int:
    from latscope.tune import TuneError, decide_results, load_table
    if args.decide:
        from latscope.results import ResultsError, load
        try:
            table = decide_results(load(args.decide))
        except (TuneError, ResultsError) as e:
            return _fail(f"--decide: {e}")   # the error names the file already
        except FileNotFoundError:
            return _fail(f"--decide {args.decide}: no such file")
        _print(table, args.json)
        if args.out:
            table.save(args.out)
            if not args.json:
                print(f"table: {args.out}")
        return 0
    if args.show:
        try:
            _print(load_table(args.show), args.json)
        except TuneError as e:
            return _fail(str(e))
        return 0
    if args.np is not None and args.np < 1:
        return _fail(f"--np {args.np}: must be a positive number of ranks")
    np_ = args.np if (args.np or args.launcher) else 2
    out = Path(args.out or f"tune_{args.op}.json")
    bench = ["tune", "--op", args.op, "--alg", args.alg, "--table", str(out)]
    for opt in ("sizes", "timing", "timer", "root", "warmup", "min_reps", "max_reps", "budget", "rel_err"):
        v = getattr(args, opt)
        if v is not None:
            bench += ["--" + opt.replace("_", "-"), v]
    if args.progress:
        bench.append("--progress")
    with tempfile.TemporaryDirectory(prefix="latscope-tune-") as tmp:
        results = args.results or str(Path(tmp) / "points.jsonl")
        try:
            # captured unless --progress asks for live lines: on success the program's standard
            # error holds only its own text table, which ours (read back from the file) replaces
            cp = run_program("latscope-bench", bench + ["-o", results], np_, args.launcher, args.hostfile,
                             args.timeout, capture=not args.progress, oversubscribe=args.oversubscribe)
        except LaunchError as e:
            return _fail(str(e))
    # latscope-bench's own messages (bad input: exit 2, naming the value) pass through
    if cp.returncode != 0:
        if cp.stderr:
            sys.stderr.write(cp.stderr)
        return cp.returncode
    try:
        table = load_table(out)
    except TuneError as e:
        return _fail(str(e))
    _print(table, args.json)
    if not args.json:
        print(f"table: {out}" + (f"  points: {args.results}" if args.results else ""))
    return 0
