"""``latscope results export FILE --csv|--parquet``: a results file's points as a table for tools
outside latscope (R, spreadsheets, Spark, DuckDB, pandas elsewhere).

One row per point record, the columns of ``latscope.results.load(FILE).points`` (the record's
fields as docs/results-schema.md names them, plus the derived ``oversubscribed`` and
``under_load``), and ``samples_s`` (each point's raw samples) when the file was written with
``--raw``. CSV: list values (``group``, ``samples_s``) as JSON arrays, missing values empty.
Parquet: lists as lists, and the metadata record (and, for ``--launches`` files, every launch's)
as JSON in the file's key-value metadata under ``latscope.meta`` (``latscope.launches``), so the
file stands alone. docs/results-schema.md, "Exporting"."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

EXIT_USAGE = 2
FORMATS = {"csv": ".csv", "parquet": ".parquet"}


GROUP = "results"   # `latscope results export` (latscope/commands.py)


def add_parser(rsub: Any) -> None:
    """`latscope results export`."""
    e = rsub.add_parser("export", help="the points as CSV or Parquet, for analysis elsewhere",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("file", help="a results file (JSON Lines)")
    fmt = e.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv", help="comma-separated text")
    fmt.add_argument("--parquet", dest="format", action="store_const", const="parquet",
                     help="Apache Parquet (needs pyarrow), with the metadata record inside")
    e.add_argument("-o", "--out", help="output file (default: FILE with .csv or .parquet for its suffix)")


def main(args: argparse.Namespace) -> int:
    from latscope.export import export_frame, write_csv, write_parquet
    from latscope.outputs import writable
    from latscope.results import load

    if args.format == "parquet" and importlib.util.find_spec("pyarrow") is None:
        print("latscope results export: error: --parquet needs pyarrow: pip install pyarrow "
              "(or use --csv)", file=sys.stderr)
        return EXIT_USAGE
    src = Path(args.file)
    res = load(src)
    out = Path(args.out) if args.out else src.with_suffix(FORMATS[args.format])
    if out.resolve() == src.resolve():
        print(f"latscope results export: error: -o {out}: that is the input file; name another", file=sys.stderr)
        return EXIT_USAGE
    writable(out, "-o")
    df = export_frame(res)
    if args.format == "csv":
        write_csv(df, out)
    else:
        write_parquet(res, df, out)
    print(f"{out}: {len(df)} points, {len(df.columns)} columns")
    return 0
