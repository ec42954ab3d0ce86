"""Units: parsing durations and sizes given by people, formatting values for people."""
from __future__ import annotations

import math
import re

_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_SIZE = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
         "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


def parse_duration(text: str) -> float:
    """'10us' -> 1e-05 seconds. A bare number is seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns)?\s*", text)
    if not m:
        raise ValueError(f"'{text}' is not a duration: use a number with s, ms, us or ns (e.g. 10us)")
    return float(m.group(1)) * _TIME[m.group(2) or "s"]


def parse_size(text: str) -> int:
    """'64K' -> 65536 bytes (binary multiples)."""
    m = re.fullmatch(r"\s*([0-9]+)\s*([kKmMgG]?[iI]?[bB]?)\s*", text)
    if not m:
        raise ValueError(f"'{text}' is not a size: use a byte count with optional K, M or G (e.g. 64K)")
    return int(m.group(1)) * _SIZE[m.group(2).lower()]


def fmt_time(seconds: float | None, digits: int = 3) -> str:
    """Seconds in the unit that keeps the number readable; '-' for undefined."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    a = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if a >= scale:
            return f"{seconds / scale:.{digits}g} {unit}"
    return f"{seconds / 1e-9:.{digits}g} ns"


def fmt_size(nbytes: int | float) -> str:
    n = int(nbytes)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def fmt_rate(bytes_per_s: float | None) -> str:
    if bytes_per_s is None or math.isnan(bytes_per_s):
        return "-"
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if bytes_per_s >= scale:
            return f"{bytes_per_s / scale:.3g} {unit}"
    return f"{bytes_per_s:.3g} B/s"
