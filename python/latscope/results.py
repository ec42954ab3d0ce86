"""The results stream (docs/results-schema.md): JSON Lines, a metadata record then point records."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from latscope.units import fmt_size, fmt_time

SCHEMA = "latscope.results/1"


class ResultsError(ValueError):
    """A results file that does not follow the schema."""


@dataclass
class Results:
    """One run: its metadata and its points (one row per measured point)."""

    meta: dict[str, Any]
    points: pd.DataFrame
    path: Path | None = None
    raw: dict[int, list[float]] = field(default_factory=dict)
    syncs: list[dict[str, Any]] = field(default_factory=list)   # "clock_sync" records, in order

    def to_frame(self) -> pd.DataFrame:
        return self.points.copy()

    def samples(self, index: int) -> list[float]:
        """Raw samples of point `index` (present when the run used --raw)."""
        if index not in self.raw:
            raise KeyError(f"point {index} has no raw samples: rerun with --raw")
        return self.raw[index]

    def summary(self) -> pd.DataFrame:
        """A table for people: auto units, one row per point."""
        df = self.points
        rows = []
        for _, r in df.iterrows():
            g = r.get("group")
            rows.append({
                "op": r["op"] if pd.isna(r.get("alg", None)) else f"{r['op']}:{r['alg']}",
                "group": "->".join(str(x) for x in g) if isinstance(g, list) else f"all (root {r.get('root')})",
                "size": fmt_size(r["size_bytes"]),
                "n": int(r["n"]),
                "median": fmt_time(r["median_s"]),
                "min": fmt_time(r["min_s"]),
                "p99": fmt_time(r["p99_s"]),
                "ci": "-" if pd.isna(r["rel_err"]) else f"±{100 * r['rel_err']:.1f}%",
                "stop": r["stop_reason"],
            })
        return pd.DataFrame(rows)


def _lines(p: Path) -> list[str]:
    """The file's lines; a clear ResultsError for what is not a text results file at all."""
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise ResultsError(f"{p}: is a directory, not a results file") from None
    if not data:
        raise ResultsError(f"{p}: 0 bytes: not a results file (it starts with a metadata record; "
                           "was the run killed before it began?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{p}: binary data at byte {e.start}, not a results file "
                           f"(JSON Lines text, schema {SCHEMA})") from None
    if "\0" in text:
        raise ResultsError(f"{p}: binary data at byte {text.index(chr(0))}, not a results file "
                           f"(JSON Lines text, schema {SCHEMA})")
    return text.splitlines(keepends=True)


def load(path: str | Path) -> Results:
    """Load a results file; raises ResultsError naming the file and the line that breaks the schema.

    A run killed while writing leaves a partial last line: that record is dropped with a warning
    on standard error and the complete ones are kept. A partial line anywhere else is an error."""
    p = Path(path)
    meta: dict[str, Any] | None = None
    recs: list[dict[str, Any]] = []
    raw: dict[int, list[float]] = {}
    syncs: list[dict[str, Any]] = []
    lines = _lines(p)
    last = max((i for i, ln in enumerate(lines, 1) if ln.strip()), default=0)
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            truncated = lineno == last and not line.endswith("\n")
            if truncated and meta is not None:
                print(f"latscope: warning: {p}:{lineno}: the last record is truncated (a killed run?): "
                      f"dropped; {len(recs)} complete point(s) kept", file=sys.stderr)
                break
            if truncated:
                raise ResultsError(f"{p}:{lineno}: the metadata record is truncated ({e.msg} at column {e.colno}); "
                                   "the file holds no complete record") from None
            raise ResultsError(f"{p}:{lineno}: not JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(rec, dict):
            raise ResultsError(f"{p}:{lineno}: a record must be a JSON object, not {type(rec).__name__}")
        kind = rec.get("type")
        if meta is None:
            if kind != "meta":
                raise ResultsError(f"{p}:{lineno}: the first record must be the metadata (type 'meta'), "
                                   f"not {kind!r}")
            if rec.get("schema") != SCHEMA:
                raise ResultsError(f"{p}:{lineno}: schema {rec.get('schema')!r}; this reader knows {SCHEMA!r}")
            meta = rec
            continue
        if kind == "clock_sync":
            syncs.append(rec)
            continue
        if kind != "point":
            raise ResultsError(f"{p}:{lineno}: unknown record type {kind!r}")
        if "samples_s" in rec:
            raw[len(recs)] = rec.pop("samples_s")
        recs.append(rec)
    if meta is None:
        raise ResultsError(f"{p}: only blank lines: not a results file (it starts with a metadata record)")
    df = pd.DataFrame.from_records(recs)
    if not df.empty and "group" in df:
        # collective records have no group (all ranks take part)
        df["pair"] = df["group"].map(lambda g: tuple(g) if isinstance(g, list) else None)
    return Results(meta=meta, points=df, path=p, raw=raw, syncs=syncs)
