"""LogP event simulation of the barrier rows, in the seed's benchmark loop (seed 002 §4.3, §5.1).

The closed forms of :mod:`latscope.models.barrier` (seed 002 §5.1.2) give the critical path of
one barrier that every rank enters at the same instant. The seed's benchmark measures something
else: ``repeat {t0; barrier; t1; dummy work}``, each rank timing itself, per-rank statistic
averaged over ranks. In that loop the ranks do not enter together: a rank released early starts
its dummy work early and enters the next barrier early, so in steady state every rank's
``t1 - t0`` is the period of the loop minus the dummy work — the longest dependency cycle
(max-plus algebra), not the single-shot critical path. This module runs each row's message
schedule (the exact sequence of sends and receives of ``src/algos/barrier.c``) under LogP, per
rank clocks, through the same loop, and returns the quantity the benchmark reports.

Why one module of over 600 lines: the LogP rules below, every row's program and the one loop that
runs them belong together (a rule changed here changes every row at once, and the tests compare
the rows against latscope-sim's rank by rank); what is not the simulation (the closed forms, the
parameter file) lives in barrier.py and params.py.

LogP rules (Culler et al.; seed 002 §5.1):

* send: the sender is busy ``o_s``; consecutive sends of one rank start at least ``g`` apart;
  the message is ready at the receiver ``L`` after the send ends.
* receive: a receive finishes ``o_r`` after ``max(ready, receiver free)``; consecutive receives
  of one rank start at least ``g`` apart; a Waitall processes its messages in arrival order.
  ``o_r`` is what ``latscope-bench logp`` measures (time in MPI_Recv for a message that arrived
  before the call), and ``L`` is the raw ``RTT/2 - o_s - o_r`` — possibly negative. Both
  calibration benchmarks are then reproduced exactly: a receive already waiting finishes
  ``L + o_r = RTT/2 - o_s`` after the send ends (the ping-pong), a late one ``o_r`` after its
  call (the o_r benchmark). A negative ``L`` says a receive that waits costs less after the
  arrival than one that finds the message queued; clamping it to 0 (as the parameter file
  does for the closed forms) would make every waiting receive ``|L|`` too slow.
* posting a receive (MPI_Irecv, the first half of MPI_Recv/MPI_Sendrecv) costs ``post_s`` of
  CPU time: ``latscope-bench logp``'s ``post`` (time in MPI_Irecv, nothing to match; the
  parameter file's ``source.post_s``), default 0. A receive posted early is off the critical
  path, one posted on it (the exchange rounds of dissemination/pairwise) is not.
* a blocking receive (MPI_Recv, MPI_Wait/Waitall) whose message is not there at its first look
  (``post_s`` after the call: one pass of the progress engine; the message is there ``L_poll_s``
  after its send ended, as a polling receiver sees it) takes at least ``wait_s`` (the wait floor): MPICH's waiting loop looks again only after a
  ``sched_yield`` (docs/barriers.md "Blocking waits": a receive entered as its message is sent
  returns ~1.5 us later where a polling one returns ~0.4 us later). ``latscope-bench logp``'s
  ``rwait`` - o_s (``source.wait_s``); None: no floor (LogP's ``max(ready, free) + o_r`` alone).
* a receive posted before its message could arrive (MPI_Irecv, then MPI_Wait/Waitall: the
  exchange rounds' MPI_Sendrecv, the k-nomial and binomial gathers) whose message is there at
  the wait's first look (``post_s`` after the call; the message there ``L_poll_s`` after its send
  ended, as for the wait floor below) finishes ``irecv_wait_s`` after max(free, that time)
  (``latscope-bench logp``'s ``irecv_wait``, ``source.irecv_wait_s``) instead of LogP's
  ``max(ready, free) + o_r``: ``o_r`` times a blocking MPI_Recv of a queued message, and the
  loop's L folds a waiting receiver's own wait into the hop. None: LogP's rule
  (docs/barriers.md "The exchange receive").
* with ``catch_s`` (logp's catch, ``source.catch_s``), whether such a posted receive's message is
  there at its wait's first look (for irecv_wait and for the wait floor) is measured instead:
  found iff its send started at least ``catch_s`` before the wait's call (a sweep of send starts
  around the call, docs/barriers.md "The catch boundary, measured"); the ``L_poll``-based window
  above came out 25-196 ns too wide here. Blocking MPI_Recv keeps the window.
* a polling receive (``pwait``: MPI_Iprobe until seen, linear-2net's gather) sees a message
  ``L_poll_s`` after its send ends (``rtt_poll/2 - o_s - poll``, ``source.L_poll_s``); None: ``L_s``.
  linear-2net probes with MPI_ANY_SOURCE over two communicators in turn: ``L_poll_any_s``
  (``rtt_poll_any - rtt_poll/2 - o_s - poll``, ``source.L_poll_any_s``: logp's rtt_poll_any
  polls so) where measured, else ``L_poll_s``.
* a flag in shared memory (tree-shm's release) is seen ``flag_s`` after the store:
  ``latscope-bench logp``'s ``flag`` (half a flag ping-pong in an MPI-3 shared window;
  ``source.flag_s``), default ``max(L, 0)`` (one cache-line transfer, no overheads).
* MPI_Bcast (the ``*-bcast``/``*-2net`` rows' release): ``bcast="p2p"`` (default) MPICH's
  binomial broadcast of point-to-point messages, the largest subtree first (``h * ceil(log2 P)``,
  as the closed form); ``bcast="flag"`` a shared-memory release like tree-shm's (what MPICH does
  within one node by default: its POSIX release_gather broadcast); ``bcast="mcast"`` the seed's
  multicast exit, one release every rank sees ``mcast_s`` after the root's call, ``mcast_s`` the
  library's broadcast measured one way (``latscope-bench logp``'s ``mcast``, ``source.mcast_s``);
  ``"auto"`` (:func:`resolve_bcast`) takes ``mcast`` where the measured broadcast beats a message
  on one host, else ``p2p``.

The simulation reproduces the closed forms for a simultaneous single entry where they are exact
(:func:`single_shot_s`; tested in tests/python/test_barrier.py); where a closed form is an
approximation (pairwise at a non-power of two, binomial's fan-out) the difference is documented
there and in docs/barriers.md.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ModelError, require_int_at_least
from .params import MessagePoint, ModelParams, message_point
from .rows import BCAST_CHOICES, BCAST_MODELS, parse_row

__all__ = [
    "SimParams",
    "LoopResult",
    "SIM_ROWS",
    "SIM_MODELS",
    "row_program",
    "model_program",
    "simulate",
    "single_shot_s",
    "loop_time_s",
    "row_loop_time_s",
    "raw_latency_s",
    "BCAST_MODELS",
    "BCAST_CHOICES",
    "resolve_bcast",
    "source_seconds",
    "poll_latency_s",
]


# BCAST_MODELS, BCAST_CHOICES (how MPI_Bcast releases the *-bcast/*-2net rows): models/rows.py

# Each simulated cost's spread (SimParams.jitter): the logp op whose samples measure it, and the
# share of that op's deviation from its median the cost takes. The ops that time the cost itself
# take all of it. mcast (out by MPI_Bcast, back by a polled message) gives half to the broadcast's
# way out. The latencies derived from round trips (L from rtt_loop, L_poll from rtt_poll,
# L_poll_any) stay at their medians: a round trip's spread is mostly the o_s, o_r / poll of its
# two hops, which are drawn already; giving L its round trip's spread as well counts it twice
# (docs/barriers.md "The loop under measured noise"). The catch boundary (logp's catch) stays at
# its median too: its sweep counts a wait that caught its message but was slowed (preempted, a
# late wake-up) as a miss, so the tails of its distribution are the waits' own spread, drawn
# already through irecv_wait and rwait (docs/barriers.md "The catch boundary, measured").
JITTER_OPS: dict[str, tuple[str, float]] = {
    "o_s": ("o_s", 1.0), "o_r": ("o_r", 1.0), "post": ("post", 1.0), "poll": ("poll", 1.0),
    "irecv_wait": ("irecv_wait", 1.0), "wait": ("rwait", 1.0), "flag": ("flag", 1.0),
    "mcast": ("mcast", 0.5),
}


def quantile_deviation(table: tuple[tuple[float, float], ...], u: float) -> float:
    """The deviation from the median at quantile ``u`` of a piecewise-linear quantile function
    ``((q, deviation), ...)`` (q ascending from 0 to 1): inverse-transform sampling of a measured
    distribution known by its order statistics (a record's min, median, p90, p99)."""
    q0, d0 = table[0]
    if u <= q0:
        return d0
    for q1, d1 in table[1:]:
        if u <= q1:
            return d0 + (d1 - d0) * (u - q0) / (q1 - q0) if q1 > q0 else d1
        q0, d0 = q1, d1
    return d0


def resolve_bcast(bcast: str | None, *, mcast_s: float | None, hop_s: float, one_host: bool) -> str:
    """The MPI_Bcast model for ``bcast="auto"`` (or None): ``mcast`` when the library's broadcast
    was measured (``mcast_s``), the ranks share one host and that broadcast beats a message
    (``mcast_s < 0.9 * hop_s``, hop = RTT/2: the library releases through shared memory, as
    MPICH's default on one node does, one store for all ranks); otherwise ``p2p`` (a broadcast
    of messages, a binomial tree: Open MPI on one node, any library across nodes). A given model
    is returned as it is."""
    if bcast not in (None, "auto"):
        return bcast
    if mcast_s is not None and one_host and mcast_s < 0.9 * hop_s:
        return "mcast"
    return "p2p"


@dataclass(frozen=True)
class SimParams:
    """LogP parameters of the simulation (seconds). ``L_s`` may be negative (see the module doc)."""

    o_s_s: float
    o_r_s: float
    L_s: float
    g_s: float = 0.0
    post_s: float = 0.0
    flag_s: float | None = None
    bcast: str = "p2p"
    mcast_s: float | None = None
    poll_s: float | None = None     # a polled receive's cost ("pwait"); None: o_r
    L_poll_s: float | None = None   # latency a polling receiver sees ("pwait"); None: L_s
    wait_s: float | None = None     # least time of a blocking receive that has to wait; None: no floor
    irecv_wait_s: float | None = None   # a pre-posted receive whose message is there; None: o_r
    L_poll_any_s: float | None = None   # "pwait" polling MPI_ANY_SOURCE over two communicators; None: L_poll_s
    # a posted receive's catch boundary: its wait finds the message at its first look iff the send
    # started at least catch_s before the wait's call (logp's catch; may be negative); None: the
    # L_poll-based window (the message there post_s after the call)
    catch_s: float | None = None
    # measured spread of each cost (JITTER_OPS below: logp op -> ((quantile, deviation from the
    # median), ...)); None: every cost its median (the deterministic loop)
    jitter: Mapping[str, tuple[tuple[float, float], ...]] | None = field(default=None, compare=False)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.bcast not in BCAST_MODELS:
            raise ModelError(f"bcast = {self.bcast!r}: unknown; valid: {', '.join(BCAST_MODELS)}")
        if self.mcast_s is not None and not (math.isfinite(self.mcast_s) and self.mcast_s >= 0):
            raise ModelError(f"mcast_s = {self.mcast_s!r}: must be a finite number >= 0 (seconds)")
        if self.bcast == "mcast" and self.mcast_s is None:
            raise ModelError("bcast = 'mcast' needs the broadcast's one-way latency (source.mcast_s of the "
                             "parameter file: latscope-bench logp --ops mcast, then latscope fit logp)")
        for name in ("o_s_s", "o_r_s", "g_s", "post_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ModelError(f"{name} = {v!r}: must be a finite number >= 0 (seconds)")
        if not math.isfinite(self.L_s) or self.L_s + self.o_r_s < 0:
            raise ModelError(f"L_s = {self.L_s!r}: L + o_r (the ping-pong's RTT/2 - o_s) must be >= 0")
        for name in ("flag_s", "poll_s", "wait_s", "irecv_wait_s"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v >= 0):
                raise ModelError(f"{name} = {v!r}: must be a finite number >= 0 (seconds)")
        if self.catch_s is not None and not math.isfinite(self.catch_s):
            raise ModelError(f"catch_s = {self.catch_s!r}: must be a finite number (seconds)")
        for name in ("L_poll_s", "L_poll_any_s"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v + (self.o_r_s if self.poll_s is None else self.poll_s) >= 0):
                raise ModelError(f"{name} = {v!r}: L_poll + poll (rtt_poll/2 - o_s) must be >= 0")

    @property
    def flag_latency_s(self) -> float:
        return max(self.L_s, 0.0) if self.flag_s is None else self.flag_s

    @property
    def hop_s(self) -> float:
        """One message to a receiver already waiting: ``o_s + L + o_r`` (the ping-pong's RTT/2)."""
        return self.o_s_s + self.L_s + self.o_r_s

    @classmethod
    def from_params(cls, params: ModelParams | MessagePoint | "SimParams", *, size_bytes: float = 0,
                    L_raw_s: float | None = None, post_s: float = 0.0, flag_s: float | None = None,
                    bcast: str | None = None, mcast_s: float | None = None,
                    poll_s: float | None = None, L_poll_s: float | None = None,
                    wait_s: float | None = None, irecv_wait_s: float | None = None,
                    L_poll_any_s: float | None = None, catch_s: float | None = None,
                    jitter: Mapping[str, tuple[tuple[float, float], ...]] | None = None) -> "SimParams":
        """From model parameters; ``L_raw_s`` (the fit's unclamped ``RTT/2 - o_s - o_r``, kept in a
        parameter file's ``source.L_raw_s``) replaces the clamped ``L`` when given. A SimParams is
        returned as it is (the keyword values then apply only where given)."""
        if isinstance(params, SimParams):
            upd: dict[str, Any] = {}
            if L_raw_s is not None:
                upd["L_s"] = float(L_raw_s)
            if post_s:
                upd["post_s"] = post_s
            if flag_s is not None:
                upd["flag_s"] = flag_s
            if mcast_s is not None:
                upd["mcast_s"] = mcast_s
            if poll_s is not None:
                upd["poll_s"] = poll_s
            if L_poll_s is not None:
                upd["L_poll_s"] = float(L_poll_s)
            if wait_s is not None:
                upd["wait_s"] = wait_s
            if irecv_wait_s is not None:
                upd["irecv_wait_s"] = irecv_wait_s
            if L_poll_any_s is not None:
                upd["L_poll_any_s"] = float(L_poll_any_s)
            if catch_s is not None:
                upd["catch_s"] = float(catch_s)
            if jitter is not None:
                upd["jitter"] = jitter
            if bcast is not None:
                upd["bcast"] = resolve_bcast(bcast, mcast_s=upd.get("mcast_s", params.mcast_s),
                                             hop_s=params.hop_s, one_host=True)
            return replace(params, **upd) if upd else params
        pt = params if isinstance(params, MessagePoint) else message_point(params, size_bytes)
        # the MessagePoint's gaps are max(g, o); the simulation applies o itself, so g alone is
        # the smaller of the two gaps (g <= o makes it irrelevant, as in the closed forms)
        g = min(pt.send_gap_s, pt.recv_gap_s)
        L = pt.L_s if L_raw_s is None else float(L_raw_s)
        # RTT/2 < o_s (a fit too noisy to split) would make a waiting receive finish before the
        # send ended: floor L + o_r at 0 rather than refuse
        L = max(L, -pt.o_r_s)
        # "auto" here (no hosts known) assumes one host; compare_results resolves it per results file
        model = resolve_bcast(bcast, mcast_s=mcast_s, hop_s=pt.o_s_s + L + pt.o_r_s, one_host=True)
        # L_poll + poll below 0 (rtt_poll/2 < o_s: a noisy fit): floored as L above
        Lp = None if L_poll_s is None else max(float(L_poll_s), -(pt.o_r_s if poll_s is None else poll_s))
        La = None if L_poll_any_s is None else max(float(L_poll_any_s), -(pt.o_r_s if poll_s is None else poll_s))
        return cls(o_s_s=pt.o_s_s, o_r_s=pt.o_r_s, L_s=L, g_s=g, post_s=post_s, flag_s=flag_s, bcast=model,
                   mcast_s=mcast_s, poll_s=poll_s, L_poll_s=Lp, wait_s=wait_s, irecv_wait_s=irecv_wait_s,
                   L_poll_any_s=La, catch_s=catch_s, jitter=jitter)


def raw_latency_s(source: dict[str, Any] | None) -> float | None:
    """The fit's unclamped ``L = RTT/2 - o_s - o_r`` from a parameter file's ``source`` (written by
    `latscope fit logp`), or None when the file does not carry it."""
    v = (source or {}).get("L_raw_s")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def loop_latency_s(source: dict[str, Any] | None) -> float | None:
    """The loop's ``L = rtt_loop/2 - o_s - o_r`` from a parameter file's ``source`` (logp's
    rtt_loop: the round trip measured in seed 002's benchmark loop, the state the loop simulation
    models), else the fit's raw L (``raw_latency_s``), else None."""
    v = (source or {}).get("L_loop_s")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else raw_latency_s(source)


def poll_latency_s(source: dict[str, Any] | None, key: str = "L_poll_s") -> float | None:
    """The latency a polling receiver sees, ``rtt_poll/2 - o_s - poll`` (``source.L_poll_s``, written
    by `latscope fit logp` when logp's rtt_poll and poll were measured; may be negative), or None.
    ``key="L_poll_any_s"``: the same for linear-2net's wildcard poll over two communicators."""
    v = (source or {}).get(key)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def source_seconds(source: dict[str, Any] | None, key: str) -> float | None:
    """A non-negative time ``key`` (``post_s``, ``flag_s``) from a parameter file's ``source``, or
    None (older files, or flag not measured: the pair was not on one node)."""
    v = (source or {}).get(key)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 else None


# ---------------------------------------------------------------------------------------------
# Programs: per rank, the operations of one barrier call, in the order src/algos/barrier.c
# issues them. Ops: ("irecv", src, tag) post a receive; ("wait", n) wait for the last n posted
# receives (MPI_Wait/Waitall of receives posted ahead: processed in arrival order, a message
# already there costing irecv_wait_s); ("wait", n, "recv") the same for blocking MPI_Recv calls
# (a queued message costs o_r); ("pwait", n) the same, each receive found by
# polling (MPI_Iprobe, then MPI_Recv of the matched message: poll_s instead of o_r, the cost
# latscope-bench logp's poll measures); ("send", dst, tag) an eager send (MPI_Send
# and MPI_Isend of an empty message both complete locally on shared memory); ("flag_set", key);
# ("flag_wait", key) / ("mcast_wait", key) released flag_s / mcast_s after the store; ("mcast", tag) one hardware multicast to every other rank (the seed's
# exit), received with ("irecv", "mcast", tag); ("work", seconds) busy CPU time (tests, staggered
# entry).

Op = tuple[Any, ...]
Program = Callable[[int, int, int], list[Op]]   # (rank, P, k) -> ops


def _recv(src: int | str, tag: str) -> list[Op]:
    """A blocking MPI_Recv: posted and waited for in one call (a queued message costs o_r)."""
    return [("irecv", src, tag), ("wait", 1, "recv")]


def _dissemination(me: int, P: int, k: int) -> list[Op]:
    ops: list[Op] = []
    j, d = 0, 1
    while d < P:   # MPI_Sendrecv = Irecv, Isend, Waitall
        ops += [("irecv", (me - d) % P, f"diss{j}"), ("send", (me + d) % P, f"diss{j}"), ("wait", 1)]
        j, d = j + 1, d * 2
    return ops


def _pairwise(me: int, P: int, k: int) -> list[Op]:
    P2 = 1 << (P.bit_length() - 1)
    if me >= P2:
        return [("send", me - P2, "fold_in")] + _recv(me - P2, "fold_out")
    ops: list[Op] = _recv(me + P2, "fold_in") if me + P2 < P else []
    j, d = 0, 1
    while d < P2:
        ops += [("irecv", me ^ d, f"pair{j}"), ("send", me ^ d, f"pair{j}"), ("wait", 1)]
        j, d = j + 1, d * 2
    if me + P2 < P:
        ops.append(("send", me + P2, "fold_out"))
    return ops


def _knomial_gather(me: int, P: int, k: int, tag: str) -> tuple[list[Op], int, list[int]]:
    """(ops, parent or -1, children in posting order) of the C knomial_gather."""
    ops: list[Op] = []
    kids: list[int] = []
    s = 1
    while s < P:
        span = s * k
        if me % span:
            parent = me - me % span
            if kids:
                ops.append(("wait", len(kids)))
            ops.append(("send", parent, tag))
            return ops, parent, kids
        i = 1
        while i < k and me + i * s < P:
            kids.append(me + i * s)
            ops.append(("irecv", me + i * s, tag))
            i += 1
        s = span
    if kids:
        ops.append(("wait", len(kids)))
    return ops, -1, kids


def _knomial_release(parent: int, kids: list[int], tag: str) -> list[Op]:
    ops: list[Op] = _recv(parent, tag) if parent >= 0 else []
    return ops + [("send", c, tag) for c in reversed(kids)]   # largest subtree first


def _binomial_bcast(me: int, P: int, tag: str) -> list[Op]:
    """MPICH's MPIR_Bcast_intra_binomial from root 0: receive from the parent, then send to the
    children, the largest subtree first."""
    ops: list[Op] = []
    mask = 1
    while mask < P:
        if me & mask:
            ops += _recv(me - mask, tag)
            break
        mask <<= 1
    mask >>= 1
    while mask > 0:
        if me + mask < P:
            ops.append(("send", me + mask, tag))
        mask >>= 1
    return ops


def _tree(me: int, P: int, k: int) -> list[Op]:
    ops, parent, kids = _knomial_gather(me, P, k, "up")
    return ops + _knomial_release(parent, kids, "down")


def _tree_bcast(me: int, P: int, k: int) -> list[Op]:
    return _knomial_gather(me, P, k, "up")[0] + [("bcast", "bcast")]


def _tree_shm(me: int, P: int, k: int) -> list[Op]:
    # one node: the node leader (rank 0) is the gather's root and bumps the flag the others spin on
    ops, parent, _ = _knomial_gather(me, P, k, "up")
    return ops + [("flag_set", "rel") if parent < 0 else ("flag_wait", "rel")]


def _linear_gather(me: int, P: int, poll: bool = False) -> list[Op]:
    # rank 0 receives P-1 arrivals in any order (MPI_ANY_SOURCE): arrival order, as a Waitall;
    # poll: found by MPI_Iprobe over the two communicators of the 2net rows (src/algos/barrier.c)
    if me:
        return [("send", 0, "lin_up")]
    # (MPI_Recv of MPI_ANY_SOURCE, one by one: blocking receives)
    return [("irecv", i, "lin_up") for i in range(1, P)] + ([("pwait", P - 1) if poll else ("wait", P - 1, "recv")]
                                                            if P > 1 else [])


def _linear(me: int, P: int, k: int) -> list[Op]:
    if me:
        return _linear_gather(me, P) + _recv(0, "lin_down")
    return _linear_gather(me, P) + [("send", i, "lin_down") for i in range(1, P)]


def _linear_bcast(me: int, P: int, k: int) -> list[Op]:
    return _linear_gather(me, P) + [("bcast", "bcast")]


def _linear_2net(me: int, P: int, k: int) -> list[Op]:
    return _linear_gather(me, P, poll=True) + [("bcast", "bcast")]


def _binomial(me: int, P: int, k: int) -> list[Op]:
    low = (me & -me) if me else P
    kids = []
    d = 1
    while d < low and me + d < P:
        kids.append(me + d)
        d <<= 1
    ops: list[Op] = [("irecv", c, "bin_up") for c in kids]
    if kids:
        ops.append(("wait", len(kids)))
    if me:
        ops += [("send", me - low, "bin_up")] + _recv(me - low, "bin_down")
    return ops + [("send", c, "bin_down") for c in kids]   # Isend in order: smallest subtree first


def _tournament(me: int, P: int, k: int) -> list[Op]:
    ops: list[Op] = []
    d = 1
    while d < P:
        if me & d:
            ops += [("send", me - d, "tour_up")] + _recv(me - d, "tour_down")
            break
        if me + d < P:
            ops += _recv(me + d, "tour_up")
        d <<= 1
    d >>= 1
    while d >= 1:
        if me + d < P:
            ops.append(("send", me + d, "tour_down"))
        d >>= 1
    return ops


def _kary_mcast(me: int, P: int, k: int) -> list[Op]:
    """The seed's k-ary tree: k-nomial gather, release by one hardware multicast (one hop)."""
    ops, parent, _ = _knomial_gather(me, P, k, "up")
    if P == 1:
        return ops
    return ops + ([("mcast", "rel")] if parent < 0 else _recv("mcast", "rel"))


def _linear_mcast(me: int, P: int, k: int) -> list[Op]:
    if P == 1:
        return []
    return _linear_gather(me, P) + ([("mcast", "rel")] if me == 0 else _recv("mcast", "rel"))


# registry rows (src/algos/barrier.c): base name -> program; native has no schedule (None)
SIM_ROWS: dict[str, Program | None] = {
    "dissemination": _dissemination,
    "pairwise": _pairwise,
    "tree": _tree,
    "tree-bcast": _tree_bcast,
    "tree-shm": _tree_shm,
    "tree-2net": _tree_bcast,        # one machine: both "networks" are one; same schedule
    "binomial": _binomial,
    "linear": _linear,
    "linear-bcast": _linear_bcast,
    "linear-2net": _linear_2net,     # gather by MPI_Iprobe polling over two communicators
    "tournament": _tournament,
    "native": None,
    "shm": None,                     # shared-memory counter + release word: no messages, no LogP schedule
}

# the seed-model algorithms of models.barrier.BARRIER_ALGORITHMS (multicast = one hop)
SIM_MODELS: dict[str, Program] = {
    "dissemination": _dissemination,
    "shuffle-exchange": _pairwise,
    "binary-tree": lambda me, P, k: _kary_mcast(me, P, 2),
    "kary-tree": _kary_mcast,
    "kary-tree-p2p": _tree,
    "linear": _linear,
    "linear-bcast": _linear_mcast,
    "tournament": _tournament,
    "binomial": _binomial,
    "null": lambda me, P, k: [],
}


def row_program(row: str) -> tuple[Program | None, int]:
    """(program, k) of registry row ``row`` (``"tree:k=3"``); program None for ``native``, ``shm``
    and any row without a message schedule here; an unknown row raises ModelError."""
    base, k = parse_row(row)
    # a registry row without a schedule here (a new row not yet modelled) has no prediction
    return SIM_ROWS.get(base), (k or 2)


def model_program(alg: str) -> Program:
    if alg not in SIM_MODELS:
        raise ModelError(f"barrier algorithm {alg!r}: unknown; valid: {', '.join(SIM_MODELS)}")
    return SIM_MODELS[alg]


# ---------------------------------------------------------------------------------------------
# The engine


@dataclass(frozen=True)
class LoopResult:
    """Per-rank barrier times of the simulated loop (seconds) and their summaries."""

    per_rank_median_s: list[float]
    per_rank_mean_s: list[float]
    single_shot_s: float          # critical path of the first barrier (simultaneous entry)

    @property
    def mean_of_medians_s(self) -> float:
        """What `latscope barrier compare` reports as measured: each rank's median, averaged."""
        return sum(self.per_rank_median_s) / len(self.per_rank_median_s)

    @property
    def mean_of_means_s(self) -> float:
        return sum(self.per_rank_mean_s) / len(self.per_rank_mean_s)


def simulate(program: Program, P: int, k: int, params: SimParams, *, iterations: int = 1,
             dummy_s: float = 30e-6, stagger_s: float = 0.0) -> list[list[float]]:
    """Run ``iterations`` barriers of ``program`` on ``P`` ranks, each followed by ``dummy_s`` of
    work, rank r starting at ``r * stagger_s``; return ``times[rank][iteration]`` = exit - entry of
    each call.

    Ranks advance as far as their inputs allow; a receive waits for the matching send (per
    (source, destination, tag) channel, in order: MPI's non-overtaking rule).
    """
    P = require_int_at_least("P (processes)", P, 1)
    k = require_int_at_least("k (tree arity)", k, 2)
    if dummy_s < 0:
        raise ModelError(f"dummy work = {dummy_s!r} s: must be >= 0")
    p = params

    def expand(ops: list[Op], me: int) -> list[Op]:
        # ("bcast", tag): MPI_Bcast from rank 0 as params.bcast says
        out: list[Op] = []
        for op in ops:
            if op[0] != "bcast":
                out.append(op)
            elif p.bcast == "p2p":
                out += _binomial_bcast(me, P, op[1])
            elif P > 1:   # flag, mcast: one store by the root, every other rank released after a latency
                wait = "flag_wait" if p.bcast == "flag" else "mcast_wait"
                out.append(("flag_set", op[1]) if me == 0 else (wait, op[1]))
        return out

    progs = [expand(program(r, P, k), r) for r in range(P)]
    # measured noise (params.jitter): every cost drawn from its op's measured distribution, one
    # seeded stream, so that the loop settles in whatever mix of states that noise produces
    rng = random.Random(p.seed) if p.jitter else None

    def dev(cost: str, u: float | None = None) -> float:
        if rng is None or p.jitter is None or cost not in JITTER_OPS:
            return 0.0
        op, share = JITTER_OPS[cost]
        tab = p.jitter.get(op)
        return share * quantile_deviation(tab, rng.random() if u is None else u) if tab else 0.0
    cpu = [r * stagger_s for r in range(P)]   # each rank's clock (rank r enters first at r * stagger_s)
    last_send = [-math.inf] * P          # start of its last send (gap g)
    last_recv = [-math.inf] * P          # start of its last receive processing (gap g)
    sends: dict[tuple[Any, ...], list[float]] = defaultdict(list)   # channel -> send end times
    starts: dict[tuple[Any, ...], list[float]] = defaultdict(list)  # channel -> send start times (catch_s)
    posted_n: dict[tuple[Any, ...], int] = defaultdict(int)         # channel -> receives posted
    flags: dict[tuple[str, int], float] = {}                        # (key, iteration) -> store time
    it = [0] * P
    pc = [0] * P
    pending: list[list[tuple[tuple[Any, ...], int]]] = [[] for _ in range(P)]
    entry = list(cpu)
    times: list[list[float]] = [[] for _ in range(P)]
    done = [iterations == 0] * P

    def ready(chan: tuple[Any, ...], idx: int, lat: float) -> float | None:
        lst = sends.get(chan)
        return lst[idx] + lat if lst is not None and idx < len(lst) else None

    while not all(done):
        progressed = False
        for r in range(P):
            while not done[r]:
                ops = progs[r]
                if pc[r] == len(ops):            # barrier exit: record, dummy work, next entry
                    times[r].append(cpu[r] - entry[r])
                    it[r] += 1
                    pc[r] = 0
                    progressed = True
                    if it[r] == iterations:
                        done[r] = True
                        break
                    cpu[r] += dummy_s
                    entry[r] = cpu[r]
                    continue
                op = ops[pc[r]]
                kind = op[0]
                if kind == "irecv":
                    chan = ("mcast", op[2], r) if op[1] == "mcast" else (op[1], r, op[2])
                    pending[r].append((chan, posted_n[chan]))
                    posted_n[chan] += 1
                    cpu[r] += max(0.0, p.post_s + dev("post"))
                elif kind == "send":
                    start = max(cpu[r], last_send[r] + p.g_s)
                    last_send[r] = start
                    cpu[r] = start + max(0.0, p.o_s_s + dev("o_s"))
                    sends[(r, op[1], op[2])].append(cpu[r])
                    starts[(r, op[1], op[2])].append(start)
                elif kind == "mcast":
                    start = max(cpu[r], last_send[r] + p.g_s)
                    last_send[r] = start
                    cpu[r] = start + max(0.0, p.o_s_s + dev("o_s"))
                    for q in range(P):
                        if q != r:
                            sends[("mcast", op[1], q)].append(cpu[r])
                            starts[("mcast", op[1], q)].append(start)
                elif kind in ("wait", "pwait"):
                    n = op[1]
                    polled = kind == "pwait"
                    o_r = p.poll_s if polled and p.poll_s is not None else p.o_r_s
                    # a receive posted ahead (Irecv ... Wait/Waitall) whose message is there at
                    # the wait's first look: irecv_wait_s; a blocking MPI_Recv ("recv"): o_r
                    xr = None if polled or len(op) > 2 else p.irecv_wait_s
                    lat = p.L_poll_s if polled and p.L_poll_s is not None else p.L_s
                    lk = "L_poll" if polled and p.L_poll_s is not None else "L"
                    if polled and p.L_poll_any_s is not None:   # linear-2net: any source, two communicators
                        lat, lk = p.L_poll_any_s, "L_poll_any"
                    reqs = pending[r][-n:]
                    maybe = [ready(c, i, 0.0) for c, i in reqs]   # send ends
                    ends = [a for a in maybe if a is not None]
                    if len(ends) < len(maybe):
                        break                   # a matching send has not happened yet
                    del pending[r][-n:]
                    call = cpu[r]
                    # "there" is when a look can find it: L_poll after its send (below)
                    lv, vk = (p.L_s, "L") if p.L_poll_s is None else (p.L_poll_s, "L_poll")
                    # one quantile per message for both of its latencies (a message late to a
                    # polling look is late to the blocking receive too); L + o_r >= 0 as above
                    us_ = [None if rng is None else rng.random() for _ in ends]
                    arr = [e + max(lat + dev(lk, u), -o_r) for e, u in zip(ends, us_)]
                    seen = [e + max(lv + dev(vk, u), -o_r) for e, u in zip(ends, us_)]
                    if p.catch_s is not None and not polled and len(op) == 2:
                        # a receive posted ahead: its wait finds the message at its first look iff
                        # the send started catch_s (logp's catch, measured: a sweep of send starts
                        # around the wait's call; docs/barriers.md "The catch boundary, measured")
                        # before the call; its median (JITTER_OPS: why not its spread)
                        found = [starts[c][i] <= call - p.catch_s for c, i in reqs]
                    else:
                        # the message there (L_poll after its send) by the first look, post_s after the call
                        found = [sn <= call + p.post_s for sn in seen]
                    for a, sn, fd in sorted(zip(arr, seen, found)):
                        free = max(cpu[r], last_recv[r] + p.g_s)
                        if xr is not None and fd:
                            # found at the first look (an exchange round's crossing messages):
                            # MPI_Wait of a posted receive, from when a look sees it
                            last_recv[r] = max(free, sn)
                            cpu[r] = last_recv[r] + max(0.0, xr + dev("irecv_wait"))
                        else:
                            # LogP: max(ready, free) + o_r, the hop's L from the loop's round
                            # trip (a receiver that waits; the wait's own grid folded in)
                            last_recv[r] = max(free, a)
                            cpu[r] = last_recv[r] + max(0.0, o_r + dev("poll" if polled and p.poll_s is not None
                                                                       else "o_r"))
                    # a blocking wait whose message was not there at its first look (one pass of
                    # the progress engine, post_s: what MPI_Irecv with nothing to match costs)
                    # returns no sooner than its floor. "There" is when a look can find it: L_poll
                    # after its send (what a polling receiver sees), not the loop's L, which folds
                    # the blocking receiver's own wait into a chain's hop: with L an exchange
                    # round (messages crossing, both sent before either wait) missed its look
                    # whenever L_loop > post_s and was charged the floor on both ranks
                    # (docs/barriers.md "Blocking waits", "The exchange rows")
                    if not polled and p.wait_s is not None and arr:
                        if not all(found):
                            cpu[r] = max(cpu[r], call + max(0.0, p.wait_s + dev("wait")))
                elif kind == "work":
                    cpu[r] += op[1]
                elif kind == "flag_set":
                    flags[(op[1], it[r])] = cpu[r]
                elif kind in ("flag_wait", "mcast_wait"):
                    t = flags.get((op[1], it[r]))
                    if t is None:
                        break
                    lat = p.flag_latency_s if kind == "flag_wait" else float(p.mcast_s or 0.0)
                    cpu[r] = max(cpu[r], t + max(0.0, lat + dev("flag" if kind == "flag_wait" else "mcast")))
                else:   # pragma: no cover - programs are built above
                    raise ModelError(f"internal: unknown op {op!r}")
                pc[r] += 1
                progressed = True
        if not progressed:
            raise ModelError(f"internal: simulated barrier deadlocked at P = {P}, k = {k}")
    return times


def single_shot_s(program: Program, P: int, k: int, params: SimParams) -> float:
    """Critical path of one barrier that every rank enters at 0: the last rank's exit time."""
    return max(t[0] for t in simulate(program, P, k, params, iterations=1))


JITTER_ITERATIONS = 300   # barriers per simulated loop with measured noise (the benchmark's --min-reps)
JITTER_SEEDS = 4          # independent noisy loops pooled per prediction


def loop_time_s(program: Program, P: int, k: int, params: SimParams, *, dummy_s: float = 30e-6,
                iterations: int = 60, warmup: int = 20) -> LoopResult:
    """The seed's benchmark loop in steady state: per-rank median and mean of ``t1 - t0`` over the
    iterations after ``warmup``, and the single-shot critical path of the first call."""
    if iterations <= warmup:
        raise ModelError(f"iterations = {iterations}: must exceed warmup = {warmup}")
    # With the wait floor the loop of an exchange round (dissemination, pairwise) has two steady
    # states: the ranks entering within the catch window (post_s - L_poll, ~0.1 us: each finds
    # the other's message at its first look, no floor), or a 2-cycle in which the rank that enters
    # first misses its look, pays the floor, leaves wait_s - o_r later and so enters second next
    # time (simulate(stagger_s=...) starts there). Measured, launches beside heavy load sat
    # nearer the cycle and the quietest in the window (docs/barriers.md "The exchange rows"); the
    # prediction is for a quiet machine: ranks entering together, the window.
    if params.jitter:
        # with measured noise: as many barriers as the benchmark times (bench_args: 300 after its
        # warm-up), so that each rank's median is taken over a sample of the same size, pooled over
        # SEEDS independent loops (the per-rank median of a mix of states is itself noisy)
        iterations = max(iterations, warmup + JITTER_ITERATIONS)
        runs = [simulate(program, P, k, replace(params, seed=params.seed + s), iterations=iterations, dummy_s=dummy_s)
                for s in range(JITTER_SEEDS)]
        times = [[x for run in runs for x in run[r][warmup:]] for r in range(P)]
        first = max(run[r][0] for run in runs[:1] for r in range(P))
        warmup = 0
    else:
        times = simulate(program, P, k, params, iterations=iterations, dummy_s=dummy_s)
        first = max(t[0] for t in times)
    meds, means = [], []
    for t in times:
        tail = sorted(t[warmup:])
        n = len(tail)
        meds.append(tail[n // 2] if n % 2 else 0.5 * (tail[n // 2 - 1] + tail[n // 2]))
        means.append(sum(tail) / n)
    return LoopResult(per_rank_median_s=meds, per_rank_mean_s=means, single_shot_s=first)


def row_loop_time_s(params: ModelParams | MessagePoint | SimParams, P: int, row: str, *, dummy_s: float = 30e-6,
                    L_raw_s: float | None = None, post_s: float = 0.0, flag_s: float | None = None,
                    bcast: str | None = None, mcast_s: float | None = None, size_bytes: float = 0,
                    poll_s: float | None = None, L_poll_s: float | None = None,
                    wait_s: float | None = None, irecv_wait_s: float | None = None,
                    L_poll_any_s: float | None = None, catch_s: float | None = None,
                    jitter: Mapping[str, tuple[tuple[float, float], ...]] | None = None) -> float | None:
    """Predicted value of the seed's benchmark for registry row ``row`` on ``P`` ranks: the mean
    over ranks of each rank's median ``t1 - t0`` in steady state. None for ``native``. ``jitter``:
    each cost drawn from its op's measured distribution (SimParams.jitter)."""
    P = require_int_at_least("P (processes)", P, 1)
    prog, k = row_program(row)
    if prog is None:
        return None
    sp = SimParams.from_params(params, size_bytes=size_bytes, L_raw_s=L_raw_s, post_s=post_s, flag_s=flag_s,
                               bcast=bcast, mcast_s=mcast_s, poll_s=poll_s, L_poll_s=L_poll_s, wait_s=wait_s,
                               irecv_wait_s=irecv_wait_s, L_poll_any_s=L_poll_any_s, catch_s=catch_s,
                               jitter=jitter)
    return loop_time_s(prog, P, k, sp, dummy_s=dummy_s).mean_of_medians_s
