"""``latscope predict``: model predictions meant to sit next to measurements.

``latscope predict barrier --params P.json --np 32 --alg all [--k 4]`` prints the predicted time
of every barrier algorithm (:func:`latscope.models.predict_barrier`) and marks the best.
Wiring is the same as :mod:`latscope.model_cli`: ``add_parser(subparsers)`` registers
``predict`` with ``set_defaults(func=main)``; ``main`` also takes an argv list.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from latscope import model_cli
from latscope.model_cli import _arg, add_model_value_args, parse_size, run_guarded
from latscope.models import BarrierPrediction, ModelParams, predict_barrier as _predict

__all__ = ["add_parser", "main", "predict_barrier"]

PROG = "latscope predict"


def predict_barrier(
    params: ModelParams, np: int, algs: str | Sequence[str] | None = "all", k: int = 4, *, size_bytes: float = 0
) -> BarrierPrediction:
    """Predicted time of each barrier algorithm in ``algs`` on ``np`` processes, and the best.

    Same as :func:`latscope.models.predict_barrier` (one implementation, re-exported here for the
    ``predict`` command and for callers comparing predictions with measurements).
    """
    return _predict(params, np, algs, k, size_bytes=size_bytes)


def _cmd_barrier(args: argparse.Namespace) -> int:
    return model_cli._cmd_barrier(args, time_header="predicted")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``predict`` (sub-subcommand ``barrier``) on an argparse subparsers object."""
    pp = subparsers.add_parser("predict", help="predict operation times from model parameters")
    sub = pp.add_subparsers(dest="predict_cmd", metavar="WHAT")
    sub.required = True
    p = sub.add_parser("barrier", help="predicted time of each barrier algorithm, and the best")
    add_model_value_args(p)
    p.add_argument("--np", type=int, required=True, help="number of processes P")
    p.add_argument("--alg", default="all", help="algorithms: all, or a,b,-c")
    p.add_argument("--k", type=int, default=4, help="tree arity k (default 4)")
    p.add_argument("--size", type=_arg(parse_size), default=0.0, help="barrier message size (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(predict_func=_cmd_barrier)
    pp.set_defaults(func=main)
    return pp


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``latscope predict``; ``args`` is a parsed namespace or an argv list (after ``predict``)."""
    if not isinstance(args, argparse.Namespace):
        argv = list(sys.argv[1:] if args is None else args)
        if argv[:1] == ["predict"]:
            argv = argv[1:]
        top = argparse.ArgumentParser(prog="latscope")
        add_parser(top.add_subparsers(dest="command"))
        try:
            args = top.parse_args(["predict", *argv])
        except SystemExit as e:
            return int(e.code or 0)
    return run_guarded(args.predict_func, args, PROG)


if __name__ == "__main__":
    sys.exit(main())
