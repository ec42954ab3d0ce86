"""Point-to-point message costs (LoGPC §2, eqs. (1)-(2); Hockney; LogP; LogGP; PLogP)."""

from __future__ import annotations

from .errors import ModelError, require_nonneg
from .params import HockneyParams, LogGPParams, LogPParams, ModelParams, PLogPParams

__all__ = [
    "hockney_time_s",
    "logp_time_s",
    "loggp_time_s",
    "plogp_time_s",
    "logpc_long_time_s",
    "logpc_end_to_end_s",
    "p2p_time_s",
]


def hockney_time_s(p: HockneyParams, size_bytes: float) -> float:
    """Hockney: ``alpha + beta * m``."""
    m = require_nonneg("message size (bytes)", size_bytes)
    return p.alpha_s + p.beta_s_per_byte * m


def logp_time_s(p: LogPParams | LogGPParams) -> float:
    """LogP short message, sender start to receiver done: ``o_s + L + o_r`` (LoGPC §3.1)."""
    return p.o_s_s + p.L_s + p.o_r_s


def loggp_time_s(p: LogGPParams, size_bytes: float) -> float:
    """LogGP: ``o_s + (m - 1) G + L + o_r`` (Alexandrov et al.; ``m <= 1`` is a short message)."""
    m = require_nonneg("message size (bytes)", size_bytes)
    return p.o_s_s + max(0.0, m - 1.0) * p.G_s_per_byte + p.L_s + p.o_r_s


def plogp_time_s(p: PLogPParams, size_bytes: float) -> float:
    """PLogP: ``L + g(m)`` (Kielmann et al.)."""
    return p.L_s + p.g_at(size_bytes)


def logpc_long_time_s(p: LogGPParams, size_bytes: float) -> float:
    """LoGPC eq. (1): ``o_sl + L + (B - 1) G``, network-bandwidth-limited long message."""
    B = require_nonneg("message size B (bytes)", size_bytes)
    if B < 1:
        raise ModelError(f"B = {B!r} bytes: eq. (1) needs B >= 1")
    return p.o_sl + p.L_long + (B - 1.0) * p.G_s_per_byte


def logpc_end_to_end_s(p: LogGPParams, size_bytes: float) -> float:
    """LoGPC eq. (2): ``T_s-r = o_sl + L + max(o_rl + a G + B G_m, (B - 1) G)``.

    End-to-end time of a DMA-pipelined long message: the receive interrupt (``o_rl``) starts after
    ``a`` header bytes have arrived; the queued bytes are then drained at the memory rate ``G_m``;
    for long enough messages the network rate ``G`` dominates and eq. (1) results.
    """
    B = require_nonneg("message size B (bytes)", size_bytes)
    if B < 1:
        raise ModelError(f"B = {B!r} bytes: eq. (2) needs B >= 1")
    G = p.G_s_per_byte
    return p.o_sl + p.L_long + max(p.o_rl + p.a_bytes * G + B * p.G_m, (B - 1.0) * G)


def p2p_time_s(params: ModelParams, size_bytes: float, *, pipelined: bool = False) -> float:
    """One message of ``size_bytes`` under any model.

    ``pipelined=True`` selects LoGPC eq. (2) for LogGP parameters (otherwise plain LogGP);
    LogP ignores the size (short messages only).
    """
    if isinstance(params, HockneyParams):
        return hockney_time_s(params, size_bytes)
    if isinstance(params, LogGPParams):
        if pipelined:
            return logpc_end_to_end_s(params, size_bytes)
        return loggp_time_s(params, size_bytes)
    if isinstance(params, LogPParams):
        require_nonneg("message size (bytes)", size_bytes)
        return logp_time_s(params)
    if isinstance(params, PLogPParams):
        return plogp_time_s(params, size_bytes)
    raise ModelError(f"params = {params!r}: not a latscope model parameter set")
