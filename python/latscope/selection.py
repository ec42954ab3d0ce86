"""Which measured points may win a selection: the one eligibility rule of every argmin
over measured medians — ``latscope tune`` / ``decide`` (and its C twin, lts_tune_decide_obs in
src/algos/tune_table.c), the "best" barrier of ``barrier compare`` and bench/barrier.py, and the
report's "fastest" column. docs/tune-format.md "Which candidates are ranked" states it.

A point (one candidate at one size) is **valid** when

1. its median is a finite number (not null / NaN),
2. it kept at least one repetition (``reps_valid`` >= 1),
3. its median is > 0, and where the record has a confidence interval its lower end is > 0 too:
   a median whose interval reaches zero cannot be told from zero. Root timing subtracts a
   measured confirmation time and never clamps (results-schema.md), so a collective that does
   almost nothing (a 0 B scatter) gets medians scattered around zero, some negative; ranking by
   them picks noise.

A valid point is **converged** when it stopped on its precision target (``stop_reason``
``converged``), ran the fixed count asked for (``fixed``: the count is the precision asked for),
or stopped on ``max_reps`` / ``budget`` with an achieved ``rel_err`` no larger than the run's
``rep_policy.rel_err_target``. A valid point that did not converge is still **ranked** when its
confidence interval is disjoint from the interval of every other valid point at that size: its
place in the order is then known at the interval's confidence even though the interval is wider
than asked for (on a busy machine most points may hit the budget; those clearly apart still
decide). Otherwise it is set aside.

The winner is the ranked point with the smallest median (ties: the earlier candidate). Points
set aside never win, and the caller says which and why. No ranked point at a size is an error
naming the size and every candidate's reason (:func:`no_eligible_message`). A field a record lacks
(a hand-made frame, an older file) is not held against it."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

CONVERGED_STOPS = ("converged", "fixed")


@dataclass
class Screened:
    """The outcome at one size: the winner (None: none eligible), and why each other candidate
    was set aside (candidate -> reason; ranked candidates are absent)."""

    winner: str | None
    set_aside: dict[str, str] = field(default_factory=dict)


def _num(v: Any) -> float | None:
    """A finite float, else None (null, NaN, missing, not a number)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _us(v: float) -> str:
    return f"{v * 1e6:.3f} us"


def invalid_reason(rec: Mapping[str, Any], value: float | None = None) -> str | None:
    """Why the point cannot be ranked at all (rules 1-3), or None when it is valid. ``value``:
    the number compared (default the record's ``median_s``)."""
    med = _num(rec.get("median_s")) if value is None else _num(value)
    if med is None:
        return "no median (not measured, or undefined)"
    n = _num(rec.get("reps_valid", rec.get("n")))
    if n is not None and n < 1:
        return f"no valid repetition (reps_valid 0 of {rec.get('reps_total')})"
    neg = _num(rec.get("negative_samples"))
    negs = f"; {int(neg)} of {int(n) if n is not None else '?'} samples negative after the root correction" \
        if neg else ""
    if med <= 0:
        return f"median {_us(med)} is not positive{negs}"
    lo = _num(rec.get("ci_lo_s"))
    if lo is not None and lo <= 0:
        return f"median {_us(med)} cannot be told from zero: its CI reaches {_us(lo)}{negs}"
    return None


def converged(rec: Mapping[str, Any], target: float | None) -> bool:
    """The convergence rule of the module docstring."""
    stop = rec.get("stop_reason")
    if stop is None or (isinstance(stop, float) and math.isnan(stop)) or stop in CONVERGED_STOPS:
        return True
    re, t = _num(rec.get("rel_err")), _num(target)
    return re is not None and t is not None and re <= t


def _interval(rec: Mapping[str, Any], med: float) -> tuple[float, float] | None:
    lo, hi = _num(rec.get("ci_lo_s")), _num(rec.get("ci_hi_s"))
    return (lo, hi) if lo is not None and hi is not None else None


def screen(cands: Sequence[str], recs: Mapping[str, Mapping[str, Any] | None], target: float | None,
           values: Mapping[str, float | None] | None = None) -> Screened:
    """Apply the rule at one size. ``cands``: candidate order (ties go to the earlier);
    ``recs``: candidate -> its record (None: not measured); ``values``: what is compared when
    not the record's median (barrier compare: the mean over ranks of per-rank medians)."""
    out = Screened(None)
    valid: dict[str, float] = {}
    for c in cands:
        r = recs.get(c)
        v = None if values is None else values.get(c)
        why = "not measured" if r is None else invalid_reason(r, v)
        if why:
            out.set_aside[c] = why
        else:
            num = _num(v if values is not None else r.get("median_s"))  # type: ignore[union-attr]
            assert num is not None   # invalid_reason() set aside every undefined value
            valid[c] = num
    ranked = []
    for c, med in valid.items():
        r = recs[c]
        assert r is not None
        if converged(r, target):
            ranked.append(c)
            continue
        iv = _interval(r, med)
        clash = None
        if iv is None:
            clash = "it has no CI"
        else:
            for d, dm in valid.items():
                if d == c:
                    continue
                jv = _interval(recs[d], dm) or (dm, dm)  # type: ignore[arg-type]
                if not (iv[1] < jv[0] or iv[0] > jv[1]):
                    clash = f"its CI [{_us(iv[0])}, {_us(iv[1])}] overlaps {d}'s [{_us(jv[0])}, {_us(jv[1])}]"
                    break
        if clash is None:
            ranked.append(c)
        else:
            re = _num(r.get("rel_err"))
            t = _num(target)   # formatted as C formats it (%.3g): the two write the same reasons
            out.set_aside[c] = (f"not converged (stop {r.get('stop_reason')}, rel_err "
                                f"{'-' if re is None else f'{re:.3g}'} > target {'-' if t is None else f'{t:.3g}'})"
                                f" and {clash}")
    for c in cands:   # smallest value; ties: the earlier candidate
        if c in ranked and (out.winner is None or valid[c] < valid[out.winner]):
            out.winner = c
    return out


def no_eligible_message(size: Any, s: Screened, what: str = "size") -> str:
    """The error text when nothing at ``size`` may be ranked."""
    return (f"{what} {size}: no eligible candidate (docs/tune-format.md, 'Which candidates are ranked'): "
            + "; ".join(f"{c}: {w}" for c, w in s.set_aside.items()))


def target_of(meta: Mapping[str, Any]) -> float | None:
    """The run's rel_err target (metadata rep_policy.rel_err_target)."""
    return _num((meta.get("rep_policy") or {}).get("rel_err_target"))
