"""Barriers and LogP in the main job: LogP/LogGP/PLogP measurement of one pair, the
seed's barrier benchmark (seed 002 §4.3) at 2 and 4 ranks, the LogP fit written to
<out>/params_logp.json (ORDER 10: other parts read it), and two report sections: the parameter
table and measured vs predicted barrier times."""
from __future__ import annotations

import html
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from latscope import logp
from latscope.barrier import bench_args, compare_results, mean_abs_rel_err
from latscope.figures import frame, plt, png, table
from latscope.models import ModelError, from_dict
from latscope.parts import Step
from latscope.results import Results
from latscope.units import fmt_size, fmt_time

if TYPE_CHECKING:
    from latscope.report import ReportInput

ORDER = 10


def demo_steps(quick: bool) -> list[Step]:
    reps = 50 if quick else 100
    return [
        Step("logp", ["logp", "--sizes", "0,64,1K,8K,64K,256K", "--stop-rule", "median", "--budget",
                      "0.2" if quick else "0.5", "--max-reps", "3000", "--progress"], np=2),
        Step("barrier_np2", bench_args("all", 30e-6, reps), np=2),
        Step("barrier_np4", bench_args("all", 30e-6, reps), np=4),
    ]


def _logp_results(results: list[Results]) -> list[Results]:
    return [r for r in results if r.meta.get("bench") == "logp"]


def after_demo(out: Path, results: list[Results], params: dict[str, Any]) -> None:
    lr = _logp_results(results)
    if not lr:
        return
    try:
        f = logp.fit_logp(lr)
    except logp.LogPFitError as e:
        print(f"latscope: note: LogP fit skipped: {e}", file=sys.stderr)
        return
    f.write(out / "params_logp.json", lr[0].meta)
    f.write_plogp(out / "params_plogp.json", lr[0].meta)


def _fit(inp: ReportInput) -> logp.LogPFit | None:
    lr = _logp_results(inp.results)
    try:
        return logp.fit_logp(lr) if lr else None
    except logp.LogPFitError:
        return None


def section_logp(inp: ReportInput) -> str | None:
    f = _fit(inp)
    if f is None:
        return None

    def ci(e: logp.Estimate) -> str:
        if pd.isna(e.ci_lo_s) or pd.isna(e.ci_hi_s):
            return fmt_time(e.value_s)
        return f"{fmt_time(e.value_s)} [{fmt_time(e.ci_lo_s)}, {fmt_time(e.ci_hi_s)}]"

    rows = [{"size": fmt_size(r.size_bytes), "o_s": ci(r.o_s), "o_r": ci(r.o_r), "g": ci(r.g),
             "RTT/2": fmt_time(r.rtt.value_s / 2), "L = RTT/2 − o_s − o_r": fmt_time(r.L_s)} for r in f.rows]
    head = (f"<p>LogGP: L = {fmt_time(f.L_s)}, o_s = {fmt_time(f.o_s_s)}, o_r = {fmt_time(f.o_r_s)}, "
            f"g = {fmt_time(f.g_s)}, G = {f.G_s_per_byte * 1e9:.3g} ns/B (Theil–Sen over "
            f"{', '.join(fmt_size(s) for s in f.G_sizes_bytes)}); PLogP L = {fmt_time(f.plogp_L_s)}"
            + (f"; Hockney α = {fmt_time(f.hockney.alpha_s)}, β = {f.hockney.beta_s_per_byte * 1e9:.3g} ns/B"
               if f.hockney else "")
            + "".join(f"; {op} = {ci(e)}" for op, e in f.aux.items())
            + ". Medians per size with their CIs (order statistics); post, poll, flag and mcast (= mcast − RTT/2) beyond "
            "LogP, for the barrier loop simulation.</p>")
    notes = "".join(f"<p>note: {html.escape(n)}</p>" for n in f.notes)
    neg = [fmt_size(r.size_bytes) for r in f.rows if r.L_s < 0]
    if neg:   # a negative latency in a column headed L reads as a broken measurement: say why
        notes += (f"<p>L per size is negative at {', '.join(neg)}: there o_s and o_r (the time in the send and "
                  "the receive call) each contain the transfer itself (on shared memory the CPU does the copy), so "
                  "their sum exceeds RTT/2. LogGP's L above is the smallest size's.</p>")
    return head + pd.DataFrame(rows).to_html(index=False, border=0, classes="t") + notes


