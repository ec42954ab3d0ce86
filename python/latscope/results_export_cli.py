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
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from latscope.results import Results

EXIT_USAGE = 2
LIST_COLUMNS = ("group", "samples_s")
META_KEY = b"latscope.meta"
LAUNCHES_KEY = b"latscope.launches"
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


def export_frame(res: Results) -> pd.DataFrame:
    """The table that is exported: the points frame without ``pair`` (a tuple copy of ``group``),
    with ``samples_s`` where the file has raw samples."""
    import pandas as pd

    df = res.points.drop(columns=["pair"], errors="ignore").reset_index(drop=True)
    if res.raw:
        df["samples_s"] = pd.Series([res.raw.get(i) for i in range(len(df))], index=df.index, dtype=object)
    return df


def write_csv(df: pd.DataFrame, out: Path) -> None:
    df = df.copy()
    for col in LIST_COLUMNS:
        if col in df:
            df[col] = [json.dumps(v) if isinstance(v, list) else None for v in df[col]]
    # floats as repr: the shortest text that reads back to the same double
    df.to_csv(out, index=False)


def write_parquet(res: Results, df: pd.DataFrame, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    kv = dict(table.schema.metadata or {})
    kv[META_KEY] = json.dumps(res.meta).encode()
    if res.launches:
        kv[LAUNCHES_KEY] = json.dumps(res.launches).encode()
    pq.write_table(table.replace_schema_metadata(kv), out)


def main(args: argparse.Namespace) -> int:
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
    df = export_frame(res)
    if args.format == "csv":
        write_csv(df, out)
    else:
        write_parquet(res, df, out)
    print(f"{out}: {len(df)} points, {len(df.columns)} columns")
    return 0
