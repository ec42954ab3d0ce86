"""`latscope report FILES`: report.html from results files (sections from latscope.parts)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
    rp = subparsers.add_parser("report", help="build report.html from results files",
                               description="One self-contained HTML page from results files (JSON Lines written "
                                           "by latscope-bench): a section per kind of record the files hold.")
    rp.add_argument("files", nargs="+", help="results files (*.jsonl)")
    rp.add_argument("--params", help="a parameters file to include (latscope fit hockney --json's output)")
    rp.add_argument("-o", "--out", default="report.html", help="the HTML file to write (default report.html)")


def _params(path: str) -> dict[str, Any]:
    """The --params file as a dict; what is not one JSON object is one line naming the file."""
    try:
        params = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"--params {path}: not a JSON parameters file ({e.msg} at line {e.lineno}); "
                         "give the file latscope fit hockney --json writes") from None
    if not isinstance(params, dict):
        raise ValueError(f"--params {path}: a parameters file is a JSON object, not {type(params).__name__}")
    return params


def main(args: argparse.Namespace) -> int:
    from latscope import report
    from latscope.results import load
    params = _params(args.params) if args.params else {}
    out = report.build([load(f) for f in args.files], Path(args.out), params)
    print(out)
    return 0
