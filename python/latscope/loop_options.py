"""The barrier loop simulation's options beyond LogP, shared by ``latscope barrier compare`` and
``latscope predict barrier`` (one declaration, one parser).

``--post T`` (receive posting cost), ``--flag T`` (shared-memory flag latency) and ``--bcast
MODEL`` (how MPI_Bcast releases the *-bcast/*-2net rows: models.rows.BCAST_CHOICES). The
times default to the parameter file's ``source.post_s`` / ``source.flag_s`` (``latscope-bench
logp``'s post and flag, written by ``latscope fit logp``); the broadcast's own one-way latency
comes from ``source.mcast_s`` (logp's mcast) and has no option: ``--bcast mcast`` needs it; so
does a polled receive's cost, ``source.poll_s`` (logp's poll; the linear-2net gather's receives).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from latscope.models import ModelError
from latscope.models.rows import BCAST_CHOICES
from latscope.units import parse_duration

__all__ = ["LoopOptions", "add_loop_options", "loop_options", "seconds_option"]


@dataclass(frozen=True)
class LoopOptions:
    """Values for models.barrier_sim.row_loop_time_s (seconds; None: not known)."""

    post_s: float
    flag_s: float | None
    mcast_s: float | None
    bcast: str
    poll_s: float | None = None   # None: the simulation charges o_r
    L_poll_s: float | None = None   # source.L_poll_s (logp's rtt_poll); None: L
    wait_s: float | None = None     # source.wait_s (logp's rwait): a blocking wait's floor; None: none   # a BCAST_CHOICES name; "auto" is resolved where the hosts are known
    irecv_wait_s: float | None = None   # source.irecv_wait_s (logp's irecv_wait); None: o_r
    L_poll_any_s: float | None = None   # source.L_poll_any_s (logp's rtt_poll_any); None: L_poll
    catch_s: float | None = None   # source.catch_s (logp's catch; may be negative); None: the L_poll window


def add_loop_options(p: argparse.ArgumentParser, where: str, default_bcast: str) -> None:
    """Declare --post, --flag and --bcast on ``p``; ``where`` names what they feed (in the help)."""
    p.add_argument("--post", default=None, help=f"receive posting cost for {where} (default: the parameter "
                   "file's source.post_s: latscope-bench logp --ops post; else 0)")
    p.add_argument("--flag", default=None, help=f"shared-memory flag latency for {where} (default: the "
                   "parameter file's source.flag_s: latscope-bench logp --ops flag; else max(L, 0))")
    p.add_argument("--bcast", choices=BCAST_CHOICES, default=default_bcast, help=f"MPI_Bcast release in {where}: "
                   "p2p = binomial tree of messages; flag = one shared-memory store (flag latency); mcast = the "
                   "seed's multicast exit at the broadcast's measured one-way latency (source.mcast_s: "
                   "latscope-bench logp --ops mcast); auto = mcast where that broadcast beats a message on one "
                   f"host (MPICH's shared-memory release), else p2p (default {default_bcast})")


def seconds_option(opt: str, text: Any) -> float | None:
    """A duration option's value in seconds (None stays None); bad or negative: ModelError naming it."""
    if text is None:
        return None
    try:
        v = parse_duration(str(text))
    except ValueError as e:
        raise ModelError(f"{opt} {text}: {e}") from None
    if v < 0:
        raise ModelError(f"{opt} {text}: must be >= 0 (seconds, with a unit)")
    return v


def loop_options(args: argparse.Namespace, source: dict[str, Any] | None) -> LoopOptions:
    """The parsed options, each falling back to the parameter file's ``source`` (may be None).
    Bad values raise ModelError naming the option and the value."""
    from latscope.models.barrier_sim import poll_latency_s, source_seconds
    post = seconds_option("--post", getattr(args, "post", None))
    flag = seconds_option("--flag", getattr(args, "flag", None))
    mcast = source_seconds(source, "mcast_s")
    bcast = getattr(args, "bcast", "p2p")
    if bcast == "mcast" and mcast is None:
        raise ModelError("--bcast mcast: the parameter file has no source.mcast_s (measure it with "
                         "latscope-bench logp --ops mcast and fit with latscope fit logp), or choose p2p, flag or auto")
    return LoopOptions(post_s=post if post is not None else (source_seconds(source, "post_s") or 0.0),
                       flag_s=flag if flag is not None else source_seconds(source, "flag_s"),
                       mcast_s=mcast, bcast=bcast, poll_s=source_seconds(source, "poll_s"),
                       L_poll_s=poll_latency_s(source), wait_s=source_seconds(source, "wait_s"),
                       irecv_wait_s=source_seconds(source, "irecv_wait_s"),
                       L_poll_any_s=poll_latency_s(source, "L_poll_any_s"),
                       catch_s=poll_latency_s(source, "catch_s"))
