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
# the distributions' registry rows (and the error their builders raise) live in a module without
# numpy or scipy at its top, so `latscope tables --help` builds its options from them cheaply
from latscope.distributions import GENERATORS as GENERATORS, Generator as Generator, ParamSpec as ParamSpec
from latscope.distributions import TableError as TableError, _Point, lognormal_from_moments as lognormal_from_moments

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


def make(name: str, params: dict[str, float | None], seed: int = 1) -> DelayTable:
    """A table from a registered parametric distribution; params in seconds (times) or plain numbers."""
    if name not in GENERATORS:
        raise TableError(f"distribution {name!r}: use one of {', '.join(sorted(GENERATORS))}, or empirical")
    given = {k: v for k, v in params.items() if v is not None}
    dist, header = GENERATORS[name].build(given)
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


# ---------------------------------------------------------------- §5.3: the lognormal fit

FIT_UNIT_S = 1e-6  # the fit runs in microseconds (docs/delay-table.md, "The lognormal fit")
FIT_MIN_SAMPLES = 20
SHAPE_MIN = 0.05  # below: a normal seen through a lognormal whose loc ran off towards -inf
TAIL_MAX = 100.0  # the fit's 99.988 % quantile may exceed the largest sample at most this many times
# The profile-likelihood check scans loc = min(x) - d with d/w on this geometric grid, w = median - min
_GRID = np.geomspace(1e-7, 1e4, 100)


class FitError(TableError):
    """A lognormal fit that is degenerate or did not converge: the message says which and why."""


@dataclass(frozen=True)
class LognormFit:
    """Three-parameter lognormal (scipy's lognorm: shape sigma, loc, scale e^mu) fitted to samples."""

    shape: float
    loc_s: float
    scale_s: float
    n: int
    ks_distance: float  # Kolmogorov-Smirnov statistic of the samples against the fit
    loglik_us: float  # log-likelihood of the samples in microseconds (the unit the fit ran in)

    def mean_s(self) -> float:
        return self.loc_s + self.scale_s * math.exp(self.shape ** 2 / 2)

    def sd_s(self) -> float:
        s2 = self.shape ** 2
        return self.scale_s * math.sqrt(math.exp(s2) * math.expm1(s2))

    def frozen(self) -> Any:
        return stats.lognorm(self.shape, loc=self.loc_s, scale=self.scale_s)

    def to_dict(self) -> dict[str, Any]:
        return {"distribution": "lognormal", "shape": self.shape, "loc_s": self.loc_s,
                "scale_s": self.scale_s, "mean_s": self.mean_s(), "sd_s": self.sd_s(), "n": self.n,
                "ks_distance": self.ks_distance, "loglik_us": self.loglik_us,
                "method": "scipy.stats.lognorm.fit (MLE) in microseconds, checked on the profile likelihood"}


def _profile_loglik(x: np.ndarray, loc: float) -> float:
    """The log-likelihood maximised over shape and scale at a fixed loc: with y = ln(x - loc),
    sigma = sd(y) and mu = mean(y) (closed form), so l(loc) = -n ln(sigma) - sum(y) - n/2 (1 + ln 2pi)."""
    y = np.log(x - loc)
    sd = float(y.std())
    if sd <= 0:
        return -math.inf
    return float(-y.size * math.log(sd) - y.sum() - y.size / 2 * (1 + math.log(2 * math.pi)))


