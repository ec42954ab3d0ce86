"""Application models (LoGPC §5) against their real twins: the main job runs `latscope-bench app`
(remap and Diamond DAG, np 2, and np 4 outside --quick), and the report compares each point with
the model evaluated on the LogGP parameters fitted in the same run (<out>/params_logp.json from
`latscope fit logp`, whose part runs before this one; without it the Hockney fit, read as
o_s = o_r = 0, and the report says so)."""
from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from latscope import apps_twins
from latscope.models import DiamondDAG, ModelError
from latscope.parts import Step
from latscope.results import Results

if TYPE_CHECKING:
    from latscope.report import ReportInput

ORDER = 60   # after the part that writes params_logp.json (its after_demo runs first)

_FAST = ["--min-reps", "10", "--max-reps", "40", "--budget", "1", "--progress"]


def demo_steps(quick: bool) -> list[Step]:
    """A few short runs (about 15 s with --quick, 25 s without)."""
    steps = [
        Step("app_remap_async", ["app", "--pattern", "remap", "--style", "async", "--dest", "shift", "--messages", "64",
                                 "--sizes", "8,1K,64K"] + _FAST, np=2),
        Step("app_remap_sync", ["app", "--pattern", "remap", "--style", "sync", "--dest", "shift", "--messages", "64",
                                "--sizes", "8,1K"] + _FAST, np=2),
        Step("app_dag", ["app", "--pattern", "dag", "--grid", "256", "--task-work", "1us",
                         "--blocks", "1,2,4,8,16,32,64,256" if not quick else "1,4,16,64", "--min-reps", "5",
                         "--max-reps", "20", "--budget", "1", "--progress"], np=2),
    ]
    if not quick:
        steps += [
            Step("app_remap_async_np4", ["app", "--pattern", "remap", "--style", "async", "--dest", "random",
                                         "--messages", "64", "--sizes", "8,64K"] + _FAST, np=4),
            Step("app_dag_np4", ["app", "--pattern", "dag", "--grid", "256", "--task-work", "1us", "--blocks", "1,8,64",
                                 "--min-reps", "5", "--max-reps", "10", "--budget", "1", "--progress"], np=4),
        ]
    return steps


def _params(out: Path, params: dict[str, Any]) -> apps_twins.TwinParams | None:
    try:
        return apps_twins.twin_params(out)
    except ModelError as e:
        print(f"latscope: application models: {e}", file=sys.stderr)
        return None


def after_demo(out: Path, results: list[Results], params: dict[str, Any]) -> None:
    """Write <out>/apps_predictions.csv (one row per point) and <out>/apps_pattern_errors.csv (per
    pattern and model: worst and median |error|), and print the worst pattern as the headline."""
    pts = apps_twins.app_points(results)
    tp = _params(out, params)
    if pts.empty or tp is None:
        return
    table = apps_twins.prediction_table(pts, tp)
    table.to_csv(out / "apps_predictions.csv", index=False)
    # per pattern and model: worst |error| (signed, where), median, points counted and set apart
    pd.DataFrame([vars(e) for col in ("rel_err", "refined_rel_err") for e in apps_twins.pattern_summary(table, col)]
                 ).to_csv(out / "apps_pattern_errors.csv", index=False)
    counted = int((~table['oversubscribed'] & ~table['under_load'] & table['rel_err'].notna()).sum())
    print(f"application models: {tp.note}", file=sys.stderr)
    # the headline is the worst pattern, never a median over the points of all patterns
    for line in apps_twins.headline(table):
        print(f"application models: {line}", file=sys.stderr)
    for col, what in (("rel_err", "paper"), ("refined_rel_err", "refined")):
        per = "; ".join(f"{e.pattern} {'n/a' if e.worst is None else f'{100 * e.worst:.1f}%'}"
                        + (f" ({e.set_apart} set apart)" if e.worst is None and e.set_apart else "")
                        for e in apps_twins.pattern_summary(table, col))
        print(f"application models: worst |error| per pattern ({what}): {per}", file=sys.stderr)
    print(f"application models: over {counted} points with a processor per rank, not under load -> "
          f"{out / 'apps_predictions.csv'}, {out / 'apps_pattern_errors.csv'}", file=sys.stderr)


