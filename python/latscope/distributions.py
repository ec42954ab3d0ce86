"""The parametric distributions a delay table is made from (docs/delay-table.md): one registry
row per distribution (name, parameters, builder, help). A builder returns a scipy frozen
distribution, imported when it is called: this module is read when the `latscope` parser is
built (`latscope tables make` takes its options from the rows), which stays without numpy and
scipy (latscope/commands.py). latscope.tables turns a row's distribution into a table."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


class TableError(ValueError):
    """A delay table (or its inputs) that does not follow docs/delay-table.md."""


def lognormal_from_moments(mean_s: float, sd_s: float, loc_s: float = 0.0) -> tuple[float, float]:
    """(shape sigma, scale e^mu) of a lognormal with this mean and sd (of the delay itself):
    sigma^2 = ln(1 + sd^2/(mean-loc)^2), mu = ln(mean-loc) - sigma^2/2."""
    m = mean_s - loc_s
    if m <= 0:
        raise TableError(f"lognormal: mean {mean_s:g} s must exceed loc {loc_s:g} s")
    s2 = math.log1p((sd_s / m) ** 2)
    return math.sqrt(s2), math.exp(math.log(m) - s2 / 2)


@dataclass(frozen=True)
class ParamSpec:
    name: str
    kind: str  # 'time' (seconds, given with a unit) or 'number'
    help: str
    default: float | None = None  # None: required (unless the row's builder says otherwise)


@dataclass(frozen=True)
class Generator:
    """One registry row per distribution: name, parameters, builder, help."""

    name: str
    params: tuple[ParamSpec, ...]
    build: Callable[[dict[str, float]], tuple[Any, dict[str, Any]]]  # -> (frozen dist, header params)
    help: str


def _need(p: dict[str, float | None], *names: str) -> None:
    missing = [n for n in names if p.get(n) is None]
    if missing:
        raise TableError("missing " + ", ".join(f"--{n}" for n in missing))


def _nonneg(p: dict[str, float | None], *names: str) -> None:
    for n in names:
        v = p.get(n)
        if v is not None and v < 0:
            raise TableError(f"--{n} {v:g}: must be >= 0")


@dataclass(frozen=True)
class _Point:
    """A point mass (scipy rejects scale=0): the constant table, and a zero-variance limit."""

    value: float

    def ppf(self, q: np.ndarray) -> np.ndarray:
        import numpy as np
        return np.full(np.shape(q), float(self.value))


def _b_constant(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    _need(p, "mean")
    _nonneg(p, "mean")
    return _Point(p["mean"]), {"mean_s": p["mean"]}


def _b_uniform(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from scipy import stats
    _need(p, "low", "high")
    _nonneg(p, "low", "high")
    if p["high"] < p["low"]:
        raise TableError(f"--high {p['high']:g} s: must be >= --low {p['low']:g} s")
    return stats.uniform(loc=p["low"], scale=p["high"] - p["low"]), {"low_s": p["low"], "high_s": p["high"]}


def _b_normal(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    import numpy as np
    from scipy import stats
    _need(p, "mean", "sd")
    _nonneg(p, "sd")
    if p["sd"] == 0:
        return _Point(p["mean"]), {"mean_s": p["mean"], "sd_s": 0.0}
    # Truncated (renormalised) at 0, not clipped: no probability mass piles up at 0 ns.
    a = (0.0 - p["mean"]) / p["sd"]
    return (stats.truncnorm(a, np.inf, loc=p["mean"], scale=p["sd"]),
            {"mean_s": p["mean"], "sd_s": p["sd"], "truncated_at_s": 0.0})


def _b_lognormal(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from scipy import stats
    loc = p.get("loc") or 0.0
    by_moments = p.get("mean") is not None or p.get("sd") is not None
    by_shape = p.get("shape") is not None or p.get("scale") is not None
    if by_moments == by_shape:
        raise TableError("lognormal: give either --mean and --sd, or --shape and --scale")
    if by_moments:
        _need(p, "mean", "sd")
        _nonneg(p, "sd")
        shape, scale = lognormal_from_moments(p["mean"], p["sd"], loc)
        header = {"mean_s": p["mean"], "sd_s": p["sd"]}
    else:
        _need(p, "shape", "scale")
        shape, scale = p["shape"], p["scale"]
        if shape < 0 or scale <= 0:
            raise TableError(f"lognormal: --shape {shape:g} must be >= 0 and --scale {scale:g} s > 0")
        header = {}
    header.update({"shape": shape, "loc_s": loc, "scale_s": scale})
    if shape == 0:
        return _Point(loc + scale), header
    return stats.lognorm(shape, loc=loc, scale=scale), header


def _b_exponential(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from scipy import stats
    _need(p, "mean")
    loc = p.get("loc") or 0.0
    _nonneg(p, "mean", "loc")
    if p["mean"] < loc:
        raise TableError(f"--mean {p['mean']:g} s: must be >= --loc {loc:g} s")
    return stats.expon(loc=loc, scale=p["mean"] - loc), {"mean_s": p["mean"], "loc_s": loc}


def _b_pareto(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from scipy import stats
    _need(p, "alpha", "scale")
    if p["alpha"] <= 0 or p["scale"] <= 0:
        raise TableError(f"pareto: --alpha {p['alpha']:g} and --scale {p['scale']:g} s must be > 0")
    return stats.pareto(p["alpha"], scale=p["scale"]), {"alpha": p["alpha"], "scale_s": p["scale"]}


_T, _N = "time", "number"
GENERATORS: dict[str, Generator] = {g.name: g for g in (
    Generator("constant", (ParamSpec("mean", _T, "the delay"),), _b_constant,
              "every entry the same delay"),
    Generator("uniform", (ParamSpec("low", _T, "smallest delay"), ParamSpec("high", _T, "largest delay")),
              _b_uniform, "uniform on [low, high]"),
    Generator("normal", (ParamSpec("mean", _T, "mean before truncation"), ParamSpec("sd", _T, "sd before truncation")),
              _b_normal, "normal truncated at 0 (renormalised; table mean exceeds --mean when mean/sd is small)"),
    Generator("lognormal", (ParamSpec("mean", _T, "mean of the delay"), ParamSpec("sd", _T, "sd of the delay"),
                            ParamSpec("shape", _N, "sigma (instead of --mean/--sd)"),
                            ParamSpec("scale", _T, "e^mu (instead of --mean/--sd)"),
                            ParamSpec("loc", _T, "shift", 0.0)),
              _b_lognormal, "lognormal given by the mean and sd of the delay, or by scipy shape/scale"),
    Generator("exponential", (ParamSpec("mean", _T, "mean of the delay"), ParamSpec("loc", _T, "minimum", 0.0)),
              _b_exponential, "loc + exponential"),
    Generator("pareto", (ParamSpec("alpha", _N, "tail index"), ParamSpec("scale", _T, "minimum delay x_m")),
              _b_pareto, "Pareto type I (heavy tail; the table's largest stratum quantile must stay under 1 s)"),
)}
assert len(GENERATORS) == 6  # static size check of the registry
