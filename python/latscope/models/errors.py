"""The one exception type of :mod:`latscope.models`."""

from __future__ import annotations

import math
import numbers

__all__ = ["ModelError", "require_finite", "require_nonneg", "require_positive", "require_int_at_least"]


class ModelError(ValueError):
    """Impossible or out-of-domain model input.

    The message always names the offending value and the constraint it breaks, e.g.
    ``"o_r_s = -1e-06: must be >= 0 (a receive overhead cannot be negative)"``.  Model
    functions raise this instead of returning NaN, infinity or a silently clamped number.
    """


def require_finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{name} = {value!r}: must be a number") from None
    if not math.isfinite(v):
        raise ModelError(f"{name} = {v!r}: must be a finite number")
    return v


def require_nonneg(name: str, value: float, why: str = "") -> float:
    v = require_finite(name, value)
    if v < 0.0:
        raise ModelError(f"{name} = {v!r}: must be >= 0" + (f" ({why})" if why else ""))
    return v


def require_positive(name: str, value: float, why: str = "") -> float:
    v = require_finite(name, value)
    if v <= 0.0:
        raise ModelError(f"{name} = {v!r}: must be > 0" + (f" ({why})" if why else ""))
    return v


def require_int_at_least(name: str, value: int, minimum: int, why: str = "") -> int:
    v: object = value
    if isinstance(v, bool) or not (isinstance(v, numbers.Integral) or (isinstance(v, float) and v.is_integer())):
        raise ModelError(f"{name} = {value!r}: must be an integer >= {minimum}")
    iv = int(value)
    if iv < minimum:
        raise ModelError(f"{name} = {iv}: must be >= {minimum}" + (f" ({why})" if why else ""))
    return iv