def _dag_plot(pts: pd.DataFrame, tp: apps_twins.TwinParams) -> str | None:
    from latscope.figures import frame, plt, png as _png

    d = pts[pts["pattern"] == "dag"]
    if d.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    key: Any
    for key, g in d.groupby(["ranks", "grid", "value_bytes"]):
        P, grid, vb = key
        g = g.sort_values("blocks")
        task = float(g["task_s"].median())
        line = ax.errorbar(g["blocks"], g["median_s"] * 1e3,
                           yerr=[(g["median_s"] - g["ci_lo_s"]).clip(lower=0) * 1e3,
                                 (g["ci_hi_s"] - g["median_s"]).clip(lower=0) * 1e3],
                           marker="o", ls="none", label=f"measured P={P} n={int(grid)}")
        if int(P) >= 2:
            try:
                dag = DiamondDAG(n=int(grid), P=int(P), task_s=task, params=tp.params, bytes_per_value=float(vb))
                bs = np.unique(np.geomspace(1, int(grid), 200).round().astype(int))
                ax.plot(bs, [dag.makespan_s(float(b)) * 1e3 for b in bs], color=line[0].get_color(),
                        label=f"eq. (15) P={P}")
                _, best = dag.optimal_b()
                ax.axvline(best, color=line[0].get_color(), ls=":", lw=1)
            except ModelError:
                pass
    ax.set_xscale("log", base=2)
    frame(ax, "blocks per stripe b", "makespan (ms)", "Diamond DAG: makespan vs b (dotted: the model's optimal b)",
          grid="both", legend=7)
    return _png(fig)


def _params_dir(inp: ReportInput) -> Path:
    """Where the fitted parameters are: the report's folder (characterize writes both there), else
    the results' own folder (`latscope report results/demo/*.jsonl -o elsewhere.html`)."""
    from latscope.parts import beside_results

    found = [p.parent for name in (apps_twins.LOGP_FILE, apps_twins.HOCKNEY_FILE) for p in beside_results(inp, name)]
    out = Path(inp.outdir)
    has = any((out / name).exists() for name in (apps_twins.LOGP_FILE, apps_twins.HOCKNEY_FILE))
    return out if has or not found else found[0]


def section_apps(inp: ReportInput) -> str | None:
    from latscope.figures import table as _table

    pts = apps_twins.app_points(inp.results)
    if pts.empty:
        return None
    tp = _params(_params_dir(inp), inp.params)
    if tp is None:
        return "<p>No fitted parameters (params_logp.json or params.json) next to the results: no predictions.</p>"
    table = apps_twins.prediction_table(pts, tp)
    p = tp.params
    head = (f"<p>Parameters: {html.escape(tp.note)} — L = {p.L_s * 1e6:.3g} µs, o_s = {p.o_s_s * 1e6:.3g} µs, "
            f"o_r = {p.o_r_s * 1e6:.3g} µs, g = {p.g_s * 1e6:.3g} µs, G = {p.G_s_per_byte * 1e9:.3g} ns/byte. "
            "One shared-memory node: C_n = 0 (no network to contend for); synchronous remap uses LoPC's "
            "C_r = o_r + o_s, measured as the twin's request handler, and its round trip 2(o_s + L + o_r) measured "
            "with the twin's own calls (the column 'LogP, no C_r' leaves C_r out; docs/apps.md). Oversubscribed points (more ranks than "
            "CPUs) break the models' one-processor-per-rank assumption and are left out of the headline, as are "
            "points measured under load (other processes took CPUs the run needed; docs/results-schema.md).</p>"
            "<p>Columns: <i>paper model</i> is LoGPC §5 as written with the isolated LogGP overheads; "
            "<i>refined model</i> uses PLogP costs measured as back-to-back streams at the message size "
            "(latscope-bench logp g_nb, g_r) for the async remap, sync C_r = 0 at P = 2, and for the DAG eq. (15) with W = the "
            "stripe's computation measured alone / b. Nothing is fitted to these timings "
            "(docs/apps.md).</p>")
    if tp.fallback:
        head += ("<p><b>Fallback:</b> no LogP/LogGP fit was found, so the overheads are zero and overhead-bound "
                 "patterns are predicted far too fast.</p>")
    # the headline is the worst pattern (its worst and median |error|), not a median over all points
    summary = "".join(f"<p><b>{html.escape(line)}</b></p>" for line in apps_twins.headline(table))
    summary += ("<p>Per pattern, over the points with a processor per rank and not under load (the others "
                "are counted apart); goal ≤ 10% median per pattern:</p>" + _table(apps_twins.format_summary(table)))
    parts = []
    for e in apps_twins.pattern_summary(table, "rel_err"):
        r = {x.pattern: x for x in apps_twins.pattern_summary(table, "refined_rel_err")}.get(e.pattern)
        parts.append(f"<h4>{html.escape(e.pattern)}</h4>"
                     + _table(apps_twins.format_table(table[table["pattern_key"] == e.pattern]))
                     + f"<p>paper: {html.escape(e.describe())}<br>refined: "
                     + (html.escape(r.describe()) if r else "—") + "</p>")
    plot = _dag_plot(pts, tp) or ""
    return head + summary + "".join(parts) + plot


SECTIONS = [("Application models: predicted vs measured", section_apps)]
