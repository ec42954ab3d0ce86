"""Report section: launch-to-launch variation (`latscope bench ... --launches N`; latscope.launches)."""
from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from latscope import launches
from latscope.units import fmt_time

if TYPE_CHECKING:
    from latscope.report import ReportInput


def _figure(t: pd.DataFrame, title: str) -> str:
    from latscope.figures import Rectangle, frame, plt, png as _png

    n = int(t["launches"].max())
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(t) + 2), 4))
    width = 0.7
    for i, (_, r) in enumerate(t.iterrows()):
        # the t-interval across launches, behind the launches' own medians and CIs
        lo, hi = r["across_ci_lo_s"], r["across_ci_hi_s"]
        ax.add_patch(Rectangle((i - width / 2, lo * 1e6), width, (hi - lo) * 1e6, color="0.85", zorder=0,
                                   label="CI across launches (t)" if i == 0 else None))
        ax.hlines(r["mean_of_medians_s"] * 1e6, i - width / 2, i + width / 2, color="0.4", lw=1, zorder=1)
        k = len(r["medians_s"])
        xs = i + (np.arange(k) - (k - 1) / 2) * (width / max(k, 2))
        med = np.array(r["medians_s"], dtype=float)
        clo = np.array([np.nan if v is None else v for v in r["launch_ci_lo_s"]], dtype=float)
        chi = np.array([np.nan if v is None else v for v in r["launch_ci_hi_s"]], dtype=float)
        yerr = np.vstack([np.clip(med - clo, 0, None), np.clip(chi - med, 0, None)]) * 1e6
        ax.errorbar(xs, med * 1e6, yerr=np.nan_to_num(yerr), fmt="o", ms=4, capsize=2,
                    color="C3" if r["disagree"] else "C0", zorder=2,
                    label=("launch median ± its own CI" if i == 0 else None))
    ax.set_xlim(-0.6, len(t) - 0.4)
    ax.set_xticks(range(len(t)))
    ax.set_xticklabels([launches.point_label(r) for _, r in t.iterrows()], rotation=30, ha="right", fontsize=7)
    frame(ax, None, "median (µs)", f"{title}: {n} launches (red: launches disagree beyond their own CIs)",
          grid="major", grid_axis="y", legend=7)
    return _png(fig)


def section_launches(inp: ReportInput) -> str | None:
    from latscope.figures import table as _table

    out = []
    for res in inp.results:
        t = launches.launch_table(res)
        if t.empty:
            continue
        name = Path(str(res.path)).name
        rows = pd.DataFrame({
            "point": [launches.point_label(r) for _, r in t.iterrows()],
            "launch medians": [", ".join(fmt_time(m) for m in r["medians_s"]) for _, r in t.iterrows()],
            "min..max": [f"{fmt_time(a)}..{fmt_time(b)}" for a, b in zip(t["min_s"], t["max_s"])],
            "sd": t["sd_s"].map(fmt_time),
            "CI across launches": [f"[{fmt_time(a)}, {fmt_time(b)}]"
                                   for a, b in zip(t["across_ci_lo_s"], t["across_ci_hi_s"])],
            "Cochran's Q p": [launches.fmt_p(p) for p in t["p"]],
            "launches disagree": ["yes" if d else "" for d in t["disagree"]],
            "noisy launches": [",".join(map(str, v)) for v in t["noisy_launches"]],
        })
        bad = int(t["disagree"].sum())
        note = (f"<p>{html.escape(name)}: {int(t['launches'].max())} separate launches of the same command. "
                f"Per point: each launch's median with its own {100 * float(res.points['ci_level'].iloc[0]):g}% CI, "
                f"and the {100 * float(t['confidence'].iloc[0]):g}% Student-t interval on the launch medians "
                "(each launch one draw of the launch's state). Launches disagree when Cochran's Q rejects one "
                f"common value at p &lt; {launches.DISAGREE_ALPHA:g}: <b>{bad} of {len(t)}</b> points"
                + (" — quote the interval across launches, not one launch's CI" if bad else "") + ".</p>")
        out.append(note + _figure(t, name) + _table(rows))
    return "".join(out) or None


SECTIONS = [("Launch-to-launch variation", section_launches)]
