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

from latscope.commands import parse_alone

EXIT_USAGE = 2
PROG = "latscope study"

# name -> module (registry: one row per subcommand; `study run` and `study analyze` are added here)
SUBCOMMANDS: dict[str, str] = {
    "load": "latscope.study.load",
    "run": "latscope.study.matrix",
    "analyze": "latscope.study.analyze",
    "apps": "latscope.study.apps",
    "sensitivity": "latscope.study.sensitivity",
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
    ns = parse_alone(args, "study", add_parser)
    if isinstance(ns, int):
        return ns
    from latscope.study import StudyError
    try:
        rc: int = _module(ns.study_cmd).run(ns)
        return rc
    except StudyError as e:
        print(f"{PROG} {ns.study_cmd}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