def fit_lognormal(samples_s: np.ndarray) -> LognormFit:
    """Seed 004 §5.3: shape, loc and scale of a lognormal by maximum likelihood (scipy.stats.lognorm.fit),
    made robust (docs/delay-table.md, "The lognormal fit"):
    - in microseconds: scipy solves dl/dloc = 0 (Cohen & Whitten 1980, eq. 3.1) from a bracket that
      starts 1 unit below the minimum; in seconds that bracket is 10^5 spreads wide and the root it
      finds is a far, near-normal one (loc -8 s, shape 3e-7 for a loc 2 us, shape 0.5 sample);
    - checked against the profile likelihood on a grid of loc: scipy's answer must be the highest
      interior maximum, else the grid's best, refined, is taken (loc fixed: scipy's closed form);
    - degenerate fits raise FitError: no interior maximum (loc -> -inf, shape -> 0: the sample is
      near-normal), loc at the sample minimum (the likelihood is unbounded there), a tail far beyond
      the data, or numbers that are not finite."""
    s = np.asarray(samples_s, dtype=float)
    if s.size < FIT_MIN_SAMPLES or np.unique(s).size < 3:
        raise FitError(f"fit: {s.size} samples, {np.unique(s).size} distinct; a lognormal fit needs at least "
                       f"{FIT_MIN_SAMPLES} samples and 3 distinct values")
    x = s / FIT_UNIT_S
    xmin, med = float(x.min()), float(np.median(x))
    w = med - xmin if med > xmin else float(x.std())
    ds = _GRID * w
    ll = np.array([_profile_loglik(x, xmin - d) for d in ds])
    # interior local maxima of the profile (the boundary d -> 0 always goes to +inf eventually)
    peaks = [i for i in range(1, ds.size - 1) if ll[i] >= ll[i - 1] and ll[i] >= ll[i + 1]]
    if not peaks:
        if int(np.argmax(ll)) == ds.size - 1:
            raise FitError("fit: degenerate lognormal: the likelihood keeps growing as loc -> -inf (shape -> 0): "
                           "the sample is near-normal, not skewed like a lognormal; use a normal or empirical table")
        raise FitError("fit: degenerate lognormal: the likelihood has no maximum below the sample minimum "
                       "(loc -> min, unbounded); use an empirical table")
    best = max(peaks, key=lambda i: ll[i])
    shape, loc, scale = (float(v) for v in stats.lognorm.fit(x))
    ll_scipy = -float(stats.lognorm.nnlf((shape, loc, scale), x)) if loc < xmin else -math.inf
    if not (math.isfinite(ll_scipy) and 0 < xmin - loc < ds[-1] and ll_scipy >= ll[best] - 1e-6 * abs(ll[best])):
        # scipy stopped elsewhere (another root, or its fallback): refine the grid's best peak
        r = optimize.minimize_scalar(lambda t: -_profile_loglik(x, xmin - math.exp(t)),
                                     bounds=(math.log(ds[best - 1]), math.log(ds[best + 1])), method="bounded",
                                     options={"xatol": 1e-10})
        if not r.success:
            raise FitError(f"fit: the likelihood maximisation did not converge ({r.message})")
        shape, loc, scale = (float(v) for v in stats.lognorm.fit(x, floc=xmin - math.exp(float(r.x))))
    if not all(math.isfinite(v) for v in (shape, loc, scale)) or scale <= 0:
        raise FitError(f"fit: did not converge (shape {shape:g}, loc {loc:g} us, scale {scale:g} us)")
    if shape < SHAPE_MIN:
        raise FitError(f"fit: degenerate lognormal: shape {shape:.3g} < {SHAPE_MIN} with loc {loc:.6g} us far below "
                       f"the sample minimum {xmin:.6g} us: the sample is near-normal; use a normal or empirical table")
    if xmin - loc < 1e-6 * w:
        raise FitError(f"fit: degenerate lognormal: loc {loc:.9g} us sits on the sample minimum, where the "
                       "likelihood is unbounded; use an empirical table")
    top = float(stats.lognorm.ppf(QUANTILES[-1], shape, loc=loc, scale=scale))
    if top > TAIL_MAX * float(x.max()):
        raise FitError(f"fit: degenerate lognormal: its {100 * QUANTILES[-1]:.3f}% quantile is {top:.4g} us, "
                       f"{top / x.max():.3g} times the largest sample ({x.max():.4g} us); use an empirical table")
    ks = float(stats.kstest(x, "lognorm", args=(shape, loc, scale)).statistic)
    ll_fit = -float(stats.lognorm.nnlf((shape, loc, scale), x))
    return LognormFit(shape, loc * FIT_UNIT_S, scale * FIT_UNIT_S, int(s.size), ks, ll_fit)


# ---------------------------------------------------------------- §5.3: the fitted set

FIT_FRACTIONS = (0.25, 0.50, 0.75)
MEAN_TOL = 0.005  # every table of the set keeps the target mean to 0.5 % (in practice to 1 ns)


