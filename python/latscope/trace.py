"""Traces of real runs and their GOAL schedules (docs/trace.md).

liblatscope_trace.so (src/trace/trace.c), preloaded, writes one binary file per rank,
``trace.<rank>.bin``: a header and 48-byte records, one per MPI call (entry and exit on the
rank's cycle counter, peer, tag, bytes, request). :func:`to_goal` turns the files into a GOAL
schedule (LogGOPSim/Schedgen text, docs/sim.md "GOAL") that ``latscope sim`` replays: the time
between one call's exit and the next call's entry becomes a ``calc``; a blocking send or receive
depends on what came before (``requires``); a nonblocking one too, and what follows it starts
once it has started (``irequires``); a wait makes what follows require the operations it
completed. Bad or incomplete traces raise :class:`TraceError` with one line."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Sequence

from latscope.run import library

if TYPE_CHECKING:
    from latscope.sim import LogGOPS

LIB_NAME = "liblatscope_trace.so"
MAGIC = b"LTSTRACE"
HEADER = struct.Struct("<8sIIiidQ")          # magic, version, header bytes, rank, size, ticks/s, t_init
RECORD_BYTES = 48
# record kinds (src/trace/trace.c)
SEND, RECV, ISEND, IRECV, WAIT, NOP, COLL, END = range(1, 9)
# a communicator's tags are moved to their own range: GOAL has no communicators
COMM_TAG_STRIDE = 1 << 16
# TR_COLL's tag: the operations of LTS_COLL_OP_LIST (include/latscope/algos.h), then those latscope has
# no row for (src/trace/trace.c, in that order)
COLL_NAMES = ("barrier", "bcast", "reduce", "allreduce", "scatter", "gather", "allgather", "alltoall",
              "allgatherv", "gatherv", "scatterv", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan",
              "exscan")


class TraceError(ValueError):
    """A trace that cannot be read or converted; the message is one line."""


def library_path() -> Path:
    """The tracer beside the programs (the build tree or the installed package)."""
    return library(LIB_NAME)


@dataclass
class RankTrace:
    """One rank's file: header fields and the records (a numpy structured array)."""
    rank: int
    size: int
    ticks_per_s: float
    records: Any
    finished: bool


def _dtype() -> Any:
    import numpy as np
    return np.dtype([("kind", "<u4"), ("peer", "<i4"), ("tag", "<i4"), ("comm", "<u4"), ("bytes", "<u8"),
                     ("req", "<u8"), ("t0", "<u8"), ("t1", "<u8")])


def read_rank(path: Path) -> RankTrace:
    import numpy as np
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TraceError(f"{path}: cannot read ({e.strerror})") from None
    if len(data) < HEADER.size or data[:8] != MAGIC:
        raise TraceError(f"{path}: not a latscope trace file (no LTSTRACE header)")
    magic, version, hbytes, rank, size, tps, _ = HEADER.unpack_from(data)
    if version != 1 or hbytes < HEADER.size or tps <= 0:
        raise TraceError(f"{path}: trace format version {version}: this latscope reads version 1")
    body = data[hbytes:]
    if len(body) % RECORD_BYTES:
        raise TraceError(f"{path}: truncated ({len(body)} bytes of records, not a multiple of {RECORD_BYTES})")
    rec = np.frombuffer(body, dtype=_dtype())
    return RankTrace(rank, size, tps, rec, bool(len(rec)) and int(rec["kind"][-1]) == END)


def read_dir(d: str | os.PathLike[str]) -> list[RankTrace]:
    """Every rank's file of a trace directory, checked for one job and every rank present."""
    p = Path(d)
    if not p.is_dir():
        raise TraceError(f"{d}: not a directory (a trace: latscope trace run -o DIR -- ...)")
    files = sorted(p.glob("trace.*.bin"))
    if not files:
        raise TraceError(f"{d}: no trace.<rank>.bin files (latscope trace run -o {d} -- ...)")
    ranks = [read_rank(f) for f in files]
    size = ranks[0].size
    have = {r.rank for r in ranks}
    if any(r.size != size for r in ranks) or have != set(range(size)):
        lacking = sorted(set(range(size)) - have)
        raise TraceError(f"{d}: the files are not one job of {size} ranks"
                         + (f" (no file for rank {lacking[0]})" if lacking else ""))
    ranks.sort(key=lambda r: r.rank)
    unfinished = [r.rank for r in ranks if not r.finished]
    if unfinished:
        raise TraceError(f"{d}: rank {unfinished[0]}'s trace has no end: the program did not reach MPI_Finalize")
    return ranks


