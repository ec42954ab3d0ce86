"""Predicted vs measured for the application twins (``latscope-bench app``, docs/apps.md).

Every measured point of an ``app`` results file is matched with the LoGPC §5 model of its pattern,
evaluated with LogGP parameters fitted on the same machine:

* remap, asynchronous (§5.1.2, §5.1.3): the busiest rank's
  ``n (max(g, o_s) + (B-1) G) + R_max (max(g, o_r) + (B-1) G)`` per repetition — the paper's
  ``n (o_s + o_r)`` when every rank receives ``R = n`` short messages;
* remap, synchronous (§5.1.1): ``n [2 (o_s + L + C_n + o_r) + C_r]`` with the contention-free
  round trip ``2 (o_s + L + o_r)`` = ``rr_rtt_s`` and LoPC's empirical ``C_r = o_r + o_s`` =
  ``rr_handler_s`` (a handler receiving a request and sending the reply), both measured by the
  twin with its own MPI calls before the repetitions (one requester, one server), and ``C_n = 0``
  (one shared-memory node: no network to contend for); the contention-free LogP form
  ``n 2 (o_s + L + o_r)`` is reported next to it. Not the fit's ``L``, ``o_r``: ``latscope-bench
  logp`` times them in MPI_Recv/MPI_Wait, which in MPICH 5 yield the processor (sched_yield)
  while they wait; the twin waits in MPI_Waitany, which does not (docs/apps.md: a round trip of
  2.3-2.6 us against 0.6-0.9 us here). Records without these fields fall back to the fit's
  ``L + (B-1) G``, ``o_s + o_r``, and the formula says so;
* dag (§5.2, eq. (15)): :class:`~latscope.models.apps.DiamondDAG` with the measured task time
  (``task_s`` of the record), ``B = value_bytes n / b`` and no aggregation term (``alpha = 0``:
  packing is a copy already inside ``G``); on one rank the serial ``n^2 t``.

Beside each paper model a **refined** one (``refined_s``; the paper's stays in ``predicted_s``):

* remap async: ``n g_nb(B) + R_max g_r(B)`` — the paper's ``n (o_s + o_r)`` with PLogP's
  size-dependent costs measured as streams (``latscope-bench logp`` ops ``g_nb``: a train of
  MPI_Isend, ``g_r``: a train of receives of arrived messages), because a rank that sends and
  receives back to back pays the stream cost per message, not the isolated ``o_s``/``o_r``;
* remap sync: ``n [rr_rtt(B) + C_r]`` with ``C_r = 0`` at P = 2: a processor's only client is its
  partner, whose request it serves while its own is in flight (no queue forms, the wait is
  filled with the service); for P > 2 LoPC's ``C_r`` = ``rr_handler``. The paper's column
  (``C_r`` = a handler) and this one (``C_r = 0``) bracket the measurement at P = 2;
* dag: eq. (15) unchanged except ``W`` = the stripe's computation and packing measured alone for
  this ``b`` (``stripe_compute_s / b``, a microbenchmark in the twin before the repetitions) —
  the measured ``alpha n / b`` and the per-task cost in the block's cache shape, instead of
  ``n^2 t / (P b)`` with the task time of a tight calibration loop.

The refined async remap (and the sync one for P > 2) needs the stream table (``source.per_size``
of a ``latscope fit logp`` file with ``g_nb``, ``g_r``); without it it is not evaluated.

Errors are reported per pattern (:func:`pattern_summary`: remap async, remap sync, dag), each with
its worst |error|, and the headline is the worst pattern (:func:`worst_pattern`), never a median
over the points of all patterns: a median over mostly DAG points hid a sync remap 3-5x off.

The models assume one processor per rank. A point whose ranks outnumber the CPUs (``ranks_per_node >
cpus_available``) is marked oversubscribed and kept out of the headline median error, as is a point
measured under load (other processes took CPUs the run needed: ``results.under_load``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from latscope import jsonio
from latscope.models import DiamondDAG, LogGPParams, LogPParams, ModelError, load_params, message_point, remap_sync
from latscope.models.apps import remap_async_loggp_s, remap_async_stream_s, remap_sync_rtt, remap_sync_stream_s
from latscope.models.params import HockneyParams, _interp
from latscope.results import Results, known_true, load

__all__ = [
    "TwinParams",
    "SizeTable",
    "refine_point",
    "twin_params",
    "params_from_file",
    "predict_point",
    "Prediction",
    "prediction_table",
    "median_abs_rel_err",
    "pattern_key",
    "PATTERN_ORDER",
    "PatternError",
    "pattern_summary",
    "worst_pattern",
    "app_points",
    "format_table",
    "format_summary",
    "headline",
]

LOGP_FILE = "params_logp.json"
HOCKNEY_FILE = "params.json"


@dataclass(frozen=True)
class TwinParams:
    """The LogGP parameters the predictions use, where they came from, and whether they are the
    Hockney fallback (``o_s = o_r = 0``, ``L = alpha``, ``G = beta``), which cannot predict
    overhead-bound patterns (the asynchronous remap of short messages becomes ~0)."""

    params: LogGPParams
    source: str
    fallback: bool
    note: str
    table: SizeTable | None = None    # the per-size (PLogP + stream) table of the fit, when present


@dataclass(frozen=True)
class SizeTable:
    """The per-size medians of ``latscope fit logp`` (``source.per_size``): isolated ``o_s, o_r,
    rtt, g`` and the streams ``g_nb, g_r`` (seconds), linearly interpolated in the message size
    (PLogP's convention, models/params.py), the last segment extended above the table."""

    sizes_bytes: tuple[int, ...]
    cols: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def has(self, *names: str) -> bool:
        return all(n in self.cols for n in names)

    def at(self, name: str, m: float) -> float:
        return _interp(np.asarray(self.sizes_bytes, float), np.asarray(self.cols[name], float), float(m))

    @classmethod
    def from_source(cls, src: Mapping[str, Any] | None) -> SizeTable | None:
        rows = (src or {}).get("per_size") or []
        if len(rows) < 1:
            return None
        sizes = tuple(int(r["size_bytes"]) for r in rows)
        cols: dict[str, tuple[float, ...]] = {}
        for name in ("o_s", "o_r", "rtt", "g", "g_nb", "g_r", "rtt_train"):
            vals = [(r.get(name) or {}).get("value_s") for r in rows]
            if all(isinstance(v, (int, float)) and math.isfinite(v) for v in vals):
                cols[name] = tuple(float(v) for v in vals if v is not None)
        return cls(sizes, cols)


def params_from_file(path: str | Path) -> TwinParams:
    """A LogGP view of a ``latscope.params/1`` file: loggp as is, logp with ``G = 0``, hockney as
    the documented fallback. PLogP is refused (its size-dependent overheads have no single G)."""
    ps = load_params(path)
    m = ps.model
    if isinstance(m, LogGPParams):
        tab = SizeTable.from_source(ps.source)
        return TwinParams(m, str(path), False, f"LogGP parameters from {path}", tab)
    if isinstance(m, LogPParams):
        p = LogGPParams(L_s=m.L_s, o_s_s=m.o_s_s, o_r_s=m.o_r_s, g_s=m.g_s, G_s_per_byte=0.0, P=m.P)
        return TwinParams(p, str(path), False, f"LogP parameters from {path} (G = 0: no size dependence)")
    if isinstance(m, HockneyParams):
        p = LogGPParams(L_s=m.alpha_s, o_s_s=0.0, o_r_s=0.0, g_s=0.0, G_s_per_byte=m.beta_s_per_byte, P=m.P)
        return TwinParams(p, str(path), True,
                          f"FALLBACK: no LogP/LogGP fit; Hockney from {path} read as L = alpha, G = beta, "
                          "o_s = o_r = 0 (overhead-bound patterns are predicted near zero)")
    raise ModelError(f"params file {str(path)!r}: model {m.kind!r}: the twins need loggp, logp or hockney")


def twin_params(out: str | Path) -> TwinParams:
    """``<out>/params_logp.json`` (``latscope fit logp``), else the Hockney fallback from
    ``<out>/params.json``; raises :class:`ModelError` when neither exists."""
    d = Path(out)
    if (d / LOGP_FILE).exists():
        return params_from_file(d / LOGP_FILE)
    if (d / HOCKNEY_FILE).exists():
        return params_from_file(d / HOCKNEY_FILE)
    raise ModelError(f"{d}: neither {LOGP_FILE} (latscope fit logp) nor {HOCKNEY_FILE} (Hockney) to predict from")


@dataclass(frozen=True)
class Prediction:
    """The model's value for one measured point, and the formula used."""

    predicted_s: float | None
    formula: str
    logp_s: float | None = None     # sync remap: the contention-free LogP form, for comparison
    refined_s: float | None = None  # the refined model (module docstring), None where not evaluable
    refined_formula: str = ""


def _num(row: Mapping[str, Any], key: str) -> Any:
    v = row.get(key)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        raise ModelError(f"app record without {key!r}: rerun latscope-bench app (this field is written since v0.1)")
    return v


def _rr(row: Mapping[str, Any], key: str = "rr_rtt_s") -> float | None:
    """A sync remap's measured round trip (``rr_rtt_s``) or handler cost (``rr_handler_s``), None
    when the record has none (async, P = 1, or written before these fields)."""
    v = row.get(key)
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        return None
    return float(v)


def refine_point(row: Mapping[str, Any], p: LogGPParams, tab: SizeTable | None) -> tuple[float | None, str]:
    """The refined model's value for one ``app`` point (module docstring) and its formula."""
    pattern = row.get("pattern", row.get("op"))
    P = int(_num(row, "ranks"))
    B = float(_num(row, "size_bytes"))
    if pattern == "remap":
        if P < 2:
            return None, ""
        n = int(_num(row, "messages"))
        rt = _rr(row) if row.get("style") != "async" else None
        if rt is not None and P == 2:
            # LoPC round trip with C_r = 0: the partner's request is served while the own one is out
            return n * rt, "n rr_rtt(B), C_r = 0 (P = 2: no queue)"
        hd = _rr(row, "rr_handler_s")
        if rt is not None and hd is not None:
            # more clients per server: LoPC's C_r, a reply handler's cost, as the twin measured it
            return n * (rt + hd), "n [rr_rtt(B) + C_r], C_r = rr_handler(B) (P > 2: handlers queue)"
        if tab is None or not tab.has("g_nb", "g_r", "o_s", "o_r", "rtt"):
            return None, "needs the stream table (latscope-bench logp with g_nb, g_r)"
        gs, gr = tab.at("g_nb", B), tab.at("g_r", B)
        if row.get("style") == "async":
            rmax = int(_num(row, "recv_max_messages"))
            return remap_async_stream_s(gs, gr, n, rmax), "PLogP streams: n g_nb(B) + R_max g_r(B)"
        # an old record without rr_rtt_s: the round trip from the logp table (blocking waits)
        L = max(0.0, tab.at("rtt", B) / 2 - tab.at("o_s", B) - tab.at("o_r", B))
        if P == 2:
            return (n * remap_sync_stream_s(gs, L, gr),
                    "no rr_rtt_s: n 2(g_nb(B) + L(B) + g_r(B)), L from logp's blocking RTT, C_r = 0")
        return (n * remap_sync_stream_s(gs, L, gr, C_r_s=gs + gr),
                "no rr_rtt_s: n [2(g_nb + L(B) + g_r) + C_r], L from logp's blocking RTT, C_r = g_nb + g_r")
    if pattern == "dag":
        stripe = row.get("stripe_compute_s")
        if P < 2 or stripe is None or (isinstance(stripe, float) and math.isnan(stripe)) or stripe <= 0:
            return None, "" if P < 2 else "needs stripe_compute_s (rerun latscope-bench app)"
        grid, b = int(_num(row, "grid")), int(_num(row, "blocks"))
        vb = float(_num(row, "value_bytes"))
        dag = DiamondDAG(n=grid, P=P, task_s=0.0, params=p, aggregation_s_per_value=0.0, bytes_per_value=vb)
        return dag.makespan_measured_W_s(b, float(stripe) / b), "eq. (15), W = stripe_compute_s / b (measured)"
    return None, ""


def predict_point(row: Mapping[str, Any], p: LogGPParams, tab: SizeTable | None = None) -> Prediction:
    """Model value (seconds per repetition) for one ``app`` point record: the paper's model and,
    beside it, the refined one (:func:`refine_point`)."""
    pr = _predict_paper(row, p)
    ref, f = refine_point(row, p, tab)
    return Prediction(pr.predicted_s, pr.formula, pr.logp_s, ref, f)


def _predict_paper(row: Mapping[str, Any], p: LogGPParams) -> Prediction:
    pattern = row.get("pattern", row.get("op"))
    P = int(_num(row, "ranks"))
    B = float(_num(row, "size_bytes"))
    if pattern == "remap":
        n = int(_num(row, "messages"))
        if P < 2:
            return Prediction(None, "P = 1: messages to self, no model")
        if row.get("style") == "async":
            rmax = int(_num(row, "recv_max_messages"))
            t = remap_async_loggp_s(p, B, n, rmax)
            return Prediction(t, "§5.1.2: n(o_s+(B-1)G) + R_max(o_r+(B-1)G)")
        mp = message_point(p, B)
        rt, hd = _rr(row), _rr(row, "rr_handler_s")
        if rt is not None and hd is not None:
            # LoGPC §5.1.1 with the parameters of the calls the twin makes: 2 (o_s + L + o_r) =
            # rr_rtt (so L = rr_rtt / 2 - o_s - o_r) and LoPC's C_r = o_r + o_s = rr_handler, the
            # cost of a handler that receives a request and sends the reply
            rs = remap_sync_rtt(rt, mp.o_s_s, mp.o_r_s, C_n_s=0.0, C_r_s=hd)
            return Prediction(n * rs.logpc_s, "§5.1.1: n[2(o_s+L+o_r)+C_r], 2(o_s+L+o_r) = rr_rtt(B), C_n=0, "
                              "C_r=o_r+o_s = rr_handler(B)", logp_s=n * rs.logp_s)
        view = LogPParams(L_s=mp.L_s, o_s_s=mp.o_s_s, o_r_s=mp.o_r_s, g_s=p.g_s)
        rs = remap_sync(view, C_n_s=0.0)
        return Prediction(n * rs.logpc_s, "no rr_rtt_s: §5.1.1: n[2(o_s+L+(B-1)G+o_r)+C_r], L from the fit "
                          "(blocking waits), C_n=0, C_r=o_s+o_r", logp_s=n * rs.logp_s)
    if pattern == "dag":
        grid, b = int(_num(row, "grid")), int(_num(row, "blocks"))
        task = float(_num(row, "task_s"))
        vb = float(_num(row, "value_bytes"))
        if P == 1:
            return Prediction(grid * grid * task, "serial: n^2 t")
        dag = DiamondDAG(n=grid, P=P, task_s=task, params=p, aggregation_s_per_value=0.0, bytes_per_value=vb)
        return Prediction(dag.makespan_s(b), "eq. (15), alpha = 0")
    return Prediction(None, f"pattern {pattern!r}: no model")


def app_points(results: Iterable[Results]) -> pd.DataFrame:
    """The ``app`` points of some results, one frame."""
    frames = [r.points for r in results if not r.points.empty and (r.points["bench"] == "app").any()]
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True)
    return df[df["bench"] == "app"].reset_index(drop=True)


