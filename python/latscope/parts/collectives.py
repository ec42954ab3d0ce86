"""Collectives in the main job and the report (docs/collectives.md): the timing methods
compared on scatter and gather (seed 001 Fig. 2), what each method costs (seed 001 Table 1),
the algorithms compared, isolated against pipelined repetitions (seed 001 Fig. 1), and the
clock synchronisation that global timing used."""
from __future__ import annotations

import html
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from latscope.parts import Step
from latscope.figures import frame, png as _png, table as _table
from latscope.report import ReportInput
from latscope.selection import screen, target_of
from latscope.units import fmt_size, fmt_time

ORDER = 40
# multiples of 12 KiB split evenly over 1, 2, 3 or 4 ranks (the demo runs at most 4)
SIZES = "0:96K:+12K"
QUICK_SIZES = "0:48K:+12K"
METHOD_ORDER = ["root", "max", "global", "local", "individual"]


def demo_steps(quick: bool) -> list[Step]:
    sizes = QUICK_SIZES if quick else SIZES
    common = ["--sizes", sizes, "--max-reps", "30" if quick else "60", "--budget", "0.5", "--progress"]
    return [
        Step("coll_scatter", ["coll", "--op", "scatter", "--alg", "native,linear,binomial", "--timing", "all"] + common),
        Step("coll_gather", ["coll", "--op", "gather", "--alg", "native,linear,binomial", "--timing", "all"] + common),
        # the same operations back to back: IMB's way, to show the pipeline effect
        Step("coll_scatter_pipelined", ["coll", "--op", "scatter", "--alg", "native", "--timing", "local",
                                        "--pipelined"] + common),
        Step("coll_gather_pipelined", ["coll", "--op", "gather", "--alg", "native", "--timing", "local",
                                       "--pipelined"] + common),
    ]


def _coll(inp: ReportInput) -> pd.DataFrame:
    df = inp.points("coll")
    if df.empty or "timing" not in df:
        return pd.DataFrame()
    df = df[df["timing"].notna()].copy()
    df["sync"] = [next((r.meta.get("sync") for r in inp.results if str(r.path) == f), None) for f in df["_file"]]
    return df


def _isolated(df: pd.DataFrame) -> pd.DataFrame:
    # _coll gives a frame without columns when the files hold no collective records (p2p only, ...)
    return df[df["sync"] != "none"] if "sync" in df else df


def section_methods(inp: ReportInput) -> str | None:
    df = _isolated(_coll(inp))
    if df.empty:
        return None
    ops = [op for op in ("scatter", "gather", "bcast") if op in set(df["op"])]
    if not ops:
        return None
    fig, axes = plt.subplots(1, len(ops), figsize=(6 * len(ops), 4), squeeze=False)
    for ax, op in zip(axes[0], ops):
        d = df[df["op"] == op]
        alg = "linear" if "linear" in set(d["alg"]) else d["alg"].iloc[0]
        d = d[d["alg"] == alg]
        for m in METHOD_ORDER:
            g = d[d["timing"] == m].sort_values("size_bytes")
            if not g.empty:
                ax.plot(g["size_bytes"] / 1024, g["median_s"] * 1e6, marker="o", ms=3, label=m)
        frame(ax, "size (KiB, the root's whole buffer)", "median time (µs)",
              f"{op} ({alg}), {int(inp.results[0].meta.get('ranks', 0))} ranks", grid="major", legend=8)
    note = ("<p>Each curve is one timing method (MPIBlib §2.1): <b>root</b> — the root's clock, completion confirmed "
            "by empty messages, the confirmation time subtracted (negative values are kept, not clamped); "
            "<b>max</b> — maximum of local times after a synchronised start; <b>global</b> — a common start instant "
            "on synchronised clocks to the latest finish; <b>local</b> — IMB style, here the maximum over ranks; "
            "<b>individual</b> — root→rank i tasks with an acknowledgement, corrected by its one-way time "
            "(linear and binomial trees).</p>")
    return note + _png(fig)


def cost_table(df: pd.DataFrame, syncs: list[dict[str, Any]]) -> pd.DataFrame:
    """Seed 001 Table 1: the wall time each timing method took over the whole sweep (sum of the
    points' wall_s; global also pays its clock synchronisations), and its ratio to root."""
    rows = []
    sync_cost = sum(s.get("cost_s", 0.0) + s.get("check_cost_s", 0.0) for s in syncs)
    for op, d in df.groupby("op"):
        base = d[d["timing"] == "root"]["wall_s"].sum()
        for m in METHOD_ORDER:
            g = d[d["timing"] == m]
            if g.empty:
                continue
            wall = g["wall_s"].sum() + (sync_cost if m == "global" else 0.0)
            rows.append({"op": op, "timing": m, "points": len(g), "repetitions": int(g["reps_total"].sum()),
                         "wall": fmt_time(wall), "wall_s": wall,
                         "÷ root": f"{wall / base:.2f}" if base > 0 else "-"})
    return pd.DataFrame(rows)


