"""Report section: the latency-variation study (`latscope study analyze`; seed 004 §6-7): the
Table-4-like table and Figs 11-16, drawn from an analysis.json (latscope.study-analysis/1) in
the report's directory or next to a results file given to `latscope report`."""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

SCHEMA = "latscope.study-analysis/1"
NO_TABLE = "none"
SAME_MEAN = 0.02     # tables of "equal mean" (latscope.study.analyze.SAME_MEAN)


def read_analysis(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == SCHEMA else None


def _num(v: Any) -> str:
    return "" if v is None else repr(float(v))


def csv_table(doc: dict[str, Any]) -> str:
    """Table 4 as CSV, one row per (app, np): r's, their p-values, the three comparisons, n."""
    cols = ["app", "np", "n", "r_mean", "p_r_mean", "r_std", "p_r_std", "r_mean_sd", "fisher_z_seed",
            "p_fisher_seed", "williams_t", "williams_df", "p_williams", "steiger_z", "p_steiger", "rho_mean",
            "p_rho_mean", "rho_std", "p_rho_std",
            "ks_rejected", "ks_tables", "n_failed"]
    lines = [",".join(cols)]
    for a in doc["apps"]:
        vals = [a["app"], str(a["np"]), str(a["n"]), _num(a["r_mean"]["statistic"]), _num(a["r_mean"]["p"]),
                _num(a["r_std"]["statistic"]), _num(a["r_std"]["p"]), _num(a["r_mean_sd"]),
                _num(a["fisher_z_seed"]["statistic"]), _num(a["fisher_z_seed"]["p"]),
                _num(a["williams_t"]["statistic"]), _num(a["williams_t"]["df"]), _num(a["williams_t"]["p"]),
                _num(a["steiger_z"]["statistic"]), _num(a["steiger_z"]["p"]), _num(a["rho_mean"]["statistic"]),
                _num(a["rho_mean"]["p"]), _num(a["rho_std"]["statistic"]), _num(a["rho_std"]["p"]),
                str(a["ks_rejected"]),
                str(sum(1 for t in a["tables"] if t["ks"] is not None)), str(a["n_failed"])]
        lines.append(",".join(vals))
    return "\n".join(lines) + "\n"


def _label(a: dict[str, Any], many_np: bool) -> str:
    return f"{a['app']} (np {a['np']})" if many_np else str(a["app"])


def _baseline_median(a: dict[str, Any]) -> float | None:
    for t in a["tables"]:
        if t["table"] == a["baseline"]:
            return float(t["runtime_median_s"])
    return None


def _is_uniform(t: dict[str, Any]) -> bool:
    return t["distribution"] in ("constant", "uniform") or t["table_sd_s"] <= 1e-3 * t["table_mean_s"]


def _mean_groups(a: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The tables by mean (equal within SAME_MEAN), injected ones only, each group sorted by sd."""
    groups: list[list[dict[str, Any]]] = []
    for t in sorted((t for t in a["tables"] if t["distribution"] != NO_TABLE), key=lambda t: t["table_mean_s"]):
        if groups and abs(t["table_mean_s"] - groups[-1][0]["table_mean_s"]) <= SAME_MEAN * t["table_mean_s"]:
            groups[-1].append(t)
        else:
            groups.append([t])
    return [sorted(g, key=lambda t: t["table_sd_s"]) for g in groups]


def _varies(xs: list[float]) -> bool:
    """More than one value, beyond SAME_MEAN of the largest (tables of equal mean have no Fig. 13)."""
    return len(xs) > 1 and max(xs) - min(xs) > SAME_MEAN * max(abs(x) for x in xs)


def figures(doc: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(file stem, caption, matplotlib figure) for Figs 11-16 that these runs can draw. Each point
    is a table's median runtime, where the seed plots means: on its dedicated cluster the two agree
    (§6), on a shared machine a few runs slowed 2-8x by other work move the mean of a table."""
    import numpy as np

    from latscope.figures import plt

    apps = [a for a in doc["apps"] if a["tables"]]
    many_np = len({a["np"] for a in apps}) > 1
    out: list[tuple[str, str, Any]] = []
    # Figs 11-12: runtime against the mean, for the zero-variance tables and for the most variable
    # table of each mean, relative to the baseline
    for stem, title, uniform in (("fig11", "Fig. 11: zero-variance (\"uniform\") tables", True),
                                 ("fig12", "Fig. 12: lognormal tables (the largest sd of each mean)", False)):
        fig, ax = plt.subplots(figsize=(6, 3.8))
        drawn = False
        for a in apps:
            b = _baseline_median(a)
            # per mean: its zero-variance table, or its most variable one
            pts = [t for g in _mean_groups(a)
                   for t in ([u for u in g if _is_uniform(u)][:1] if uniform else [u for u in g if not _is_uniform(u)][-1:])]
            if len(pts) < 2 or not b:
                continue
            ax.plot([t["table_mean_s"] * 1e6 for t in pts], [t["runtime_median_s"] / b for t in pts], "o-",
                    label=_label(a, many_np))
            drawn = True
        if drawn:
            ax.set_xlabel("table mean (µs)")
            ax.set_ylabel("median runtime / baseline")
            ax.set_title(title, fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
            out.append((stem, f"{title}: median runtime relative to the baseline table, against the table mean", fig))
        else:
            plt.close(fig)
    # Figs 13-14: median runtime per table against the table's mean / sd, with the least-squares line
    for stem, key, xl in (("fig13", "table_mean_s", "table mean (µs)"), ("fig14", "table_sd_s", "table sd (µs)")):
        inj = [a for a in apps if _varies([t[key] for t in a["tables"] if t["distribution"] != NO_TABLE])]
        if not inj:
            continue
        fig, axs = plt.subplots(1, len(inj), figsize=(3.2 * len(inj) + 0.5, 3.2), squeeze=False)
        for ax, a in zip(axs[0], inj):
            ts = [t for t in a["tables"] if t["distribution"] != NO_TABLE]
            x = np.array([t[key] * 1e6 for t in ts])
            y = np.array([t["runtime_median_s"] for t in ts])
            ax.plot(x, y, "o")
            k, c = np.polyfit(x, y, 1)
            xx = np.linspace(x.min(), x.max(), 2)
            r = a["r_mean" if key == "table_mean_s" else "r_std"]["statistic"]
            ax.plot(xx, k * xx + c, "-", lw=1)
            ax.set_title(f"{_label(a, many_np)}: r = {'-' if r is None else format(r, '.2f')}", fontsize=9)
            ax.set_xlabel(xl)
            ax.set_ylabel("median runtime (s)")
            ax.grid(True, alpha=0.3)
        fig.tight_layout()
        what = "mean" if stem == "fig13" else "standard deviation"
        out.append((stem, f"Fig. {stem[3:]}: median runtime per table against the table's {what}, line of "
                          "best fit (r: Pearson over every run)", fig))
    # Figs 15-16: at a fixed mean, the change of median runtime with the sd, relative to the baseline
    means = sorted({round(g[0]["table_mean_s"], 12) for a in apps for g in _mean_groups(a) if len(g) > 1})
    picks = means if len(means) <= 2 else [means[0], means[-1]]
    for i, m in enumerate(picks):
        fig, ax = plt.subplots(figsize=(6, 3.8))
        width = 0.8 / max(1, len(apps))
        drawn = False
        for j, a in enumerate(apps):
            b = _baseline_median(a)
            g = next((g for g in _mean_groups(a) if abs(g[0]["table_mean_s"] - m) <= SAME_MEAN * m), None)
            if g is None or not b:
                continue
            ax.bar(np.arange(len(g)) + j * width, [100 * (t["runtime_median_s"] - b) / b for t in g], width,
                   label=_label(a, many_np))
            ax.set_xticks(np.arange(len(g)) + 0.4 - width / 2,
                          [f"{t['table_sd_s'] * 1e6:.3g}" for t in g])
            drawn = True
        if not drawn:
            plt.close(fig)
            continue
        stem = f"fig{15 + i}"
        ax.set_xlabel(f"table sd (µs), mean {m * 1e6:.3g} µs")
        ax.set_ylabel("median runtime vs baseline (%)")
        ax.set_title(f"Fig. {15 + i}: equal mean {m * 1e6:.3g} µs, growing sd", fontsize=9)
        ax.axhline(0, color="k", lw=0.6)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        out.append((stem, f"Fig. {15 + i}: difference of median runtime from the baseline ({apps[0]['baseline']}), "
                          f"tables of mean {m * 1e6:.3g} µs by sd", fig))
    return out


def write_figures(doc: dict[str, Any], out: Path) -> list[Path]:
    from latscope.figures import plt

    paths = []
    for stem, _, fig in figures(doc):
        p = out / f"{stem}.png"
        fig.savefig(p, dpi=100, bbox_inches="tight")
        plt.close(fig)
        paths.append(p)
    return paths


def section_study(inp: Any) -> str | None:
    from latscope.figures import png
    from latscope.study.analyze import findings, text_table

    dirs = [Path(inp.outdir)] + sorted({Path(str(r.path)).parent for r in inp.results if r.path is not None})
    out: list[str] = []
    seen: set[Path] = set()
    for d in dirs:
        p = (d / "analysis.json").resolve()
        if p in seen or not p.exists():
            continue
        seen.add(p)
        doc = read_analysis(p)
        if doc is None:
            continue
        out.append(f"<p>{html.escape(str(p))}: runs of {html.escape(str(doc.get('runs_file')))} "
                   f"(latscope study analyze). Table 4 of seed 004: Pearson's r of runtime with the table's "
                   f"mean and with its sd over every verified cell (a cell's runtime: the minimum over its "
                   f"launches; relative to its repetition block's mean where the study has complete blocks, "
                   f"as each finding line says), p-values of each r, the seed's Fisher z "
                   f"(one-sided, independent-sample error), Williams' t and Steiger's Z (two-sided, for "
                   f"correlations sharing the runtime), Spearman's rank correlation with the sd (not in the seed: robust to the few runs a shared machine slows down), tables whose runtimes a KS test rejects as normal, "
                   f"and the smallest Mann-Whitney p between a zero-variance and a lognormal table of equal "
                   f"mean.</p>")
        out.append(f"<pre>{html.escape(text_table(doc['apps']))}\n\n{html.escape(chr(10).join(findings(doc['apps'])))}</pre>")
        for a in doc["apps"]:
            for note in a.get("notes", []):
                out.append(f"<p class='note'>{html.escape(a['app'])} np {a['np']}: {html.escape(note)}</p>")
        for _, caption, fig in figures(doc):
            out.append(f"<p>{html.escape(caption)}</p>{png(fig)}")
    return "\n".join(out) or None


SECTIONS = [("Latency variation study (seed 004 Table 4, Figs 11-16)", section_study)]