def section_compare(inp: ReportInput) -> str | None:
    f = _fit(inp)
    if f is None:
        return None
    try:
        params = from_dict({"schema": "latscope.params/1", "model": "loggp", "params": f.loggp_params()}).model
        # the loop's hop: logp's rtt_loop (the round trip in the benchmark's own loop) when measured
        L_loop = f.L_s if f.L_loop_s is None else f.L_loop_s
        df = compare_results(params, inp.results, L_raw_s=L_loop, post_s=f.aux_s("post") or 0.0,
                             flag_s=f.aux_s("flag"), mcast_s=f.aux_s("mcast"), poll_s=f.aux_s("poll"),
                             L_poll_s=f.L_poll_s, wait_s=f.wait_s, irecv_wait_s=f.aux_s("irecv_wait"),
                             L_poll_any_s=f.L_poll_any_s, catch_s=f.aux_s("catch"))
    except ModelError:
        return None
    if df.empty:
        return None
    # oversubscribed points (results.noise_flag) are scheduling delays, not barrier times: they are
    # listed in the table but never drawn, so they cannot set the chart's scale; points measured
    # under load are drawn (the table and the note say so)
    full = df
    df = df[~df["noise"].fillna("").str.contains("oversubscribed")]
    fig, ax = plt.subplots(figsize=(8, 4))
    algs = sorted(set(full["alg"]))
    for i, P in enumerate(sorted(set(df["P"]))):
        # several records per (P, alg) (sizes, files): the bar shows their median
        cols = ["measured_s", "predicted_s", "closed_form_s"]
        d = df[df["P"] == P][["alg"] + cols].copy()
        d[cols] = d[cols].apply(pd.to_numeric, errors="coerce")
        d = d.groupby("alg")[cols].median().reindex(algs)
        x = [j + 0.4 * i for j in range(len(algs))]
        ax.bar(x, d["measured_s"] * 1e6, width=0.2, label=f"measured, P = {P}")
        ax.scatter([v + 0.2 for v in x], d["predicted_s"].astype(float) * 1e6, marker="_", s=200, color="k",
                   label="predicted: loop simulation" if i == 0 else None)
        ax.scatter([v + 0.2 for v in x], d["closed_form_s"].astype(float) * 1e6, marker="x", s=25, color="0.5",
                   label="closed form (simultaneous entry)" if i == 0 else None)
    ax.set_xticks(range(len(algs)))
    ax.set_xticklabels(algs, rotation=45, ha="right", fontsize=7)
    ax.set_yscale("log")
    frame(ax, None, "barrier time (µs)",
          "Barrier: measured (seed 002 §4.3 loop, mean over ranks of per-rank medians) vs LogP prediction", legend=7)
    def t(v: object) -> str:
        return "-" if not isinstance(v, (int, float)) or math.isnan(v) else fmt_time(float(v))

    def pc(v: object) -> str:
        return "-" if not isinstance(v, (int, float)) or math.isnan(v) else f"{100 * float(v):+.0f}%"

    df = full

    def mean_pc(d: pd.DataFrame, column: str = "rel_err") -> str:
        v = mean_abs_rel_err(d, column)
        return "n/a (no modelled point)" if math.isnan(v) else f"{100 * v:.0f}%"

    tab = df.assign(closed_form=df["closed_form_s"].map(t), loop=df["predicted_s"].map(t),
                    measured=df["measured_s"].map(fmt_time), err_loop=df["rel_err"].map(pc),
                    err_closed_form=df["closed_form_rel_err"].map(pc), noise=df["noise"].fillna(""),
                    # the best measured barrier per run among the eligible (latscope.selection); why not
                    best=df["best"].map(lambda b: "best" if b else ""), set_aside=df["set_aside"])
    tab = tab[["alg", "P", "closed_form", "loop", "measured", "err_loop", "err_closed_form", "noise", "best",
               "set_aside"]].sort_values(["P", "alg"])
    # points measured under load or oversubscribed (results.noise_flag) stay out of the figures
    nn = int((df["rel_err"].notna() & (df["noise"] != "")).sum())
    df = df[df["noise"] == ""]
    n = int(df["rel_err"].notna().sum())
    small = df[df["P"] <= 2]
    note = ("<p>Two predictions from the LogP fit: <em>closed form</em> — seed 002 §5.1.2, one barrier entered by "
            "every rank at the same instant; <em>loop</em> — each row's message schedule simulated under LogP "
            "through the benchmark's own loop {t0; barrier; t1; dummy work} in steady state "
            "(latscope.models.barrier_sim, raw L = RTT/2 − o_s − o_r), the quantity measured. The error is the "
            f"loop prediction's. Mean |predicted − measured| / measured over {n} modelled points: loop "
            f"{mean_pc(df)}, closed form {mean_pc(df, 'closed_form_rel_err')}"
            + (f"; at P = 2 (not oversubscribed): loop {mean_pc(small)}" if not small.empty else "")
            + (f"; {nn} points measured under load or oversubscribed (column noise) are left out of these "
               "figures (oversubscribed ones out of the chart too)" if nn else "")
            + ". More ranks than cores (P = 4 on 2 cores) makes barrier times operating-system scheduling delays, "
            "which LogP does not model. The loop simulation also takes three costs LogP has no parameter for, "
            "measured by latscope-bench logp beside it: posting a receive (post, on the path of exchange rounds), "
            "the shared-memory flag (flag, tree-shm's release) and the library's broadcast (mcast, the "
            f"*-bcast/*-2net release; model {', '.join(sorted(set(df['bcast'])))}). Not modelled: the two-way "
            "traffic of an exchange round, ANY_SOURCE receives, Iprobe polling — see docs/barriers.md.</p>")
    return png(fig) + note + table(tab)


SECTIONS = [("LogP / LogGP / PLogP parameters", section_logp), ("Barriers: measured vs predicted", section_compare)]
