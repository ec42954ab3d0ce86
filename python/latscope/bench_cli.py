"""`latscope bench KIND ...`: a latscope-bench run under MPI (the options after the kind are
latscope-bench's own); `--launches N` repeats it in N launches into one file."""
from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

from latscope.run import add_launcher_args, program, run_program


def add_parser(subparsers: Any) -> None:
    # -h is ours to handle: `latscope bench p2p --help` shows latscope-bench's options for p2p as
    # well, where argparse's own -h stopped at this wrapper's few launching options
    b = subparsers.add_parser("bench", add_help=False,
                              help="run a benchmark under MPI (options after the kind go to latscope-bench)")
    b.add_argument("-h", "--help", action="store_true", help="show this help (with a kind: latscope-bench's as well)")
    b.add_argument("kind", nargs="?", help="the latscope-bench command: p2p, coll, ... (latscope-bench --help lists them)")
    add_launcher_args(b)
    b.add_argument("--launches", metavar="N", default=None,
                   help="repeat the run in N separate launches into one file (each record gets its 'launch'); "
                        "prints the launch-to-launch spread and a CI across launches, and warns when launches "
                        "disagree beyond their own CIs")
    b.add_argument("--no-progress", action="store_true",
                   help="no progress lines (the default when standard error is not a terminal; on a terminal "
                        "latscope-bench's --progress is passed: one line per point with an ETA)")
    b.add_argument("--percentiles", metavar="LIST",
                   help="tail percentiles to record per point, e.g. 50,90,99,99.9: computed from the raw samples "
                        "(the run is made with --raw) and written into the results file (percentiles, "
                        "percentiles_s); the samples are kept only with --raw")
    # the words latscope does not know are latscope-bench's: cli.py leaves them in args.unparsed
    b.set_defaults(takes_extra=True, bench_parser=b)


def progress_args(extra: list[str], tty: bool) -> list[str]:
    """latscope-bench's arguments with the progress choice made: one line per point by default
    when standard error is a terminal, none when it is piped unless --progress; --no-progress
    (ours, latscope-bench does not know it) turns it off on a terminal too."""
    if "--no-progress" in extra:
        return [a for a in extra if a not in ("--no-progress", "--progress")]
    if tty and "--progress" not in extra:
        return [*extra, "--progress"]
    return list(extra)


def main(args: argparse.Namespace) -> int:
    extra: list[str] = args.unparsed
    if args.help:
        args.bench_parser.print_help()
        if args.kind is None:
            return 0
        print(f"\nlatscope-bench {args.kind} --help:\n", flush=True)
        # the help needs no launcher: the program prints it before MPI starts (a singleton at most)
        return subprocess.run([str(program("latscope-bench")), args.kind, "--help"], check=False).returncode
    if args.kind is None:
        args.bench_parser.error("the following arguments are required: kind")
    if args.np is not None and args.np < 1:
        print(f"latscope: error: --np {args.np}: must be a positive number of ranks", file=sys.stderr)
        return 2
    np_ = args.np if (args.np or args.launcher) else 2
    if args.kind != "list":
        extra = progress_args(extra + (["--no-progress"] if args.no_progress else []), sys.stderr.isatty())
    qs: list[float] | None = None
    keep_raw = "--raw" in extra
    if args.percentiles is not None:
        from latscope import tails
        from latscope.launches import split_output
        qs = tails.parse(args.percentiles)
        out, _ = split_output(extra)
        if out == "-":
            raise ValueError("--percentiles needs -o FILE: the percentiles are written into the results file")
        if not keep_raw:
            extra = [*extra, "--raw"]
    if args.launches is not None:
        from latscope import launches
        n = launches.parse_launches(args.launches)
        rc = launches.run_launches(n, args.kind, extra, np_, args.launcher, args.hostfile, args.timeout,
                                   oversubscribe=args.oversubscribe)
    else:
        rc = run_program("latscope-bench", [args.kind] + extra, np_, args.launcher, args.hostfile,
                         args.timeout, oversubscribe=args.oversubscribe).returncode
    if qs is not None and rc == 0:
        from pathlib import Path

        from latscope import tails
        from latscope.launches import split_output
        tails.record(Path(split_output(extra)[0]), qs, keep_raw)
    return rc
