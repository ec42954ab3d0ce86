"""Simple collective costs: linear and binomial broadcast, scatter and gather.

Hockney (``t(m) = alpha + beta m``) and the LogP family (LogP, LogGP, PLogP through
:func:`~latscope.models.params.message_point`).  ``size_bytes`` is the block per process
(scatter/gather) or the whole message (bcast).  Round-based: a binomial algorithm takes
``ceil(log2 P)`` rounds and each round costs one message of that round's largest block.

=========  ========  ==========================================  =================================
op         alg       Hockney                                     LogP family (h(m) = o_s+L(m)+o_r)
=========  ========  ==========================================  =================================
bcast      linear    ``(P-1)(alpha + beta m)``                   ``h(m) + (P-2) s(m)``
bcast      binomial  ``ceil(log2 P)(alpha + beta m)``            ``ceil(log2 P) h(m)``
scatter    linear    ``(P-1)(alpha + beta m)``                   ``h(m) + (P-2) s(m)``
gather     linear    ``(P-1)(alpha + beta m)``                   ``h(m) + (P-2) r(m)``
scatter/   binomial  ``ceil(log2 P) alpha + (P-1) beta m``       ``sum_j h(m b_j)``
gather
=========  ========  ==========================================  =================================

``s(m)``/``r(m)`` are the send/receive gaps of :class:`~latscope.models.params.MessagePoint`
(LogGP: ``max(g, o) + (m-1) G``); ``b_j = min(2**j, P - 2**j)`` is the number of blocks the root
forwards in the round at distance ``2**j`` (they sum to ``P - 1``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ModelError, require_int_at_least, require_nonneg

# The parameter sets and ceil_log (.barrier) are imported where a cost is computed: the op and
# algorithm names below are read when the `latscope model` parser is built, which stays without
# the models themselves (latscope/commands.py)
if TYPE_CHECKING:
    from .params import ModelParams

__all__ = ["COLLECTIVE_OPS", "COLLECTIVE_ALGORITHMS", "SCHEDULES", "binomial_blocks", "collective_time_s",
           "schedule_time_s"]

COLLECTIVE_OPS: tuple[str, ...] = ("bcast", "scatter", "gather")
COLLECTIVE_ALGORITHMS: tuple[str, ...] = ("linear", "binomial")


def binomial_blocks(P: int) -> list[int]:
    """Blocks forwarded by the root of a binomial scatter, per round (largest distance first)."""
    from .barrier import ceil_log
    P = require_int_at_least("P (processes)", P, 1)
    d = ceil_log(P, 2)
    return [min(1 << j, P - (1 << j)) for j in range(d - 1, -1, -1)]


def collective_time_s(params: ModelParams, op: str, alg: str, P: int, size_bytes: float) -> float:
    """Predicted time of collective ``op`` with algorithm ``alg`` on ``P`` processes."""
    from .barrier import ceil_log
    from .params import HockneyParams, message_point
    if op not in COLLECTIVE_OPS:
        raise ModelError(f"op = {op!r}: must be one of {', '.join(COLLECTIVE_OPS)}")
    if alg not in COLLECTIVE_ALGORITHMS:
        raise ModelError(f"alg = {alg!r}: must be one of {', '.join(COLLECTIVE_ALGORITHMS)}")
    P = require_int_at_least("P (processes)", P, 1)
    m = require_nonneg("size_bytes", size_bytes)
    if P == 1:
        return 0.0
    if isinstance(params, HockneyParams):
        a, b = params.alpha_s, params.beta_s_per_byte
        if alg == "linear":
            return (P - 1) * (a + b * m)
        if op == "bcast":
            return ceil_log(P, 2) * (a + b * m)
        return ceil_log(P, 2) * a + (P - 1) * b * m
    if alg == "linear":
        pt = message_point(params, m)
        gap = pt.recv_gap_s if op == "gather" else pt.send_gap_s
        return pt.hop_s + (P - 2) * gap
    if op == "bcast":
        return ceil_log(P, 2) * message_point(params, m).hop_s
    return sum(message_point(params, m * blk).hop_s for blk in binomial_blocks(P))


# Every algorithm of latscope-bench's collective registry that has a model (op, alg) -> formula in
# the LogP family's terms (h(m) = o_s + L(m) + o_r, s/r the send/receive gaps, d = ceil(log2 P)).
# The rest (native: the library's own, whose schedule is not known; null) have none.
SCHEDULES: dict[tuple[str, str], str] = {
    ("bcast", "linear"): "h(m) + (P-2) s(m)",
    ("bcast", "binomial"): "d h(m)",
    ("scatter", "linear"): "h(m) + (P-2) s(m)",
    ("scatter", "binomial"): "sum_j h(m b_j)",
    ("gather", "linear"): "h(m) + (P-2) r(m)",
    ("gather", "binomial"): "sum_j h(m b_j)",
    ("reduce", "binomial"): "d h(m) (the combining not modelled)",
    ("allreduce", "reduce-bcast"): "2 d h(m)",
    ("allgather", "gather-bcast"): "sum_j h(m b_j) + d h(P m)",
    ("alltoall", "pairwise"): "(P-1) h(m) (each round's send and receive overlap)",
}


def schedule_time_s(params: ModelParams, op: str, alg: str, P: int, size_bytes: float) -> float:
    """Predicted time of any modelled registry schedule (:data:`SCHEDULES`), Hockney or the LogP
    family; ``size_bytes`` is the bench's: the block per process for scatter, gather, allgather
    and alltoall, the whole vector for bcast, reduce and allreduce."""
    from .barrier import ceil_log
    from .params import HockneyParams, message_point
    if (op, alg) not in SCHEDULES:
        known = ", ".join(f"{o}/{a}" for o, a in SCHEDULES)
        raise ModelError(f"{op}/{alg}: no model of this schedule; modelled: {known}")
    if op in COLLECTIVE_OPS and alg in COLLECTIVE_ALGORITHMS:
        return collective_time_s(params, op, alg, P, size_bytes)
    P = require_int_at_least("P (processes)", P, 1)
    m = require_nonneg("size_bytes", size_bytes)
    if P == 1:
        return 0.0
    d = ceil_log(P, 2)
    if isinstance(params, HockneyParams):
        a, b = params.alpha_s, params.beta_s_per_byte
        one = a + b * m
        if op == "reduce":
            return d * one
        if op == "allreduce":
            return 2 * d * one
        if op == "alltoall":
            return (P - 1) * one
        return d * a + (P - 1) * b * m + d * (a + b * P * m)   # allgather: gather, then bcast of P m
    h = message_point(params, m).hop_s
    if op == "reduce":
        return d * h
    if op == "allreduce":
        return 2 * d * h
    if op == "alltoall":
        return (P - 1) * h
    return (collective_time_s(params, "gather", "binomial", P, m)
            + collective_time_s(params, "bcast", "binomial", P, P * m))