def _config(row: Mapping[str, Any]) -> str:
    if row.get("pattern") == "remap":
        return f"{row['style']} {row['dest']} n={int(row['messages'])} B={int(row['size_bytes'])}"
    if row.get("pattern") == "dag":
        return (f"n={int(row['grid'])} b={int(row['blocks'])} t={float(row['task_s']) * 1e6:.3g}us "
                f"value={int(row['value_bytes'])}B")
    return str(row.get("pattern"))


def prediction_table(points: pd.DataFrame, tp: TwinParams | LogGPParams) -> pd.DataFrame:
    """One row per measured point: configuration, ranks, CPUs, measured median, prediction,
    signed relative error ``(predicted - measured) / measured``, formula, oversubscription."""
    p = tp.params if isinstance(tp, TwinParams) else tp
    tab = tp.table if isinstance(tp, TwinParams) else None
    rows: list[dict[str, Any]] = []
    for _, r in points.iterrows():
        row: dict[str, Any] = {str(k): v for k, v in r.items()}
        pr = predict_point(row, p, tab)
        meas = float(row["median_s"])
        P = int(row["ranks"])
        cpus = row.get("cpus_available")
        per_node = row.get("ranks_per_node", P)
        over = cpus is not None and not (isinstance(cpus, float) and math.isnan(cpus)) and int(per_node) > int(cpus)
        # measured while other processes took CPUs this run needed (results.under_load): kept out of
        # the headline like an oversubscribed point
        loaded = known_true(row.get("under_load"))
        rel = None if pr.predicted_s is None or meas <= 0 else (pr.predicted_s - meas) / meas
        rrel = None if pr.refined_s is None or meas <= 0 else (pr.refined_s - meas) / meas
        rows.append({
            "pattern": row.get("pattern"),
            "pattern_key": pattern_key(row),
            "config": _config(row),
            "ranks": P,
            "cpus": None if cpus is None else int(cpus),
            "oversubscribed": bool(over),
            "under_load": loaded,
            "load_others": row.get("load_others"),
            "measured_s": meas,
            "predicted_s": pr.predicted_s,
            "rel_err": rel,
            "logp_s": pr.logp_s,
            "formula": pr.formula,
            "refined_s": pr.refined_s,
            "refined_rel_err": rrel,
            "refined_formula": pr.refined_formula,
        })
    return pd.DataFrame(rows)


