"""The results stream (docs/results-schema.md): JSON Lines, a metadata record then point records."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from latscope.text import fmt_median, fmt_rel_err, fmt_value
from latscope.units import fmt_size

SCHEMA = "latscope.results/3"
# /1 files (before the load fields) still load: their load columns are unknown (NA); /2 files
# (before the metadata's "job") too: their job is unknown (None)
READABLE = ("latscope.results/1", "latscope.results/2", SCHEMA)

# "Under load" (docs/results-schema.md, Load and oversubscription): other processes took more CPU
# than this run leaves free on rank 0's host, by at least this many CPUs, while the point ran.
# Half a CPU: with no spare core that is one of our busy-polling ranks descheduled half the time,
# and it stays above the 10 ms-tick noise of load_others for points of 0.1 s or more (+-0.2 CPU).
LOAD_MARGIN_CPUS = 0.5


def spare_cpus(meta: dict[str, Any]) -> float | None:
    """CPUs of rank 0's host that this run's ranks leave free (None where the file does not say)."""
    load = meta.get("load") or {}
    cpus, ranks = load.get("cpus_available"), load.get("ranks")
    if cpus is None or ranks is None:
        return None
    return float(max(0, int(cpus) - int(ranks)))


def under_load(record: dict[str, Any] | pd.Series, meta: dict[str, Any] | None = None) -> bool | None:
    """Was this point measured under load from other processes? ``load_others`` (CPUs others used
    while it ran) above the run's spare CPUs + LOAD_MARGIN_CPUS. Without ``meta`` no CPU is taken
    as spare. None where the record does not say (a /1 file, no /proc, a point shorter than a tick)."""
    v = record.get("load_others")
    if v is None or (isinstance(v, float) and v != v):
        return None
    spare = spare_cpus(meta) if meta is not None else 0.0
    if spare is None:
        spare = 0.0
    return bool(float(v) > spare + LOAD_MARGIN_CPUS)


def known_true(v: Any) -> bool:
    """v is a known true value (not None, NA or NaN): a nullable flag read as "yes"."""
    return v is not None and v is not pd.NA and not (isinstance(v, float) and v != v) and bool(v)


def noise_flag(row: dict[str, Any] | pd.Series) -> str:
    """'' or what makes a point's time suspect: 'under load', 'oversubscribed' or both (a row of
    the points frame)."""
    flags = [name for name, col in (("under load", "under_load"), ("oversubscribed", "oversubscribed"))
             if known_true(row.get(col))]
    return "+".join(flags)


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
    # `latscope bench --launches N`: the metadata record of every launch, in order (meta is the
    # first); empty for a single launch. Points then carry their `launch` index.
    launches: list[dict[str, Any]] = field(default_factory=list)

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
            row = {} if "launch" not in r or pd.isna(r["launch"]) else {"launch": int(r["launch"])}
            rows.append(row | {
                "op": r["op"] if pd.isna(r.get("alg", None)) else f"{r['op']}:{r['alg']}",
                "group": "->".join(str(x) for x in g) if isinstance(g, list) else f"all (root {r.get('root')})",
                "size": fmt_size(r["size_bytes"]),
                "n": int(r["n"]),
                "median": fmt_median(r["median_s"]),
                "min": fmt_value(r["min_s"]),
                "p99": fmt_value(r["p99_s"]),
                "ci": fmt_rel_err(r["rel_err"]),
                "stop": r["stop_reason"],
                "noise": noise_flag(r) or "-",
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


def _one_document(lines: list[str]) -> bool:
    """Whether the lines are one (pretty-printed) JSON document rather than JSON Lines."""
    try:
        json.loads("".join(lines))
    except json.JSONDecodeError:
        return False
    return True


def load(path: str | Path) -> Results:
    """Load a results file; raises ResultsError naming the file and the line that breaks the schema.

    A run killed while writing leaves a partial last line: that record is dropped with a warning
    on standard error and the complete ones are kept. A partial line anywhere else is an error."""
    p = Path(path)
    meta: dict[str, Any] | None = None
    recs: list[dict[str, Any]] = []
    raw: dict[int, list[float]] = {}
    syncs: list[dict[str, Any]] = []
    launches: list[dict[str, Any]] = []
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
            if meta is None and _one_document(lines):   # params.json, tune_scatter.json, ...
                raise ResultsError(f"{p}: one JSON document, not a results file (JSON Lines: one record a line, "
                                   "as latscope-bench writes; a parameters file goes to --params)") from None
            raise ResultsError(f"{p}:{lineno}: not JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(rec, dict):
            raise ResultsError(f"{p}:{lineno}: a record must be a JSON object, not {type(rec).__name__}")
        kind = rec.get("type")
        if meta is None:
            if kind == "budget_meta":   # `latscope budget -o FILE`'s format (docs/budget.md)
                raise ResultsError(f"{p}: a latscope budget file, not a results file: `latscope budget show {p}` "
                                   "prints it (characterize's report draws it from beside the results)")
            if kind != "meta":
                raise ResultsError(f"{p}:{lineno}: the first record must be the metadata (type 'meta'), "
                                   f"not {kind!r}")
            if rec.get("schema") not in READABLE:
                raise ResultsError(f"{p}:{lineno}: schema {rec.get('schema')!r}; this reader knows "
                                   f"{' and '.join(map(repr, READABLE))}")
            meta = rec
            if "launch" in rec:
                launches.append(rec)
            continue
        if kind == "meta" and "launch" in rec and launches:
            # the next launch of `latscope bench --launches N`
            if rec.get("launch") != len(launches):
                raise ResultsError(f"{p}:{lineno}: launch {rec.get('launch')!r} follows launch {len(launches) - 1}: "
                                   "the launches of a file are numbered 0, 1, ... in order")
            launches.append(rec)
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
    if not df.empty:
        add_noise_columns(df, meta, launches)
    return Results(meta=meta, points=df, path=p, raw=raw, syncs=syncs, launches=launches)


def add_noise_columns(df: pd.DataFrame, meta: dict[str, Any], launches: list[dict[str, Any]] | None = None) -> None:
    """In place: ``load1``/``load_others`` (NA in /1 files), ``oversubscribed`` (the point's launch's
    metadata; NA where it does not say) and ``under_load`` (under_load(); NA where unknown), as
    nullable booleans, so a filter can tell "no" from "not known"."""
    for col in ("load1", "load_others"):
        if col not in df:
            df[col] = float("nan")
        df[col] = pd.to_numeric(df[col], errors="coerce")
    if launches and "launch" in df:
        metas = [launches[int(k)] if not pd.isna(k) and 0 <= int(k) < len(launches) else meta for k in df["launch"]]
    else:
        metas = [meta] * len(df)
    df["oversubscribed"] = pd.array([m.get("oversubscribed") for m in metas], dtype="boolean")
    df["under_load"] = pd.array([under_load({"load_others": None if pd.isna(v) else float(v)}, m)
                                 for v, m in zip(df["load_others"], metas)], dtype="boolean")


def noisy(df: pd.DataFrame) -> pd.Series:
    """True where a point was measured under load or oversubscribed (unknown counts as not)."""
    out = pd.Series(False, index=df.index)
    for col in ("under_load", "oversubscribed"):
        if col in df:
            out |= df[col].astype("boolean").fillna(False).astype(bool)
    return out
