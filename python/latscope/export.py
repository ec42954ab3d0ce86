"""A results file's points as one table for tools outside latscope (`latscope results export`,
results_export_cli; the format: docs/results-schema.md, "Exporting"): the points frame with raw
samples as a list column, written as CSV (lists as JSON arrays) or Parquet (lists as lists, the
metadata record, and every launch's, as JSON in the file's key-value metadata)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from latscope.results import Results

LIST_COLUMNS = ("group", "samples_s")
META_KEY = b"latscope.meta"
LAUNCHES_KEY = b"latscope.launches"


def export_frame(res: Results) -> pd.DataFrame:
    """The table that is exported: the points frame without ``pair`` (a tuple copy of ``group``),
    with ``quick`` (the run was a smoke test: rep_policy.quick), ``percentile_Q_s`` for each
    percentile `latscope bench --percentiles` recorded, and ``samples_s`` where the file has raw
    samples."""
    import pandas as pd

    from latscope.text import quick_run

    df = res.points.drop(columns=["pair"], errors="ignore").reset_index(drop=True)
    # a smoke-test file stays one once exported: every row says whether its launch was quick
    if res.launches and "launch" in df:
        df["quick"] = [quick_run(res.launches[int(k)] if not pd.isna(k) and 0 <= int(k) < len(res.launches)
                                 else res.meta) for k in df["launch"]]
    else:
        df["quick"] = quick_run(res.meta)
    if "percentiles_s" in df:
        # `latscope bench --percentiles`: one column per recorded percentile, percentile_99.9_s
        qs = [f"{q:g}" for q in res.meta.get("percentiles") or []]
        for q in qs:
            df[f"percentile_{q}_s"] = [d.get(f"p{q}") if isinstance(d, dict) else None for d in df["percentiles_s"]]
        df = df.drop(columns=["percentiles_s"])
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