def median_abs_rel_err(table: pd.DataFrame, include_oversubscribed: bool = False,
                       column: str = "rel_err") -> float | None:
    """Median of |relative error| over the rows with a prediction (by default only those with a
    processor per rank, which the models assume, and not measured under load: results.under_load).
    ``column``: ``rel_err`` (the paper's models) or ``refined_rel_err``. None when there is none."""
    if table.empty or column not in table:
        return None
    t = table[table[column].notna()]
    if not include_oversubscribed:
        t = t[~t["oversubscribed"]]
        if "under_load" in t:
            t = t[~t["under_load"].astype(bool)]
    if t.empty:
        return None
    return float(t[column].abs().median())


# The patterns in the order their tables are shown; each has its own model (module docstring).
PATTERN_ORDER = ("remap async", "remap sync", "dag")


def pattern_key(row: Mapping[str, Any]) -> str:
    """The model a point belongs to: ``remap async``, ``remap sync``, ``dag`` (or the pattern's name)."""
    pat = str(row.get("pattern", row.get("op")))
    return f"remap {row.get('style')}" if pat == "remap" else pat


def _counted(table: pd.DataFrame) -> pd.Series:
    """Rows the headline counts: a processor per rank (the models' assumption) and not measured
    under load (results.under_load); the others are reported apart."""
    keep = ~table["oversubscribed"].astype(bool)
    if "under_load" in table:
        keep &= ~table["under_load"].astype(bool)
    return keep


