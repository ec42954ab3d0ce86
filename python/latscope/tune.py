"""Decision tables for one collective: size -> algorithm (seed 001 §4, MPIBlib's Opt_Scatter),
the latscope.tune/1 format (docs/tune-format.md) and the decision rule, as the C library applies
them (lts_tune_load, lts_scatter_tuned). `latscope tune` (tune_cli) measures and prints; the
report part (parts/tune.py) decides again from a run's records.

The rule (``decide``): per measured size the eligible candidate with the smallest median wins
(ties: the earlier candidate; eligibility: latscope.selection — a negative, undefined or
non-converged median is set aside and the table says why; no eligible candidate at a size is an
error), equal neighbours merge, and the boundary between measured sizes a < c is the smallest
integer b with b*b >= max(a, 1) * c (the geometric midpoint, rounded up)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from latscope import jsonio
from latscope.registries import TUNE
from latscope.selection import no_eligible_message, screen, target_of

SCHEMA: str = TUNE["schema"]   # the C constants (latscope.registries, checked equal to latscope-bench's)

class TuneError(ValueError):
    """A decision table that does not follow latscope.tune/1, or points a table cannot come from."""


@dataclass
class Range:
    """Sizes in [lo_bytes, hi_bytes) use `alg`; hi_bytes None: no upper bound."""

    lo_bytes: int
    hi_bytes: int | None
    alg: str
    points: list[tuple[int, dict[str, float | None]]] = field(default_factory=list)  # (size_bytes, median_s per candidate)
    # size_bytes -> {candidate: why it was not ranked there} (latscope.selection); only sizes with any
    set_aside: dict[int, dict[str, str]] = field(default_factory=dict)


@dataclass
class DecisionTable:
    op: str
    ranks: int
    candidates: list[str]
    ranges: list[Range]
    timer: str | None = None
    timing_method: str | None = None
    mpi_library: str | None = None
    utc_time: str | None = None
    version: str | None = None

    def choose(self, size_bytes: int) -> str:
        """The algorithm for a message of size_bytes (the op's size convention)."""
        for r in reversed(self.ranges):
            if r.lo_bytes <= size_bytes:
                return r.alg
        return self.ranges[0].alg

    def to_frame(self) -> pd.DataFrame:
        """One row per measured size: its range, the chosen algorithm, every candidate's median."""
        rows = []
        for r in self.ranges:
            for size, med in r.points:
                row: dict[str, Any] = {"lo_bytes": r.lo_bytes, "hi_bytes": r.hi_bytes, "alg": r.alg, "size_bytes": size}
                row.update({f"{c}_median_s": med.get(c) for c in self.candidates})
                rows.append(row)
        return pd.DataFrame(rows)

    def to_doc(self) -> dict[str, Any]:
        """The latscope.tune/1 document (lts_tune_load reads it; lts_tune_save writes the same
        fields, formatted its own way)."""
        return {
            "schema": SCHEMA, "op": self.op, "ranks": self.ranks, "statistic": TUNE["statistic"],
            "boundary_rule": TUNE["boundary_rule"], "timer": self.timer, "timing_method": self.timing_method,
            "mpi_library": self.mpi_library, "utc_time": self.utc_time, "latscope_version": self.version,
            "candidates": list(self.candidates),
            "ranges": [{"lo_bytes": r.lo_bytes, "hi_bytes": r.hi_bytes, "alg": r.alg,
                        "points": [_point_doc(s, m, r.set_aside.get(s), self.candidates) for s, m in r.points]}
                       for r in self.ranges],
        }

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(jsonio.dumps(self.to_doc(), indent=2) + "\n")
        return p

    def to_text(self) -> str:
        head = (f"decision table: {self.op} on {self.ranks} ranks ({self.timing_method} timing, {self.timer} timer; "
                f"medians in us, * = chosen, x = set aside)")
        lines = [head, f"  {'size range (B)':24s} {'algorithm':12s} {'size (B)':>10s}"
                 + "".join(f" {c[:11]:>11s}" for c in self.candidates)]
        for r in self.ranges:
            rng = f"[{r.lo_bytes}, {'inf' if r.hi_bytes is None else r.hi_bytes})"
            pts: list[tuple[int | None, dict[str, float | None]]] = list(r.points) or [(None, {})]
            for k, (size, med) in enumerate(pts):
                line = f"  {rng if k == 0 else '':24s} {r.alg if k == 0 else '':12s}"
                if size is not None:
                    line += f" {size:10d}"
                    aside = r.set_aside.get(size, {})
                    for c in self.candidates:
                        v = med.get(c)
                        line += " " + ("-".rjust(10) if v is None else f"{v * 1e6:10.3f}") + (
                            "*" if c == r.alg else "x" if c in aside else " ")
                lines.append(line.rstrip())
        lines += [f"  set aside at {s} B: {c}: {why}" for s, c, why in self.set_aside()]
        return "\n".join(lines)

    def set_aside(self) -> list[tuple[int, str, str]]:
        """(size_bytes, candidate, reason) for every candidate not ranked at a measured size."""
        return [(s, c, w) for r in self.ranges for s, _ in r.points for c, w in r.set_aside.get(s, {}).items()]


def _point_doc(size: int, med: dict[str, float | None], aside: dict[str, str] | None,
               cands: list[str]) -> dict[str, Any]:
    d: dict[str, Any] = {"size_bytes": size, "median_s": {c: _finite(med.get(c)) for c in cands}}
    if aside:   # written only where something was set aside: other tables are as before
        d["set_aside"] = {c: aside[c] for c in cands if c in aside}
    return d


def _finite(v: float | None) -> float | None:
    """JSON has no NaN: an undefined median is null."""
    return None if v is None or not math.isfinite(v) else float(v)


def _need(d: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in d:
        raise TuneError(f"{where}: missing field {key!r}")
    v = d[key]
    if not isinstance(v, kind) or isinstance(v, bool):
        raise TuneError(f"{where}: {key!r} has the wrong type ({type(v).__name__})")
    return v


def parse_table(doc: dict[str, Any], where: str = "table") -> DecisionTable:
    """A table from its JSON document. The C loader (lts_tune_load) is the strict one; this
    checks the schema and the structure a reader relies on."""
    if not isinstance(doc, dict):
        raise TuneError(f"{where}: not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise TuneError(f"{where}: schema {doc.get('schema')!r}; this reader knows {SCHEMA!r}")
    cands = _need(doc, "candidates", list, where)
    ranges = []
    prev_hi: int | None = 0
    for i, r in enumerate(_need(doc, "ranges", list, where)):
        w = f"{where}: ranges[{i}]"
        lo = _need(r, "lo_bytes", int, w)
        hi = r.get("hi_bytes")
        if lo != prev_hi:
            raise TuneError(f"{w}: lo_bytes {lo} must equal the previous range's hi_bytes {prev_hi} (0 for the first)")
        if hi is not None and (not isinstance(hi, int) or hi <= lo):
            raise TuneError(f"{w}: hi_bytes {hi!r} must be an integer above lo_bytes {lo}, or null for the last")
        alg = _need(r, "alg", str, w)
        if alg not in cands:
            raise TuneError(f"{w}: alg {alg!r} is not one of the candidates {cands}")
        raw = _need(r, "points", list, w)
        pts = [(int(p["size_bytes"]), {c: p["median_s"].get(c) for c in cands}) for p in raw]
        aside = {int(p["size_bytes"]): dict(p["set_aside"]) for p in raw if p.get("set_aside")}
        ranges.append(Range(lo, hi, alg, pts, aside))
        prev_hi = hi
    if not ranges or ranges[-1].hi_bytes is not None:
        raise TuneError(f"{where}: the ranges must end with an open range (hi_bytes null)")
    return DecisionTable(op=_need(doc, "op", str, where), ranks=_need(doc, "ranks", int, where), candidates=list(cands),
                         ranges=ranges, timer=doc.get("timer"), timing_method=doc.get("timing_method"),
                         mpi_library=doc.get("mpi_library"), utc_time=doc.get("utc_time"),
                         version=doc.get("latscope_version"))


def load_table(path: str | Path) -> DecisionTable:
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except OSError as e:
        raise TuneError(f"{p}: cannot be read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise TuneError(f"{p}: not JSON ({e.msg}, line {e.lineno})") from None
    return parse_table(doc, str(p))


def boundary(a: int, c: int) -> int:
    """Between measured sizes a < c: the smallest integer b with b*b >= max(a, 1) * c."""
    p = max(a, 1) * c
    b = math.isqrt(p - 1) + 1 if p > 0 else 0
    return min(max(b, a + 1), c)


def decide(points: pd.DataFrame, op: str, ranks: int, timer: str | None = None,
           timing_method: str | None = None, mpi_library: str | None = None, utc_time: str | None = None,
           version: str | None = None, rel_err_target: float | None = None) -> DecisionTable:
    """The decision table the C library builds from the same records: `points` are results
    records of one tune run (columns alg, size_bytes, median_s, and where present reps_valid,
    ci_lo_s, ci_hi_s, rel_err, stop_reason, negative_samples: latscope.selection's rule with
    the run's ``rel_err_target``); candidates in order of first appearance (the order they
    were measured in). No eligible candidate at a size: TuneError naming the size and why."""
    if points.empty:
        raise TuneError("no points to decide from")
    cands = list(dict.fromkeys(points["alg"]))
    sizes = sorted(int(s) for s in points["size_bytes"].unique())
    med: dict[tuple[str, int], float | None] = {}
    recs: dict[int, dict[str, Any]] = {s: {} for s in sizes}
    for _, r in points.iterrows():
        v = r["median_s"]
        med[(r["alg"], int(r["size_bytes"]))] = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
        recs[int(r["size_bytes"])][r["alg"]] = r
    best: list[str] = []
    aside: dict[int, dict[str, str]] = {}
    for s in sizes:
        sc = screen(cands, recs[s], rel_err_target)
        if sc.winner is None:
            raise TuneError(no_eligible_message(f"{s} B", sc))
        if sc.set_aside:
            aside[s] = sc.set_aside
        best.append(sc.winner)
    ranges: list[Range] = []
    for i, s in enumerate(sizes):
        pt = (s, {c: med.get((c, s)) for c in cands})
        if ranges and ranges[-1].alg == best[i]:
            ranges[-1].points.append(pt)
        else:
            lo = 0 if not ranges else boundary(sizes[i - 1], s)
            if ranges:
                ranges[-1].hi_bytes = lo
            ranges.append(Range(lo, None, best[i], [pt]))
        if s in aside:
            ranges[-1].set_aside[s] = aside[s]
    return DecisionTable(op, ranks, cands, ranges, timer, timing_method, mpi_library, utc_time, version)


def decide_results(res: Any) -> DecisionTable:
    """decide() on a loaded latscope-bench tune results file (latscope.results.Results)."""
    pts = res.points
    if pts.empty or "alg" not in pts:
        raise TuneError(f"{res.path}: no collective points (latscope-bench tune or coll results)")
    m = res.meta
    return decide(pts, str(m.get("op")), int(m.get("ranks")), (m.get("timer") or {}).get("name"), m.get("timing_method"),
                  m.get("mpi_library"), m.get("utc_time"), m.get("version"), target_of(m))
