"""One HTML page with plots (PNG embedded) built from results files. Capabilities add sections by
registering a function in SECTIONS: (title, fn(ReportInput) -> html or None)."""
from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from latscope.figures import frame, plt, png, table
from latscope.results import Results
from latscope.units import fmt_rate, fmt_size, fmt_time


@dataclass
class ReportInput:
    """Everything a section may draw from."""

    results: list[Results]
    params: dict[str, Any] = field(default_factory=dict)
    outdir: Path = Path(".")

    def points(self, bench: str | None = None, op: str | None = None) -> pd.DataFrame:
        frames = [r.points.assign(_file=str(r.path)) for r in self.results if not r.points.empty]
        if not frames:
            return pd.DataFrame()
        df = pd.concat(frames, ignore_index=True)
        if bench is not None:
            df = df[df["bench"] == bench]
        if op is not None:
            df = df[df["op"] == op]
        return df


def section_latency(inp: ReportInput) -> str | None:
    df = inp.points("p2p", "pingpong")
    if df.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    pair: Any
    for pair, g in df.groupby("pair"):
        g = g.sort_values("size_bytes")
        x = np.maximum(g["size_bytes"].to_numpy(), 0.5)
        ax.plot(x, g["median_s"] * 1e6, marker=".", label=f"{pair[0]}↔{pair[1]} median")
        lo, hi = g["ci_lo_s"].to_numpy(dtype=float), g["ci_hi_s"].to_numpy(dtype=float)
        ax.fill_between(x, lo * 1e6, hi * 1e6, alpha=0.25)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    frame(ax, "message size (bytes; 0 drawn at 0.5)", "one-way latency (µs)",
          "Ping-pong latency (RTT/2) with its CI band", grid="both", legend=7)
    note = f"<p>{len(df)} points; band: {df['ci_level'].iloc[0]:.0%} CI of the {df['ci_of'].iloc[0]}.</p>"
    return png(fig) + note


def section_heatmap(inp: ReportInput) -> str | None:
    df = inp.points("p2p", "pingpong")
    if df.empty:
        return None
    sizes = sorted(s for s in df["size_bytes"].unique())
    small = 8 if 8 in sizes else sizes[0]
    d = df[df["size_bytes"] == small]
    P = int(max(max(p) for p in d["pair"])) + 1
    m = np.full((P, P), np.nan)
    for _, r in d.iterrows():
        i, j = r["pair"]
        m[i, j] = m[j, i] = r["median_s"] * 1e6
    fig, ax = plt.subplots(figsize=(4.5, 4))
    im = ax.imshow(m, cmap="viridis")
    for i in range(P):
        for j in range(P):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", color="w", fontsize=8)
    ax.set_xticks(range(P))
    ax.set_yticks(range(P))
    ax.set_xlabel("rank")
    ax.set_ylabel("rank")
    ax.set_title(f"Median latency per pair, {fmt_size(small)} (µs)")
    fig.colorbar(im, ax=ax)
    return png(fig)


def section_bandwidth(inp: ReportInput) -> str | None:
    df = inp.points("p2p", "bandwidth")
    if df.empty or "bandwidth_bytes_per_s" not in df:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    pair: Any
    for pair, g in df.groupby("pair"):
        g = g[g["size_bytes"] > 0].sort_values("size_bytes")
        ax.plot(g["size_bytes"], g["bandwidth_bytes_per_s"] / 1e9, marker=".", label=f"{pair[0]}→{pair[1]}")
    ax.set_xscale("log", base=2)
    frame(ax, "message size (bytes)", "bandwidth (GB/s)", f"Streaming bandwidth (window {int(df['window'].iloc[0])})",
          grid="both", legend=7)
    best = df["bandwidth_bytes_per_s"].max()
    return png(fig) + f"<p>Peak: {fmt_rate(best)}.</p>"


