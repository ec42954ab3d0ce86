"""``latscope study``: the latency-variation study of seed 004 (docs/study.md).

Each subcommand lives in its own module, latscope.study.<name>, which defines
  HELP: str                                   one line for ``latscope study --help``
  add_arguments(p: ArgumentParser) -> None    its options
  run(args: Namespace) -> int                 its work; the exit status
and is listed once in SUBCOMMANDS below. This file only parses and dispatches. A subcommand
raises StudyError for bad input (one line naming the value and what is allowed; exit 2)."""
from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import Any

EXIT_USAGE = 2
PROG = "latscope study"

# name -> module (registry: one row per subcommand; `study run` and `study analyze` are added here)
SUBCOMMANDS: dict[str, str] = {
    "load": "latscope.study.load",
    "run": "latscope.study.matrix",
    "analyze": "latscope.study.analyze",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(SUBCOMMANDS[name])


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "study", help="the latency-variation study (seed 004): load characterisation, ...",
        description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="study_cmd", required=True)
    for name in SUBCOMMANDS:
        mod = _module(name)
        sp = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
    return p


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    if not isinstance(args, argparse.Namespace):
        ap = argparse.ArgumentParser(prog="latscope")
        add_parser(ap.add_subparsers(dest="cmd", required=True))
        args = ap.parse_args(["study"] + list(args or []))
    from latscope.study import StudyError
    try:
        rc: int = _module(args.study_cmd).run(args)
        return rc
    except StudyError as e:
        print(f"{PROG} {args.study_cmd}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
