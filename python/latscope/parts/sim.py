"""LogGOPS simulation (`latscope sim-sweep`, docs/sim.md): the report draws the `"bench": "sim"`
records of any results file given to it: the schedule's end time (the last rank's finish) vs P per
algorithm, without and with variation (the delay table and/or OS noise); the ranks' finish-time
histogram of the largest run of each schedule; the critical path of the GOAL schedules (generated
schedules record none, docs/sim.md "Outputs")."""
from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from latscope.report import ReportInput


def _points(inp: "ReportInput") -> "pd.DataFrame":
    df = inp.points("sim")
    if df.empty or "ranks" not in df or "time_s" not in df:
        return df.iloc[0:0]
    return df


def _label(r: Any) -> str:
    v = "with variation" if bool(r["variation"]) else "no variation"
    return f"{r['op']}, {v}"


def _where(op: dict[str, Any]) -> str:
    """Where a critical path's operation is: a GOAL schedule's line, a generated schedule's step."""
    return f"line {op['line']}" if "line" in op else f"step {op.get('step')}"


def section_time_vs_p(inp: "ReportInput") -> str | None:
    """Time vs P: one line per (algorithm, variation); solid without, dashed with."""
    import pandas as pd

    from latscope.figures import frame, plt, png, table
    from latscope.units import fmt_time
    df = _points(inp)
    if df.empty:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = plt.get_cmap("tab10")
    ops = list(dict.fromkeys(df["op"]))
    for i, op in enumerate(ops):
        for var, style in ((False, "-"), (True, "--")):
            g = df[(df["op"] == op) & (df["variation"].astype(bool) == var)].sort_values("ranks")
            if g.empty:
                continue
            ax.plot(g["ranks"], g["time_s"] * 1e6, style, marker=".", color=colors(i % 10),
                    label=f"{op} ({'with variation' if var else 'no variation'})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    frame(ax, "P (ranks)", "end time: last rank's finish (µs)",
          "Simulated time vs P (LogGOPS; dashed: with the delay table / OS noise)", grid="both", legend=7)
    # the largest P of each line, and what the variation costs there
    rows = []
    for op in ops:
        for var in (False, True):
            g = df[(df["op"] == op) & (df["variation"].astype(bool) == var)]
            if g.empty:
                continue
            r = g.loc[g["ranks"].idxmax()]
            tab = r.get("table")
            rows.append({"schedule": op, "variation": ("table " + str(tab)) if isinstance(tab, str) else
                         ("OS noise" if var else "none"), "P": int(r["ranks"]), "last": fmt_time(r["time_s"]),
                         "median rank": fmt_time(r["median_s"]), "first": fmt_time(r["min_s"]),
                         "events": int(r["events"]), "simulated in": f"{float(r['wall_s']):.3g} s"})
    return png(fig) + "<p>Per schedule, its largest P:</p>" + table(pd.DataFrame(rows))


def section_finish_and_path(inp: "ReportInput") -> str | None:
    """The finish-time histogram of each schedule's largest run (with variation where there is),
    and the critical paths recorded."""
    import pandas as pd

    from latscope.figures import frame, plt, png, table
    from latscope.units import fmt_time
    df = _points(inp)
    if df.empty:
        return None
    ops = list(dict.fromkeys(df["op"]))[:6]
    fig, axes = plt.subplots(1, len(ops), figsize=(3.6 * len(ops), 3.2), squeeze=False)
    for ax, op in zip(axes[0], ops):
        g = df[df["op"] == op]
        pick = g[g["variation"].astype(bool)] if g["variation"].astype(bool).any() else g
        r = pick.loc[pick["ranks"].idxmax()]
        h = r["histogram"]
        counts = list(h["counts"])
        lo, hi = float(h["lo_s"]) * 1e6, float(h["hi_s"]) * 1e6
        width = (hi - lo) / len(counts) if hi > lo else 1.0
        ax.bar([lo + (i + 0.5) * width for i in range(len(counts))], counts, width=width * 0.9, color="#468")
        frame(ax, "finish time (µs)", "ranks", f"{op}, P = {int(r['ranks'])}" +
              (" (variation)" if bool(r["variation"]) else ""), title_size=9)
    fig.tight_layout()
    body = png(fig)
    rows = []
    for _, r in df.iterrows():
        cp = r.get("critical_path")
        if not isinstance(cp, dict):
            continue
        busy = cp.get("busy_s") or {}
        last = cp["ops"][-1] if cp.get("ops") else None
        rows.append({"schedule": r["op"], "P": int(r["ranks"]), "variation": "yes" if bool(r["variation"]) else "no",
                     "operations": cp["length"], "ranks on it": cp["ranks"], "messages": cp["messages"],
                     "time in": ", ".join(f"{k} {fmt_time(v)}" for k, v in sorted(busy.items())),
                     "ends with": "-" if last is None else
                     f"rank {last['rank']}: {last['op']} ({_where(last)}) at {fmt_time(last['end_s'])}"})
    if rows:
        body += ("<p>Critical paths (the operations that decided the end time, followed back from the last one; "
                 "per kind of operation, the time from the start of each on the path to its end: a receive counts "
                 "from its posting, so its wait is in it):</p>" + table(pd.DataFrame(rows)))
    else:
        body += ("<p>No critical path in these records: give <code>latscope sim-sweep --critical-path P</code> "
                 "(each algorithm's path at P ranks) or <code>--goal FILE</code>.</p>")
    n = len(df)
    return body + f"<p>{html.escape(str(n))} simulation records.</p>"


SECTIONS = [("Simulation: time vs P", section_time_vs_p),
            ("Simulation: finish times and critical path", section_finish_and_path)]
