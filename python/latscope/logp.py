"""LogP / LogGP / PLogP parameters from `latscope-bench logp` records (docs/barriers.md).

Per message size m the records give medians of
  o_s(m)  time in the send call,
  o_r(m)  time in the receive call for a message that has already arrived (netgauge's delay),
  RTT(m)  a ping-pong round trip,
  g(m)    time per message of a train of back-to-back sends;
and from them (seed 002 §5.1: RTT/2 = o_s + L + o_r)

  L(m) = RTT(m)/2 - o_s(m) - o_r(m)                     LogP latency (network part)
  G    = slope of g(m) over the large sizes             LogGP gap per byte (Theil-Sen, robust)
  PLogP: o_s(m), o_r(m), g(m) tabulated, and L_PLogP = RTT(0)/2 - g(0) so that one message
         takes L + g(m) (Kielmann et al.'s definition, models/params.py PLogPParams)
  Hockney alongside: RTT(m)/2 = alpha + beta m (latscope.fit, the same regression as p2p).
  Streams, when measured (STREAM_OPS: g_nb, g_r, rtt_train): per-size medians kept beside the
  table (SizeRow.stream, source.per_size, source.stream) for models of applications that send
  and receive back to back (latscope.apps_twins); the LogGP parameters do not use them.
  post, flag and mcast, when measured (AUX_OPS): source.post_s / flag_s / mcast_s for the barrier loop
  simulation (latscope.models.barrier_sim).

Robustness as netgauge: medians per size (never means), a distribution-free CI of each median
(binomial order statistics; from the record's own CI when no raw samples were kept), Theil-Sen
for the slope with residual-based rejection (points further than 3 scaled MADs from the line are
dropped and the slope refitted). On shared memory L is close to zero and can come out negative
(o_r of an already-queued message includes the copy out of the unexpected queue, which a
pre-posted ping-pong receive avoids): the parameter file then holds L = 0 and the raw value is
kept in source.per_size with a note — never a silent clamp.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from latscope import jsonio
from latscope import fit
from latscope.results import Results, load

OPS = ("o_s", "o_r", "rtt", "g")
# Stream measurements (optional: records without them fit as before). Isolated o_s / o_r pay cold
# caches after the driver's synchronisation; in a stream of back-to-back operations a processor
# pays less per message (LogP: max(o, g)). These are what applications that stream messages see:
#   g_nb       time per message of a train of MPI_Isend + MPI_Waitall (nonblocking sends; with
#              blocking sends g is latency-bound above the eager limit: each send waits for its
#              receiver)
#   g_r        time per message of a train of receives of messages that have arrived
#   rtt_train  round-trip time of back-to-back ping-pongs
STREAM_OPS = ("g_nb", "g_r", "rtt_train")
# Costs LogP has no parameter for, measured once (at the smallest size; neither depends on it) for
# the barrier loop simulation (models/barrier_sim.py, docs/barriers.md):
#   post  time in MPI_Irecv when nothing matching has arrived: a receive posted on the critical
#         path (MPI_Sendrecv's exchange rounds) pays it before its message can be matched
#   poll  time to receive a message that has arrived by polling (MPI_Iprobe until seen, then
#         MPI_Recv): a gather that probes several communicators (linear-2net) receives so and never
#         enters the blocking wait's yielding loop that o_r includes (MPICH: sched_yield)
#   flag  one-way latency of a 64-bit flag in an MPI-3 shared-memory window (half a flag
#         ping-pong): the release of the tree-shm row; only for a pair on one node
#   mcast one-way latency of the library's MPI_Bcast on the pair: the op times out by a broadcast
#         from the first rank and back by a pre-posted message, so mcast_s = mcast - RTT/2 (the
#         way back being a ping-pong's half: rtt_loop's when measured, else the smallest size's
#         rtt): the seed's multicast exit as this MPI provides it (the *-bcast rows' release)
#   rtt_loop  the round trip in seed 002's barrier benchmark loop (back to back, 30 us of work
#         between): L_loop = rtt_loop/2 - o_s - o_r is the hop of the barrier loop simulation (the
#         isolated rtt, after the driver's allreduce, sat 20-40 % above it in some launches here)
#   rtt_poll  rtt_loop with both receives polled: L_poll = rtt_poll/2 - o_s - poll is the latency
#         a polling receiver sees (no blocking wait on the way; the linear-2net gather's hop)
#   rwait send, then a blocking receive of the reply the partner sends as soon as it sees the
#         message by polling: wait_s = rwait - o_s is the least time a blocking receive that has
#         to wait takes (MPICH looks again only after a sched_yield; docs/barriers.md "Blocking waits")
#   irecv_wait  time in MPI_Wait completing a receive posted before its message was sent, the
#         message there before the call: the receive of an exchange round (MPI_Sendrecv's Irecv,
#         Isend, Waitall), which o_r (a blocking MPI_Recv of a queued message) over-charges
#         (docs/barriers.md "The exchange receive")
#   rtt_poll_any  rtt_poll with the first rank polling MPI_ANY_SOURCE over two communicators, as
#         linear-2net's gather does: L_poll_any = rtt_poll_any - rtt_poll/2 - o_s - poll is the
#         latency such a receiver sees (a wildcard probe per communicator per look)
# Written to the parameter file as source.post_s / poll_s / flag_s / mcast_s / rtt_loop_s /
# rtt_poll_s / rwait_s / irecv_wait_s / rtt_poll_any_s / catch_s, L_loop_s, L_poll_s, L_poll_any_s and
# wait_s (with their CIs under source.post / poll / flag / mcast / rtt_loop / rtt_poll / rwait /
# irecv_wait / rtt_poll_any / catch), where `latscope barrier compare` and `predict barrier` read them.
#   catch the lead a partner's send needs (send start before the wait's call) for a posted
#         receive's MPI_Wait to find the message at its first look: a sweep of send starts around
#         the call, the record's samples the boundary's quantiles (may be negative: the send may
#         start after the call); only for a pair on one node (docs/barriers.md "The catch boundary")
AUX_OPS = ("post", "poll", "flag", "mcast", "rtt_loop", "rtt_poll", "rwait", "irecv_wait", "rtt_poll_any", "catch")


class LogPFitError(ValueError):
    """The records cannot support the fit (the message says what is missing)."""


@dataclass
class Estimate:
    """A median with its confidence interval (seconds)."""

    value_s: float
    ci_lo_s: float
    ci_hi_s: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}


@dataclass
class SizeRow:
    """Everything measured and derived at one message size."""

    size_bytes: int
    o_s: Estimate
    o_r: Estimate
    rtt: Estimate
    g: Estimate
    L_s: float              # RTT/2 - o_s - o_r (may be negative: see the module note)
    L_ci_half_s: float      # half-widths combined in quadrature (independent measurements)
    stream: dict[str, Estimate] = field(default_factory=dict)   # STREAM_OPS measured at this size

    def to_dict(self) -> dict[str, Any]:
        d = {"size_bytes": self.size_bytes, "o_s": self.o_s.to_dict(), "o_r": self.o_r.to_dict(),
             "rtt": self.rtt.to_dict(), "g": self.g.to_dict(), "L_s": self.L_s, "L_ci_half_s": self.L_ci_half_s}
        d.update({op: e.to_dict() for op, e in self.stream.items()})
        return d


@dataclass
class LogPFit:
    """The fitted parameters, the per-size table and how they were obtained."""

    L_s: float
    o_s_s: float
    o_r_s: float
    g_s: float
    G_s_per_byte: float
    G_ci_s_per_byte: tuple[float, float]
    G_sizes_bytes: list[int]
    G_rejected_bytes: list[int]
    plogp_L_s: float
    rows: list[SizeRow]
    hockney: fit.HockneyFit | None
    confidence: float
    ranks: int | None
    notes: list[str] = field(default_factory=list)
    aux: dict[str, Estimate] = field(default_factory=dict)   # AUX_OPS measured (post, flag)

    def aux_s(self, op: str) -> float | None:
        """The value of an AUX_OPS op (what each is: the table above AUX_OPS): post, poll, flag
        and mcast as measured; ``None`` when the op was not measured."""
        return self.aux[op].value_s if op in self.aux else None

    @property
    def L_loop_s(self) -> float | None:
        """``rtt_loop/2 - o_s - o_r`` at the smallest size: the hop of seed 002's benchmark loop less
        the overheads (``None`` when rtt_loop was not measured). May be negative, as L_s."""
        rtt_loop = self.aux_s("rtt_loop")
        return None if rtt_loop is None else rtt_loop / 2 - self.o_s_s - self.o_r_s

    @property
    def L_poll_s(self) -> float | None:
        """``rtt_poll/2 - o_s - poll`` at the smallest size: the latency seen by a receiver that polls
        (``None`` when rtt_poll or poll was not measured). May be negative, as L_s."""
        rtt_poll, poll = self.aux_s("rtt_poll"), self.aux_s("poll")
        return None if rtt_poll is None or poll is None else rtt_poll / 2 - self.o_s_s - poll

    @property
    def L_poll_any_s(self) -> float | None:
        """``rtt_poll_any - rtt_poll/2 - o_s - poll``: the latency seen by a receiver polling
        MPI_ANY_SOURCE over two communicators (linear-2net's gather); ``None`` unless rtt_poll_any,
        rtt_poll and poll were measured. May be negative, as L_s."""
        any_, rtt_poll, poll = self.aux_s("rtt_poll_any"), self.aux_s("rtt_poll"), self.aux_s("poll")
        if any_ is None or rtt_poll is None or poll is None:
            return None
        return any_ - rtt_poll / 2 - self.o_s_s - poll

    @property
    def wait_s(self) -> float | None:
        """``rwait - o_s``: the least time a blocking receive that has to wait takes (``None`` when
        rwait was not measured; floored at 0)."""
        rwait = self.aux_s("rwait")
        return None if rwait is None else max(rwait - self.o_s_s, 0.0)

    def loggp_params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"L_s": max(0.0, self.L_s), "o_s_s": self.o_s_s, "o_r_s": self.o_r_s, "g_s": self.g_s,
                             "G_s_per_byte": max(0.0, self.G_s_per_byte)}
        if self.ranks:
            p["P"] = int(self.ranks)
        return p

    def plogp_params(self) -> dict[str, Any]:
        return {"L_s": max(0.0, self.plogp_L_s), "sizes_bytes": [r.size_bytes for r in self.rows],
                "o_s_s": [r.o_s.value_s for r in self.rows], "o_r_s": [r.o_r.value_s for r in self.rows],
                "g_s": [r.g.value_s for r in self.rows]}

    def stream_table(self) -> dict[str, Any] | None:
        """The stream measurements per size (``g_nb_s``, ``g_r_s``, ``rtt_train_s``; ``None`` where a
        size lacks one), or ``None`` when the records have none (older runs, ``--ops`` without them)."""
        if not any(r.stream for r in self.rows):
            return None
        out: dict[str, Any] = {"sizes_bytes": [r.size_bytes for r in self.rows]}
        for op in STREAM_OPS:
            out[f"{op}_s"] = [r.stream[op].value_s if op in r.stream else None for r in self.rows]
        return out

    def source(self, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        src: dict[str, Any] = {
            "tool": "latscope fit logp",
            "method": "medians per size; L = RTT/2 - o_s - o_r at the smallest size; G: Theil-Sen slope of g(m)",
            "confidence": self.confidence,
            "L_raw_s": self.L_s,
            "G_ci_s_per_byte": list(self.G_ci_s_per_byte),
            "G_sizes_bytes": self.G_sizes_bytes,
            "G_rejected_bytes": self.G_rejected_bytes,
            "per_size": [r.to_dict() for r in self.rows],
            "plogp": self.plogp_params(),
            "stream": self.stream_table(),
            "hockney": self.hockney.to_dict() if self.hockney else None,
            "notes": self.notes,
        }
        for op, e in self.aux.items():   # post_s, flag_s: read by the barrier loop simulation
            src[f"{op}_s"] = e.value_s
            src[op] = e.to_dict()
        if self.L_loop_s is not None:
            src["L_loop_s"] = self.L_loop_s
        if self.L_poll_s is not None:
            src["L_poll_s"] = self.L_poll_s
        if self.wait_s is not None:
            src["wait_s"] = self.wait_s
        if self.L_poll_any_s is not None:
            src["L_poll_any_s"] = self.L_poll_any_s
        if meta:
            src.update({k: meta.get(k) for k in ("mpi_library", "git_sha", "utc_time", "hosts", "ranks")})
        return src

    def write(self, path: str | Path, meta: dict[str, Any] | None = None) -> None:
        doc = {"schema": "latscope.params/1", "model": "loggp", "params": self.loggp_params(),
               "source": self.source(meta)}
        Path(path).write_text(jsonio.dumps(doc, indent=2) + "\n")

    def write_plogp(self, path: str | Path, meta: dict[str, Any] | None = None) -> None:
        src: dict[str, Any] = {"tool": "latscope fit logp", "per_size": [r.to_dict() for r in self.rows],
                               "notes": self.notes}
        if meta:
            src.update({k: meta.get(k) for k in ("mpi_library", "git_sha", "utc_time")})
        doc = {"schema": "latscope.params/1", "model": "plogp", "params": self.plogp_params(), "source": src}
        Path(path).write_text(jsonio.dumps(doc, indent=2) + "\n")


def median_ci(samples: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Median and its distribution-free CI: order statistics j, k with Binomial(n, 1/2) mass
    between them >= confidence (scipy's binomial quantiles; exact, no normal approximation)."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = len(x)
    med = float(np.median(x))
    if n < 6:
        return med, float(x[0]), float(x[-1])
    a = (1 - confidence) / 2
    lo = int(stats.binom.ppf(a, n, 0.5))
    hi = int(stats.binom.isf(a, n, 0.5))
    lo = max(lo - 1, 0)  # ppf gives the count; the order statistic index is one less
    hi = min(hi, n - 1)
    return med, float(x[lo]), float(x[hi])


def _estimate(res_list: list[tuple[Results, int]], confidence: float) -> Estimate:
    """Pool one (op, size) over files: raw samples when kept, else the records' medians."""
    raws, meds, los, his, ns = [], [], [], [], []
    for res, idx in res_list:
        row = res.points.iloc[idx]
        if idx in res.raw:
            raws.extend(res.raw[idx])
        meds.append(float(row["median_s"]))
        ns.append(int(row["n"]))
        lo, hi = row.get("ci_lo_s"), row.get("ci_hi_s")
        # a record's CI is of its median only with --stop-rule median; a CI of the mean would
        # not bracket the median we report: unknown then (NaN), never a wrong interval
        if row.get("ci_of") != "median":
            lo = hi = None
        los.append(float(lo) if lo is not None and not pd.isna(lo) else math.nan)
        his.append(float(hi) if hi is not None and not pd.isna(hi) else math.nan)
    if raws:
        m, lo, hi = median_ci(np.asarray(raws), confidence)
        return Estimate(m, lo, hi, len(raws))
    if len(meds) == 1:
        return Estimate(meds[0], los[0], his[0], ns[0])
    # several runs without raw samples: the median of the medians, CI from their spread
    m, lo, hi = median_ci(np.asarray(meds), confidence)
    return Estimate(m, lo, hi, sum(ns))


def _theil_sen(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple[float, float, tuple[float, float], np.ndarray]:
    """Slope, intercept, slope CI and the mask of kept points after residual-based rejection."""
    keep = np.ones(len(x), dtype=bool)
    for _ in range(3):
        r = stats.theilslopes(y[keep], x[keep], alpha=confidence)
        resid = y - (r.intercept + r.slope * x)
        mad = stats.median_abs_deviation(resid[keep], scale="normal")
        new = np.abs(resid) <= max(3.0 * mad, 1e-12 + 1e-3 * np.abs(y).max())
        if new.sum() < 3 or (new == keep).all():
            break
        keep = new
    r = stats.theilslopes(y[keep], x[keep], alpha=confidence)
    return float(r.slope), float(r.intercept), (float(r.low_slope), float(r.high_slope)), keep


def fit_logp(results: list[Results], confidence: float = 0.95, large_from_bytes: int | None = None) -> LogPFit:
    """Fit LogP/LogGP/PLogP (and Hockney) to logp records of one or more runs."""
    if not 0 < confidence < 1:
        raise LogPFitError(f"confidence {confidence}: must be in the open interval (0, 1)")
    where: dict[tuple[str, int], list[tuple[Results, int]]] = {}
    ranks = None
    for res in results:
        df = res.points
        if df.empty or "op" not in df:
            continue
        if res.meta.get("bench") != "logp":
            continue
        ranks = ranks or res.meta.get("ranks")
        for i, (op, size) in enumerate(zip(df["op"].tolist(), df["size_bytes"].tolist())):
            if op in OPS or op in STREAM_OPS or op in AUX_OPS:
                where.setdefault((str(op), int(size)), []).append((res, i))
    if not where:
        raise LogPFitError("no logp records (bench 'logp', op o_s, o_r, rtt, g): run latscope-bench logp first")
    sizes = sorted({s for (op, s) in where if op in OPS})
    full = [s for s in sizes if all((op, s) in where for op in OPS)]
    missing = sorted({op for op in OPS for s in sizes if (op, s) not in where})
    if not full:
        raise LogPFitError(f"no size has all four measurements (missing: {', '.join(missing)}): "
                           "run latscope-bench logp with --ops all")
    rows: list[SizeRow] = []
    for s in full:
        e = {op: _estimate(where[(op, s)], confidence) for op in OPS}
        L = e["rtt"].value_s / 2 - e["o_s"].value_s - e["o_r"].value_s

        def half(x: Estimate) -> float:
            h = (x.ci_hi_s - x.ci_lo_s) / 2
            return h if math.isfinite(h) else 0.0

        Lh = math.sqrt((half(e["rtt"]) / 2) ** 2 + half(e["o_s"]) ** 2 + half(e["o_r"]) ** 2)
        stream = {op: _estimate(where[(op, s)], confidence) for op in STREAM_OPS if (op, s) in where}
        rows.append(SizeRow(s, e["o_s"], e["o_r"], e["rtt"], e["g"], L, Lh, stream))
    notes: list[str] = []
    if missing:
        notes.append(f"sizes without all four measurements were left out (missing {', '.join(missing)})")
    small = rows[0]
    if small.L_s < 0:
        notes.append(f"L = RTT/2 - o_s - o_r = {small.L_s:.3e} s at {small.size_bytes} B is negative (within "
                     f"+-{small.L_ci_half_s:.2e} s): the network part is below what the overheads resolve; "
                     "the parameter file holds L = 0")
    # G: the large sizes (default: the upper half of the sizes, at least 3)
    xs = np.array([r.size_bytes for r in rows], dtype=float)
    ys = np.array([r.g.value_s for r in rows], dtype=float)
    if large_from_bytes is None:
        # the upper half (from the median size up) whenever it holds 3 sizes for Theil-Sen: with
        # all sizes, a g(m) flat over the small ones would make the large ones the "outliers"
        big = xs >= xs[len(xs) // 2]
        if big.sum() < 3:
            big = np.ones(len(xs), dtype=bool)
    else:
        big = xs >= large_from_bytes
    if big.sum() < 2 or len(np.unique(xs[big])) < 2:
        raise LogPFitError(f"G needs g(m) at 2 or more distinct sizes >= {int(xs[big].min()) if big.any() else large_from_bytes} B; "
                           f"sizes measured: {[int(x) for x in xs]}")
    if big.sum() >= 3:
        G, _, G_ci, keep = _theil_sen(xs[big], ys[big], confidence)
    else:
        G = float((ys[big][1] - ys[big][0]) / (xs[big][1] - xs[big][0]))
        G_ci, keep = (math.nan, math.nan), np.ones(2, dtype=bool)
    G_sizes = [int(x) for x, k in zip(xs[big], keep) if k]
    G_rej = [int(x) for x, k in zip(xs[big], keep) if not k]
    if G < 0:
        notes.append(f"G = {G:.3e} s/B came out negative (g(m) does not grow over {G_sizes} B): the file holds 0")
    plogp_L = small.rtt.value_s / 2 - small.g.value_s
    if plogp_L < 0:
        notes.append(f"PLogP L = RTT(0)/2 - g(0) = {plogp_L:.3e} s is negative: the plogp table holds L = 0")
    # Hockney alongside: one-way time RTT(m)/2 over sizes, the regression of latscope.fit
    hk = None
    if len(rows) >= 3:
        df = pd.DataFrame({"op": "pingpong", "size_bytes": [r.size_bytes for r in rows],
                           "median_s": [r.rtt.value_s / 2 for r in rows],
                           "ci_half_s": [(r.rtt.ci_hi_s - r.rtt.ci_lo_s) / 4 for r in rows],
                           "reply_bytes": [r.size_bytes for r in rows], "pair": [(0, 1)] * len(rows)})
        try:
            hk = fit.hockney_regression(Results(meta={}, points=df), None, confidence)
        except fit.FitError as e:
            notes.append(f"Hockney fit skipped: {e}")
    # post, flag: size-independent, measured at the smallest size (the smallest one present)
    aux = {}
    for op in AUX_OPS:
        at = sorted(s for (o, s) in where if o == op)
        if at:
            aux[op] = _estimate(where[(op, at[0])], confidence)
    if "mcast" in aux:
        # out by MPI_Bcast, back by a message: subtract the ping-pong's half (interval arithmetic
        # for the CI: the two medians are independent, their intervals' ends combine). The way
        # back is a message to a rank that has just broadcast and waits briefly, the state of the
        # loop's round trip (rtt_loop) rather than of the isolated rtt, whose partner may still be
        # leaving the stop-sync (docs/barriers.md): rtt_poll's half when measured (the op polls
        # for the way back, so no blocking wait floor is in it), else rtt_loop's
        m, h = aux["mcast"], aux.get("rtt_poll", aux.get("rtt_loop", small.rtt))
        aux["mcast"] = Estimate(m.value_s - h.value_s / 2, m.ci_lo_s - h.ci_hi_s / 2, m.ci_hi_s - h.ci_lo_s / 2, m.n)
        if aux["mcast"].value_s < 0:
            notes.append(f"mcast - RTT/2 = {aux['mcast'].value_s:.3e} s is negative: the broadcast's one-way latency "
                         "is below what the round trips resolve; the barrier simulation will not use it")
    return LogPFit(L_s=small.L_s, o_s_s=small.o_s.value_s, o_r_s=small.o_r.value_s, g_s=small.g.value_s,
                   G_s_per_byte=G, G_ci_s_per_byte=G_ci, G_sizes_bytes=G_sizes, G_rejected_bytes=G_rej,
                   plogp_L_s=plogp_L, rows=rows, hockney=hk, confidence=confidence, ranks=ranks, notes=notes,
                   aux=aux)


def jitter_tables(results: list[Results]) -> dict[str, tuple[tuple[float, float], ...]]:
    """Each AUX_OPS / OPS op's measured spread at its smallest size, as the barrier loop simulation
    draws it (models.barrier_sim SimParams.jitter): a piecewise-linear quantile function of the
    deviation from the median, through the record's order statistics (min at 0, median at 0.5,
    p90, p99; above p99 held at p99: the rare scheduler stalls of max_s are left out, a loop of
    300 barriers meets about 3 of them). Several records of one op (logp before and after the
    rows): each statistic averaged."""
    stats_: dict[str, list[tuple[float, float, float, float]]] = {}
    small: dict[str, int] = {}
    for res in results:
        df = res.points
        if df.empty or "op" not in df or res.meta.get("bench") != "logp":
            continue
        for _, row in df.iterrows():
            op, size = str(row["op"]), int(row["size_bytes"])
            if op not in OPS and op not in AUX_OPS:
                continue
            vals = [row.get(c) for c in ("min_s", "median_s", "p90_s", "p99_s")]
            if any(v is None or pd.isna(v) for v in vals):
                continue
            if op not in small or size < small[op]:
                small[op], stats_[op] = size, []
            if size == small[op]:
                stats_[op].append(tuple(float(v) for v in vals))  # type: ignore[arg-type]
    out: dict[str, tuple[tuple[float, float], ...]] = {}
    for op, xs in stats_.items():
        mn, med, p90, p99 = (sum(x[i] for x in xs) / len(xs) for i in range(4))
        out[op] = ((0.0, mn - med), (0.5, 0.0), (0.9, p90 - med), (0.99, p99 - med), (1.0, p99 - med))
    return out


def fit_files(paths: list[str], confidence: float = 0.95,
              large_from_bytes: int | None = None) -> tuple[LogPFit, dict[str, Any]]:
    """Load results files and fit; returns the fit and the first file's metadata."""
    res = [load(p) for p in paths]
    return fit_logp(res, confidence, large_from_bytes), res[0].meta
