"""Units: parsing durations and sizes given by people, formatting values for people."""
from __future__ import annotations

import math
import re

# divisors, not multipliers: 9.5 / 1e6 rounds to the double nearest 9.5e-6, 9.5 * 1e-6 does not
_TIME_DIV = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9, "ps": 1e12}
# sizes are binary multiples everywhere in latscope (the C size grammar too): 1K = 1KB = 1KiB = 1024
_SIZE = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
         "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
_NUM = r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"


def parse_duration(text: str) -> float:
    """'10us' -> 1e-05 seconds. A unit is required, except for a bare 0."""
    m = re.fullmatch(_NUM + r"\s*([a-zµ]*)", text.strip())
    if not m:
        raise ValueError(f"time {text!r}: not a number with a unit (e.g. 10us, 1.5ms, 3ns, 2e-6s)")
    value, unit = float(m.group(1)), m.group(2)
    if unit == "":
        if value == 0.0:
            return 0.0
        raise ValueError(f"time {text!r}: give a unit (s, ms, us, ns, ps), e.g. {text}us")
    if unit not in _TIME_DIV:
        raise ValueError(f"time {text!r}: unknown unit {unit!r}; use one of s, ms, us, ns, ps")
    return value / _TIME_DIV[unit]


def parse_per_byte(text: str) -> float:
    """'0.5ns' or '0.5ns/B' -> seconds per byte."""
    t = text.strip()
    if t.endswith("/B") or t.endswith("/byte"):
        t = t.rsplit("/", 1)[0]
    return parse_duration(t)


def parse_size(text: str) -> float:
    """'64K' -> 65536 bytes (binary multiples); a bare number is bytes."""
    m = re.fullmatch(_NUM + r"\s*([A-Za-z]*)", text.strip())
    if not m or m.group(2).lower() not in _SIZE:
        raise ValueError(f"size {text!r}: not a byte count (e.g. 64, 64K, 1MiB)")
    v = float(m.group(1)) * _SIZE[m.group(2).lower()]
    if v < 0:
        raise ValueError(f"size {text!r}: must be >= 0 bytes")
    return v


def fmt_time(seconds: float | None, digits: int = 3) -> str:
    """Seconds in the unit that keeps the number readable (s, ms, us, ns, ps) with `digits`
    significant digits; '0 s' for zero, '-' for undefined. The one time formatter of the
    package (tables, reports, model outputs)."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    if seconds == 0:
        return "0 s"
    a = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if a >= scale:
            return f"{seconds / scale:.{digits}g} {unit}"
    return f"{seconds / 1e-12:.{digits}g} ps"


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
