"""Delay tables (docs/delay-table.md): 4096 delays in nanoseconds that the injector and the simulator
index with the low 12 bits of an LCG (seed 004 §3.1), their generators, the §5.3 fitting set, and
export to netem's distribution-table format."""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats
from latscope import jsonio

FORMAT_VERSION = 1
MAGIC = "# latscope-delay-table"
ROWS = 512
COLS = 8
TABLE_SIZE = ROWS * COLS  # 4096: indexed by the low 12 bits of the injector's LCG
MAX_DELAY_NS = 1_000_000_000  # 1 s (as the injector): anything larger is a unit mistake, not a network delay
INT64_MAX = 2**63 - 1
NETEM_DIST_SCALE = 8192  # iproute2 maketable.c TABLEFACTOR / kernel NETEM_DIST_SCALE
NETEM_MIN, NETEM_MAX = -32768, 32767  # the kernel stores the table as s16

# Stratified quantiles: entry i of the sorted table is the (i + 0.5)/4096 quantile, so the table's
# empirical distribution is the target's, discretised into 4096 equal-probability strata.
QUANTILES = (np.arange(TABLE_SIZE) + 0.5) / TABLE_SIZE

_DIGITS = re.compile(r"[0-9]+")


class TableError(ValueError):
    """A delay table (or its inputs) that does not follow docs/delay-table.md."""


def _version() -> str:
    from latscope import __version__
    return __version__


@dataclass
class DelayTable:
    """4096 delays (ns) in injection order, plus what they were drawn from."""

    delays_ns: np.ndarray
    distribution: str = "unknown"
    params: dict[str, Any] = field(default_factory=dict)
    generator: str | None = None  # '# generator:' header: 'latscope <version> seed=<n>'
    path: Path | None = None

    def __post_init__(self) -> None:
        a = np.asarray(self.delays_ns)
        if a.shape != (TABLE_SIZE,):
            raise TableError(f"a delay table has {TABLE_SIZE} entries, not {a.size}")
        if a.dtype.kind not in "iu":
            raise TableError(f"delays must be integers (ns), not {a.dtype}")
        self.delays_ns = a.astype(np.int64)
        if (self.delays_ns < 0).any():
            raise TableError("delays must be >= 0 ns")
        if (self.delays_ns > MAX_DELAY_NS).any():
            raise TableError(f"delays must be <= {MAX_DELAY_NS} ns (1 s)")

    # The table is the whole population the injector draws from: population (ddof=0) moments.
    def mean_s(self) -> float:
        return float(self.delays_ns.mean()) * 1e-9

    def sd_s(self) -> float:
        return float(self.delays_ns.std(ddof=0)) * 1e-9

    def percentiles(self, qs: Sequence[float] = (50, 90, 99, 100)) -> dict[str, float]:
        """{'p50_s': .., 'p90_s': .., 'p99_s': .., 'max_s': ..} (linear interpolation)."""
        vals = np.percentile(self.delays_ns, list(qs))
        return {("max_s" if q == 100 else "min_s" if q == 0 else f"p{q:g}_s"): float(v) * 1e-9
                for q, v in zip(qs, vals)}

    def summary(self) -> dict[str, float]:
        return {"mean_s": self.mean_s(), "sd_s": self.sd_s(), **self.percentiles()}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"index": np.arange(TABLE_SIZE), "delay_ns": self.delays_ns,
                             "delay_s": self.delays_ns * 1e-9})


# ---------------------------------------------------------------- reading and writing

def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))  # shortest text that reads back to the same double
    s = str(v)
    if not s or any(c.isspace() for c in s) or "=" in s:
        raise TableError(f"param value {s!r}: must be non-empty, without spaces or '='")
    return s


def _parse_value(s: str) -> Any:
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


def format_table(table: DelayTable) -> str:
    """The file's text, exactly as write_table writes it."""
    lines = [f"{MAGIC} {FORMAT_VERSION}", f"# distribution: {table.distribution}"]
    params = " ".join(f"{k}={_fmt_value(v)}" for k, v in table.params.items())
    lines.append(f"# params: {params}".rstrip())
    if table.generator:
        lines.append(f"# generator: {table.generator}")
    rows = table.delays_ns.reshape(ROWS, COLS)
    lines.extend(" ".join(str(int(x)) for x in row) for row in rows)
    return "\n".join(lines) + "\n"


