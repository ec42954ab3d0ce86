"""`latscope study apps PLAN`: the plan's applications, each with its program, ranks, and how its
runs are timed and verified (docs/your-application.md), without running anything."""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path

HELP = "list a plan's apps: program, ranks, how each run is timed and verified (nothing is run)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("plan", help="the study plan (TOML; docs/study.md, docs/your-application.md)")
    p.add_argument("--json", action="store_true", help="the same as one JSON document (a list of apps)")


def run(args: argparse.Namespace) -> int:
    from latscope.study.plan import parse_plan

    plan = parse_plan(Path(args.plan))
    if getattr(args, "json", False):
        from latscope import jsonio

        print(jsonio.dumps([{"name": a.name, "command": [a.program, *a.args], "nps": list(a.nps),
                             "timeout_s": a.timeout_s, "runtime": a.spec.timing_text(),
                             "verified": a.spec.verify_text(), "env": dict(a.env),
                             "cwd": None if a.cwd is None else str(a.cwd)} for a in plan.apps], indent=1))
        return 0
    for a in plan.apps:
        print(f"{a.name}: {shlex.join([a.program, *a.args])}")
        print(f"  np       {', '.join(str(n) for n in a.nps)}; timeout {a.timeout_s:g} s")
        print(f"  runtime  {a.spec.timing_text()}")
        print(f"  verified {a.spec.verify_text()}")
        if a.env:
            print(f"  env      {' '.join(f'{k}={shlex.quote(v)}' for k, v in a.env)}")
        if a.cwd is not None:
            print(f"  cwd      {a.cwd}")
    return 0
