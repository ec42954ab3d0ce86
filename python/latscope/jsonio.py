"""Strict JSON out of the CLI: every json.dump in latscope goes through here.

NaN and Infinity are not JSON (RFC 8259 §6: "Numeric values that cannot be represented ... such as
Infinity and NaN are not permitted"); Python's json module writes them by default and jq and most
parsers then reject the file. An undefined value is null (docs/architecture.md: "JSON is strict
everywhere"), so non-finite floats are turned into None first and the dump is made with
allow_nan=False, which raises instead of ever writing an invalid token.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import IO, Any


def sanitize(obj: Any) -> Any:
    """A copy of obj with non-finite floats as None and numpy scalars/arrays as Python values."""
    # numpy and pandas values exist only once their module is imported: looked up, not imported,
    # so writing JSON does not load them (the CLI starts without them: latscope/commands.py)
    np = sys.modules.get("numpy")
    if isinstance(obj, dict):
        return {(k if isinstance(k, str) else str(k)): sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitize(v) for v in obj]
    if np is not None and isinstance(obj, np.ndarray):
        return [sanitize(v) for v in obj.tolist()]
    if isinstance(obj, bool) or (np is not None and isinstance(obj, np.bool_)):
        return bool(obj)
    if isinstance(obj, int) or (np is not None and isinstance(obj, np.integer)):
        return int(obj)
    if isinstance(obj, float) or (np is not None and isinstance(obj, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if obj is None or isinstance(obj, str):
        return obj
    # pandas NA/NaT and the like: undefined
    pd = sys.modules.get("pandas")
    try:
        if pd is not None and pd.isna(obj):
            return None
    except (TypeError, ValueError):
        pass
    return obj
    # pandas NA/NaT and the like: undefined
    try:
        import pandas as pd
        if pd.isna(obj):
            return None
    except (TypeError, ValueError):
        pass
    return obj


def dumps(obj: Any, **kw: Any) -> str:
    kw.setdefault("default", str)
    return json.dumps(sanitize(obj), allow_nan=False, **kw)


def dump(obj: Any, f: IO[str], **kw: Any) -> None:
    kw.setdefault("default", str)
    json.dump(sanitize(obj), f, allow_nan=False, **kw)


def write(path: str | Path, obj: Any, **kw: Any) -> None:
    """Write obj to path as JSON followed by a newline."""
    Path(path).write_text(dumps(obj, **kw) + "\n")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """Parse as strict JSON: NaN, Infinity and -Infinity are errors (what jq does)."""
    return json.loads(text, parse_constant=_reject_constant)