@dataclass
class FitSet:
    """The five §5.3 tables: fitted lognormal, mean-matched constant, three intermediates."""

    fit: LognormFit | None   # None: --form empirical, no lognormal fitted
    sample_mean_s: float
    sample_sd_s: float
    target_mean_s: float
    match: str
    vary: str
    seed: int
    tables: dict[str, DelayTable]  # file name -> table
    form: str = "lognormal"   # the family of the tables: lognormal or empirical (tail kept)
    variance_lost: float | None = None   # 1 - (fit sd / sample sd)^2; None without a fit
    switched: str | None = None   # why form auto left the lognormal
    n_samples: int | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "schema": "latscope.tables-fit/2",
            "form": self.form, "variance_lost": self.variance_lost, "switched": self.switched,
            "fit": None if self.fit is None else self.fit.to_dict(),
            "n": self.n_samples if self.n_samples is not None else (self.fit.n if self.fit else None),
            "sample_mean_s": self.sample_mean_s, "sample_sd_s": self.sample_sd_s,
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


def _mean_kept(dist: Any, name: str, params: dict[str, Any], target_s: float, seed: int) -> DelayTable:
    """The table of `dist`, shifted by whole ns so that its mean is the target's: cutting the tails
    beyond the first and last strata and rounding to ns move the mean a little (docs/delay-table.md).
    A shift leaves the variance as it is (unless entries reach 0 and are clipped: then shift again)."""
    what = f"{name} {_params_text(params)}"
    base = np.asarray(dist.ppf(QUANTILES), dtype=float)
    shift = 0.0
    for _ in range(8):
        ns = quantize(base + shift, what)
        err = target_s - float(ns.mean()) * 1e-9
        if abs(err) * 1e9 < 0.5:
            break
        shift += err
    if abs(float(ns.mean()) * 1e-9 - target_s) > MEAN_TOL * target_s:
        raise TableError(f"{what}: the table's mean {ns.mean() * 1e-9:.6g} s cannot be brought to the target "
                         f"{target_s:.6g} s (entries clipped at 0 ns)")
    out = dict(params)
    if "loc_s" in out:
        out["loc_s"] = float(out["loc_s"]) + shift
    return DelayTable(_permute(ns, seed), name, out, f"latscope {_version()} seed={seed}")


# The lognormal may lose at most this share of the sample's variance before `tables fit` switches
# to (form auto) or refuses (form lognormal) it: a fit that keeps the mean but not the tail tests
# "variance at equal mean" (seed 004 §5.3) on a variance the samples never had.
VARIANCE_LOSS_MAX = 0.20
SD_TOL = 0.05  # the tail-kept table's sd is the sample's to 5 %


def stratum_means(samples_s: np.ndarray) -> np.ndarray:
    """The sorted samples cut into 4096 equal-probability strata, each entry the mean of its stratum
    (fractional samples shared between neighbours): the sample mean exactly, and every variance
    between strata; only the spread inside a stratum is lost (the quantile table also loses the
    mass beyond its midpoints)."""
    x = np.sort(np.asarray(samples_s, dtype=float))
    n = x.size
    cum = np.concatenate(([0.0], np.cumsum(x)))
    edges = np.arange(TABLE_SIZE + 1) * (n / TABLE_SIZE)

    def partial(e: np.ndarray) -> np.ndarray:   # sum of the first e samples, e fractional
        k = np.floor(e).astype(np.int64)
        frac = e - k
        nxt = x[np.minimum(k, n - 1)]
        return np.asarray(cum[k] + np.where(k < n, frac * nxt, 0.0))

    sums = partial(edges[1:]) - partial(edges[:-1])
    return np.asarray(sums / (n / TABLE_SIZE))


def tail_kept(samples_s: np.ndarray) -> np.ndarray:
    """4096 equal-probability values (seconds) with the sample's mean and sd (to SD_TOL).

    The stratum means (:func:`stratum_means`) keep the mean; the variance lost inside the strata
    lies in the top ones, where rare large samples share a stratum with ordinary ones. It is put
    back by spreading the top k values about their own mean (their sum, hence the table's mean,
    unchanged): v' = c + lam (v - c), with the smallest k = 2, 4, 8, ... for which the lam that
    restores the variance keeps every value >= 0. TableError when even k = 4096 cannot."""
    x = np.asarray(samples_s, dtype=float)
    v = np.sort(stratum_means(x))
    target = float(x.var(ddof=0))
    have = float(v.var())
    need = (target - have) * TABLE_SIZE   # the sum of squares to add
    if need <= SD_TOL * target * TABLE_SIZE:
        return v
    k = 2
    while k <= TABLE_SIZE:
        top = v[-k:]
        c = float(top.mean())
        ss = float(((top - c) ** 2).sum())
        if ss > 0:
            lam = math.sqrt(1.0 + need / ss)
            if c - lam * (c - float(top.min())) >= 0.0:
                out = v.copy()
                out[-k:] = c + lam * (top - c)
                return np.sort(out)
        k *= 2
    raise TableError(f"the sample's sd {math.sqrt(target):.6g} s cannot be kept by a table of {TABLE_SIZE} "
                     f"equal-probability delays >= 0 at its mean {x.mean():.6g} s (the stratum means give sd "
                     f"{math.sqrt(have):.6g} s)")