@dataclass(frozen=True)
class PatternError:
    """One pattern's errors for one model column (``rel_err``: the paper's, ``refined_rel_err``):
    over the counted points (a processor per rank, not under load) the worst |error| and where,
    the median |error|, and how many points had a prediction; the points set apart
    (oversubscribed or under load) with their own worst |error|."""

    pattern: str
    column: str
    points: int
    worst: float | None
    worst_signed: float | None
    worst_config: str
    worst_ranks: int | None
    median: float | None
    set_apart: int
    set_apart_worst: float | None

    def describe(self) -> str:
        if self.worst is None or self.worst_signed is None or self.median is None:
            if self.set_apart:   # predicted, but every point was measured oversubscribed or under load
                return (f"{self.pattern}: no point counted: all {self.set_apart} set apart (oversubscribed or "
                        f"under load)" + ("" if self.set_apart_worst is None
                                          else f", their worst |error| {100 * self.set_apart_worst:.1f}%"))
            return f"{self.pattern}: no prediction over {self.points} points"
        return (f"{self.pattern}: worst |error| {100 * self.worst:.1f}% ({100 * self.worst_signed:+.1f}% at "
                f"{self.worst_config}, P = {self.worst_ranks}), median {100 * self.median:.1f}% over "
                f"{self.points} points")


