"""`latscope results`: the group of commands that inspect results files, and its `summary`
(other modules add theirs with GROUP = "results", e.g. results_export_cli)."""
from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(subparsers: Any) -> None:
    r = subparsers.add_parser("results", help="inspect results files")
    rsub = r.add_subparsers(dest="rcmd", required=True)
    rs = rsub.add_parser("summary", help="a table with automatic units")
    rs.add_argument("files", nargs="+")


def main(args: argparse.Namespace) -> int:
    from latscope import launches
    from latscope.results import load
    for fn in args.files:
        res = load(fn)
        print(f"# {fn}: {res.meta.get('op')} on {res.meta.get('ranks')} ranks, {res.meta.get('mpi_library')}")
        print(res.summary().to_string(index=False) if not res.points.empty else "(no points)")
        if res.launches:
            table = launches.launch_table(res)
            if not table.empty:
                launches.print_launch_table(table)
            for w in launches.disagreement_warnings(table):
                print(f"latscope: warning: {fn}: {w}", file=sys.stderr)
    return 0
