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
from latscope.references import link_citations, name_citations, references_html
from latscope.results import Results, noisy
from latscope.text import QUICK_BANNER, fmt_median, fmt_value, mpi_version, quick_run
from latscope.units import fmt_rate, fmt_size, fmt_time


@dataclass
class ReportInput:
    """Everything a section may draw from."""

    results: list[Results]
    params: dict[str, Any] = field(default_factory=dict)
    outdir: Path = Path(".")
    baseline: list[Results] = field(default_factory=list)   # `latscope report --baseline`

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


def _hockney_fits(inp: ReportInput) -> list[dict[str, Any]]:
    if inp.params.get("model") != "hockney":
        return []
    return [f for f in inp.params.get("source", {}).get("fits", []) if f.get("alpha_s") is not None]


def _split_valid(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(points to draw as latencies, points drawn apart): oversubscribed points (scheduling delays)
    and medians <= 0 or missing (timer artefacts) go apart; points under load stay, flagged."""
    over = df["oversubscribed"].fillna(False).astype(bool) if "oversubscribed" in df else False
    bad = over | ~(pd.to_numeric(df["median_s"], errors="coerce") > 0)
    return df[~bad], df[bad]


def section_latency(inp: ReportInput) -> str | None:
    df = inp.points("p2p", "pingpong")
    if df.empty:
        return None
    valid, apart = _split_valid(df)
    fig, ax = plt.subplots(figsize=(7, 4))
    pair: Any
    for pair, g in valid.groupby("pair"):
        g = g.sort_values("size_bytes")
        x = np.maximum(g["size_bytes"].to_numpy(dtype=float), 0.5)
        line, = ax.plot(x, g["median_s"] * 1e6, marker=".", label=f"{pair[0]}↔{pair[1]} median (p50)")
        lo, hi = g["ci_lo_s"].to_numpy(dtype=float), g["ci_hi_s"].to_numpy(dtype=float)
        ax.fill_between(x, lo * 1e6, hi * 1e6, alpha=0.35, color=line.get_color())
        if "p99_s" in g:
            p99 = pd.to_numeric(g["p99_s"], errors="coerce").to_numpy(dtype=float)
            ax.fill_between(x, g["median_s"].to_numpy(dtype=float) * 1e6, p99 * 1e6, alpha=0.12,
                            color=line.get_color(), label=f"{pair[0]}↔{pair[1]} p50–p99")
    if not apart.empty:
        ax.plot(np.maximum(apart["size_bytes"].to_numpy(dtype=float), 0.5),
                np.clip(apart["median_s"].to_numpy(dtype=float), 1e-9, None) * 1e6, "x", color="0.6",
                label="oversubscribed / invalid (drawn apart)")
    fits = _hockney_fits(inp)
    if fits and not valid.empty:
        xs = np.geomspace(max(1.0, float(valid["size_bytes"].min())), float(valid["size_bytes"].max()) or 1.0, 60)
        for f in fits[:3]:
            who = "all pairs" if not f.get("pair") else "↔".join(map(str, f["pair"]))
            ax.plot(xs, (f["alpha_s"] + f["beta_s_per_byte"] * xs) * 1e6, "--", lw=1.2, color="k",
                    label=f"Hockney fit α + β·m ({f['method']}, {who})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    frame(ax, "message size (bytes; 0 drawn at 0.5)", "one-way latency (µs)",
          "Ping-pong latency (RTT/2): median, CI band, p50–p99 band", grid="both", legend=7)
    loaded = int(valid["under_load"].fillna(False).astype(bool).sum()) if "under_load" in valid else 0
    note = (f"<p>{len(valid)} points{f' ({loaded} measured under load)' if loaded else ''}; dark band: {df['ci_level'].iloc[0]:.0%} CI of the {df['ci_of'].iloc[0]}, "
            "light band: median to p99 of the samples; dashed: the fitted model over the data.")
    if not apart.empty:
        note += (f" {len(apart)} point(s) measured oversubscribed or with an invalid median (≤ 0) are "
                 "drawn apart (grey ×): they are operating-system scheduling delays or timer artefacts, not latencies.")
    return png(fig) + note + "</p>"


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


def section_distributions(inp: ReportInput) -> str | None:
    """ECDFs of the raw samples (files written with --raw), one curve per point, at most 8 a file."""
    curves: list[tuple[str, np.ndarray]] = []
    rows = []
    for r in inp.results:
        if not r.raw:
            # `latscope bench --percentiles` without --raw: the recorded percentiles, no curve
            if "percentiles_s" in r.points and r.meta.get("percentiles"):
                for _, p in r.points.iterrows():
                    d = p["percentiles_s"] if isinstance(p["percentiles_s"], dict) else {}
                    rows.append({"point": f"{p['op']} {fmt_size(p['size_bytes'])}", "n": int(p["n"])} |
                                {f"p{q:g}": fmt_value(d.get(f"p{q:g}")) for q in r.meta["percentiles"]})
            continue
        pts = r.points.reset_index(drop=True)
        idx = sorted(r.raw)[:: max(1, len(r.raw) // 8)][:8]
        pcts = r.meta.get("percentiles") or [50, 90, 99, 99.9]
        for i in idx:
            x = np.sort(np.asarray(r.raw[i], dtype=float))
            if x.size == 0:
                continue
            p = pts.iloc[i]
            name = f"{p['op']} {fmt_size(p['size_bytes'])}"
            curves.append((name, x))
            rows.append({"point": name, "n": x.size} |
                        {f"p{q:g}": fmt_value(float(np.percentile(x, q))) for q in pcts})
    if not curves:
        return ("<p>Tail percentiles recorded by latscope bench --percentiles (no raw samples kept):</p>"
                + table(pd.DataFrame(rows))) if rows else None
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, x in curves:
        ax.step(np.clip(x, 1e-10, None) * 1e6, np.arange(1, x.size + 1) / x.size, where="post", label=name)
    ax.set_xscale("log")
    frame(ax, "time per repetition (µs)", "fraction of samples ≤ x (ECDF)",
          "Distribution of the raw samples", grid="both", legend=7)
    return png(fig) + "<p>Tail percentiles of the raw samples:</p>" + table(pd.DataFrame(rows))


def section_baseline(inp: ReportInput) -> str | None:
    if not inp.baseline:
        return None
    from latscope.compare import compare, point_name
    from latscope.compare.plot import ratio_figure
    cmps = [compare(inp.baseline[0], r) for r in inp.results]
    out = [png(ratio_figure(cmps))]
    for c in cmps:
        diffs = "".join(f"<li>{html.escape(w)}: {html.escape(a)} (baseline) vs {html.escape(b)}</li>"
                        for w, a, b in c.meta_diffs) or "<li>none of MPI, hosts, timer, sync, load</li>"
        n = c.counts()
        out.append(f"<p><b>{html.escape(Path(c.run).name)}</b> against <b>{html.escape(Path(c.baseline).name)}</b>: "
                   f"{n['faster']} faster, {n['slower']} slower, {n['no difference']} no difference, "
                   f"{n['n/a']} n/a ({c.confidence:.0%} CI of the ratio of medians). Metadata differing:</p>"
                   f"<ul>{diffs}</ul>")
        out.append(table(pd.DataFrame([{
            "point": point_name(p.key), "size": fmt_size(p.size_bytes), "baseline": fmt_median(p.baseline_median_s),
            "run": fmt_median(p.median_s), "ratio": "n/a" if p.ratio is None else f"{p.ratio:.3f}",
            "CI": "n/a" if p.ratio_ci is None else f"[{p.ratio_ci[0]:.3f}, {p.ratio_ci[1]:.3f}]",
            "verdict": p.verdict + (" (noise)" if p.noisy else ""), "method": p.method} for p in c.points])))
    return "".join(out)


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
                     "hosts": ", ".join(m.get("hosts", [])), "MPI": mpi_version(m.get("mpi_library")),
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
    t = pd.concat(frames, ignore_index=True)
    return (f"<details><summary>{len(t)} points (click to show the table)</summary>{table(t)}</details>")


Section = Callable[[ReportInput], "str | None"]
SECTIONS: list[tuple[str, Section]] = [
    ("Point-to-point latency", section_latency),
    ("Per-pair small-message latency", section_heatmap),
    ("Bandwidth", section_bandwidth),
    ("Comparison with the baseline", section_baseline),
    ("Fitted parameters", section_params),
    ("Distributions", section_distributions),
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
h2{border-bottom:2px solid #468;padding-bottom:3px}img{max-width:100%}
.banner{background:#fbe3c0;border:2px solid #c70;padding:8px 12px;font-weight:bold}
.warn{color:#a40}nav.toc{columns:2;font-size:14px}.summary td{padding:2px 10px}"""


def summary_html(inp: ReportInput) -> str:
    """The report's opening: headline figures, what was measured, the warnings that matter."""
    from latscope import launches
    rows: list[tuple[str, str]] = []
    warns: list[str] = []
    df = inp.points()
    metas = [r.meta for r in inp.results]
    if metas:
        ops = sorted({f"{m.get('bench')} {m.get('op')}" for m in metas})
        ranks = sorted({str(m.get("ranks")) for m in metas})
        hosts = sorted({h for m in metas for h in (m.get("hosts") or [])})
        rows.append(("measured", f"{', '.join(ops)} on {', '.join(ranks)} rank(s), host(s) {', '.join(hosts) or 'n/a'}"))
        rows.append(("MPI", ", ".join(sorted({mpi_version(m.get("mpi_library")) for m in metas}))))
        rows.append(("files", f"{len(inp.results)} results file(s), {len(df)} points"))
    pp = inp.points("p2p", "pingpong")
    if not pp.empty:
        ok, _ = _split_valid(pp)
        clean = ok[~noisy(ok)]
        tag = "" if not clean.empty else " (measured under load)"
        ok = clean if not clean.empty else ok
        if not ok.empty:
            small = ok[ok["size_bytes"] == ok["size_bytes"].min()]
            rows.append((f"latency, {fmt_size(int(small['size_bytes'].iloc[0]))} (median of pairs)",
                         fmt_value(float(small["median_s"].median())) + tag))
            big = ok[ok["size_bytes"] == ok["size_bytes"].max()]
            rows.append((f"latency, {fmt_size(int(big['size_bytes'].iloc[0]))}", fmt_value(float(big["median_s"].median())) + tag))
        else:
            rows.append(("latency", "n/a (every ping-pong point oversubscribed or invalid)"))
    bw = inp.points("p2p", "bandwidth")
    if not bw.empty and "bandwidth_bytes_per_s" in bw:
        rows.append(("peak bandwidth", fmt_rate(float(bw["bandwidth_bytes_per_s"].max()))))
    for f in _hockney_fits(inp)[:1]:
        rows.append(("Hockney fit", f"α = {fmt_time(f['alpha_s'])}, 1/β = {fmt_rate(f.get('bandwidth_bytes_per_s'))}"))
    if any(quick_run(m) for r in inp.results for m in [r.meta, *r.launches]):
        warns.append("quick run: the files were measured with LATSCOPE_QUICK=1 or --quick (at most 30 repetitions "
                     "a point): figures are a smoke test, not a measurement")
    if not df.empty:
        if "oversubscribed" in df and df["oversubscribed"].fillna(False).astype(bool).any():
            n = int(df["oversubscribed"].fillna(False).astype(bool).sum())
            warns.append(f"oversubscribed: {n} point(s) ran with more ranks than CPUs; their times are scheduling "
                         "delays and are drawn apart or left out of charts and fits")
        if "under_load" in df and df["under_load"].fillna(False).astype(bool).any():
            n = int(df["under_load"].fillna(False).astype(bool).sum())
            warns.append(f"under load: other processes took CPU time while {n} point(s) ran")
        neg = int((pd.to_numeric(df["median_s"], errors="coerce") <= 0).sum())
        if neg:
            warns.append(f"invalid: {neg} point(s) have a median ≤ 0 (a timer or correction artefact); they are not shown as latencies")
    for r in inp.results:
        if r.launches:
            for w in launches.disagreement_warnings(launches.launch_table(r)):
                warns.append(f"launches disagree ({html.escape(Path(str(r.path)).name)}): {w}")
    body = "<table class='summary'>" + "".join(
        f"<tr><th align='left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows) + "</table>"
    if warns:
        body += "<p><b>Warnings</b></p><ul>" + "".join(f"<li class='warn'>{html.escape(w)}</li>" for w in warns) + "</ul>"
    else:
        body += "<p>No warnings: full measurement, no point oversubscribed or under load.</p>"
    return body


def _anchor(i: int) -> str:
    return f"s{i}"


def build(results: list[Results], out: Path, params: dict[str, Any] | None = None,
          title: str = "latscope report", baseline: list[Results] | None = None) -> Path:
    inp = ReportInput(results, params or {}, out.parent, list(baseline or []))
    cited: set[str] = set()
    drawn: list[tuple[str, str]] = []
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
            drawn.append((html.escape(name_citations(name, cited)), link_citations(body, cited)))
    quick = any(quick_run(m) for r in results for m in [r.meta, *r.launches])
    head = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    if quick:
        head.append(f"<p class='banner' id='quick-banner'>{html.escape(QUICK_BANNER)}</p>")
    toc = "".join(f"<li><a href='#{_anchor(i)}'>{name}</a></li>" for i, (name, _) in enumerate(drawn, 1))
    if results:
        head.append("<a id='summary'></a><h2>Summary</h2>" + link_citations(summary_html(inp), cited))
    head.append(f"<nav class='toc'><b>Contents</b><ol>{toc}"
                + ("<li><a href='#references'>References</a></li>" if cited else "") + "</ol></nav>")
    # the anchor before the heading: a section's heading stays a plain <h2>NAME</h2>
    parts = head + [f"<a id='{_anchor(i)}'></a><h2>{name}</h2>{body}" for i, (name, body) in enumerate(drawn, 1)]
    if cited:
        parts.append("<a id='references'></a><h2>References</h2>" + references_html(cited))
    parts.append("</body></html>")
    out.write_text("\n".join(parts))
    return out


def load_params(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text()) if path.exists() else {}
    return doc if isinstance(doc, dict) else {}