def pattern_summary(table: pd.DataFrame, column: str = "rel_err") -> list[PatternError]:
    """Per pattern (:data:`PATTERN_ORDER` first, then any other), the errors of one model column."""
    if table.empty or column not in table:
        return []
    keys = [k for k in PATTERN_ORDER if k in set(table["pattern_key"])]
    keys += sorted(set(table["pattern_key"]) - set(keys))
    out: list[PatternError] = []
    for k in keys:
        t = table[(table["pattern_key"] == k) & table[column].notna()]
        c, apart = (t[_counted(t)], t[~_counted(t)]) if not t.empty else (t, t)
        if c.empty:
            w = ws = med = None
            cfg, P = "", None
        else:
            i: Any = c[column].abs().astype(float).idxmax()
            at: Any = c.loc[i]
            ws = float(at[column])
            w, med = abs(ws), float(c[column].abs().median())
            cfg, P = str(at["config"]), int(at["ranks"])
        out.append(PatternError(k, column, len(c), w, ws, cfg, P, med, len(apart),
                                None if apart.empty else float(apart[column].abs().max())))
    return out


def worst_pattern(table: pd.DataFrame, column: str = "rel_err", by: str = "worst") -> PatternError | None:
    """The headline: the pattern whose worst |error| (``by="worst"``) or median |error|
    (``by="median"``) over its counted points is largest; None when no pattern has a counted
    prediction."""
    if by not in ("worst", "median"):
        raise ValueError(f"by={by!r}: 'worst' or 'median'")
    cands = [e for e in pattern_summary(table, column) if e.worst is not None]
    return max(cands, key=lambda e: getattr(e, by)) if cands else None


