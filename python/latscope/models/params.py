"""Parameter sets of the point-to-point cost models and their JSON form.

Units are in the field names: seconds (``_s``) as floats, bytes (``_bytes``), seconds per byte
(``_s_per_byte``).  The JSON file format (``"schema": "latscope.params/1"``) is documented in
``docs/params-format.md``.

Models:

* :class:`HockneyParams` — ``T(m) = alpha + beta * m``;
* :class:`LogPParams` — ``L, o_s, o_r, g`` (Culler et al.; LoGPC §2.1, Table 1);
* :class:`LogGPParams` — LogP plus ``G`` per byte, and LoGPC's long-message DMA extension
  ``o_sl, o_rl, L_long, G_m, a`` (LoGPC §2.2, Table 2, eqs. (1)-(2));
* :class:`PLogPParams` — size-dependent ``o_s(m), o_r(m), g(m)`` as tabulated points, linearly
  interpolated (Kielmann et al.), plus a constant ``L``;
* :class:`NetworkParams` — the k-ary n-cube used by the contention model (LoGPC §3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Union

from latscope import jsonio
from .errors import ModelError, require_int_at_least, require_nonneg, require_positive
from .topology import mesh_avg_distance

if TYPE_CHECKING:   # numpy is imported where a table is interpolated: the CLI starts without it
    import numpy as np

__all__ = [
    "SCHEMA",
    "HockneyParams",
    "LogPParams",
    "LogGPParams",
    "PLogPParams",
    "NetworkParams",
    "ModelParams",
    "ParamSet",
    "MessagePoint",
    "message_point",
    "from_json",
    "to_json",
    "from_dict",
    "load_params",
    "save_params",
]

SCHEMA = "latscope.params/1"
_SCHEMA_PREFIX = "latscope.params/"


def _check_P(P: int | None) -> int | None:
    if P is None:
        return None
    return require_int_at_least("P (processors)", P, 1)


@dataclass(frozen=True)
class HockneyParams:
    """Hockney's model: one message of ``m`` bytes costs ``alpha_s + beta_s_per_byte * m``."""

    alpha_s: float
    beta_s_per_byte: float
    P: int | None = None
    kind: ClassVar[str] = "hockney"

    def __post_init__(self) -> None:
        require_nonneg("alpha_s", self.alpha_s, "a latency cannot be negative")
        require_nonneg("beta_s_per_byte", self.beta_s_per_byte, "a time per byte cannot be negative")
        _check_P(self.P)


def _check_logp(p: LogPParams | LogGPParams) -> None:
    """LogP's four parameters, which LogGP's short messages share (LoGPC Table 1)."""
    require_nonneg("L_s", p.L_s, "a latency cannot be negative")
    require_nonneg("o_s_s", p.o_s_s, "a send overhead cannot be negative")
    require_nonneg("o_r_s", p.o_r_s, "a receive overhead cannot be negative")
    require_nonneg("g_s", p.g_s, "a gap cannot be negative")


@dataclass(frozen=True)
class LogPParams:
    """LogP with separate send and receive overheads (LoGPC Table 1 uses ``o_s`` and ``o_r``).

    ``g_s`` is the minimum interval between consecutive sends (or receives) at one processor.
    """

    L_s: float
    o_s_s: float
    o_r_s: float
    g_s: float = 0.0
    P: int | None = None
    kind: ClassVar[str] = "logp"

    def __post_init__(self) -> None:
        _check_logp(self)
        _check_P(self.P)


