"""Text shown to people from results metadata and statistics, in one place so the summary, the
report, the comparison and the exports say the same: the MPI version string normalised, whether a
run was a quick (smoke-test) run, and statistics that are undefined or invalid said as such
("n/a", a flagged negative median) instead of ``nan``."""
from __future__ import annotations

import math
import re
from typing import Any

from latscope.units import fmt_time

QUICK_BANNER = ("QUICK RUN (LATSCOPE_QUICK=1 or --quick): at most 30 repetitions per point, a smoke test, "
                "not a measurement")


def mpi_version(text: Any) -> str:
    """'MPICH Version:      5.0.2' -> 'MPICH 5.0.2'; 'Open MPI v5.0.3, package: ...' -> 'Open MPI
    v5.0.3, package: ...' with its runs of white space folded; 'n/a' where the file does not say."""
    if text is None or not str(text).strip():
        return "n/a"
    s = re.sub(r"\s+", " ", str(text)).strip()
    s = re.sub(r"^(MPICH|MVAPICH2?|Intel\(R\) MPI Library)\s+Version:\s*", r"\1 ", s)
    return s


def quick_run(meta: dict[str, Any] | None) -> bool:
    """Whether the run was capped to a smoke test (rep_policy.quick, docs/results-schema.md)."""
    rp = (meta or {}).get("rep_policy") or {}
    return bool(rp.get("quick"))


def any_quick(metas: list[dict[str, Any]]) -> bool:
    return any(quick_run(m) for m in metas)


def finite(v: Any) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def fmt_median(seconds: Any) -> str:
    """A median for a table: auto-scaled; 'n/a' when undefined; a negative one flagged (a median
    below zero is a timer or correction artefact, never a latency: docs/measurement.md)."""
    if not finite(seconds):
        return "n/a"
    s = float(seconds)
    if s < 0:
        return f"{fmt_time(s)} (invalid: negative)"
    return fmt_time(s)


def fmt_value(seconds: Any) -> str:
    """Any time for a table: auto-scaled, 'n/a' when undefined."""
    return fmt_time(float(seconds)) if finite(seconds) else "n/a"


def fmt_rel_err(rel: Any) -> str:
    """'±2.5%'; 'n/a' when undefined; above 100 % it is written as such (the CI is wider than the
    value: the estimate says nothing)."""
    if not finite(rel):
        return "n/a"
    r = float(rel)
    if r > 1:
        return ">±100% (no estimate)"
    return f"±{100 * r:.1f}%"
