"""`latscope report FILES`: report.html from results files (sections from latscope.parts)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from latscope.outputs import read_text, writable


def add_parser(subparsers: Any) -> None:
    rp = subparsers.add_parser("report", help="build report.html from results files",
                               description="One self-contained HTML page from results files (JSON Lines written "
                                           "by latscope-bench): a section per kind of record the files hold.")
    rp.add_argument("files", nargs="+", help="results files (*.jsonl)")
    rp.add_argument("--params", help="a parameters file to include (latscope fit hockney --json's output)")
    rp.add_argument("--baseline", metavar="FILE",
                    help="a results file to compare the files with: adds the comparison section (ratio of medians "
                         "with a CI, verdicts, metadata differences; latscope compare)")
    rp.add_argument("-o", "--out", default="report.html", help="the HTML file to write (default report.html)")


def _params(path: str) -> dict[str, Any]:
    """The --params file as a dict; what is not one JSON object is one line naming the file."""
    try:
        params = json.loads(read_text(path, "--params", "a JSON parameters file (latscope fit hockney --json)"))
    except json.JSONDecodeError as e:
        raise ValueError(f"--params {path}: not a JSON parameters file ({e.msg} at line {e.lineno}); "
                         "give the file latscope fit hockney --json writes") from None
    if not isinstance(params, dict):
        raise ValueError(f"--params {path}: a parameters file is a JSON object, not {type(params).__name__}")
    return params


def _is_budget(path: str) -> bool:
    """Whether the file is `latscope budget`'s output (its first record 'budget_meta')."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return False   # the results loader reports what is wrong with it
    return isinstance(first, dict) and first.get("type") == "budget_meta"


def main(args: argparse.Namespace) -> int:
    from latscope import report
    from latscope.results import load
    params = _params(args.params) if args.params else {}
    writable(args.out, "-o")
    # `latscope report results/demo/*.jsonl` takes characterize's budget.jsonl too: the budget
    # section draws it from beside the results (docs/budget.md), so it is passed over, not an error
    budgets = [f for f in args.files if _is_budget(f)]
    for f in budgets:
        print(f"latscope report: note: {f} is a budget file, not results: the report shows the budget.jsonl "
              "that lies beside its results files", file=sys.stderr)
    files = [f for f in args.files if f not in budgets]
    if not files:
        raise ValueError("no results files among the files given (budget files only); give latscope-bench's *.jsonl")
    baseline = [load(args.baseline)] if args.baseline else []
    out = report.build([load(f) for f in files], Path(args.out), params, baseline=baseline)
    print(out)
    return 0
