"""Barrier costs under LogP (seed 002 §5.1.2, generalised to any ``P`` and ``k``).

Every algorithm is a sequence of *rounds*; a round in which the busiest node sends one message
and receives ``c`` messages costs ``o_s + L + o_r + (c - 1) r`` with ``r = max(o_r, g)`` (the
receives are processed back to back), and a round in which one node sends ``c`` messages costs
``o_s + L + o_r + (c - 1) s`` with ``s = max(o_s, g)``.  Write ``h = o_s + L + o_r``.

=====================  ==========================================================================
name                   cost
=====================  ==========================================================================
dissemination          ``h * ceil(log2 P)``                                    (seed 002 §5.1.2)
shuffle-exchange       ``h * log2 P`` for a power of two, else ``h * (floor(log2 P) + 2)``
                       (pairwise exchange; the extra two rounds fold the surplus ranks in and out)
binary-tree            ``h * (ceil(log2 P) + 1)``: gather up a binary tree, release by one
                       broadcast/multicast                                      (seed 002 §5.1.2)
kary-tree              ``sum_j (h + (c_j - 1) r) + h``: k-ary gather, release by one broadcast;
                       ``c_j = min(k, ceil(P / k**j)) - 1`` receives in round ``j``, so for ``P = k**d``
                       this is the seed's ``(o_s + L + (k-1) o_r) * log_k P + (o_s + L + o_r)``
kary-tree-p2p          same gather, release down the same tree by point-to-point sends
linear                 central counter: ``h + (P-2) r`` gather, ``h + (P-2) s`` release
linear-bcast           central counter gather, release by one broadcast (seed 002 "Concurrent")
tournament             ``2 h * ceil(log2 P)``: static-winner rounds up, wake-up tree down
binomial               ``2 h * ceil(log2 P)``: binomial fan-in then binomial fan-out
null                   0 (fake entry used to test the registry)
=====================  ==========================================================================

``tournament`` and ``binomial`` cost the same in LogP (they differ in which flags are spun on and
in contention, which LogP does not see); both are listed because both are implemented in C.

These closed forms are the critical path of ONE barrier that every rank enters at the same
instant (the seed's analysis; its test vectors live in tests/python/test_models_seed.py). The
seed's benchmark loop ``{t0; barrier; t1; dummy work}`` measures something else: in steady state
the ranks do not enter together, and every rank's ``t1 - t0`` is the loop's period minus the
dummy work. :func:`row_loop_time_s` (from :mod:`latscope.models.barrier_sim`, a LogP event
simulation of each registry row's exact message schedule through that loop) predicts the
quantity the benchmark reports; `latscope barrier compare` and bench/barrier.py compare with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .barrier_sim import LoopResult, SimParams, loop_time_s, row_loop_time_s, row_program, single_shot_s
from .errors import ModelError, require_int_at_least
from .params import MessagePoint, ModelParams, message_point
from .rows import ROW_DEFAULT_K, ROW_NAMES, canonical_row, default_rows, parse_row

__all__ = [
    "BarrierAlgorithm",
    "BARRIER_ALGORITHMS",
    "barrier_names",
    "select_algorithms",
    "barrier_time_s",
    "BarrierPrediction",
    "predict_barrier",
    "Crossover",
    "kary_vs_dissemination",
    "ceil_log",
    "ROW_NAMES",
    "ROW_DEFAULT_K",
    "ROW_MODEL",
    "parse_row",
    "canonical_row",
    "row_time_s",
    "default_rows",
    "SimParams",
    "LoopResult",
    "row_loop_time_s",
    "row_program",
    "loop_time_s",
    "single_shot_s",
]


def ceil_log(P: int, k: int) -> int:
    """``ceil(log_k P)`` computed in integers (no floating-point log)."""
    P = require_int_at_least("P (processes)", P, 1)
    k = require_int_at_least("k (tree arity)", k, 2)
    d, reach = 0, 1
    while reach < P:
        reach *= k
        d += 1
    return d


def _kary_round_counts(P: int, k: int) -> list[int]:
    """Receives ``c_j`` by the busiest node in each gather round of a k-ary (k-nomial) tree."""
    counts = []
    groups = P
    while groups > 1:
        counts.append(min(k, groups) - 1)
        groups = -(-groups // k)
    return counts


def _dissemination(pt: MessagePoint, P: int, k: int) -> float:
    return pt.hop_s * ceil_log(P, 2)


def _shuffle_exchange(pt: MessagePoint, P: int, k: int) -> float:
    if P == 1:
        return 0.0
    lg = P.bit_length() - 1
    rounds = lg if (1 << lg) == P else lg + 2
    return pt.hop_s * rounds


def _kary_gather(pt: MessagePoint, P: int, k: int) -> float:
    r = max(pt.o_r_s, pt.recv_gap_s)
    return sum(pt.hop_s + (c - 1) * r for c in _kary_round_counts(P, k))


def _kary_release_p2p(pt: MessagePoint, P: int, k: int) -> float:
    s = max(pt.o_s_s, pt.send_gap_s)
    return sum(pt.hop_s + (c - 1) * s for c in _kary_round_counts(P, k))


def _bcast_release(pt: MessagePoint, P: int) -> float:
    return pt.hop_s if P > 1 else 0.0


def _binary_tree(pt: MessagePoint, P: int, k: int) -> float:
    return _kary_gather(pt, P, 2) + _bcast_release(pt, P)


def _kary_tree(pt: MessagePoint, P: int, k: int) -> float:
    return _kary_gather(pt, P, k) + _bcast_release(pt, P)


def _kary_tree_p2p(pt: MessagePoint, P: int, k: int) -> float:
    return _kary_gather(pt, P, k) + _kary_release_p2p(pt, P, k)


def _linear_gather(pt: MessagePoint, P: int) -> float:
    if P == 1:
        return 0.0
    return pt.hop_s + (P - 2) * max(pt.o_r_s, pt.recv_gap_s)


def _linear(pt: MessagePoint, P: int, k: int) -> float:
    if P == 1:
        return 0.0
    return _linear_gather(pt, P) + pt.hop_s + (P - 2) * max(pt.o_s_s, pt.send_gap_s)


def _linear_bcast(pt: MessagePoint, P: int, k: int) -> float:
    return _linear_gather(pt, P) + _bcast_release(pt, P)


def _two_phase_log2(pt: MessagePoint, P: int, k: int) -> float:
    return 2.0 * pt.hop_s * ceil_log(P, 2)


def _null(pt: MessagePoint, P: int, k: int) -> float:
    return 0.0


@dataclass(frozen=True)
class BarrierAlgorithm:
    """One registry row: name, cost function ``(point, P, k) -> seconds``, whether ``k`` matters, help."""

    name: str
    cost: Callable[[MessagePoint, int, int], float]
    uses_k: bool
    help: str


BARRIER_ALGORITHMS: tuple[BarrierAlgorithm, ...] = (
    BarrierAlgorithm("dissemination", _dissemination, False, "h*ceil(log2 P) (seed 002 §5.1.2)"),
    BarrierAlgorithm("shuffle-exchange", _shuffle_exchange, False, "pairwise exchange; h*log2 P, +2 rounds if P is not a power of 2"),
    BarrierAlgorithm("binary-tree", _binary_tree, False, "binary gather + broadcast release: h*(ceil(log2 P)+1) (seed 002)"),
    BarrierAlgorithm("kary-tree", _kary_tree, True, "k-ary gather + broadcast release (seed 002 §5.1.2)"),
    BarrierAlgorithm("kary-tree-p2p", _kary_tree_p2p, True, "k-ary gather + release down the same tree"),
    BarrierAlgorithm("linear", _linear, False, "central counter, point-to-point release"),
    BarrierAlgorithm("linear-bcast", _linear_bcast, False, "central counter, broadcast release (seed 002 Concurrent)"),
    BarrierAlgorithm("tournament", _two_phase_log2, False, "tournament rounds + wake-up: 2h*ceil(log2 P)"),
    BarrierAlgorithm("binomial", _two_phase_log2, False, "binomial fan-in + fan-out: 2h*ceil(log2 P)"),
    BarrierAlgorithm("null", _null, False, "fake entry (registry tests); costs 0"),
)
_BY_NAME = {a.name: a for a in BARRIER_ALGORITHMS}
assert len(_BY_NAME) == len(BARRIER_ALGORITHMS), "duplicate barrier algorithm name"


def barrier_names(include_null: bool = False) -> list[str]:
    """Registered algorithm names (``null`` only on request)."""
    return [a.name for a in BARRIER_ALGORITHMS if include_null or a.name != "null"]


def select_algorithms(spec: str | Iterable[str] | None) -> list[str]:
    """Resolve ``"all"``, ``"a,b"`` or ``"all,-c"`` (include/exclude grammar) to algorithm names.

    An unknown name raises :class:`ModelError` listing the valid ones.  ``all`` excludes ``null``.
    """
    if spec is None:
        spec = "all"
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s).strip() for s in spec]
    items = [s for s in items if s]
    if not items:
        raise ModelError(f"algs = {spec!r}: empty; valid: all, {', '.join(barrier_names(True))}")
    includes = [s for s in items if not s.startswith("-")]
    excludes = [s[1:] for s in items if s.startswith("-")]
    for s in includes + excludes:
        if s != "all" and s not in _BY_NAME:
            raise ModelError(f"barrier algorithm {s!r}: unknown; valid: all, {', '.join(barrier_names(True))}")
    chosen: list[str] = []
    for s in includes or ["all"]:
        for n in barrier_names() if s == "all" else [s]:
            if n not in chosen:
                chosen.append(n)
    dropped = {n for s in excludes for n in (barrier_names(True) if s == "all" else [s])}
    chosen = [n for n in chosen if n not in dropped]
    if not chosen:
        raise ModelError(f"algs = {spec!r}: excludes every algorithm")
    return chosen


def barrier_time_s(params: ModelParams | MessagePoint, P: int, alg: str, k: int = 4, *, size_bytes: float = 0) -> float:
    """Predicted time of barrier ``alg`` on ``P`` processes (``k`` is the tree arity)."""
    P = require_int_at_least("P (processes)", P, 1)
    k = require_int_at_least("k (tree arity)", k, 2)
    if alg not in _BY_NAME:
        raise ModelError(f"barrier algorithm {alg!r}: unknown; valid: {', '.join(barrier_names(True))}")
    pt = params if isinstance(params, MessagePoint) else message_point(params, size_bytes)
    return float(_BY_NAME[alg].cost(pt, P, k))


@dataclass(frozen=True)
class BarrierPrediction:
    """Predicted time of each requested barrier algorithm, and the best one."""

    P: int
    k: int
    times_s: dict[str, float]
    best: str
    best_time_s: float
    point: MessagePoint = field(repr=False)

    def to_dict(self) -> dict[str, object]:
        return {
            "P": self.P,
            "k": self.k,
            "o_s_s": self.point.o_s_s,
            "L_s": self.point.L_s,
            "o_r_s": self.point.o_r_s,
            "algorithms": [{"name": n, "time_s": t} for n, t in self.times_s.items()],
            "best": self.best,
            "best_time_s": self.best_time_s,
        }

    def rows(self) -> list[tuple[str, float]]:
        """``(name, time_s)`` sorted fastest first (ties keep registry order)."""
        return sorted(self.times_s.items(), key=lambda kv: kv[1])


def predict_barrier(
    params: ModelParams | MessagePoint,
    np: int,
    algs: str | Sequence[str] | None = "all",
    k: int = 4,
    *,
    size_bytes: float = 0,
) -> BarrierPrediction:
    """Predict every selected barrier algorithm for ``np`` processes and return the best.

    ``algs`` takes ``"all"`` or the include/exclude grammar (``"all,-linear"``); ties go to the
    algorithm listed first in the registry.
    """
    P = require_int_at_least("np (processes)", np, 1)
    k = require_int_at_least("k (tree arity)", k, 2)
    names = select_algorithms(algs)
    pt = params if isinstance(params, MessagePoint) else message_point(params, size_bytes)
    times = {n: barrier_time_s(pt, P, n, k) for n in names}
    best = min(names, key=lambda n: (times[n], names.index(n)))
    return BarrierPrediction(P=P, k=k, times_s=times, best=best, best_time_s=times[best], point=pt)


@dataclass(frozen=True)
class Crossover:
    """When does the k-ary tree (broadcast release) beat dissemination?

    With ``R = sum_j (c_j - 1)`` extra receives on the critical path, ``d`` gather rounds and
    ``m = ceil(log2 P)``: k-ary wins iff ``R * max(o_r, g) < (m - d - 1) * (o_s + L + o_r)``;
    with ``g <= o_r`` that is ``(R - (m - d - 1)) * o_r < (m - d - 1) * (o_s + L)`` — for
    ``P = 16, k = 4``: ``3 o_r < o_s + L`` (seed 002 §5.1.2).
    """

    P: int
    k: int
    coeff_o_r: int
    coeff_os_plus_L: int
    condition: str
    kary_time_s: float
    dissemination_time_s: float
    holds: bool


def kary_vs_dissemination(params: ModelParams | MessagePoint, P: int, k: int = 4) -> Crossover:
    """The seed-002 crossover condition for ``P`` and ``k``, evaluated for ``params``."""
    P = require_int_at_least("P (processes)", P, 1)
    k = require_int_at_least("k (tree arity)", k, 2)
    pt = params if isinstance(params, MessagePoint) else message_point(params, 0)
    counts = _kary_round_counts(P, k)
    R = sum(c - 1 for c in counts)
    spare = ceil_log(P, 2) - len(counts) - (1 if P > 1 else 0)
    a, b = R - spare, spare
    if b <= 0:
        cond = "never (the k-ary tree has no fewer rounds than dissemination)"
    else:
        cond = f"{a}*o_r < {b}*(o_s + L)" + ("" if pt.recv_gap_s <= pt.o_r_s else "  [with o_r -> max(o_r, g)]")
    tk = _kary_tree(pt, P, k)
    td = _dissemination(pt, P, k)
    return Crossover(P, k, a, b, cond, tk, td, bool(tk < td))


# ---------------------------------------------------------------------------------------------
# The C registry's barrier rows (`latscope-bench coll --op barrier --alg ROW`, src/algos/barrier.c)
#
# Every row is predicted with the same round costs as above. Where the seed's exit is a hardware
# multicast (one hop, ``kary-tree``, ``binary-tree``, ``linear-bcast``), the C rows release with
# MPI_Bcast, which MPI libraries run as a binomial tree for an empty message: that release is
# modelled as ``h * ceil(log2 P)``. tree-shm releases through a flag in shared memory: one store
# seen by spinning readers, modelled as one ``L`` (no send or receive overhead: no message).
# The two-network rows cost what their one-network twins cost: on one machine the two
# "networks" are one. ``native`` (the MPI library's own barrier) has no model: None.

# the seed-model row each registry row corresponds to (for reading the seed's formulas)
ROW_MODEL = {"dissemination": "dissemination", "pairwise": "shuffle-exchange", "tree": "kary-tree-p2p",
             "tree-bcast": "kary-tree", "tree-shm": "kary-tree", "tree-2net": "kary-tree", "binomial": "binomial",
             "linear": "linear", "linear-bcast": "linear-bcast", "linear-2net": "linear-bcast",
             "tournament": "tournament", "shm": None, "native": None}


def _mpi_bcast_release(pt: MessagePoint, P: int) -> float:
    return pt.hop_s * ceil_log(P, 2) if P > 1 else 0.0


def row_time_s(params: ModelParams | MessagePoint, P: int, row: str, *, size_bytes: float = 0) -> float | None:
    """Predicted time of registry row ``row`` (``"tree:k=3"``) on ``P`` ranks; None for ``native``."""
    P = require_int_at_least("P (processes)", P, 1)
    base, k = parse_row(row)
    pt = params if isinstance(params, MessagePoint) else message_point(params, size_bytes)
    if base in ("native", "shm"):   # shm: cache-line traffic, no message: nothing in LogP
        return None
    if P == 1:
        return 0.0
    if base == "dissemination":
        return _dissemination(pt, P, 2)
    if base == "pairwise":
        return _shuffle_exchange(pt, P, 2)
    if base == "tree":
        return _kary_tree_p2p(pt, P, k or 4)
    if base in ("tree-bcast", "tree-2net"):
        return _kary_gather(pt, P, k or 4) + _mpi_bcast_release(pt, P)
    if base == "tree-shm":
        return _kary_gather(pt, P, k or 4) + pt.L_s
    if base == "linear":
        return _linear(pt, P, 2)
    if base in ("linear-bcast", "linear-2net"):
        return _linear_gather(pt, P) + _mpi_bcast_release(pt, P)
    return _two_phase_log2(pt, P, 2)   # binomial, tournament