@dataclass(frozen=True)
class LogGPParams:
    """LogGP plus LoGPC's DMA-pipelined long messages (LoGPC §2.2, Table 2).

    Short messages use ``L_s, o_s_s, o_r_s, g_s``.  Long messages use ``o_sl_s, o_rl_s`` (send and
    receive overheads including DMA set-up and the interrupt), ``L_long_s`` (first-byte network
    latency), ``G_s_per_byte`` (network gap per byte), ``G_m_s_per_byte`` (memory-DMA gap per byte)
    and ``a_bytes`` (bytes that arrive before the receive interrupt is taken).  The long-message
    fields default to their short-message counterparts (and ``G_m`` to ``G``) when ``None``.
    """

    L_s: float
    o_s_s: float
    o_r_s: float
    g_s: float
    G_s_per_byte: float
    P: int | None = None
    o_sl_s: float | None = None
    o_rl_s: float | None = None
    L_long_s: float | None = None
    G_m_s_per_byte: float | None = None
    a_bytes: int = 0
    kind: ClassVar[str] = "loggp"

    def __post_init__(self) -> None:
        _check_logp(self)
        require_nonneg("G_s_per_byte", self.G_s_per_byte, "a gap per byte cannot be negative")
        for name in ("o_sl_s", "o_rl_s", "L_long_s", "G_m_s_per_byte"):
            v = getattr(self, name)
            if v is not None:
                require_nonneg(name, v, "times cannot be negative")
        require_int_at_least("a_bytes", self.a_bytes, 0, "bytes before the interrupt")
        _check_P(self.P)

    # Effective long-message parameters (defaults filled in).
    @property
    def o_sl(self) -> float:
        return self.o_s_s if self.o_sl_s is None else self.o_sl_s

    @property
    def o_rl(self) -> float:
        return self.o_r_s if self.o_rl_s is None else self.o_rl_s

    @property
    def L_long(self) -> float:
        return self.L_s if self.L_long_s is None else self.L_long_s

    @property
    def G_m(self) -> float:
        return self.G_s_per_byte if self.G_m_s_per_byte is None else self.G_m_s_per_byte


def _interp(sizes: np.ndarray, values: np.ndarray, m: float) -> float:
    """Piecewise-linear in the table; the last segment's slope beyond it; clamped below it."""
    if m <= sizes[0]:
        return float(values[0])
    if m <= sizes[-1] or len(sizes) == 1:
        import numpy as np
        return float(np.interp(m, sizes, values))
    slope = (values[-1] - values[-2]) / (sizes[-1] - sizes[-2])
    return float(values[-1] + slope * (m - sizes[-1]))