def section_cost(inp: ReportInput) -> str | None:
    df = _isolated(_coll(inp))
    if df.empty:
        return None
    syncs = [s for r in inp.results for s in r.syncs]
    t = cost_table(df, syncs)
    if t.empty:
        return None
    return ("<p>Wall time of the measurement itself per timing method over the same sweep (adaptive "
            "repetitions; global includes its clock synchronisations). Seed 001 Table 1 reports global ≈ 36× "
            "root for scatter on 16 nodes.</p>" + _table(t.drop(columns=["wall_s"])))


def section_algorithms(inp: ReportInput) -> str | None:
    df = _isolated(_coll(inp))
    if df.empty:
        return None
    method = "global" if "global" in set(df["timing"]) else df["timing"].iloc[0]
    d = df[df["timing"] == method]
    ops = sorted(set(d["op"]))
    fig, axes = plt.subplots(1, len(ops), figsize=(6 * len(ops), 4), squeeze=False)
    rows = []
    aside: list[str] = []
    target = target_of(inp.results[0].meta) if inp.results else None
    for ax, op in zip(axes[0], ops):
        g = d[d["op"] == op]
        for alg, a in g.groupby("alg"):
            a = a.sort_values("size_bytes")
            ax.plot(a["size_bytes"] / 1024, a["median_s"] * 1e6, marker="o", ms=3, label=alg)
        frame(ax, "size (KiB)", "median (µs)", f"{op}: {method} timing", grid="major", legend=8)
        for size, s in g.groupby("size_bytes"):
            # the fastest among the eligible only (latscope.selection: a negative, zero-like or
            # non-converged median never wins); the others are marked with why
            recs = {str(r["alg"]): r for _, r in s.iterrows()}
            sc = screen(list(recs), recs, target)
            win = recs[sc.winner] if sc.winner else None
            rows.append({"op": op, "size": fmt_size(size), "fastest": sc.winner or "none eligible",
                         "median": fmt_time(win["median_s"]) if win is not None else "-",
                         **{a: fmt_time(v) + (" ✗" if a in sc.set_aside else "") for a, v in zip(s["alg"], s["median_s"])}})
            aside += [f"{op} {fmt_size(size)} {a}: {w}" for a, w in sc.set_aside.items()]
    note = ("<p>✗ set aside, never the fastest (docs/tune-format.md \"Which candidates are ranked\"):</p><ul>"
            + "".join(f"<li>{html.escape(x)}</li>" for x in aside) + "</ul>") if aside else ""
    return _png(fig) + _table(pd.DataFrame(rows)) + note


def section_pipeline(inp: ReportInput) -> str | None:
    df = _coll(inp)
    if df.empty or "local" not in df:
        return None
    d = df[(df["timing"] == "local") & (df["alg"] == "native")]
    # only ops measured both ways: a panel with one of the two (the barrier benchmark's loop is
    # unsynchronised, seed 002 Fig. 4) compares nothing, and its one size drew an empty axis
    ops = sorted(str(op) for op, g in d.groupby("op") if set(g["sync"]) >= {"barrier", "none"})
    if not ops:
        return None
    fig, axes = plt.subplots(1, len(ops), figsize=(6 * len(ops), 4), squeeze=False)
    for ax, op in zip(axes[0], ops):
        for sync, style in (("barrier", "-"), ("none", "--")):
            g = d[(d["op"] == op) & (d["sync"] == sync)].sort_values("size_bytes")
            if g.empty:
                continue
            label = "isolated" if sync == "barrier" else "pipelined"
            x = g["size_bytes"] / 1024
            ax.plot(x, [v["imb_t_min_s"] * 1e6 for v in g["local"]], style, marker="v", ms=3, label=f"{label} min")
            ax.plot(x, [v["imb_t_max_s"] * 1e6 for v in g["local"]], style, marker="^", ms=3, label=f"{label} max")
        frame(ax, "size (KiB)", "time per repetition (µs)", f"{op} (native): local times, isolated vs back to back",
              grid="major", legend=8)
    return ("<p>IMB-style local times (min and max over ranks of each rank's average), with repetitions "
            "isolated and run back to back. Differences are the pipeline effect of seed 001 Fig. 1: a rank that "
            "finishes early starts the next repetition while others are still in the previous one.</p>" + _png(fig))


def section_sync(inp: ReportInput) -> str | None:
    rows = []
    for r in inp.results:
        for s in r.syncs:
            rows.append({"file": html.escape(str(r.path.name if r.path else "")), "method": s["method"],
                         "model": s["model"] + (" (drift rejected)" if s.get("drift_rejected") else ""),
                         "cost": fmt_time(s["cost_s"]), "residual max": fmt_time(s["residual_max_s"]),
                         "check uncertainty": fmt_time(s["residual_bound_s"])})
    if not rows:
        return None
    return ("<p>Clock synchronisation before global timing: the residual is measured afterwards on the "
            "synchronised clocks (SKaMPI bounds, rank 0 against each rank).</p>" + _table(pd.DataFrame(rows)))


SECTIONS = [
    ("Collectives: timing methods", section_methods),
    ("Collectives: cost of measuring", section_cost),
    ("Collectives: algorithms", section_algorithms),
    ("Collectives: isolated vs pipelined", section_pipeline),
    ("Collectives: clock synchronisation", section_sync),
]