def section_params(inp: ReportInput) -> str | None:
    fits = inp.params.get("source", {}).get("fits", []) if inp.params.get("model") == "hockney" else []
    if not fits:
        return None
    rows = []
    for f in fits:
        rows.append({
            "method": f["method"],
            "pair": "all" if not f.get("pair") else "↔".join(map(str, f["pair"])),
            "α (latency)": fmt_time(f["alpha_s"]),
            "α CI": f"[{fmt_time(f['alpha_ci_s'][0])}, {fmt_time(f['alpha_ci_s'][1])}]",
            "β (s/byte)": f"{f['beta_s_per_byte']:.4g}",
            "1/β": fmt_rate(f.get("bandwidth_bytes_per_s")),
            "β CI": f"[{f['beta_ci_s_per_byte'][0]:.3g}, {f['beta_ci_s_per_byte'][1]:.3g}]",
            "points": f["n_points"],
        })
    return "<p>Hockney model T(m) = α + β·m, one-way.</p>" + table(pd.DataFrame(rows))


def section_provenance(inp: ReportInput) -> str | None:
    rows = []
    for r in inp.results:
        m = r.meta
        rows.append({"file": Path(str(r.path)).name, "op": m.get("op"), "ranks": m.get("ranks"),
                     "hosts": ", ".join(m.get("hosts", [])), "MPI": m.get("mpi_library"),
                     "timer": f"{m['timer']['name']} (res {fmt_time(m['timer']['resolution_s'])}, "
                              f"overhead {fmt_time(m['timer']['overhead_s'])})",
                     "git": m.get("git_sha"), "time (UTC)": m.get("utc_time")})
    return table(pd.DataFrame(rows)) if rows else None


def section_summary(inp: ReportInput) -> str | None:
    if not inp.results:   # a report of a part's own outputs (e.g. latscope study analyze): no results files
        return None
    frames = [r.summary() for r in inp.results if not r.points.empty]
    if not frames:
        names = ", ".join(Path(str(r.path)).name for r in inp.results)
        return f"<p>No measured points in {html.escape(names)} (metadata only: a run stopped before its first point).</p>"
    return table(pd.concat(frames, ignore_index=True))


Section = Callable[[ReportInput], "str | None"]
SECTIONS: list[tuple[str, Section]] = [
    ("Point-to-point latency", section_latency),
    ("Per-pair small-message latency", section_heatmap),
    ("Bandwidth", section_bandwidth),
    ("Fitted parameters", section_params),
    ("All points", section_summary),
    ("Provenance", section_provenance),
]



def all_sections() -> list[tuple[str, Section]]:
    """SECTIONS with those of latscope.parts modules inserted before "All points"."""
    from latscope import parts
    extra = [sec for part in parts.load_all() for sec in part.sections]
    k = next(i for i, (name, _) in enumerate(SECTIONS) if name == "All points")
    return SECTIONS[:k] + extra + SECTIONS[k:]


_CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table.t{border-collapse:collapse;font-size:12px}table.t td,table.t th{padding:2px 8px;border-bottom:1px solid #ddd}
h2{border-bottom:2px solid #468;padding-bottom:3px}img{max-width:100%}"""


def build(results: list[Results], out: Path, params: dict[str, Any] | None = None,
          title: str = "latscope report") -> Path:
    inp = ReportInput(results, params or {}, out.parent)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    for name, fn in all_sections():
        try:
            body = fn(inp)
        except Exception as e:  # noqa: BLE001 - one section's failure must not cost the whole report
            if os.environ.get("LATSCOPE_DEBUG") == "1":
                raise
            plt.close("all")
            body = (f"<p class='note'>This section could not be drawn from these files "
                    f"({html.escape(type(e).__name__)}: {html.escape(str(e))}).</p>")
        if body:
            parts.append(f"<h2>{html.escape(name)}</h2>{body}")
    parts.append("</body></html>")
    out.write_text("\n".join(parts))
    return out


def load_params(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text()) if path.exists() else {}
    return doc if isinstance(doc, dict) else {}