def write_table(table: DelayTable, path: str | Path) -> Path:
    p = Path(path)
    p.write_text(format_table(table), encoding="ascii", newline="\n")
    return p


def parse_table(text: str, name: str = "<table>") -> DelayTable:
    """Strict parser; every error names the line number and what is wrong (docs/delay-table.md)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start an empty one
    if not lines:
        raise TableError(f"{name}:1: empty file; the first line must be '{MAGIC} {FORMAT_VERSION}'")
    meta: dict[str, Any] = {"distribution": "unknown", "params": {}, "generator": None}
    data: list[int] = []
    nrows = 0
    for lineno, raw in enumerate(lines, 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        where = f"{name}:{lineno}"
        if lineno == 1:
            if not line.startswith(MAGIC):
                raise TableError(f"{where}: missing version header: the first line must be "
                                 f"'{MAGIC} {FORMAT_VERSION}', found {line[:60]!r}")
            ver = line[len(MAGIC):].strip()
            if ver != str(FORMAT_VERSION):
                raise TableError(f"{where}: format version {ver!r}: this reader supports {FORMAT_VERSION}")
            continue
        if line.startswith("#"):
            if nrows:
                raise TableError(f"{where}: header line after the first data line; '#' lines come first")
            _parse_header(line, where, meta)
            continue
        fields = line.split()
        if not fields:
            raise TableError(f"{where}: blank line; expected {COLS} integers (ns)")
        nrows += 1
        if nrows > ROWS:
            raise TableError(f"{where}: too many lines: a table has exactly {ROWS} data lines")
        if len(fields) != COLS:
            raise TableError(f"{where}: {len(fields)} entries; each data line has exactly {COLS}")
        for col, tok in enumerate(fields, 1):
            data.append(_parse_entry(tok, f"{where}: entry {col}"))
    if nrows < ROWS:
        raise TableError(f"{name}:{len(lines)}: too few lines: {nrows} data lines, a table has exactly {ROWS}")
    return DelayTable(np.array(data, dtype=np.int64), meta["distribution"], meta["params"], meta["generator"])


def _parse_header(line: str, where: str, meta: dict[str, Any]) -> None:
    body = line[1:].strip()
    key, sep, value = body.partition(":")
    key, value = key.strip(), value.strip()
    if not sep or key not in ("distribution", "params", "generator"):
        return  # free comment: allowed, ignored
    if key == "distribution":
        if not value:
            raise TableError(f"{where}: '# distribution:' without a name")
        meta["distribution"] = value
    elif key == "generator":
        meta["generator"] = value or None
    else:
        params: dict[str, Any] = {}
        for tok in value.split():
            k, eq, v = tok.partition("=")
            if not eq or not k or not v:
                raise TableError(f"{where}: params token {tok!r}: expected key=value")
            params[k] = _parse_value(v)
        meta["params"] = params


def _parse_entry(tok: str, where: str) -> int:
    if not _DIGITS.fullmatch(tok):
        what = "negative" if tok.startswith("-") and _DIGITS.fullmatch(tok[1:]) else "not an integer"
        raise TableError(f"{where} {tok!r}: {what}; entries are non-negative decimal integers (ns)")
    v = int(tok)
    if v > INT64_MAX:
        raise TableError(f"{where} {tok!r}: overflow: larger than 2^63-1")
    if v > MAX_DELAY_NS:
        raise TableError(f"{where} {tok!r}: too large: delays are at most {MAX_DELAY_NS} ns (1 s)")
    return v


def read_table(path: str | Path) -> DelayTable:
    p = Path(path)
    try:
        text = p.read_bytes().decode("ascii")
    except UnicodeDecodeError as e:
        raise TableError(f"{p}: not ASCII text (byte {e.start})") from None
    t = parse_table(text, str(p))
    t.path = p
    return t


# ---------------------------------------------------------------- generators

def quantize(values_s: np.ndarray, what: str) -> np.ndarray:
    """Seconds -> integer ns. Below 0 is clipped to 0 (no negative delay); above the cap is an error."""
    v = np.asarray(values_s, dtype=float)
    if not np.isfinite(v).all():
        raise TableError(f"{what}: the distribution has infinite quantiles; a table needs finite delays")
    ns = np.rint(v * 1e9)
    if ns.max() > MAX_DELAY_NS:
        raise TableError(f"{what}: its {100 * QUANTILES[-1]:.3f}% quantile is {v.max():.6g} s, "
                         f"above the {MAX_DELAY_NS * 1e-9:g} s cap")
    return np.clip(ns, 0, None).astype(np.int64)


def _permute(sorted_ns: np.ndarray, seed: int) -> np.ndarray:
    # The injector draws index = lcg() & 4095: a seeded random order keeps nearby indices from
    # carrying nearby quantiles. Same seed -> same order for every table (common random numbers).
    return np.random.default_rng(seed).permutation(sorted_ns)


def from_frozen(dist: Any, name: str, params: dict[str, Any], seed: int) -> DelayTable:
    """Inverse CDF of a scipy frozen distribution (seconds) at the stratified quantiles."""
    ns = quantize(dist.ppf(QUANTILES), f"{name} {_params_text(params)}")
    return DelayTable(_permute(ns, seed), name, dict(params), f"latscope {_version()} seed={seed}")


def _params_text(params: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


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
        if p.get(n) is not None and p[n] < 0:
            raise TableError(f"--{n} {p[n]:g}: must be >= 0")


@dataclass(frozen=True)
class _Point:
    """A point mass (scipy rejects scale=0): the constant table, and a zero-variance limit."""

    value: float

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return np.full(np.shape(q), float(self.value))


def _b_constant(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    _need(p, "mean")
    _nonneg(p, "mean")
    return _Point(p["mean"]), {"mean_s": p["mean"]}


def _b_uniform(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    _need(p, "low", "high")
    _nonneg(p, "low", "high")
    if p["high"] < p["low"]:
        raise TableError(f"--high {p['high']:g} s: must be >= --low {p['low']:g} s")
    return stats.uniform(loc=p["low"], scale=p["high"] - p["low"]), {"low_s": p["low"], "high_s": p["high"]}


def _b_normal(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    _need(p, "mean", "sd")
    _nonneg(p, "sd")
    if p["sd"] == 0:
        return _Point(p["mean"]), {"mean_s": p["mean"], "sd_s": 0.0}
    # Truncated (renormalised) at 0, not clipped: no probability mass piles up at 0 ns.
    a = (0.0 - p["mean"]) / p["sd"]
    return (stats.truncnorm(a, np.inf, loc=p["mean"], scale=p["sd"]),
            {"mean_s": p["mean"], "sd_s": p["sd"], "truncated_at_s": 0.0})


def _b_lognormal(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
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
    _need(p, "mean")
    loc = p.get("loc") or 0.0
    _nonneg(p, "mean", "loc")
    if p["mean"] < loc:
        raise TableError(f"--mean {p['mean']:g} s: must be >= --loc {loc:g} s")
    return stats.expon(loc=loc, scale=p["mean"] - loc), {"mean_s": p["mean"], "loc_s": loc}


def _b_pareto(p: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
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


def make(name: str, params: dict[str, float | None], seed: int = 1) -> DelayTable:
    """A table from a registered parametric distribution; params in seconds (times) or plain numbers."""
    if name not in GENERATORS:
        raise TableError(f"distribution {name!r}: use one of {', '.join(sorted(GENERATORS))}, or empirical")
    dist, header = GENERATORS[name].build(dict(params))
    return from_frozen(dist, name, header, seed)


# ---------------------------------------------------------------- samples and the empirical table

def load_samples(path: str | Path, point: int | None = None) -> np.ndarray:
    """Latency samples in seconds: a text file (one per line, '#' comments and blank lines allowed)
    or a latscope results JSONL written with --raw (samples_s of one point, or of all points)."""
    p = Path(path)
    text = p.read_text()
    if text.lstrip().startswith("{"):
        from latscope.results import load
        res = load(p)
        if not res.raw:
            raise TableError(f"{p}: no raw samples (samples_s); rerun the benchmark with --raw")
        if point is None:
            vals = [x for i in sorted(res.raw) for x in res.raw[i]]
        elif point not in res.raw:
            raise TableError(f"--point {point}: {p} has raw samples for points {sorted(res.raw)}")
        else:
            vals = list(res.raw[point])
        arr = np.asarray([np.nan if v is None else v for v in vals], dtype=float)
        where = str(p)
    else:
        out = []
        for lineno, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            try:
                v = float(s)
            except ValueError:
                raise TableError(f"{p}:{lineno}: {s!r} is not a number (samples are seconds, e.g. 1.2e-05)") from None
            if not math.isfinite(v) or v < 0:
                raise TableError(f"{p}:{lineno}: {s!r}: samples must be finite and >= 0 s")
            out.append(v)
        arr = np.asarray(out, dtype=float)
        where = str(p)
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise TableError(f"{where}: samples must be finite and >= 0 s")
    if arr.size < 2:
        raise TableError(f"{where}: {arr.size} samples; need at least 2")
    return arr


def empirical(samples_s: np.ndarray, seed: int = 1, source: str | None = None) -> DelayTable:
    """Stratified quantiles of the samples (linear interpolation between order statistics)."""
    s = np.asarray(samples_s, dtype=float)
    ns = quantize(np.quantile(s, QUANTILES), "empirical")
    params: dict[str, Any] = {"n": int(s.size), "mean_s": float(s.mean()), "sd_s": float(s.std(ddof=1))}
    if source:
        params["source"] = Path(source).name.replace(" ", "_").replace("=", "_") or "samples"
    return DelayTable(_permute(ns, seed), "empirical", params, f"latscope {_version()} seed={seed}")


# ---------------------------------------------------------------- §5.3: the fitted set

FIT_FRACTIONS = (0.25, 0.50, 0.75)


@dataclass
class FitSet:
    """The five §5.3 tables: fitted lognormal, mean-matched constant, three intermediates."""

    shape: float
    loc_s: float
    scale_s: float
    n: int
    sample_mean_s: float
    sample_sd_s: float
    target_mean_s: float
    match: str
    vary: str
    seed: int
    tables: dict[str, DelayTable]  # file name -> table

    def summary(self) -> dict[str, Any]:
        return {
            "schema": "latscope.tables-fit/1",
            "fit": {"distribution": "lognormal", "method": "scipy.stats.lognorm.fit (MLE)",
                    "shape": self.shape, "loc_s": self.loc_s, "scale_s": self.scale_s},
            "n": self.n, "sample_mean_s": self.sample_mean_s, "sample_sd_s": self.sample_sd_s,
            "target_mean_s": self.target_mean_s, "match": self.match, "vary": self.vary, "seed": self.seed,
            "tables": [{"file": f, "distribution": t.distribution, "params": t.params, **t.summary()}
                       for f, t in self.tables.items()],
        }

    def write(self, outdir: str | Path) -> list[Path]:
        d = Path(outdir)
        d.mkdir(parents=True, exist_ok=True)
        paths = [write_table(t, d / f) for f, t in self.tables.items()]
        js = d / "fit.json"
        js.write_text(jsonio.dumps(self.summary(), indent=1) + "\n")
        return paths + [js]


def _lognorm_table_mean_ns(shape: float, loc: float, scale: float) -> float:
    if shape <= 0:
        return float(quantize(np.array([loc + scale]), "lognormal")[0])
    return float(quantize(stats.lognorm.ppf(QUANTILES, shape, loc=loc, scale=scale), "lognormal").mean())


def _grow(f: Callable[[float], float], lo: float, hi: float, what: str) -> float:
    """Double hi until f(hi) > 0 (f increasing), for a brentq bracket."""
    for _ in range(200):
        if f(hi) > 0:
            return hi
        lo, hi = hi, hi * 2
    raise TableError(f"fit: cannot bracket the {what} that matches the mean")


def fit_tables(samples_s: np.ndarray, seed: int = 1, match: str = "fitted", vary: str = "shape",
               fractions: Sequence[float] = FIT_FRACTIONS) -> FitSet:
    """Seed 004 §5.3. Fit a 3-parameter lognormal (shape, loc, scale) by scipy; the target mean is the
    fitted table's own mean (match='fitted', so all five tables inject the same mean) or the sample
    mean ('observed'). Intermediates: vary='shape' sets sigma to f*sigma_fit and bisects (brentq) the
    scale so the *table* mean hits the target: their sd lies between 0 (constant) and the fit's.
    vary='scale' is the paper's literal wording (scale f*scale_fit, bisect the shape), which gives
    a larger shape, hence *more* variance than the fit: kept to reproduce the paper."""
    s = np.asarray(samples_s, dtype=float)
    if vary not in ("shape", "scale"):
        raise TableError(f"--vary {vary!r}: use shape or scale")
    if match not in ("fitted", "observed"):
        raise TableError(f"--match {match!r}: use fitted or observed")
    if s.size < 3 or np.ptp(s) == 0:
        raise TableError(f"fit: {s.size} samples with spread {np.ptp(s):g} s; need at least 3 distinct samples")
    shape, loc, scale = (float(x) for x in stats.lognorm.fit(s))
    base = {"shape": shape, "loc_s": loc, "scale_s": scale}
    fitted = from_frozen(stats.lognorm(shape, loc=loc, scale=scale), "lognormal", base, seed)
    target_ns = fitted.delays_ns.mean() if match == "fitted" else s.mean() * 1e9
    target_ns = float(target_ns)
    target = target_ns * 1e-9
    if target_ns <= max(loc * 1e9, 0.0):
        raise TableError(f"fit: target mean {target:g} s is not above the fitted loc {loc:g} s")
    tables: dict[str, DelayTable] = {
        "lognormal.tbl": fitted,
        "constant.tbl": from_frozen(_Point(target), "constant", {"mean_s": target}, seed),
    }
    for frac in fractions:
        if not 0 < frac < 1:
            raise TableError(f"fraction {frac:g}: must be in (0, 1)")
        if vary == "shape":
            sh = frac * shape
            g = lambda sc, sh=sh: _lognorm_table_mean_ns(sh, loc, sc) - target_ns  # noqa: E731
            sc = optimize.brentq(g, 1e-18, _grow(g, 1e-18, max(target - loc, 1e-12), "scale"), xtol=1e-18, rtol=1e-12)
        else:
            sc = frac * scale
            g = lambda x, sc=sc: _lognorm_table_mean_ns(x, loc, sc) - target_ns  # noqa: E731
            if g(0.0) > 0:
                raise TableError(f"fit: scale {sc:g} s already exceeds the target mean; no shape matches")
            sh = optimize.brentq(g, 0.0, _grow(g, 0.0, max(shape, 0.1), "shape"), xtol=1e-12)
        params = {"shape": sh, "loc_s": loc, "scale_s": sc, "of_fit": frac, "vary": vary}
        tables[f"lognormal-{round(frac * 100)}.tbl"] = from_frozen(
            stats.lognorm(sh, loc=loc, scale=sc), "lognormal", params, seed)
    return FitSet(shape, loc, scale, int(s.size), float(s.mean()), float(s.std(ddof=1)), target,
                  match, vary, seed, tables)


# ---------------------------------------------------------------- netem export

@dataclass
class NetemTable:
    values: np.ndarray  # 4096 s16, sorted ascending
    mean_s: float
    sd_s: float
    clipped: int  # entries beyond about +-4 sigma, clipped to the s16 range

    def text(self, name: str = "latscope") -> str:
        us = lambda x: f"{x * 1e6:.3f}us"  # noqa: E731
        head = [f"# This is the distribution table for the {name} distribution.",
                f"# Generated by latscope {_version()} from a latscope delay table: values are "
                f"(delay - mean)/sd * {NETEM_DIST_SCALE}, clipped to [{NETEM_MIN}, {NETEM_MAX}].",
                f"# Use: tc qdisc add dev DEV root netem delay {us(self.mean_s)} {us(self.sd_s)} "
                f"distribution {name}",
                f"# clipped: {self.clipped} of {TABLE_SIZE} entries beyond +-4 sd"]
        rows = [" ".join(str(int(v)) for v in self.values[i:i + COLS]) for i in range(0, TABLE_SIZE, COLS)]
        return "\n".join(head + rows) + "\n"


def to_netem(table: DelayTable) -> NetemTable:
    """netem's table (iproute2 maketable.c): delay = mu + sigma * t / 8192, t a signed 16-bit value,
    so anything beyond 32767/8192 ~ 4 sd from the mean cannot be expressed and is clipped."""
    d = table.delays_ns.astype(float)
    mu, sd = d.mean(), d.std(ddof=0)
    if sd == 0:
        raise TableError("the table has sd 0 (constant): netem needs no distribution; use 'netem delay MEAN'")
    t = np.rint((np.sort(d) - mu) / sd * NETEM_DIST_SCALE)
    clipped = int(((t < NETEM_MIN) | (t > NETEM_MAX)).sum())
    return NetemTable(np.clip(t, NETEM_MIN, NETEM_MAX).astype(np.int16), mu * 1e-9, sd * 1e-9, clipped)
