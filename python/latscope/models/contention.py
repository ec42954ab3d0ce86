"""Network contention in k-ary n-cubes (LoGPC §3, eqs. (3)-(10), (13)-(14)).

Agarwal's open M/G/1 model gives the per-switch waiting time ``w_b`` of a ``B``-byte message at
injection rate ``m``; LoGPC closes it by feeding the contention delay back into the injection rate,
``m_c = 1 / (T + C_n)`` (eq. (7)).

Units.  The seed works in network cycles with one byte crossing a channel per cycle.  Here a
message's *channel occupancy* is ``B * c`` seconds with ``c = NetworkParams.channel_s_per_byte``;
every ``B`` of eqs. (3)-(13) becomes ``B * c`` so that ``rho`` is dimensionless, ``m`` is in
messages per second and ``w_b``, ``C_n`` are in seconds.  With ``c`` = one cycle the formulas are
the seed's, term for term.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from .errors import ModelError, require_nonneg, require_positive
from .params import LogGPParams, LogPParams, NetworkParams

__all__ = [
    "channel_load",
    "saturation_rate",
    "switch_wait_s",
    "contention_delay_s",
    "ClosedContention",
    "solve_injection_rate",
    "short_message_time_s",
    "long_message_time_s",
    "UpperBound",
    "upper_bound",
]

_RTOL = 4.0 * sys.float_info.epsilon  # the smallest rtol brentq accepts


def _occupancy(B: float, net: NetworkParams) -> float:
    return require_nonneg("message size B (bytes)", B) * net.channel_s_per_byte


def channel_load(m_per_s: float, size_bytes: float, net: NetworkParams) -> float:
    """LoGPC eq. (4): ``rho = B m k_d / 2`` (probability a channel is busy in a given byte time)."""
    m = require_nonneg("m (injection rate, messages/s)", m_per_s)
    return _occupancy(size_bytes, net) * m * net.kd / 2.0


def saturation_rate(size_bytes: float, net: NetworkParams) -> float:
    """Injection rate at which ``rho = 1``: ``2 / (B k_d)`` messages per second (inf for ``B = 0``)."""
    occ = _occupancy(size_bytes, net)
    return math.inf if occ == 0.0 else 2.0 / (occ * net.kd)


def _check_unsaturated(m: float, B: float, net: NetworkParams) -> float:
    rho = channel_load(m, B, net)
    if rho >= 1.0:
        raise ModelError(
            f"m = {m!r} messages/s with B = {B!r} bytes: channel load rho = B*m*k_d/2 = {rho:.6g} "
            f"must be < 1 (network saturates at m = {saturation_rate(B, net):.6g}/s)"
        )
    return rho


def switch_wait_s(m_per_s: float, size_bytes: float, net: NetworkParams) -> float:
    """LoGPC eq. (5) (= eq. (3) with eq. (4)): waiting time per switch,
    ``w_b = (m B^2/2) / (1 - m B k_d/2) * (k_d - 1)/k_d * (1 + 1/n)``."""
    rho = _check_unsaturated(m_per_s, size_bytes, net)
    occ = _occupancy(size_bytes, net)
    kd, n = net.kd, net.n
    return (m_per_s * occ * occ / 2.0) / (1.0 - rho) * (kd - 1.0) / kd * (1.0 + 1.0 / n)


def contention_delay_s(m_per_s: float, size_bytes: float, net: NetworkParams) -> float:
    """LoGPC eq. (6): network contention per message ``C_n = n k_d w_b`` (open model, rate ``m``)."""
    return net.n * net.kd * switch_wait_s(m_per_s, size_bytes, net)


@dataclass(frozen=True)
class ClosedContention:
    """Solution of LoGPC eq. (7) for inter-message time ``T_s`` and size ``B``."""

    T_s: float
    size_bytes: float
    m_c_per_s: float
    C_n_s: float
    rho: float
    contention_factor: float = 1.0

    @property
    def T_c_s(self) -> float:
        """Inter-message time with contention, ``T + kappa C_n = 1 / m_c``."""
        return self.T_s + self.contention_factor * self.C_n_s

    @property
    def residual(self) -> float:
        """``m_c (T + kappa C_n(m_c)) - 1``: zero at the solution of eq. (7)."""
        return self.m_c_per_s * self.T_c_s - 1.0


def solve_injection_rate(
    T_s: float, size_bytes: float, net: NetworkParams, *, contention_factor: float = 1.0
) -> ClosedContention:
    """Close the contention model: solve ``m_c = 1 / (T + C_n(m_c))`` (LoGPC eq. (7)).

    ``contention_factor`` (``kappa``) charges ``kappa`` contended messages per interval
    ``T``: the Diamond DAG's ``m_c = 1 / (v + 2 C_n)`` (LoGPC §5.2.1) uses ``kappa = 2``.

    ``f(m) = m (T + C_n(m)) - 1`` is increasing on ``[0, m_sat)`` from ``-1`` to ``+inf``, so the
    root is bracketed by ``[0, min(1/T, m_sat))`` and found with Brent's method (plain fixed-point
    iteration of eq. (7) oscillates when contention is heavy).  ``T_s`` is the contention-free
    inter-message time (``1/T`` is the rate without contention).
    """
    T = require_nonneg("T_s (inter-message time)", T_s)
    B = require_nonneg("message size B (bytes)", size_bytes)
    kappa = require_positive("contention_factor", contention_factor)
    m_sat = saturation_rate(B, net)
    if T == 0.0 and (B == 0.0 or net.kd == 1.0):
        raise ModelError(
            f"T_s = 0 with B = {B!r} bytes and k_d = {net.kd!r}: the injection rate is unbounded "
            "(no time between messages and no contention to limit it); T_s must be > 0"
        )
    if net.kd == 1.0 or B == 0.0:  # w_b = 0: no contention in this model
        rho = _check_unsaturated(1.0 / T, B, net)
        return ClosedContention(T, B, 1.0 / T, 0.0, rho, kappa)

    def f(m: float) -> float:
        occ = B * net.channel_s_per_byte
        rho = occ * m * net.kd / 2.0
        Cn = net.n * net.kd * (m * occ * occ / 2.0) / (1.0 - rho) * (net.kd - 1.0) / net.kd * (1.0 + 1.0 / net.n)
        return m * (T + kappa * Cn) - 1.0

    hi = m_sat * (1.0 - 1e-15)
    if T > 0.0:
        hi = min(hi, 1.0 / T)
    if f(hi) < 0.0:  # only possible by rounding when 1/T sits on m_sat
        hi = m_sat * (1.0 - 1e-15)
    if f(hi) == 0.0:
        m_c = hi
    else:
        from scipy.optimize import brentq   # here, not at the top: the CLI starts without scipy
        m_c = brentq(f, 0.0, hi, xtol=hi * 1e-17 + 1e-300, rtol=_RTOL, maxiter=500)
    Cn = contention_delay_s(m_c, B, net)
    return ClosedContention(T, B, float(m_c), Cn, channel_load(m_c, B, net), kappa)


def short_message_time_s(p: LogPParams | LogGPParams, net: NetworkParams, size_bytes: float, T_s: float) -> float:
    """LoGPC eqs. (8)-(9): ``T_s-r = o_s + L + C_n + o_r`` with ``C_n`` from the closed model at ``T_s``."""
    cc = solve_injection_rate(T_s, size_bytes, net)
    return p.o_s_s + p.L_s + cc.C_n_s + p.o_r_s


def long_message_time_s(p: LogGPParams, net: NetworkParams, size_bytes: float, T_s: float) -> float:
    """LoGPC eq. (10): ``T_s-r = o_sl + (B - 1) G + L + C_n`` (contention blocks the header only)."""
    B = require_nonneg("message size B (bytes)", size_bytes)
    if B < 1:
        raise ModelError(f"B = {B!r} bytes: eq. (10) needs B >= 1")
    cc = solve_injection_rate(T_s, B, net)
    return p.o_sl + (B - 1.0) * p.G_s_per_byte + p.L_long + cc.C_n_s


@dataclass(frozen=True)
class UpperBound:
    """LoGPC eqs. (13)-(14): with maximal injection ``m_c = 1 / (F B)`` and ``T_c / T = F / (2 G)``."""

    F_s_per_byte: float
    ratio: float
    G_s_per_byte: float
    k_d: float
    n: int


def upper_bound(G_s_per_byte: float, net: NetworkParams) -> UpperBound:
    """Solve LoGPC eq. (13) for ``F`` and return eq. (14)'s bound ``T_c / T = F / (2 G)``.

    Substituting ``m_c = 1/(F B)`` in eq. (13) cancels ``B``:
    ``F = 2 G + (n + 1)(k_d - 1) c^2 / (2 F - c k_d)`` with ``c`` the channel time per byte; the
    physical root has ``2 F > c k_d`` (``rho < 1``), bracketed and solved with Brent's method.
    """
    G = require_positive("G_s_per_byte", G_s_per_byte, "the bound is relative to the 2GB contention-free time")
    c, kd, n = net.channel_s_per_byte, net.kd, net.n
    A = (n + 1) * (kd - 1.0) * c * c
    if A == 0.0:
        F = 2.0 * G
        if 2.0 * F <= c * kd:
            raise ModelError(f"G_s_per_byte = {G!r}: 2GB injection saturates the network (needs 4G > c*k_d)")
    else:

        def h(F: float) -> float:
            return F - 2.0 * G - A / (2.0 * F - c * kd)

        lo = c * kd / 2.0
        lo = lo + max(lo * 1e-12, 1e-300)
        hi = 2.0 * G + c * kd + c * math.sqrt((n + 1) * (kd - 1.0))
        from scipy.optimize import brentq
        F = brentq(h, lo, hi, xtol=hi * 1e-17 + 1e-300, rtol=_RTOL, maxiter=500)
    return UpperBound(F_s_per_byte=float(F), ratio=float(F / (2.0 * G)), G_s_per_byte=G, k_d=kd, n=n)
