"""Run-time selection in the main job (seed 001 §4, Opt_Scatter): a short
``latscope-bench tune`` of scatter at 2 ranks, and the report's decision table.

Where the table comes from: the step writes the usual results records (meta + one point per
candidate and size) to <out>/tune_scatter.jsonl, like every other step. The report section and
after_demo recompute the decision from those records with latscope.tune.decide, the same
rule as the C library (tested against it on the same run), so nothing depends on a path known
only when the step runs. after_demo writes <out>/tune_scatter.json (latscope.tune/1), which a
C program loads with lts_tune_load."""
from __future__ import annotations

import html
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from latscope.figures import frame, plt, png
from latscope.parts import Step
from latscope.tune import DecisionTable, TuneError, decide_results

ORDER = 60
STEP = "tune_scatter"


def demo_steps(quick: bool) -> list[Step]:
    """One step, a few seconds: the default sizes (per-rank blocks of 0 to 64 KiB times P, so
    valid for any rank count a user's launcher gives) and a fixed count per point. Fixed, not
    adaptive: on a busy machine adaptive points stop on their budget unconverged, and a size
    where no candidate converged or stands apart cannot be decided (latscope.selection), which
    would end the whole demo; a count asked for counts as converged, and the report still sets
    aside negative or zero-like medians (root timing's 0 B native scatter)."""
    reps = "100" if quick else "300"
    return [Step(STEP, ["tune", "--op", "scatter", "--alg", "native,linear,binomial", "--min-reps", reps,
                        "--max-reps", reps, "--progress"], np=2)]


def _decisions(results: list[Any]) -> list[DecisionTable | str]:
    """Per tune run its table, or why none can be made (a size with no eligible candidate)."""
    out: list[DecisionTable | str] = []
    for r in results:
        if r.meta.get("bench") == "tune" and not r.points.empty:
            try:
                out.append(decide_results(r))
            except TuneError as e:
                out.append(f"{r.meta.get('op')} ({r.path}): no table: {e}")
    return out


def _tables(results: list[Any]) -> list[DecisionTable]:
    return [t for t in _decisions(results) if isinstance(t, DecisionTable)]


def after_demo(out: Path, results: list[Any], params: dict[str, Any]) -> None:
    for t in _decisions(results):
        if isinstance(t, DecisionTable):
            t.save(out / f"tune_{t.op}.json")
        else:
            print(f"latscope: note: {t}", file=sys.stderr)


def _us(v: float | None) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 1e6:.3f}"


def _html_table(t: DecisionTable) -> str:
    head = "".join(f"<th>{html.escape(c)} median (µs)</th>" for c in t.candidates)
    rows = []
    for r in t.ranges:
        rng = f"[{r.lo_bytes}, {'∞' if r.hi_bytes is None else r.hi_bytes})"
        for k, (size, med) in enumerate(r.points):
            aside = r.set_aside.get(size, {})
            cells = "".join(f"<td>{'<b>' if c == r.alg else '<s>' if c in aside else ''}{_us(med.get(c))}"
                            f"{'</b>' if c == r.alg else '</s>' if c in aside else ''}</td>" for c in t.candidates)
            lead = (f"<td rowspan='{len(r.points)}'>{rng}</td><td rowspan='{len(r.points)}'><b>{html.escape(r.alg)}</b>"
                    "</td>") if k == 0 else ""
            rows.append(f"<tr>{lead}<td>{size}</td>{cells}</tr>")
    notes = "".join(f"<li>{s} B, {html.escape(c)}: {html.escape(w)}</li>" for s, c, w in t.set_aside())
    return (f"<table class='t'><tr><th>size range (B)</th><th>algorithm</th><th>measured size (B)</th>{head}</tr>"
            + "".join(rows) + "</table>"
            + (f"<p>Set aside (struck through; never chosen, docs/tune-format.md \"Which candidates are ranked\"):"
               f"</p><ul>{notes}</ul>" if notes else ""))


def _plot(t: DecisionTable) -> str:
    fig, ax = plt.subplots(figsize=(7, 3.6))
    colors = {c: f"C{i}" for i, c in enumerate(t.candidates)}
    sizes = [s for r in t.ranges for s, _ in r.points]
    xs = np.maximum(np.array(sizes, dtype=float), 0.5)
    aside = {(sz, c) for sz, c, _ in t.set_aside()}
    for c in t.candidates:
        ys = [(sz, m.get(c)) for r in t.ranges for sz, m in r.points]
        # a set-aside median (negative, zero-like, not converged) is no point of the curve: drawn
        # on it, a negative root-corrected median looked like a measured time below zero
        ax.plot(xs, [np.nan if v is None or (sz, c) in aside else v * 1e6 for sz, v in ys], marker=".",
                color=colors[c], label=c)
        xa = [x for x, (sz, v) in zip(xs, ys) if (sz, c) in aside and v is not None]
        ax.plot(xa, [v * 1e6 for sz, v in ys if (sz, c) in aside and v is not None], marker="x", ls="none",
                color=colors[c], ms=7, label=f"{c}: set aside" if xa else None)
    lo_x, hi_x = xs.min() / 1.5, xs.max() * 1.5
    for r in t.ranges:   # the chosen algorithm as a band under its range
        a = max(r.lo_bytes, lo_x)
        b = hi_x if r.hi_bytes is None else min(r.hi_bytes, hi_x)
        ax.axvspan(a, b, color=colors[r.alg], alpha=0.12, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo_x, hi_x)
    frame(ax, "message size: the root's whole buffer (bytes; 0 drawn at 0.5)", "median time (µs)",
          f"{t.op} on {t.ranks} ranks: candidates, and the chosen one per range (band)", grid="both", legend=7)
    return png(fig)


def section_decision(inp: Any) -> str | None:
    tables = _decisions(inp.results)
    if not tables:
        return None
    parts = []
    for t in tables:
        if not isinstance(t, DecisionTable):
            parts.append(f"<p>{html.escape(t)}</p>")
            continue
        parts.append(
            f"<p>{html.escape(t.op)} on {t.ranks} ranks, {html.escape(str(t.timing_method))} timing: per measured "
            "size the eligible candidate with the smallest median wins (seed 001 §4, Opt_Scatter; a median that is "
            "negative, cannot be told from zero or did not converge is set aside); equal neighbours merge; "
            "boundaries at the geometric midpoint between measured sizes (docs/tune-format.md). "
            "<code>lts_scatter_tuned</code> dispatches by this table; the demo writes it as "
            f"<code>tune_{html.escape(t.op)}.json</code>.</p>")
        parts.append(_html_table(t))
        parts.append(_plot(t))
    return "".join(parts)


SECTIONS = [("Collectives: decision table (run-time selection)", section_decision)]