def headline(table: pd.DataFrame) -> list[str]:
    """One line per model column: the worst pattern (largest worst |error|) with its worst and
    median |error|, and, when another pattern has the largest median |error|, that one too (one
    outlier must not hide a pattern that is off everywhere)."""
    lines = []
    for col, what in (("rel_err", "paper models"), ("refined_rel_err", "refined models")):
        w, m = worst_pattern(table, col), worst_pattern(table, col, by="median")
        apart = sum(e.set_apart for e in pattern_summary(table, col))
        # "none predicted" only when nothing was: a table whose points were all set apart
        # (characterize on a busy machine) says so, or it reads as a model that predicts nothing
        none = (f"no point counted: all {apart} predicted points were measured oversubscribed or under load "
                "(set apart, listed per pattern)" if apart else "none predicted")
        line = f"worst pattern, {what}: " + (none if w is None else w.describe())
        if m is not None and w is not None and m.pattern != w.pattern:
            line += f"; largest median: {m.describe()}"
        lines.append(line)
    return lines


def format_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per pattern, both model columns: points, worst |error| (signed, where), median |error|, and
    the points set apart (oversubscribed or under load)."""
    def pc(v: float | None) -> str:
        return "—" if v is None else f"{100 * v:.1f}%"

    paper = {e.pattern: e for e in pattern_summary(table, "rel_err")}
    ref = {e.pattern: e for e in pattern_summary(table, "refined_rel_err")}
    rows = []
    for k in paper:
        e, r = paper[k], ref.get(k)
        rows.append({
            "pattern": k,
            "points": e.points,
            "paper worst": "—" if e.worst_signed is None else
            f"{100 * e.worst_signed:+.1f}% ({e.worst_config}, P={e.worst_ranks})",
            "paper median |err|": pc(e.median),
            "refined worst": "—" if r is None or r.worst_signed is None else
            f"{100 * r.worst_signed:+.1f}% ({r.worst_config}, P={r.worst_ranks})",
            "refined median |err|": "—" if r is None else pc(r.median),
            "set apart (oversubscribed / under load)": (f"{e.set_apart}: worst paper {pc(e.set_apart_worst)}, refined "
                                                        f"{pc(r.set_apart_worst if r else None)}" if e.set_apart else "0"),
        })
    return pd.DataFrame(rows)


def format_table(table: pd.DataFrame) -> pd.DataFrame:
    """For people: times in µs, errors in %, oversubscription spelled out."""
    def us(v: Any) -> str:
        return "—" if v is None or pd.isna(v) else f"{v * 1e6:.4g}"

    def pct(v: Any) -> str:
        return "—" if v is None or pd.isna(v) else f"{100 * v:+.1f}%"

    refined = "refined_s" in table
    out = pd.DataFrame({
        "pattern": table["pattern"],
        "configuration": table["config"],
        "P": table["ranks"],
        "measured (µs)": table["measured_s"].map(lambda v: f"{v * 1e6:.4g}"),
        "paper model (µs)": table["predicted_s"].map(us),
        "paper error": table["rel_err"].map(pct),
        "refined model (µs)": table["refined_s"].map(us) if refined else "—",
        "refined error": table["refined_rel_err"].map(pct) if refined else "—",
        "LogP, no C_r (µs)": table["logp_s"].map(lambda v: "" if v is None or pd.isna(v) else f"{v * 1e6:.4g}"),
        "paper formula": table["formula"],
        "refined formula": table["refined_formula"] if refined else "",
        "note": [", ".join(x for x in (f"oversubscribed: {p} ranks on {c} CPUs" if o else "",
                                        f"under load: others used {lo:.2g} CPUs" if u else "") if x)
                 for p, c, o, u, lo in zip(table["ranks"], table["cpus"], table["oversubscribed"],
                                           table.get("under_load", [False] * len(table)),
                                           table.get("load_others", [None] * len(table)))],
    })
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m latscope.apps_twins PARAMS RESULTS...``: print the table and the median error."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m latscope.apps_twins", description=__doc__.split("\n")[0])
    ap.add_argument("params", help="latscope.params/1 file (loggp, logp, or hockney as fallback)")
    ap.add_argument("results", nargs="+", help="latscope-bench app results (JSONL)")
    ap.add_argument("--json", action="store_true", help="the table as JSON records")
    a = ap.parse_args(argv)
    try:
        tp = params_from_file(a.params)
        table = prediction_table(app_points(load(p) for p in a.results), tp)
    except (ModelError, OSError, ValueError) as e:
        print(f"latscope apps_twins: {e}")
        return 2
    if a.json:
        print(jsonio.dumps(table.to_dict(orient="records"), indent=1))
        return 0
    print(tp.note)
    print_by_pattern(table)
    return 0


def print_by_pattern(table: pd.DataFrame, file: Any = None) -> None:
    """One table per pattern with its worst case, the summary, then the worst pattern's headline."""
    if table.empty:
        print("no app points", file=file)
        return
    paper = {e.pattern: e for e in pattern_summary(table, "rel_err")}
    ref = {e.pattern: e for e in pattern_summary(table, "refined_rel_err")}
    for k, e in paper.items():
        print(f"\n== {k} ==", file=file)
        print(format_table(table[table["pattern_key"] == k]).to_string(index=False), file=file)
        print(f"paper:   {e.describe()}", file=file)
        if k in ref:
            print(f"refined: {ref[k].describe()}", file=file)
        if e.set_apart:
            print(f"set apart (oversubscribed or under load, not counted): {e.set_apart} points", file=file)
    print("\nper pattern (points with a processor per rank, not under load):", file=file)
    print(format_summary(table).to_string(index=False), file=file)
    print(file=file)
    for line in headline(table):
        print(line, file=file)


if __name__ == "__main__":
    raise SystemExit(main())