@dataclass(frozen=True)
class PLogPParams:
    """Parameterised LogP (Kielmann et al.): ``o_s(m), o_r(m), g(m)`` tabulated at ``sizes_bytes``.

    Between points values are linearly interpolated; above the last point the last segment is
    extended (gaps grow linearly with size); below the first point the first value is used.
    One message of ``m`` bytes takes ``L_s + g(m)`` end to end (PLogP's definition).
    """

    L_s: float
    sizes_bytes: tuple[int, ...]
    o_s_s: tuple[float, ...]
    o_r_s: tuple[float, ...]
    g_s: tuple[float, ...]
    P: int | None = None
    kind: ClassVar[str] = "plogp"

    def __post_init__(self) -> None:
        require_nonneg("L_s", self.L_s, "a latency cannot be negative")
        n = len(self.sizes_bytes)
        if n < 1:
            raise ModelError("sizes_bytes = []: PLogP needs at least one tabulated size")
        for name in ("o_s_s", "o_r_s", "g_s"):
            vals = getattr(self, name)
            if len(vals) != n:
                raise ModelError(f"len({name}) = {len(vals)}: must equal len(sizes_bytes) = {n}")
            for i, v in enumerate(vals):
                require_nonneg(f"{name}[{i}]", v, "times cannot be negative")
        prev = -1
        for i, s in enumerate(self.sizes_bytes):
            s = require_int_at_least(f"sizes_bytes[{i}]", s, 0)
            if s <= prev:
                raise ModelError(f"sizes_bytes[{i}] = {s}: sizes must be strictly increasing")
            prev = s
        # frozen dataclass: normalise to tuples once
        for name in ("sizes_bytes", "o_s_s", "o_r_s", "g_s"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        _check_P(self.P)

    def _at(self, name: str, m: float) -> float:
        import numpy as np
        m = require_nonneg("message size m (bytes)", m)
        return _interp(np.asarray(self.sizes_bytes, float), np.asarray(getattr(self, name), float), m)

    def o_s_at(self, m: float) -> float:
        """Send overhead ``o_s(m)`` in seconds."""
        return self._at("o_s_s", m)

    def o_r_at(self, m: float) -> float:
        """Receive overhead ``o_r(m)`` in seconds."""
        return self._at("o_r_s", m)

    def g_at(self, m: float) -> float:
        """Gap ``g(m)`` in seconds."""
        return self._at("g_s", m)


@dataclass(frozen=True)
class NetworkParams:
    """A direct k-ary n-cube network for the contention model (LoGPC §3, Table 3).

    ``n``: dimensions; ``k_d``: average distance per dimension in hops (LoGPC eq. (11) for a
    mesh with random destinations, or eq. (12) for a locality scheme); ``channel_s_per_byte``:
    time for one byte (Agarwal's flit) to cross one channel.  The seed's Alewife numbers take
    one byte per processor cycle, so ``channel_s_per_byte`` is one cycle there.  ``dims``,
    ``torus`` and ``bidirectional`` record the topology; with ``k_d = None`` it is computed
    from them (random destinations).
    """

    n: int
    channel_s_per_byte: float
    k_d: float | None = None
    dims: tuple[int, ...] | None = None
    torus: bool = False
    bidirectional: bool = True

    def __post_init__(self) -> None:
        require_int_at_least("n (network dimensions)", self.n, 1)
        require_positive("channel_s_per_byte", self.channel_s_per_byte, "a channel moves bytes in finite time")
        if self.dims is not None:
            object.__setattr__(self, "dims", tuple(int(k) for k in self.dims))
            if len(self.dims) != self.n:
                raise ModelError(f"dims = {list(self.dims)!r}: must have n = {self.n} entries")
        if self.k_d is None:
            if self.dims is None:
                raise ModelError("k_d = None and dims = None: give the average distance k_d or the dims")
            _, kd = mesh_avg_distance(self.dims, torus=self.torus, bidirectional=self.bidirectional)
            object.__setattr__(self, "k_d", kd)
        kd = require_nonneg("k_d", self.k_d)  # type: ignore[arg-type]
        if kd < 1.0:
            raise ModelError(
                f"k_d = {kd!r}: must be >= 1 hop per dimension for Agarwal's eq. (5) "
                "(below 1 the formula gives a negative waiting time; use k_d = 1 for "
                "nearest-neighbour traffic, which has no contention in this model)"
            )

    @property
    def kd(self) -> float:
        return float(self.k_d)  # type: ignore[arg-type]


ModelParams = Union[HockneyParams, LogPParams, LogGPParams, PLogPParams]
_KINDS: dict[str, type] = {c.kind: c for c in (HockneyParams, LogPParams, LogGPParams, PLogPParams)}


@dataclass(frozen=True)
class MessagePoint:
    """LogP view of one message size: what the barrier and collective formulas consume.

    One message costs ``o_s_s + L_s + o_r_s`` end to end; consecutive sends (receives) at one
    processor are at least ``send_gap_s`` (``recv_gap_s``) apart.
    """

    o_s_s: float
    L_s: float
    o_r_s: float
    send_gap_s: float
    recv_gap_s: float

    @property
    def hop_s(self) -> float:
        return self.o_s_s + self.L_s + self.o_r_s


def message_point(params: ModelParams, size_bytes: float = 0) -> MessagePoint:
    """The LogP view of ``params`` for ``size_bytes``-byte messages.

    * LogP: as is; consecutive sends ``max(g, o_s)`` apart, receives ``max(g, o_r)``.
    * LogGP: ``L + (m - 1) G`` end-to-end latency (LogGP), gaps ``max(g, o) + (m - 1) G``.
    * PLogP: overheads at ``m``; ``L' = L + g(m) - o_s(m) - o_r(m)`` so that one message still
      takes ``L + g(m)``; gaps ``g(m)``.  ``L' < 0`` raises :class:`ModelError`.
    * Hockney cannot separate overheads from latency and raises :class:`ModelError`.
    """
    m = require_nonneg("message size (bytes)", size_bytes)
    if isinstance(params, LogGPParams):
        extra = max(0.0, m - 1.0) * params.G_s_per_byte
        return MessagePoint(
            params.o_s_s,
            params.L_s + extra,
            params.o_r_s,
            max(params.g_s, params.o_s_s) + extra,
            max(params.g_s, params.o_r_s) + extra,
        )
    if isinstance(params, LogPParams):
        return MessagePoint(
            params.o_s_s, params.L_s, params.o_r_s, max(params.g_s, params.o_s_s), max(params.g_s, params.o_r_s)
        )
    if isinstance(params, PLogPParams):
        os_, or_, g = params.o_s_at(m), params.o_r_at(m), params.g_at(m)
        L = params.L_s + g - os_ - or_
        if L < 0.0:
            raise ModelError(
                f"PLogP at m = {m:g} bytes: L + g(m) - o_s(m) - o_r(m) = {L!r} s: must be >= 0 "
                "to split a message into o_s + L + o_r"
            )
        return MessagePoint(os_, L, or_, max(g, os_), max(g, or_))
    if isinstance(params, HockneyParams):
        raise ModelError(
            "params kind = 'hockney': this model needs separate send/receive overheads (LogP family); "
            "Hockney's alpha cannot be split into o_s + L + o_r"
        )
    raise ModelError(f"params = {params!r}: not a latscope model parameter set")


# ---------------------------------------------------------------------------------------------
# JSON


def _params_to_dict(p: ModelParams) -> dict[str, Any]:
    d = {f.name: getattr(p, f.name) for f in fields(p)}
    for k, v in list(d.items()):
        if isinstance(v, tuple):
            d[k] = list(v)
    return d


def _build(cls: type, d: Mapping[str, Any], what: str) -> Any:
    if not isinstance(d, Mapping):
        raise ModelError(f"{what} = {d!r}: must be a JSON object")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ModelError(f"{what}: unknown field(s) {unknown}; allowed: {sorted(names)}")
    try:
        return cls(**d)
    except TypeError as e:
        raise ModelError(f"{what}: {e}") from None


@dataclass(frozen=True)
class ParamSet:
    """What a params file holds: one model's parameters, an optional network, and provenance."""

    model: ModelParams
    network: NetworkParams | None = None
    name: str | None = None
    source: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": SCHEMA, "model": self.model.kind}
        if self.name is not None:
            out["name"] = self.name
        out["params"] = _params_to_dict(self.model)
        if self.network is not None:
            nd = asdict(self.network)
            if nd.get("dims") is not None:
                nd["dims"] = list(nd["dims"])
            out["network"] = nd
        if self.source:
            out["source"] = dict(self.source)
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return jsonio.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ParamSet:
        if not isinstance(d, Mapping):
            raise ModelError(f"params file: top level = {type(d).__name__}: must be a JSON object")
        schema = d.get("schema")
        if not isinstance(schema, str) or not schema.startswith(_SCHEMA_PREFIX):
            raise ModelError(f"schema = {schema!r}: must be {SCHEMA!r}")
        if schema != SCHEMA:
            raise ModelError(f"schema = {schema!r}: this latscope reads {SCHEMA!r} only")
        allowed = {"schema", "model", "name", "params", "network", "source"}
        unknown = sorted(set(d) - allowed)
        if unknown:
            raise ModelError(f"params file: unknown top-level key(s) {unknown}; allowed: {sorted(allowed)}")
        kind = d.get("model")
        if kind not in _KINDS:
            raise ModelError(f"model = {kind!r}: must be one of {sorted(_KINDS)}")
        if "params" not in d:
            raise ModelError("params file: missing key 'params'")
        model = _build(_KINDS[kind], d["params"], f"params ({kind})")
        net = None
        if d.get("network") is not None:
            net = _build(NetworkParams, d["network"], "network")
        name = d.get("name")
        if name is not None and not isinstance(name, str):
            raise ModelError(f"name = {name!r}: must be a string")
        source = d.get("source") or {}
        if not isinstance(source, Mapping):
            raise ModelError(f"source = {source!r}: must be a JSON object")
        return cls(model=model, network=net, name=name, source=dict(source))

    @classmethod
    def from_json(cls, text: str) -> ParamSet:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise ModelError(f"params file: not valid JSON ({e})") from None
        return cls.from_dict(d)


def from_dict(d: Mapping[str, Any]) -> ParamSet:
    """Build a :class:`ParamSet` from a decoded ``latscope.params/1`` object."""
    return ParamSet.from_dict(d)


def from_json(text: str) -> ParamSet:
    """Parse a ``latscope.params/1`` JSON document (see docs/params-format.md)."""
    return ParamSet.from_json(text)


def to_json(
    params: ModelParams | ParamSet, network: NetworkParams | None = None, *, name: str | None = None, indent: int | None = 2
) -> str:
    """Serialise model parameters (optionally with a network) as ``latscope.params/1`` JSON."""
    ps = params if isinstance(params, ParamSet) else ParamSet(model=params, network=network, name=name)
    return ps.to_json(indent=indent)


def load_params(path: str | Path) -> ParamSet:
    """Read a params file; I/O problems are reported as :class:`ModelError` too."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"params file {str(path)!r}: a binary file, not a JSON parameters file "
                         "(latscope.params/1: latscope fit ... --json writes one)") from None
    except OSError as e:
        raise ModelError(f"params file {str(path)!r}: cannot read ({e.strerror})") from None
    try:
        return from_json(text)
    except ModelError as e:   # from_json sees text only: name the file it came from
        raise ModelError(f"{path}: {e}") from None


def save_params(path: str | Path, params: ModelParams | ParamSet, network: NetworkParams | None = None) -> None:
    """Write a params file (``latscope.params/1``)."""
    Path(path).write_text(to_json(params, network) + "\n", encoding="utf-8")