@dataclass
class GoalStats:
    """What a conversion wrote."""
    ranks: int
    ops: int = 0
    sends: int = 0
    recvs: int = 0
    calcs: int = 0
    calls: int = 0
    approximated: dict[str, int] = field(default_factory=dict)   # collectives replayed as computation: calls
    span_s: list[float] = field(default_factory=list)     # MPI_Init's exit to MPI_Finalize, per rank
    calc_s: list[float] = field(default_factory=list)     # computation between calls, per rank
    approx_s: list[float] = field(default_factory=list)   # collectives replayed as computation, per rank

    def approximated_share(self) -> float | None:
        """The largest share, over the ranks, of the traced span replayed as collectives' computations."""
        shares = [a / s for a, s in zip(self.approx_s, self.span_s) if s > 0]
        return max(shares) if shares else None


# MPI_Allgatherv replayed as messages: its tags, in a range no communicator reaches (the largest
# communicator number that fits GOAL's 31-bit tags), one per call modulo the stride
RING_TAG_BASE = ((1 << 31) // COMM_TAG_STRIDE - 1) * COMM_TAG_STRIDE
ALLGATHERV = COLL_NAMES.index("allgatherv")


def _ring_blocks(ranks: list[RankTrace]) -> dict[int, list[list[int]]]:
    """MPI_Allgatherv calls that can be replayed as messages: when every rank made the same
    number of them (so the k-th call of each rank is one collective over all ranks; the tracer
    does not record the communicator of these calls), each rank's block sizes in call order
    (the record's bytes: what the rank contributed; 0 in traces of tracers before they were
    recorded)."""
    per = []
    for rt in ranks:
        rec = rt.records
        m = (rec["kind"] == COLL) & (rec["tag"] == ALLGATHERV)
        per.append(rec["bytes"][m].tolist())
    if len(ranks) < 2 or not per[0] or any(len(b) != len(per[0]) for b in per):
        return {}
    return {ALLGATHERV: per}


def _times(rt: RankTrace) -> tuple[list[int], list[int]]:
    """Per record: the computation before it (ns from the previous call's exit to its entry; a
    completion of nothing the trace started keeps its time in the gap, see _rank_goal) and its
    own duration (ns)."""
    rec = rt.records
    ns = 1e9 / rt.ticks_per_s
    kind, req, t0, t1 = (rec[k].tolist() for k in ("kind", "req", "t0", "t1"))
    started = {r for k, r in zip(kind, req) if k in (ISEND, IRECV)}
    prev = t1[0] if kind else 0
    gaps: list[int] = []
    for k, r, a, b in zip(kind, req, t0, t1):
        if k == WAIT and r not in started:
            # a completion of nothing the trace started: MPI_Sendrecv to oneself (an algorithm's
            # local copy, whose messages are left out) or a persistent request. Its time stays in
            # the computation gap, as the copy it is (about 1 us per copy, which the replay lost:
            # docs/trace.md "Against reality")
            gaps.append(0)
            continue
        gaps.append(round((a - prev) * ns) if a > prev else 0)
        prev = max(prev, b)
    return gaps, [round((b - a) * ns) for a, b in zip(t0, t1)]


def _combined(ranks: list[RankTrace], others: list[list[RankTrace]], where: list[str],
              combine: str) -> list[tuple[list[int], list[int]]]:
    """Each rank's gaps and durations, per call the minimum or the median over the traces of
    repeated runs of one program (a rank descheduled for milliseconds inside a 1 us copy shows in
    one run, rarely in the same call of another: the median drops such a stall and keeps the
    machine's usual pace, the minimum also drops the steady slowdown a loaded machine puts on
    every computation). The runs must have made the same calls (kind, peer, tag, bytes) on every
    rank."""
    import numpy as np
    out = []
    for rt in ranks:
        gaps, took = _times(rt)
        all_g, all_t = [gaps], [took]
        key = rt.records[["kind", "peer", "tag", "bytes"]]
        for other, w in zip(others, where):
            if len(other) != len(ranks):
                raise TraceError(f"{w}: a trace of {len(other)} ranks, not {len(ranks)}: not a run of the same program")
            o = other[rt.rank]
            if len(o.records) != len(rt.records) or not (o.records[["kind", "peer", "tag", "bytes"]] == key).all():
                raise TraceError(f"{w}: rank {rt.rank} made other MPI calls than in the first trace: "
                                 "not a run of the same program")
            g2, t2 = _times(o)
            all_g.append(g2)
            all_t.append(t2)
        if others:
            f = np.min if combine == "min" else np.median
            gaps = np.rint(f(np.array(all_g, dtype=float), axis=0)).astype(int).tolist()
            took = np.rint(f(np.array(all_t, dtype=float), axis=0)).astype(int).tolist()
        out.append((gaps, took))
    return out


def _rank_goal(rt: RankTrace, out: IO[str], st: GoalStats, min_gap_ns: int,
               ring: dict[int, list[list[int]]] | None = None,
               times: tuple[list[int], list[int]] | None = None, upto: int | None = None) -> None:
    rec = rt.records
    gaps, took_ns = times or _times(rt)
    kind, peer, tag, comm = (rec[k].tolist() for k in ("kind", "peer", "tag", "comm"))
    nbytes, req, t0, t1 = (rec[k].tolist() for k in ("bytes", "req", "t0", "t1"))
    ns = 1e9 / rt.ticks_per_s
    lines: list[str] = []
    deps: dict[str, bool] = {}      # label -> True: requires (completed), False: irequires (started)
    pending: dict[int, str] = {}    # request -> the operation it completes
    n = 0
    calc_ns = 0
    approx_ns = 0

    def op(text: str) -> str:
        nonlocal n
        lab = f"l{n}"
        n += 1
        lines.append(f"{lab}: {text}")
        for d, full in deps.items():
            lines.append(f"{lab} {'requires' if full else 'irequires'} {d}")
        return lab

    def gtag(i: int) -> int:
        if tag[i] < 0 or not comm[i]:
            return int(tag[i])
        if tag[i] >= COMM_TAG_STRIDE or comm[i] >= (1 << 31) // COMM_TAG_STRIDE:
            raise TraceError(f"rank {rt.rank}: tag {tag[i]} on communicator {comm[i]}: too large to give the "
                             f"communicator its own range in GOAL (tags < {COMM_TAG_STRIDE})")
        return int(comm[i] * COMM_TAG_STRIDE + tag[i])

    def ring_op(nbytes: list[int], coll: int, nth: int) -> None:
        """One MPI_Allgatherv as a ring over all ranks (nbytes[j]: rank j's block): in step s a
        rank sends the block of rank me - s to me + 1 and receives that of me - s - 1 from me - 1,
        both started together, the next step after this step's receive. MPICH's algorithm for
        long blocks; at 2 ranks every MPICH algorithm (ring, recursive doubling, Bruck) is this
        one exchange. What follows requires the last receive and every send."""
        nonlocal deps
        p, me = len(nbytes), rt.rank
        gt = RING_TAG_BASE + (coll * 4096 + nth) % COMM_TAG_STRIDE
        sends: list[str] = []
        last = ""
        for s in range(p - 1):
            sends.append(op(f"send {nbytes[(me - s) % p]}b to {(me + 1) % p} tag {gt}"))
            last = op(f"recv {nbytes[(me - s - 1) % p]}b from {(me - 1) % p} tag {gt}")
            deps = {last: True}
        deps = {**{x: True for x in sends}, last: True}
        st.sends += p - 1
        st.recvs += p - 1

    ncoll: dict[int, int] = {}      # collective number -> calls seen so far on this rank
    for i in range(len(kind) if upto is None else min(upto, len(kind))):
        k = kind[i]
        gap = gaps[i]
        if gap >= min_gap_ns:
            calc_ns += gap
            lab = op(f"calc {gap}")
            deps = {lab: True}
            st.calcs += 1
        if k in (SEND, ISEND):
            lab = op(f"send {nbytes[i]}b to {peer[i]} tag {gtag(i)}")
            st.sends += 1
        elif k in (RECV, IRECV):
            lab = op(f"recv {nbytes[i]}b from {peer[i]} tag {gtag(i)}")
            st.recvs += 1
        elif k == WAIT:
            done = pending.pop(req[i], None)
            if done is not None:     # a request this trace did not see start (persistent): nothing to wait for
                deps[done] = True
            continue
        elif k == COLL:
            nth = ncoll.get(tag[i], 0)
            ncoll[tag[i]] = nth + 1
            blocks = (ring or {}).get(tag[i])
            if blocks is not None:
                ring_op([b[nth] for b in blocks], tag[i], nth)
                continue
            # a collective without latscope's row (or on an intercommunicator): its traced time,
            # as a computation (docs/trace.md "Collectives")
            name = "MPI_" + (COLL_NAMES[tag[i]] if 0 <= tag[i] < len(COLL_NAMES) else str(tag[i])).capitalize()
            st.approximated[name] = st.approximated.get(name, 0) + 1
            approx_ns += int(took_ns[i])
            lab = op(f"calc {took_ns[i]}")
            deps = {lab: True}
            continue
        else:
            continue
        if k in (SEND, RECV):
            deps = {lab: True}
        else:
            pending[req[i]] = lab
            deps = {lab: False}
    st.ops += n
    st.calls += len(kind)
    st.span_s.append((t0[-1] - t1[0]) * ns * 1e-9 if kind else 0.0)
    st.calc_s.append(calc_ns * 1e-9)
    st.approx_s.append(approx_ns * 1e-9)
    out.write(f"rank {rt.rank} {{\n")
    out.write("\n".join(lines))
    out.write("\n}\n")


def to_goal(trace_dir: str | os.PathLike[str], goal: str | os.PathLike[str], *, min_gap_ns: int = 1,
            also: Sequence[str | os.PathLike[str]] = (), upto: Sequence[int] | None = None,
            combine: str = "median") -> GoalStats:
    """Convert a trace directory to GOAL text in ``goal``; computation gaps shorter than
    ``min_gap_ns`` are left out (the operations still follow each other). ``also``: traces of
    repeated runs of the same program; each computation (and each collective replayed as one)
    is then the median (``combine="min"``: the minimum) over all the traces (docs/trace.md
    "Noise"). ``upto``: per rank, how many
    of its records to convert (a prefix of the run: its replay times where a loop starts)."""
    ranks = read_dir(trace_dir)
    if combine not in ("median", "min"):
        raise TraceError(f"combine={combine!r}: allowed are median and min")
    times = _combined(ranks, [read_dir(d) for d in also], [str(d) for d in also], combine)
    st = GoalStats(len(ranks))
    g = Path(goal)
    tmp = g.with_name(g.name + ".tmp")
    try:
        with open(tmp, "w") as out:
            out.write(f"// GOAL schedule of the trace {trace_dir} (latscope trace goal; docs/trace.md)\n")
            out.write(f"num_ranks {len(ranks)}\n")
            ring = _ring_blocks(ranks)
            for rt in ranks:
                _rank_goal(rt, out, st, min_gap_ns, ring, times[rt.rank], None if upto is None else upto[rt.rank])
        tmp.replace(g)
    except OSError as e:
        raise TraceError(f"{goal}: cannot write ({e.strerror})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return st


def replay_params(params: str | os.PathLike[str]) -> "LogGOPS":
    """LogGOPS for replaying a trace, from ``latscope fit logp``'s file: its o_s, g, G, and L and
    o_r such that o_s + L + o_r is h, half the round trip of back-to-back ping-pongs
    (``rtt_train``, ``source.stream``), the regime of a program's loop (isolated round trips pay
    cold caches after the driver's synchronisation: docs/trace.md "Parameters"). L = h - o_s -
    o_r when that is >= 0; otherwise L = 0 and o_r = h - o_s (the fit's o_r is the receive of a
    message already waiting in the unexpected queue, a copy more than a receive posted in
    time pays). Without ``rtt_train``: the file as it is."""
    import dataclasses
    import json

    from latscope.sim import LogGOPS, SimError
    par = LogGOPS.load(params)
    try:
        stream = json.loads(Path(params).read_text()).get("source", {}).get("stream") or {}
        rtt = (stream.get("rtt_train_s") or [None])[0]
    except (OSError, ValueError, AttributeError) as e:
        raise SimError(f"{params}: cannot read the stream measurements ({e})") from None
    if not isinstance(rtt, (int, float)) or rtt <= 0:
        return par
    h = rtt / 2
    if h >= par.o_s_s + par.o_r_s:
        return dataclasses.replace(par, L_s=h - par.o_s_s - par.o_r_s)
    o_s = min(par.o_s_s, h)
    return dataclasses.replace(par, L_s=0.0, o_s_s=o_s, o_r_s=h - o_s)


def path_iteration_median(summary: dict[str, Any], rank: int, peer: int, tag: int) -> tuple[float | None, int]:
    """The median time between consecutive completions of ``rank``'s receives from ``peer`` with
    ``tag`` on a simulation's critical path (``latscope.sim/1`` summary): a loop's iteration as the
    replay times it, when each iteration ends with that receive (trace-pingpong's rank 0). Returns
    (median or None, the number of such receives found)."""
    import statistics
    ops = (summary.get("critical_path") or {}).get("ops") or []
    ends = [float(o["end_s"]) for o in ops
            if o.get("rank") == rank and o.get("op") == "recv" and o.get("peer") == peer and o.get("tag") == tag]
    if len(ends) < 2:
        return None, len(ends)
    return statistics.median(b - a for a, b in zip(ends, ends[1:])), len(ends)


@dataclass
class HopStats:
    """Messages of one size: how many the trace holds, how many found their receiver already
    waiting, and those hops' order statistics (ns)."""
    size_bytes: int
    messages: int
    waited: int
    median_ns: float | None
    p10_ns: float | None
    p90_ns: float | None


def hops(trace_dir: str | os.PathLike[str]) -> list[HopStats]:
    """Per message size, the time from a send's entry (``MPI_Send``/``MPI_Isend``) to the return
    of the call that completed its receive (``MPI_Recv``, or the wait of its ``MPI_Irecv``), for
    the messages whose receiver was already in that call when the send began: then nothing but
    the message itself kept it there, and the hop is what the replay charges a message, o_s + L +
    o_r (+ the per-byte terms; docs/trace.md "Message hops"). Both ends are read on the ranks'
    cycle counters, which on one host are one clock (rdtsc, cntvct_el0): ranks on different hosts
    give no hops. Messages are matched as MPI matches them, per (sender, receiver, communicator,
    tag) in order; a receive posted with a wildcard source or tag is not matched, nor are the
    receives posted after it that it could have taken the message of. At 2 ranks each
    ``MPI_Allgatherv`` is the exchange the replay makes of it: two messages, the blocks, and the
    hop of the later rank's block is the earlier rank's return less the later rank's entry."""
    import statistics
    from collections import defaultdict
    ranks = read_dir(trace_dir)
    tps = statistics.fmean(rt.ticks_per_s for rt in ranks)
    sends: dict[tuple[int, int, int, int], list[tuple[int, int]]] = defaultdict(list)
    recvs: dict[tuple[int, int, int, int], list[tuple[int, int] | None]] = defaultdict(list)
    for rt in ranks:
        rec = rt.records
        kind, peer, tag, comm, nbytes, req, t0, t1 = (rec[k].tolist() for k in
                                                      ("kind", "peer", "tag", "comm", "bytes", "req", "t0", "t1"))
        waits: dict[int, list[int]] = defaultdict(list)   # request -> its completion records, in order
        for i, k in enumerate(kind):
            if k == WAIT:
                waits[req[i]].append(i)
        # after a wildcard receive, MPI may match any later message of the keys it covers to it:
        # those keys' later receives are not matched (comm, tag; tag None: every tag)
        wild: set[tuple[int, int | None]] = set()
        for i, k in enumerate(kind):
            if k in (SEND, ISEND):
                sends[(rt.rank, peer[i], comm[i], tag[i])].append((t0[i], nbytes[i]))
            elif k in (RECV, IRECV):
                if k == IRECV and (peer[i] < 0 or tag[i] < 0):
                    wild.add((comm[i], tag[i] if tag[i] >= 0 else None))
                    continue
                if (comm[i], None) in wild or (comm[i], tag[i]) in wild:
                    continue
                if k == RECV:
                    got: tuple[int, int] | None = (t0[i], t1[i])
                else:
                    done = next((j for j in waits.get(req[i], ()) if j > i), None)
                    got = (t0[done], t1[done]) if done is not None else None
                recvs[(peer[i], rt.rank, comm[i], tag[i])].append(got)
    by_size: dict[int, list[float]] = defaultdict(list)
    count: dict[int, int] = defaultdict(int)
    if len(ranks) == 2:
        # MPI_Allgatherv at 2 ranks is one exchange, and the replay makes it one (_ring_blocks):
        # each call is two messages, the blocks; the rank that entered first waits for the later
        # one's block, whose hop is the first's return less the later's entry
        ag = [rt.records[(rt.records["kind"] == COLL) & (rt.records["tag"] == ALLGATHERV)] for rt in ranks]
        for k in range(min(len(ag[0]), len(ag[1]))):
            a, b = (0, 1) if int(ag[0]["t0"][k]) <= int(ag[1]["t0"][k]) else (1, 0)
            for r in (0, 1):
                count[int(ag[r]["bytes"][k])] += 1
            if int(ag[b]["t0"][k]) < int(ag[a]["t1"][k]):
                by_size[int(ag[b]["bytes"][k])].append((int(ag[a]["t1"][k]) - int(ag[b]["t0"][k])) * 1e9 / tps)
    for key, ss in sends.items():
        rr = recvs.get(key, [])
        for j, (s0, b) in enumerate(ss):
            count[b] += 1
            got = rr[j] if j < len(rr) else None
            if got is not None and got[0] <= s0 < got[1]:
                by_size[b].append((got[1] - s0) * 1e9 / tps)
    out = []
    for b in sorted(count):
        v = sorted(by_size.get(b, []))
        q = statistics.quantiles(v, n=10, method="inclusive") if len(v) >= 2 else None
        out.append(HopStats(b, count[b], len(v), statistics.median(v) if v else None,
                            q[0] if q else None, q[-1] if q else None))
    return out


def model_hop_s(par: "LogGOPS", size_bytes: int) -> float:
    """The hop the simulator charges a message of ``size_bytes`` whose receiver waits (src/sim/engine.c):
    eager, o_s + b G + L + o_r + b O with b = max(size - 1, 0); above S (rendezvous) the request's
    o_s + L and the answer's o_r + L before it."""
    b = max(size_bytes - 1, 0)
    eager = par.o_s_s + b * par.G_s_per_byte + par.L_s + par.o_r_s + b * par.O_s_per_byte
    if par.S_bytes is not None and size_bytes > par.S_bytes:
        return par.o_s_s + par.L_s + par.o_r_s + par.L_s + eager
    return eager


def hop_params(par: "LogGOPS", trace_dir: str | os.PathLike[str], S_bytes: int | None = None,
               min_waited: int = 10, measured: Sequence[HopStats] | None = None) -> tuple["LogGOPS", list[HopStats]]:
    """``par`` with L and G taken from the trace's own message hops (:func:`hops`), and S set to
    ``S_bytes``: the cost of a message in the program's loop, where its computation between
    messages leaves MPI's state and buffers out of the caches, instead of the back-to-back
    ping-pongs' (docs/trace.md "Parameters from the program's messages"). Used: the sizes up to S
    (eager; all without S) with at least ``min_waited`` hops. G is the Theil-Sen slope of their
    median hops over size (Sen 1968: the median of the pairwise slopes), kept as ``par``'s with
    fewer than two sizes, never below 0; L is the median, over the hops (each size's median
    counted once per hop), of the hop less the eager charge without L (:func:`model_hop_s` with
    L = 0: o_s + o_r + (s - 1)(G + O)), never below 0. o_s, o_r, g and O stay ``par``'s: the
    overheads are what the injector's delays queue behind, and a hop does not separate them from
    L. ``measured``: the trace's hops when the caller has them already (:func:`hops` of
    ``trace_dir``), not read again. Returns the parameters and the hops used (none: ``par`` with S
    as given)."""
    import dataclasses
    import statistics
    used = [h for h in (hops(trace_dir) if measured is None else measured) if h.waited >= min_waited and h.median_ns is not None
            and (S_bytes is None or h.size_bytes <= S_bytes)]
    G = par.G_s_per_byte
    if len(used) >= 2:
        slopes = [(b.median_ns - a.median_ns) * 1e-9 / (b.size_bytes - a.size_bytes)   # type: ignore[operator]
                  for i, a in enumerate(used) for b in used[i + 1:]]
        G = max(0.0, statistics.median(slopes))
    L = par.L_s
    if used:
        eager = dataclasses.replace(par, L_s=0.0, G_s_per_byte=G, S_bytes=None)
        res: list[float] = []
        for h in used:
            res += [h.median_ns * 1e-9 - model_hop_s(eager, h.size_bytes)] * h.waited   # type: ignore[operator]
        L = max(0.0, statistics.median(res))
    return dataclasses.replace(par, L_s=L, G_s_per_byte=G, S_bytes=S_bytes), used
