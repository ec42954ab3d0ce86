"""``latscope apps``: the mini-app suite (docs/miniapps.md) — list it, run one application.

``latscope apps run NAME`` runs build/bin/latscope-NAME under mpiexec and passes its result line and
exit status through: 0 verification passed, 1 failed, 2 bad arguments or np (124: --timeout hit)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from latscope import miniapps
from latscope.jobs.job import JobStopped
from latscope.run import LaunchError, timeout_seconds

PROG = "latscope apps"
EXIT_TIMEOUT = 124   # as timeout(1): not a verdict of the app


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "apps", help="the mini-app suite (CG, IS, EP, ...): list, run", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="apps_cmd", required=True)
    sub.add_parser("list", help="every mini-app: program, classes, the study's class, iterations, pattern")
    r = sub.add_parser("run", help="run one mini-app under mpiexec; its exit status (0 passed, 1 failed, 2 bad input)")
    r.add_argument("name", help=f"the app ({', '.join(miniapps.names())})")
    r.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    r.add_argument("--class", dest="cls", help="problem class (default: the app's first; `latscope apps list`)")
    r.add_argument("--iters", type=int, help="main-loop iterations instead of the class's")
    r.add_argument("--json", action="store_true", help="the result as one JSON object")
    r.add_argument("--timeout", type=timeout_seconds, help="end the run after this many seconds (exit 124)")
    return p


def _list() -> int:
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=len(miniapps.REGISTRY)) as ex:   # each asks its program: MPI start-ups overlap
        rows = list(ex.map(miniapps.describe, miniapps.REGISTRY))
    print(f"{'app':<4} {'program':<14} {'classes':<12} {'study':<6} {'iters':<20} pattern")
    for d in rows:
        if not d.built:
            print(f"{d.app.name:<4} {d.app.program:<14} {'(not built: make build)':<40} {d.app.pattern}")
            continue
        iters = ",".join(f"{c}={n}" for c, n in d.iters.items()) if d.iters else "-"
        classes = ",".join(d.classes)
        print(f"{d.app.name:<4} {d.app.program:<14} {classes:<12} {d.app.study_class:<6} {iters:<20} {d.app.pattern}")
    return 0


def _run(args: argparse.Namespace) -> int:
    app = miniapps.get(args.name)
    if args.np < 1:
        raise miniapps.MiniAppError(f"--np {args.np}: must be a positive number of ranks")
    argv: list[str] = []
    if args.cls is not None:
        argv += ["--class", args.cls]
    if args.iters is not None:
        argv += ["--iters", str(args.iters)]
    if args.json:
        argv.append("--json")
    try:
        cp = miniapps.run(app, argv, args.np, timeout=args.timeout)
    except JobStopped as e:
        e.detail = f"; {app.program} and its ranks were ended"
        raise
    return cp.returncode


def main(args: argparse.Namespace) -> int:
    try:
        return _list() if args.apps_cmd == "list" else _run(args)
    except (miniapps.MiniAppError, LaunchError) as e:
        print(f"{PROG} {args.apps_cmd}: error: {e}", file=sys.stderr)
        return miniapps.EXIT_USAGE
