"""Latency budget (`latscope budget`; seed 000, Fig. 9): `latscope characterize` measures a short
ladder after its benchmarks (every environment as root, including the network namespaces; without
root the shared-memory and MPI-over-TCP launches only) into <out>/budget.jsonl; the report shows
any budget.jsonl next to its results files: one stacked bar per closure (the parts, the residual,
the measured total) and the table."""
from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import Any

# characterize's share: two runs at fixed small counts, a few seconds in all (docs/budget.md)
DEMO_ARGS = ["--warmup", "20", "--min-reps", "100", "--max-reps", "100"]
DEMO_RUNGS_NONROOT = "flag,flag-block,pipe-poll,pipe-block,unix-poll,tcp-poll,tcp-block,mpi-shm,mpi-tcp"


def after_demo(out: Path, results: list[Any], params: dict[str, Any]) -> None:
    from latscope import budget
    from latscope.run import LaunchError

    spec = None if budget.netns_skip_reason() is None else DEMO_RUNGS_NONROOT
    print("== budget: the latency budget ladder -> " + str(out / "budget.jsonl"), file=sys.stderr, flush=True)
    try:
        meta, recs = budget.run_budget(spec, 20, 2, DEMO_ARGS, None, out / "budget.jsonl")
    except (LaunchError, budget.BudgetError) as e:
        # the rest of the job stands; the report says the budget is missing
        print(f"latscope: budget not measured: {e}", file=sys.stderr)
        return
    print(budget.text(meta, recs))


def _draw(recs: list[dict[str, Any]]) -> Any:
    from latscope.figures import frame, plt

    comps = {c["name"]: c for c in recs if c["type"] == "component"}
    clos = [c for c in recs if c["type"] == "closure" and c.get("residual_s") is not None]
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.75 * max(1, len(clos))))
    colors = [plt.get_cmap("tab20")(i / 20) for i in range(20)]
    names = sorted({p for c in clos for p in c["parts"]})
    color = {n: colors[i % len(colors)] for i, n in enumerate(names)}
    seen: set[str] = set()
    for y, cl in enumerate(clos):
        left = 0.0
        for p in cl["parts"]:
            c = comps[p]
            v = float(c["value_s"]) * 1e6
            h = c.get("ci_half_s")
            label = None if p in seen else p + (" (measured)" if c["kind"] == "measured" else "")
            seen.add(p)
            # a negative component (overlap) is drawn leftwards from the running sum
            ax.barh(y, v, left=left, color=color[p], edgecolor="white", label=label,
                    xerr=None if h is None else float(h) * 1e6, ecolor="0.3", capsize=2)
            left += v
        r = float(cl["residual_s"]) * 1e6
        ax.barh(y, r, left=left, color="none", edgecolor="black", hatch="//",
                label=None if "residual" in seen else "residual (total - sum)")
        seen.add("residual")
        ax.plot([float(cl["total_s"]) * 1e6] * 2, [y - 0.42, y + 0.42], color="black", lw=2)
    ax.set_yticks(range(len(clos)))
    ax.set_yticklabels([f"{c['total']} ({c['verdict']})" for c in clos])
    frame(ax, "one-way latency (µs); black bar: the measured total",
          title="latency budget: components by difference (seed 000 Fig. 9)", title_size=9, grid="major",
          grid_axis="x", legend=7, legend_at={"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)})
    fig.tight_layout()
    return fig


def section_budget(inp: Any) -> str | None:
    from latscope import budget
    from latscope.figures import png
    from latscope.parts import beside_results

    out = []
    for jl in beside_results(inp, "budget.jsonl"):
        try:
            meta, recs = budget.read(jl)
        except budget.BudgetError as e:
            out.append(f"<p>{html.escape(str(e))}</p>")
            continue
        out.append(f"<p>{html.escape(str(jl))}: one-way latencies (RTT/2) of same-clock ping-pongs, "
                   f"{meta.get('size_bytes')} B, {meta.get('runs')} runs; components by difference with "
                   "their propagated 95% CI (docs/budget.md).</p>")
        if any(c["type"] == "closure" and c.get("residual_s") is not None for c in recs):
            out.append(png(_draw(recs)))
        out.append(f"<pre>{html.escape(budget.text(meta, recs))}</pre>")
    return "\n".join(out) or None


SECTIONS = [("Latency budget (where the time goes)", section_budget)]