def _deviations_scaled(values_s: np.ndarray, mean_s: float, frac: float, name: str, params: dict[str, Any],
                       seed: int) -> DelayTable:
    """mean + sqrt(f) (values - mean): the same shape with f times the variance at the same mean
    (each value moves towards the mean, so none goes below 0), shifted by whole ns to the mean."""
    vals = mean_s + math.sqrt(frac) * (np.asarray(values_s, dtype=float) - mean_s)
    return _mean_kept(_Sorted(vals), name, params, mean_s, seed)


class _Sorted:
    """A table's values in the shape _mean_kept reads (``ppf`` at the stratified quantiles)."""

    def __init__(self, values_s: np.ndarray) -> None:
        self.values = np.sort(np.asarray(values_s, dtype=float))

    def ppf(self, q: Any) -> np.ndarray:
        return self.values


def fit_tables(samples_s: np.ndarray, seed: int = 1, match: str = "observed", vary: str = "variance",
               fractions: Sequence[float] = FIT_FRACTIONS, form: str = "auto") -> FitSet:
    """The §5.3 set (:func:`lognormal_tables`) unless the lognormal loses more than
    VARIANCE_LOSS_MAX of the sample's variance: then ``form='auto'`` switches to the tail-kept
    empirical set (:func:`empirical_tables`), ``form='lognormal'`` refuses (TableError naming both
    sds); ``form='empirical'`` always takes the empirical set."""
    if form not in ("auto", "lognormal", "empirical"):
        raise TableError(f"--form {form!r}: use auto, lognormal or empirical")
    s = np.asarray(samples_s, dtype=float)
    if form == "empirical":
        return empirical_tables(s, seed, match, fractions)
    fs = lognormal_tables(s, seed, match, vary, fractions)
    assert fs.fit is not None
    # the table is what is injected: its sd (at most the fit's, its tails cut at the strata) decides
    kept_sd = min(fs.fit.sd_s(), fs.tables["lognormal.tbl"].sd_s())
    lost = 1.0 - (kept_sd / fs.sample_sd_s) ** 2 if fs.sample_sd_s > 0 else 0.0
    fs.variance_lost = lost
    if lost > VARIANCE_LOSS_MAX:
        why = (f"the lognormal fit's sd {fs.fit.sd_s():.6g} s (its table's {fs.tables['lognormal.tbl'].sd_s():.6g} s) "
               f"against the sample's {fs.sample_sd_s:.6g} s: it loses {100 * lost:.0f} % of the variance "
               f"(at most {100 * VARIANCE_LOSS_MAX:.0f} % allowed)")
        if form == "lognormal":
            raise TableError(why + "; use --form empirical (or auto) for tables that keep the tail")
        es = empirical_tables(s, seed, match, fractions, fit=fs.fit)
        es.variance_lost = lost
        es.switched = why
        return es
    return fs


def empirical_tables(samples_s: np.ndarray, seed: int = 1, match: str = "observed",
                     fractions: Sequence[float] = FIT_FRACTIONS, fit: LognormFit | None = None) -> FitSet:
    """Five tables of the observed mean that keep the tail: ``empirical.tbl`` (the tail-kept
    stratum means, :func:`tail_kept`: the sample's mean and sd), ``empirical-75/50/25.tbl`` (its
    deviations from the mean scaled by sqrt(f): f of the observed variance, same mean) and
    ``constant.tbl``. ``match='fitted'`` is refused: there is no fitted mean to keep."""
    s = np.asarray(samples_s, dtype=float)
    if match != "observed":
        raise TableError(f"--match {match}: the empirical tables keep the observed mean; use --match observed")
    for frac in fractions:
        if not 0 < frac < 1:
            raise TableError(f"fraction {frac:g}: must be in (0, 1)")
    if s.size < FIT_MIN_SAMPLES:
        raise TableError(f"{s.size} samples: the tables need at least {FIT_MIN_SAMPLES}")
    target = float(s.mean())
    vals = tail_kept(s)
    base: dict[str, Any] = {"n": int(s.size), "mean_s": target, "sd_s": float(s.std(ddof=1)), "variance_fraction": 1.0}
    tables: dict[str, DelayTable] = {
        "empirical.tbl": _deviations_scaled(vals, target, 1.0, "empirical", base, seed),
        "constant.tbl": from_frozen(_Point(target), "constant", {"mean_s": target, "variance_fraction": 0.0}, seed),
    }
    for frac in fractions:
        params = dict(base, variance_fraction=frac)
        tables[f"empirical-{round(frac * 100)}.tbl"] = _deviations_scaled(vals, target, frac, "empirical", params, seed)
    fs = FitSet(fit, target, float(s.std(ddof=1)), target, match, "variance", seed, tables)
    fs.form = "empirical"
    fs.n_samples = int(s.size)
    return fs


