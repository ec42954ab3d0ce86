"""The ratio run/baseline against message size, with its CI as error bars (report and
`latscope compare --plot`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from latscope.compare import Comparison, point_name
from latscope.figures import Figure, frame, plt


def ratio_figure(cmps: list[Comparison]) -> Figure:
    fig, ax = plt.subplots(figsize=(7, 3.8))
    drawn = 0
    for c in cmps:
        by: dict[str, list[Any]] = {}
        for p in c.points:
            if p.ratio is not None:
                by.setdefault(point_name(p.key), []).append(p)
        for name, pts in by.items():
            pts.sort(key=lambda p: p.size_bytes)
            x = np.maximum(np.array([p.size_bytes for p in pts], float), 0.5)
            y = np.array([p.ratio for p in pts], float)
            lo = np.array([p.ratio - p.ratio_ci[0] if p.ratio_ci else 0 for p in pts])
            hi = np.array([p.ratio_ci[1] - p.ratio if p.ratio_ci else 0 for p in pts])
            label = name if len(cmps) == 1 else f"{c.run.rsplit('/', 1)[-1]}: {name}"
            ax.errorbar(x, y, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], marker="o", ms=3, capsize=2,
                        label=label)
            drawn += 1
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    frame(ax, "message size (bytes; 0 drawn at 0.5)", "ratio of medians, run / baseline",
          "Run against baseline (below 1: faster), with CI", grid="both",
          legend=7 if drawn else None)
    return fig
