"""Application models of LoGPC §5: all-to-all remap, the Diamond DAG and EM3D."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .contention import solve_injection_rate, upper_bound
from .errors import ModelError, require_int_at_least, require_nonneg, require_positive
from .params import LogGPParams, LogPParams, NetworkParams

__all__ = [
    "RemapSync",
    "remap_sync",
    "remap_sync_rtt",
    "remap_async_s",
    "remap_async_injection_rate",
    "remap_async_loggp_s",
    "RemapLong",
    "remap_long",
    "remap_async_stream_s",
    "remap_sync_stream_s",
    "DiamondDAG",
    "DagTerms",
    "EM3DIteration",
    "em3d_iteration",
]


@dataclass(frozen=True)
class RemapSync:
    """Cost of one synchronous (request-reply) all-to-all remap iteration (LoGPC §5.1.1, Table 4).

    ``logp_s = 2 (o_s + L + o_r)``; ``lopc_s = logp_s + C_r``; ``logpc_s = lopc_s + 2 C_n``.
    """

    logp_s: float
    lopc_s: float
    logpc_s: float
    C_n_s: float
    C_r_s: float


def remap_sync(p: LogPParams | LogGPParams, C_n_s: float = 0.0, C_r_s: float | None = None) -> RemapSync:
    """LoGPC §5.1.1: ``2 (o_s + L + C_n + o_r) + C_r`` per round trip.

    ``C_r`` (contention for processor resources, from LoPC) defaults to LoPC's empirical
    ``o_r + o_s`` (the cost of a handler that sends a reply); ``C_n`` is the network contention
    per message, e.g. from :func:`~latscope.models.contention.solve_injection_rate`.
    """
    Cn = require_nonneg("C_n_s (network contention per message)", C_n_s)
    Cr = p.o_r_s + p.o_s_s if C_r_s is None else require_nonneg("C_r_s (resource contention)", C_r_s)
    base = 2.0 * (p.o_s_s + p.L_s + p.o_r_s)
    return RemapSync(logp_s=base, lopc_s=base + Cr, logpc_s=base + Cr + 2.0 * Cn, C_n_s=Cn, C_r_s=Cr)


def remap_sync_rtt(rtt_s: float, o_s_s: float, o_r_s: float, C_n_s: float = 0.0,
                   C_r_s: float | None = None) -> RemapSync:
    """LoGPC §5.1.1 with the contention-free round trip ``2 (o_s + L + o_r)`` given as one measured
    value ``rtt_s`` (LogP defines ``L`` from it: ``L = RTT/2 - o_s - o_r``, which may come out
    negative on shared memory, so the sum is taken as measured rather than rebuilt from ``L``):
    ``logp_s = rtt``, ``lopc_s = rtt + C_r`` (``C_r`` defaults to LoPC's ``o_s + o_r``),
    ``logpc_s = lopc_s + 2 C_n``."""
    rt = require_positive("rtt_s (request-reply round trip)", rtt_s)
    os_ = require_nonneg("o_s_s", o_s_s)
    or_ = require_nonneg("o_r_s", o_r_s)
    Cn = require_nonneg("C_n_s (network contention per message)", C_n_s)
    Cr = os_ + or_ if C_r_s is None else require_nonneg("C_r_s (resource contention)", C_r_s)
    return RemapSync(logp_s=rt, lopc_s=rt + Cr, logpc_s=rt + Cr + 2.0 * Cn, C_n_s=Cn, C_r_s=Cr)


def remap_async_s(p: LogPParams | LogGPParams, messages: int = 1) -> float:
    """LoGPC §5.1.2: asynchronous remap costs ``o_s + o_r`` per message (one send, one receive)."""
    n = require_int_at_least("messages", messages, 0)
    return n * (p.o_s_s + p.o_r_s)


def remap_async_loggp_s(p: LogGPParams, size_bytes: float, sent: int, received: int) -> float:
    """LoGPC §5.1.2 with message sizes and one processor's actual load: an asynchronous remap in
    which a processor sends ``sent`` and receives ``received`` messages of ``B`` bytes costs it::

        sent * (max(g, o_s) + (B - 1) G) + received * (max(g, o_r) + (B - 1) G)

    For short messages and ``g <= o`` with ``sent = received = n`` this is the paper's
    ``n (o_s + o_r)``; for long ones it is ``~ 2 B G`` per message (§5.1.3), with the receive
    overhead kept because a processor that copies the data itself does not hide ``o_r``.
    The LogGP gaps are those of :func:`~latscope.models.params.message_point`."""
    from .params import message_point

    s = require_int_at_least("sent (messages)", sent, 0)
    r = require_int_at_least("received (messages)", received, 0)
    mp = message_point(p, size_bytes)
    return s * mp.send_gap_s + r * mp.recv_gap_s


def remap_async_stream_s(send_gap_s: float, recv_gap_s: float, sent: int, received: int) -> float:
    """Refined §5.1.2 (not the paper's): ``sent * g_send + received * g_recv`` with PLogP-style
    per-message costs measured as streams at the message size (``latscope-bench logp`` ``g_nb`` and
    ``g_r``). The paper's ``n (o_s + o_r)`` charges isolated overheads; a processor that sends and
    receives back to back pays the stream cost per message (LogP: ``max(o, g)``)."""
    s = require_int_at_least("sent (messages)", sent, 0)
    r = require_int_at_least("received (messages)", received, 0)
    gs = require_nonneg("send_gap_s", send_gap_s)
    gr = require_nonneg("recv_gap_s", recv_gap_s)
    return s * gs + r * gr


def remap_sync_stream_s(send_gap_s: float, L_s: float, recv_gap_s: float, C_r_s: float = 0.0) -> float:
    """Refined §5.1.1 round trip (not the paper's): LoPC's ``2 (o_s + L + o_r) + C_r`` with the
    overheads of back-to-back streams. ``C_r`` defaults to 0: with two processors each one's only
    client is its partner, whose request it serves while its own is in flight."""
    gs = require_nonneg("send_gap_s", send_gap_s)
    gr = require_nonneg("recv_gap_s", recv_gap_s)
    L = require_nonneg("L_s", L_s)
    return 2.0 * (gs + L + gr) + require_nonneg("C_r_s", C_r_s)


def remap_async_injection_rate(p: LogPParams | LogGPParams) -> float:
    """LoGPC §5.1.2: ``m = 1 / (o_s + o_r)`` messages per second."""
    return 1.0 / require_positive("o_s + o_r", p.o_s_s + p.o_r_s, "the injection rate would be infinite")


@dataclass(frozen=True)
class RemapLong:
    """Long-message asynchronous remap, per message (LoGPC §5.1.3)."""

    exact_s: float  # o_s + (B-1) G + (B-1-a) G
    approx_s: float  # 2 B G
    bound_ratio: float  # T_c / T from eqs. (13)-(14); 1 when no network is given
    bound_s: float  # approx_s * bound_ratio = F B


def remap_long(p: LogGPParams, size_bytes: float, net: NetworkParams | None = None) -> RemapLong:
    """LoGPC §5.1.3: ``o_s + (B - 1) G + (B - 1 - a) G ~= 2 B G`` per message; with a network,
    contention inflates it at most to ``F B`` (eqs. (13)-(14)).  Without a network the ratio is 1."""
    B = require_nonneg("message size B (bytes)", size_bytes)
    if B < p.a_bytes + 1:
        raise ModelError(f"B = {B!r} bytes: must be >= a + 1 = {p.a_bytes + 1} for the (B-1-a) G term")
    G = p.G_s_per_byte
    exact = p.o_s_s + (B - 1.0) * G + (B - 1.0 - p.a_bytes) * G
    approx = 2.0 * B * G
    ratio = 1.0 if net is None else upper_bound(G, net).ratio
    return RemapLong(exact_s=exact, approx_s=approx, bound_ratio=ratio, bound_s=approx * ratio)


@dataclass(frozen=True)
class DagTerms:
    """The terms of LoGPC eq. (15) for one block count ``b``."""

    b: float
    B_bytes: float
    W_s: float
    d_s: float
    O_s_s: float
    O_r_s: float
    u_s: float
    v_s: float
    makespan_s: float


@dataclass(frozen=True)
class DiamondDAG:
    """Diamond DAG with stripe partitioning (LoGPC §5.2, eq. (15)).

    ``n``: the DAG is ``n x n`` tasks; ``P``: processors (stripes); ``task_s``: time of one task;
    ``aggregation_s_per_value``: the ``alpha`` of ``W = w_a + alpha n / b`` (packing cost per value
    sent); ``bytes_per_value``: bytes sent per boundary value, so ``B = bytes_per_value * n / b``.
    """

    n: int
    P: int
    task_s: float
    params: LogGPParams
    aggregation_s_per_value: float = 0.0
    bytes_per_value: float = 8.0

    def __post_init__(self) -> None:
        require_int_at_least("n (DAG side)", self.n, 1)
        require_int_at_least("P (processors)", self.P, 2, "eq. (15) has (P - 2) stripes in the middle")
        require_nonneg("task_s", self.task_s)
        require_nonneg("aggregation_s_per_value", self.aggregation_s_per_value)
        require_positive("bytes_per_value", self.bytes_per_value)

    def terms(self, b: float) -> DagTerms:
        """Eq. (15) ``M = (W + d) + (P - 2) u + (b - 1) v + O_r + W`` and its terms for ``b`` blocks."""
        b = require_positive("b (blocks per stripe)", b)
        if b < 1.0:
            raise ModelError(f"b = {b!r}: must be >= 1 block per stripe")
        if b > self.n:
            raise ModelError(f"b = {b!r}: at most n = {self.n} blocks per stripe (a block sends n/b >= 1 values)")
        p, n, P = self.params, self.n, self.P
        G, a = p.G_s_per_byte, p.a_bytes
        B = self.bytes_per_value * n / b
        if B < a + 1:
            raise ModelError(
                f"b = {b!r}: block message B = {B:g} bytes must be >= a + 1 = {a + 1} "
                "(O_r = (B - 1 - a) G would be negative)"
            )
        W = n * n / (P * b) * self.task_s + self.aggregation_s_per_value * n / b
        d = p.L_long + a * G
        O_s = p.o_s_s + (B - 1.0) * G
        O_r = (B - 1.0 - a) * G
        u = O_r + W + d
        v = O_s + W + O_r
        M = (W + d) + (P - 2) * u + (b - 1.0) * v + O_r + W
        return DagTerms(b, B, W, d, O_s, O_r, u, v, M)

    def makespan_s(self, b: float) -> float:
        """LoGPC eq. (15) without contention."""
        return self.terms(b).makespan_s

    def makespan_measured_W_s(self, b: float, W_s: float) -> float:
        """Eq. (15) with ``W`` given (measured) instead of ``n^2 t / (P b) + alpha n / b``: the
        communication terms ``d, O_s, O_r`` as the paper's; ``W`` e.g. the time of one stripe's
        computation and packing measured alone, over ``b`` (refinement, not the paper's)."""
        W = require_nonneg("W_s (block computation)", W_s)
        t = self.terms(b)
        u = t.O_r_s + W + t.d_s
        v = t.O_s_s + W + t.O_r_s
        return (W + t.d_s) + (self.P - 2) * u + (t.b - 1.0) * v + t.O_r_s + W

    def b_max(self) -> float:
        """The largest feasible ``b``: a block sends ``n / b >= 1`` values (``b <= n``) and its
        message must hold the header (``B = bytes_per_value * n / b >= a + 1``)."""
        return min(float(self.n), self.bytes_per_value * self.n / (self.params.a_bytes + 1))

    def feasible_blocks(self) -> list[int]:
        """The block counts of the seed's partitioning: ``b`` equal blocks of whole values, so
        ``b`` divides ``n`` (``n / b`` values per block), within ``[1, b_max]``."""
        bm = self.b_max()
        small = [k for k in range(1, math.isqrt(self.n) + 1) if self.n % k == 0]
        divs = sorted(set(small) | {self.n // k for k in small})
        return [k for k in divs if k <= bm]

    def optimal_b(self) -> tuple[float, int]:
        """``(b*, best feasible integer b)`` minimising eq. (15) (the seed's ``dM/db = 0``).

        Eq. (15) is ``X / b + Y b + const`` with ``X = (P - 1)(n^2 t / P + alpha n) + (P - 3) c G``
        and ``Y = o_s - (2 + a) G`` where ``c = bytes_per_value * n``; so ``b* = sqrt(X / Y)``,
        clipped to the feasible ``[1, b_max]`` (:meth:`b_max`: ``b <= n`` and ``B >= a + 1``).
        The integer optimum is the better of the feasible block counts (divisors of ``n``,
        :meth:`feasible_blocks`) on either side of ``b*``: ``M`` is convex in ``b``, so no other
        feasible count can beat both.
        """
        p, n, P = self.params, self.n, self.P
        G, a = p.G_s_per_byte, p.a_bytes
        c = self.bytes_per_value * n
        X = (P - 1) * (n * n * self.task_s / P + self.aggregation_s_per_value * n) + (P - 3) * c * G
        Y = p.o_s_s - (2 + a) * G
        b_max = self.b_max()
        if b_max < 1.0:
            raise ModelError(f"n = {n}: even b = 1 gives B = {c:g} bytes < a + 1 = {a + 1}")
        if Y <= 0.0:
            b_star = b_max
        elif X <= 0.0:
            b_star = 1.0
        else:
            b_star = min(max(math.sqrt(X / Y), 1.0), b_max)
        feas = self.feasible_blocks()
        below = [k for k in feas if k <= b_star]
        above = [k for k in feas if k >= b_star]
        cands = ([below[-1]] if below else []) + ([above[0]] if above else [])
        best = min(sorted(set(cands)), key=self.makespan_s)
        return b_star, int(best)

    def contention(self, b: float, net: NetworkParams) -> tuple[float, float]:
        """``(C_n, M_c)``: contention per message from ``m_c = 1 / (v + 2 C_n)`` (LoGPC §5.2.1) and
        the upper bound ``M + (P - 1 + 2 (b - 1)) C_n`` that charges ``C_n`` to the ``P - 1`` first-block
        messages and to the send and the receive of each of the ``b - 1`` later blocks."""
        t = self.terms(b)
        cc = solve_injection_rate(t.v_s, t.B_bytes, net, contention_factor=2.0)
        Cn = cc.C_n_s
        return Cn, t.makespan_s + (self.P - 1 + 2.0 * (b - 1.0)) * Cn


@dataclass(frozen=True)
class EM3DIteration:
    """Per-iteration cost of EM3D's core phase (LoGPC §5.3)."""

    compute_s: float
    messages: int
    communication_s: float
    total_s: float


def em3d_iteration(
    p: LogPParams | LogGPParams,
    nodes_per_proc: int,
    degree: int,
    nonlocal_fraction: float,
    *,
    edge_s: float,
    values_per_message: int = 10,
    phases: int = 2,
) -> EM3DIteration:
    """LoGPC §5.3: each of the E and H phases computes ``nodes * degree`` edge updates and sends
    the values of its non-local edges in blocks of ``values_per_message`` short messages, each
    costing ``o_s + o_r`` (asynchronous, as the §5.1.2 remap).  Per iteration (``phases = 2``)::

        phases * (nodes * degree * edge_s + ceil(nodes * degree * f / values) * (o_s + o_r))
    """
    nodes = require_int_at_least("nodes_per_proc", nodes_per_proc, 0)
    deg = require_int_at_least("degree", degree, 0)
    f = require_nonneg("nonlocal_fraction", nonlocal_fraction)
    if f > 1.0:
        raise ModelError(f"nonlocal_fraction = {f!r}: must be <= 1")
    vpm = require_int_at_least("values_per_message", values_per_message, 1)
    ph = require_int_at_least("phases", phases, 1)
    e = require_nonneg("edge_s", edge_s)
    msgs = math.ceil(nodes * deg * f / vpm - 1e-12) if nodes * deg * f > 0 else 0
    compute = ph * nodes * deg * e
    comm = ph * msgs * (p.o_s_s + p.o_r_s)
    return EM3DIteration(compute_s=compute, messages=ph * msgs, communication_s=comm, total_s=compute + comm)
