"""`latscope results`: the group of commands that inspect results files, and its `summary`
(other modules add theirs with GROUP = "results", e.g. results_export_cli)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(subparsers: Any) -> None:
    r = subparsers.add_parser("results", help="inspect results files")
    rsub = r.add_subparsers(dest="rcmd", required=True)
    rs = rsub.add_parser("summary", help="a table with automatic units",
                         description="One row per point: median (flagged when invalid), min, p99, the CI's "
                                     "relative half-width, stop reason, noise; 'n/a' where a value is undefined. "
                                     "The header names the run and says QUICK RUN for a smoke-test file.")
    rs.add_argument("files", nargs="+")
    rs.add_argument("--json", action="store_true",
                    help="print one JSON object per file (header fields and the rows, values in seconds)")
    rs.add_argument("--percentiles", metavar="LIST",
                    help="add these percentiles of the raw samples as columns, e.g. 50,90,99,99.9 "
                         "(needs a file written with --raw)")


def parse_percentiles(text: str) -> list[float]:
    """'50,90,99,99.9' -> [50.0, 90.0, 99.0, 99.9]; ValueError naming the bad item."""
    from latscope.tails import parse
    return parse(text)


def recorded(res: Any, q: float, i: int) -> float | None:
    """Percentile q of point i as `latscope bench --percentiles` recorded it, else from its raw
    samples, else None."""
    import numpy as np

    from latscope.tails import key
    if "percentiles_s" in res.points:
        d = res.points["percentiles_s"].iloc[i]
        if isinstance(d, dict) and d.get(key(q)) is not None:
            return float(d[key(q)])
    x = res.raw.get(i)
    return float(np.percentile(x, q)) if x else None


def header(fn: str, res: Any) -> str:
    from latscope.text import mpi_version, quick_run
    m = res.meta
    quick = any(quick_run(x) for x in [m, *res.launches])
    return (f"# {fn}: {m.get('bench')} {m.get('op')} on {m.get('ranks')} ranks, {mpi_version(m.get('mpi_library'))}"
            + (" -- QUICK RUN (LATSCOPE_QUICK=1: a smoke test, not a measurement)" if quick else ""))


def _json_rows(res: Any, pcts: list[float]) -> list[dict[str, Any]]:
    import numpy as np

    from latscope.results import noise_flag
    from latscope.text import finite
    rows = []
    for i, (_, r) in enumerate(res.points.reset_index(drop=True).iterrows()):
        def v(c: str) -> float | None:
            x = r.get(c)
            return float(x) if finite(x) else None
        med = v("median_s")
        row: dict[str, Any] = {
            "op": r.get("op"), "alg": r.get("alg") if isinstance(r.get("alg"), str) else None,
            "group": r.get("group") if isinstance(r.get("group"), list) else None,
            "size_bytes": int(r["size_bytes"]), "n": int(r["n"]),
            "median_s": med, "median_valid": med is not None and med > 0,
            "min_s": v("min_s"), "p99_s": v("p99_s"), "rel_err": v("rel_err"),
            "stop_reason": r.get("stop_reason"), "noise": noise_flag(r) or None}
        if "launch" in r and finite(r["launch"]):
            row["launch"] = int(r["launch"])
        if pcts:
            row["percentiles_s"] = {f"p{q:g}": recorded(res, q, i) for q in pcts}
        rows.append(row)
    return rows


def main(args: argparse.Namespace) -> int:
    import numpy as np

    from latscope import launches
    from latscope.results import load
    from latscope.text import fmt_value, quick_run
    try:
        pcts = parse_percentiles(args.percentiles) if args.percentiles else []
    except ValueError as e:
        print(f"latscope results summary: error: {e}", file=sys.stderr)
        return 2
    docs = []
    for fn in args.files:
        res = load(fn)
        qs = pcts or [float(q) for q in res.meta.get("percentiles") or []]
        if pcts and not res.raw and not res.points.empty and "percentiles_s" not in res.points:
            print(f"latscope results summary: error: --percentiles: {fn} has no raw samples "
                  "(measure with --raw)", file=sys.stderr)
            return 2
        if args.json:
            from latscope.text import mpi_version
            docs.append({"file": fn, "bench": res.meta.get("bench"), "op": res.meta.get("op"),
                         "ranks": res.meta.get("ranks"), "mpi": mpi_version(res.meta.get("mpi_library")),
                         "quick": any(quick_run(x) for x in [res.meta, *res.launches]),
                         "percentiles": qs or None, "points": _json_rows(res, qs)})
            continue
        print(header(fn, res))
        if res.points.empty:
            print("(no points)")
        else:
            t = res.summary()
            for q in qs:
                t[f"p{q:g}"] = [fmt_value(recorded(res, q, i)) for i in range(len(t))]
            print(t.to_string(index=False))
        if res.launches:
            table = launches.launch_table(res)
            if not table.empty:
                launches.print_launch_table(table)
            for w in launches.disagreement_warnings(table):
                print(f"latscope: warning: {fn}: {w}", file=sys.stderr)
    if args.json:
        json.dump(docs if len(docs) != 1 else docs[0], sys.stdout, indent=1, allow_nan=False)
        print()
    return 0
