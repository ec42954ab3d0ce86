"""`latscope characterize`: the main job (p2p sweep, Hockney fit, every part's benchmarks, report.html)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from latscope.run import add_launcher_args


def add_parser(subparsers: Any) -> None:
    c = subparsers.add_parser("characterize", help="the main job: p2p sweep, Hockney fit, report.html")
    add_launcher_args(c)
    c.add_argument("--out", default="results/characterize", help="output directory")
    c.add_argument("--quick", action="store_true", help="fewer sizes and a shorter budget")
    c.add_argument("--timer", default="monotonic", help="wtime, monotonic or tsc")
    c.add_argument("--json", action="store_true",
                   help="print the closing summary (points, Hockney fits, the files written) as JSON")


def main(args: argparse.Namespace) -> int:
    from latscope import characterize
    from latscope.outputs import writable_dir
    if args.np is not None and args.np < 1:
        print(f"latscope: error: --np {args.np}: must be a positive number of ranks", file=sys.stderr)
        return 2
    # the timer is checked before the first of 14 launches (latscope-bench's own check would come
    # only after a launch, and leave an empty step behind)
    from latscope import registries
    timers = [t["name"] for t in registries.load()["timers"]]
    if args.timer not in timers:
        print(f"latscope: error: --timer {args.timer!r}: unknown timer; valid: {', '.join(timers)}", file=sys.stderr)
        return 2
    # LATSCOPE_QUICK=1 (smoke tests, the docs test) means --quick; latscope-bench caps each point too
    writable_dir(args.out, "--out")
    quick = args.quick or os.environ.get("LATSCOPE_QUICK") == "1"
    return characterize.run(Path(args.out), args.np, args.launcher, args.hostfile, quick, args.timer, args.json,
                            timeout=args.timeout, oversubscribe=args.oversubscribe)
