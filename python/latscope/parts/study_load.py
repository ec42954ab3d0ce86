"""Report section: load characterisation (`latscope study load`; seed 004 §5.2, Figs 2-3): mean and
sd of the small-message ping-pong latency against the background load, from the study's load.jsonl
next to the results files given to `latscope report`."""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any


def read_levels(path: Path) -> list[dict[str, Any]]:
    """The level records of a study's load.jsonl (docs/study.md)."""
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    return [r for r in recs if r.get("type") == "level"]


def _draw(levels: list[dict[str, Any]]) -> Any:
    from latscope.figures import frame, plt

    x = [float(lv["load_pct"]) for lv in levels]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, key, title in ((a, "mean_s", "mean (seed 004 Fig. 2)"), (b, "sd_s", "standard deviation (Fig. 3)")):
        y = [float("nan") if lv.get(key) is None else float(lv[key]) * 1e6 for lv in levels]
        ax.plot(x, y, "o-")
        frame(ax, "background load (% of the one-way bandwidth)", f"{title.split(' (')[0]} (µs)",
              f"one-way ping-pong latency: {title}", title_size=9, grid="major")
    fig.tight_layout()
    return fig


def plot(levels: list[dict[str, Any]], out: Path) -> Path:
    """Mean and sd against load, side by side, as a PNG."""
    import matplotlib.pyplot as plt

    fig = _draw(levels)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def section_study_load(inp: Any) -> str | None:
    from latscope.figures import png as _png
    from latscope.parts import beside_results
    from latscope.study.load import text_table

    out = []
    for jl in beside_results(inp, "load.jsonl"):
        levels = read_levels(jl)
        if not levels:
            continue
        out.append(f"<p>{html.escape(str(jl))}: {len(levels)} load levels (latscope study load).</p>")
        out.append(_png(_draw(levels)))
        out.append(f"<pre>{html.escape(text_table(levels))}</pre>")
    return "\n".join(out) or None


SECTIONS = [("Load characterisation (latency under background load)", section_study_load)]