def lognormal_tables(samples_s: np.ndarray, seed: int = 1, match: str = "observed", vary: str = "variance",
                     fractions: Sequence[float] = FIT_FRACTIONS) -> FitSet:
    """Seed 004 §5.3: five tables of one mean m (the sample mean, or the fit's with match='fitted').
    The fit (fit_lognormal) is moved to mean m by a shift of loc: loc* = m - scale e^(shape^2/2),
    shape and scale (hence the variance V) as fitted. vary='variance': the table for fraction f
    has variance f V by moment matching within the lognormal family with loc*:
        shape_f^2 = ln(1 + f (e^(shape^2) - 1)),  scale_f = (m - loc*) e^(-shape_f^2 / 2),
    so f = 1 is the (shifted) fit and f = 0 the constant m. vary='scale' is the paper's literal
    wording: scale_f = f scale and shape_f^2 = 2 ln((m - loc*) / scale_f), more variance than the fit."""
    s = np.asarray(samples_s, dtype=float)
    if vary not in ("variance", "scale"):
        raise TableError(f"--vary {vary!r}: use variance or scale")
    if match not in ("fitted", "observed"):
        raise TableError(f"--match {match!r}: use observed or fitted")
    for frac in fractions:
        if not 0 < frac < 1:
            raise TableError(f"fraction {frac:g}: must be in (0, 1)")
    fit = fit_lognormal(s)
    target = float(s.mean()) if match == "observed" else fit.mean_s()
    loc = target - fit.scale_s * math.exp(fit.shape ** 2 / 2)
    base = {"shape": fit.shape, "loc_s": loc, "scale_s": fit.scale_s, "variance_fraction": 1.0}
    tables: dict[str, DelayTable] = {
        "lognormal.tbl": _mean_kept(stats.lognorm(fit.shape, loc=loc, scale=fit.scale_s), "lognormal", base,
                                    target, seed),
        "constant.tbl": from_frozen(_Point(target), "constant", {"mean_s": target, "variance_fraction": 0.0}, seed),
    }
    growth = math.expm1(fit.shape ** 2)  # e^(shape^2) - 1 = V / (m - loc*)^2
    for frac in fractions:
        if vary == "variance":
            sh = math.sqrt(math.log1p(frac * growth))
            sc = (target - loc) * math.exp(-sh * sh / 2)
            params: dict[str, Any] = {"shape": sh, "loc_s": loc, "scale_s": sc, "variance_fraction": frac}
        else:
            sc = frac * fit.scale_s
            sh = math.sqrt(2 * math.log((target - loc) / sc))
            params = {"shape": sh, "loc_s": loc, "scale_s": sc, "scale_fraction": frac}
        params["vary"] = vary
        tables[f"lognormal-{round(frac * 100)}.tbl"] = _mean_kept(
            stats.lognorm(sh, loc=loc, scale=sc), "lognormal", params, target, seed)
    return FitSet(fit, float(s.mean()), float(s.std(ddof=1)), target, match, vary, seed, tables)


# ---------------------------------------------------------------- netem export

@dataclass
class NetemTable:
    values: np.ndarray  # 4096 s16, sorted ascending
    mean_s: float
    sd_s: float
    clipped: int  # entries beyond about +-4 sigma, clipped to the s16 range

    def text(self, name: str = "latscope") -> str:
        def us(x: float) -> str:
            return f"{x * 1e6:.3f}us"

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
