"""`latscope report FILES`: report.html from results files (sections from latscope.parts)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
    rp = subparsers.add_parser("report", help="build report.html from results files")
    rp.add_argument("files", nargs="+")
    rp.add_argument("--params", help="parameters file to include")
    rp.add_argument("-o", "--out", default="report.html")


def main(args: argparse.Namespace) -> int:
    from latscope import report
    from latscope.results import load
    params = json.loads(Path(args.params).read_text()) if args.params else {}
    out = report.build([load(f) for f in args.files], Path(args.out), params)
    print(out)
    return 0
