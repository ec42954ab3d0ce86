"""Tail percentiles chosen by the user (`latscope bench ... --percentiles 50,90,99,99.9`),
computed from the raw samples and recorded in the results file (docs/results-schema.md,
"Percentiles"): the metadata record (every launch's) gets ``percentiles`` (the list asked for),
each point record ``percentiles_s`` ({"p50": s, "p99.9": s, ...}, linear interpolation between
order statistics, as the record's own p90_s and p99_s; null for a point without samples). The run
is made with --raw so the samples are there; they are dropped again afterwards unless --raw
was asked for too."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT = (50.0, 90.0, 99.0, 99.9)


def parse(text: str, flag: str = "--percentiles") -> list[float]:
    """'50,90,99,99.9' -> [50.0, 90.0, 99.0, 99.9]; ValueError naming the bad item."""
    out: list[float] = []
    for item in text.split(","):
        try:
            q = float(item)
        except ValueError:
            raise ValueError(f"{flag} '{text}': '{item}' is not a number (e.g. 50,90,99,99.9)") from None
        if not (0 <= q <= 100) or math.isnan(q):
            raise ValueError(f"{flag} '{text}': {item} is outside 0..100")
        out.append(q)
    if not out:
        raise ValueError(f"{flag} '{text}': no percentile given (e.g. 50,90,99,99.9)")
    return out


def key(q: float) -> str:
    """99.9 -> 'p99.9', 50.0 -> 'p50'."""
    return f"p{q:g}"


def of_samples(samples: list[float] | None, qs: list[float]) -> dict[str, float | None]:
    if not samples:
        return {key(q): None for q in qs}
    x = np.asarray(samples, dtype=float)
    return {key(q): float(np.percentile(x, q)) for q in qs}


def take_option(extra: list[str]) -> tuple[list[float] | None, list[str]]:
    """(the --percentiles list, or None; latscope-bench's arguments without it)."""
    out: list[str] = []
    qs: list[float] | None = None
    i = 0
    while i < len(extra):
        a = extra[i]
        if a == "--percentiles":
            if i + 1 >= len(extra):
                raise ValueError("--percentiles: give a list, e.g. --percentiles 50,90,99,99.9")
            qs = parse(extra[i + 1])
            i += 2
            continue
        if a.startswith("--percentiles="):
            qs = parse(a.split("=", 1)[1])
        else:
            out.append(a)
        i += 1
    return qs, out


def record(path: Path, qs: list[float], keep_raw: bool) -> None:
    """Rewrites the results file in place (a new file renamed over it): ``percentiles`` in every
    metadata record, ``percentiles_s`` in every point record; samples_s dropped unless keep_raw."""
    lines = path.read_text().splitlines()
    out = []
    for ln in lines:
        if not ln.strip():
            continue
        try:
            rec: dict[str, Any] = json.loads(ln)
        except json.JSONDecodeError:   # a killed run's partial last line: kept as it is
            out.append(ln)
            continue
        if rec.get("type") == "meta":
            rec["percentiles"] = qs
        elif rec.get("type") == "point":
            rec["percentiles_s"] = of_samples(rec.get("samples_s"), qs)
            if not keep_raw:
                rec.pop("samples_s", None)
        out.append(json.dumps(rec, allow_nan=False, separators=(",", ":")))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(out) + "\n")
    os.replace(tmp, path)
