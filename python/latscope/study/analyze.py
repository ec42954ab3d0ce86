"""`latscope study analyze RESULTS`: the statistics of seed 004 §6-7 on a study's runs
(docs/study.md, "study analyze").

Per application and rank count, over the runs whose verification passed:
  * Kolmogorov-Smirnov test of each table's runtimes against the normal distribution with their
    own mean and sd (§6: the seed tests normality before choosing parametric methods);
  * Mann-Whitney U between a zero-variance ("uniform", §5.3) table and each lognormal table of the
    same mean (§6, nonparametric because latencies are not normal);
  * Pearson's r of runtime with the table's mean (r_mean) and with its sd (r_std) (§7, Table 4);
  * the seed's comparison of the two r's by Fisher's z with sqrt(2/(n-3)) (§7), which treats them
    as independent although both are computed on the same runs, and two tests for correlations
    that share a variable: Williams' t (Williams 1959; Steiger 1980, eq. 7) and Steiger's Z
    (Steiger 1980, eq. 14, with the pooled r̄ of eq. 15)."""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from latscope.study import StudyError

HELP = "seed 004 §6-7: KS, Mann-Whitney U, Pearson r_mean/r_std and their comparison, Table 4, Figs 11-16"
SCHEMA = "latscope.study-analysis/1"
ALPHA = 0.05
# Tables whose means differ by at most 2 % are "of equal mean": `latscope tables fit` keeps the
# observed mean to 0.5 %, but `tables make lognormal --mean M --sd S` cuts a heavy tail beyond the
# last of its 4096 strata and loses up to ~2 % of M (docs/delay-table.md, "How the entries are
# generated"). For the same reason a predictor whose values all lie within 2 % is constant: its r
# would only correlate the runtime with that cut.
SAME_MEAN = 0.02
CONSTANT_X = SAME_MEAN
ZERO_SD = 1e-3             # a table with sd below this fraction of its mean is a zero-variance ("uniform") one


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="a study's runs.jsonl (latscope study run), or its directory")
    p.add_argument("-o", "--out", help="output directory for analysis.json, table4.txt/.csv, the figures "
                                       "and report.html (default: the results' directory)")
    p.add_argument("--json", action="store_true",
                   help="print analysis.json's document on standard output instead of the table")


# ---------------------------------------------------------------- the tests, from their formulas

@dataclass
class Test:
    statistic: float | None
    p: float | None
    n: int
    df: float | None = None


def fisher_z_seed(r_mean: float, r_std: float, n: int) -> Test:
    """Seed 004 §7: z = (artanh r_mean - artanh r_std) / sqrt(2/(n-3)), p = Φ(z) (one-sided: r_std
    the larger). The standard error is that of two correlations from independent samples of n each."""
    from scipy import stats

    if n <= 3 or abs(r_mean) >= 1 or abs(r_std) >= 1:
        return Test(None, None, n)
    z = (math.atanh(r_mean) - math.atanh(r_std)) / math.sqrt(2.0 / (n - 3))
    return Test(z, float(stats.norm.cdf(z)), n)


def williams_t(r12: float, r13: float, r23: float, n: int) -> Test:
    """Williams' (1959) t for H0: ρ12 = ρ13 when 1 is shared (Steiger 1980, eq. 7; Howell,
    Statistical Methods for Psychology, "correlations with a variable in common"):
        t = (r12 - r13) sqrt( (n-1)(1+r23) / (2 (n-1)/(n-3) |R| + r̄² (1-r23)³) ),  df = n - 3,
    |R| = 1 - r12² - r13² - r23² + 2 r12 r13 r23 (the determinant of the 3x3 correlation matrix),
    r̄ = (r12 + r13)/2. Two-sided p."""
    from scipy import stats

    if n <= 3:
        return Test(None, None, n)
    det = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    den = 2 * (n - 1) / (n - 3) * det + rbar ** 2 * (1 - r23) ** 3
    if den <= 0:
        return Test(None, None, n, n - 3)
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / den)
    return Test(t, float(2 * stats.t.sf(abs(t), n - 3)), n, n - 3)


def steiger_z(r12: float, r13: float, r23: float, n: int) -> Test:
    """Steiger's (1980) Z1* for H0: ρ12 = ρ13 (eq. 14 with the pooled r̄ of eq. 15):
        Z = (z12 - z13) sqrt(n-3) / sqrt(2 - 2 s̄),   z = artanh r,
        s̄ = ψ / (1 - r̄²)²,  ψ = r23 (1 - 2 r̄²) - r̄² (1 - 2 r̄² - r23²) / 2   (eq. 3 with ρ12 = ρ13 = r̄),
    s̄ being the asymptotic correlation of z12 and z13. Two-sided p from the normal distribution."""
    from scipy import stats

    if n <= 3 or abs(r12) >= 1 or abs(r13) >= 1:
        return Test(None, None, n)
    rbar = (r12 + r13) / 2
    psi = r23 * (1 - 2 * rbar ** 2) - 0.5 * rbar ** 2 * (1 - 2 * rbar ** 2 - r23 ** 2)
    s = psi / (1 - rbar ** 2) ** 2
    if s >= 1:
        return Test(None, None, n)
    z = (math.atanh(r12) - math.atanh(r13)) * math.sqrt(n - 3) / math.sqrt(2 - 2 * s)
    return Test(z, float(2 * stats.norm.sf(abs(z))), n)


# ---------------------------------------------------------------- one group of runs

@dataclass
class TableStats:
    table: str
    distribution: str
    table_mean_s: float
    table_sd_s: float
    n: int
    runtime_mean_s: float
    runtime_sd_s: float | None
    runtime_median_s: float
    ks: Test | None


@dataclass
class MannWhitney:
    mean_s: float
    uniform: str
    lognormal: str
    lognormal_sd_s: float
    n_uniform: int
    n_lognormal: int
    u: float
    p: float
    median_uniform_s: float
    median_lognormal_s: float


@dataclass
class AppAnalysis:
    app: str
    np: int
    n: int                           # runs in the correlations (verified, injected)
    n_failed: int                    # cells that failed twice
    baseline: str | None             # the table runtimes are compared with (Figs 15-16)
    tables: list[TableStats]
    ks_rejected: int                 # tables whose runtimes KS rejects as normal at ALPHA
    mann_whitney: list[MannWhitney]
    r_mean: Test
    r_std: Test
    r_mean_sd: float | None          # correlation of the two predictors over the runs (r23)
    rho_mean: Test                   # Spearman's rank correlations: not in the seed; robust to the
    rho_std: Test                    # few runs a shared machine slows down by 2x, which sway Pearson's r
    fisher_z_seed: Test
    williams_t: Test
    steiger_z: Test
    notes: list[str] = field(default_factory=list)
    launches: int = 1                # most launches a cell's runtime was the minimum of (docs/study.md)
    blocks: int = 0                  # complete blocks whose runtimes the correlations take relative
                                     # to their block's mean; 0: raw runtimes (docs/study.md)
    r_std_unblocked: Test | None = None   # r_std on the raw runtimes, when blocks > 0
    unverified: int = 0              # cells whose runs were not verified (verify = "none")
    failures: list[dict[str, Any]] = field(default_factory=list)   # why runs failed: reason, runs


def _corr(x: Any, y: Any, rank: bool = False) -> Test:
    """Pearson's r (scipy.stats.pearsonr), or Spearman's rho (spearmanr) when rank, with p and n;
    undefined (None) for fewer than 3 runs, a constant predictor (CONSTANT_X) or constant runtimes."""
    import numpy as np
    from scipy import stats

    n = int(len(x))
    if n < 3 or float(np.ptp(x)) <= CONSTANT_X * float(np.max(np.abs(x))) or float(np.ptp(y)) == 0:
        return Test(None, None, n)
    res = stats.spearmanr(x, y) if rank else stats.pearsonr(x, y)
    return Test(float(res.statistic), float(res.pvalue), n)


def block_relative(runs: list[dict[str, Any]]) -> tuple[list[int], Any, int]:
    """The randomised complete block design in the analysis (docs/study.md, "Blocks in the
    analysis"): (indices of the runs kept, their runtimes relative to their block, complete blocks).
    A block is a repetition (`rep`) holding one run of every table of the group; each of its runs'
    runtime is divided by the block's mean runtime and multiplied by the mean over all kept runs (so
    the values stay in seconds). A state of the shared machine that slows a whole block by a factor
    (another tenant's long job) then cancels, as in a two-way analysis with a multiplicative block
    effect; the tables' effects within a block are kept. Fewer than 2 complete blocks: no blocking
    (([], None, 0)); runs of incomplete blocks are left out of the blocked correlations."""
    import numpy as np

    tables = {str(r["table"]) for r in runs}
    by_rep: dict[Any, list[int]] = {}
    for i, r in enumerate(runs):
        if r.get("rep") is not None:
            by_rep.setdefault(r["rep"], []).append(i)
    full = [ix for ix in by_rep.values() if len(ix) == len(tables) and {str(runs[i]["table"]) for i in ix} == tables]
    if len(full) < 2:
        return [], None, 0
    keep = sorted(i for ix in full for i in ix)
    y = {i: float(runs[i]["runtime_s"]) for i in keep}
    rel: dict[int, float] = {}
    for ix in full:
        m = float(np.mean([y[i] for i in ix]))
        for i in ix:
            rel[i] = y[i] / m
    grand = float(np.mean(list(y.values())))
    return keep, np.array([rel[i] * grand for i in keep]), len(full)


def _ks_normal(x: Any) -> Test | None:
    """KS distance of the runtimes to the normal with their own mean and sd (the seed's test; with
    estimated parameters the p-value is conservative: Lilliefors' table would reject more often)."""
    import numpy as np
    from scipy import stats

    if len(x) < 3 or float(np.std(x)) == 0:
        return None
    res = stats.kstest(x, "norm", args=(float(np.mean(x)), float(np.std(x, ddof=1))))
    return Test(float(res.statistic), float(res.pvalue), int(len(x)))


def _by_mean_then_sd(tabs: list[TableStats]) -> list[TableStats]:
    """The baseline first, then the tables by mean, those of equal mean (SAME_MEAN) by sd."""
    from latscope.study.plan import NO_TABLE

    groups: list[list[TableStats]] = []
    for t in sorted(tabs, key=lambda t: (t.distribution != NO_TABLE, t.table_mean_s, t.table)):
        g = groups[-1] if groups else None
        if g and g[0].distribution != NO_TABLE and t.distribution != NO_TABLE and \
                abs(t.table_mean_s - g[0].table_mean_s) <= SAME_MEAN * max(t.table_mean_s, g[0].table_mean_s):
            g.append(t)
        else:
            groups.append([t])
    return [t for g in groups for t in sorted(g, key=lambda t: (t.table_sd_s, t.table))]


def _is_uniform(t: TableStats) -> bool:
    return t.distribution in ("constant", "uniform") or t.table_sd_s <= ZERO_SD * t.table_mean_s


def analyze_group(app: str, np_: int, runs: list[dict[str, Any]], n_failed: int) -> AppAnalysis:
    import numpy as np
    from scipy import stats

    from latscope.study.plan import NO_TABLE

    by_table: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_table.setdefault(str(r["table"]), []).append(r)
    tabs: list[TableStats] = []
    for name, rs in by_table.items():
        y = np.array([float(r["runtime_s"]) for r in rs])
        tabs.append(TableStats(name, str(rs[0].get("table_distribution")), float(rs[0]["table_mean_s"]),
                               float(rs[0]["table_sd_s"]), len(y), float(np.mean(y)),
                               float(np.std(y, ddof=1)) if len(y) > 1 else None, float(np.median(y)), _ks_normal(y)))
    tabs = _by_mean_then_sd(tabs)
    notes: list[str] = []
    inj = [r for r in runs if r.get("table_distribution") != NO_TABLE]
    y_raw = np.array([float(r["runtime_s"]) for r in inj])
    xs_raw = np.array([float(r["table_sd_s"]) for r in inj])
    keep, y_block, n_blocks = block_relative(inj)
    r_std_unblocked = None
    if n_blocks:
        r_std_unblocked = _corr(xs_raw, y_raw)
        inj = [inj[i] for i in keep]
        notes.append(f"r_mean, r_std, rho and their comparisons take each run's runtime relative to its block's mean "
                     f"({n_blocks} complete blocks; docs/study.md, 'Blocks in the analysis'); on the raw runtimes "
                     f"r_std = {_fmt(r_std_unblocked.statistic)} (p = {_fmt(r_std_unblocked.p, '.2g')}, n = {len(y_raw)})")
    y = y_block if n_blocks else y_raw
    xm = np.array([float(r["table_mean_s"]) for r in inj])
    xs = np.array([float(r["table_sd_s"]) for r in inj])
    r_mean, r_std = _corr(xm, y), _corr(xs, y)
    if len(y) >= 3 and r_mean.statistic is None and float(np.ptp(xm)) <= CONSTANT_X * float(np.max(np.abs(xm))):
        notes.append("the tables' means are equal: r_mean is undefined, and so are the comparisons of the two r's")
    if len(y) >= 3 and r_std.statistic is None and float(np.ptp(xs)) <= CONSTANT_X * float(np.max(np.abs(xs)) + 1e-30):
        notes.append("the tables' sds are equal: r_std is undefined")
    r23 = _corr(xm, xs).statistic
    n = len(y)
    empty = Test(None, None, n)
    if r_mean.statistic is not None and r_std.statistic is not None and r23 is not None:
        fz = fisher_z_seed(r_mean.statistic, r_std.statistic, n)
        wt = williams_t(r_std.statistic, r_mean.statistic, r23, n)
        sz = steiger_z(r_std.statistic, r_mean.statistic, r23, n)
    else:
        fz, wt, sz = empty, empty, empty
    # Mann-Whitney U (§6): each lognormal table against the zero-variance table of the same mean
    mw: list[MannWhitney] = []
    for u in (t for t in tabs if _is_uniform(t) and t.distribution != NO_TABLE):
        for lg in tabs:
            if lg is u or _is_uniform(lg) or lg.distribution == NO_TABLE:
                continue
            if abs(lg.table_mean_s - u.table_mean_s) > SAME_MEAN * max(u.table_mean_s, lg.table_mean_s):
                continue
            a = np.array([float(r["runtime_s"]) for r in by_table[u.table]])
            b = np.array([float(r["runtime_s"]) for r in by_table[lg.table]])
            res = stats.mannwhitneyu(a, b, alternative="two-sided")
            mw.append(MannWhitney(u.table_mean_s, u.table, lg.table, lg.table_sd_s, len(a), len(b),
                                  float(res.statistic), float(res.pvalue), float(np.median(a)), float(np.median(b))))
    base = next((t.table for t in tabs if t.distribution == NO_TABLE), None)
    if base is None:
        zeros = [t for t in tabs if _is_uniform(t)]
        base = zeros[0].table if zeros else None
    return AppAnalysis(app, np_, n, n_failed, base, tabs,
                       sum(1 for t in tabs if t.ks is not None and t.ks.p is not None and t.ks.p < ALPHA),
                       mw, r_mean, r_std, r23, _corr(xm, y, rank=True), _corr(xs, y, rank=True), fz, wt, sz, notes,
                       blocks=n_blocks, r_std_unblocked=r_std_unblocked)


# ---------------------------------------------------------------- the whole file

def cell_minima(ok: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per cell (app, table, np, repetition): the launch of least runtime, with
    `launches_ok` and every launch's runtime in `runtimes_s`. The contamination guard of a plan
    with `launches` > 1 (docs/study.md, "Repeated launches"): another tenant's work can only slow a
    launch down, so the minimum over launches a pass apart keeps the injected delays' effect and
    drops a burst that hit one launch. It is symmetric: every cell of every table gets the same
    number of launches and the same rule. With one launch a cell it is that launch's record."""
    cells: dict[str, list[dict[str, Any]]] = {}
    for r in ok:
        cells.setdefault(str(r["cell"]), []).append(r)
    out = []
    for rs in cells.values():
        best = min(rs, key=lambda r: float(r["runtime_s"]))
        out.append({**best, "launches_ok": len(rs), "runtimes_s": [float(r["runtime_s"]) for r in rs]})
    return out


def analyze_runs(runs: list[dict[str, Any]]) -> list[AppAnalysis]:
    from latscope.study.matrix import finished, run_key

    done, _ = finished(runs)
    ok = [r for r in runs if r.get("status") == "ok" and r.get("runtime_s") is not None]
    ok_cells = {str(r["cell"]) for r in ok}
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    failed: dict[tuple[str, int], set[str]] = {}
    for r in cell_minima(ok):
        groups.setdefault((str(r["app"]), int(r["np"])), []).append(r)
    for r in runs:
        k = str(r.get("cell"))
        # a cell fails when no launch of it passed and one has failed twice
        if run_key(r) in done and k not in ok_cells and r.get("attempt") == 2:
            g = (str(r["app"]), int(r["np"]))
            failed.setdefault(g, set()).add(k)
            groups.setdefault(g, [])
    res = []
    for a, n in sorted(groups):
        cell_runs = groups[(a, n)]
        an = analyze_group(a, n, cell_runs, len(failed.get((a, n), set())))
        an.launches = max((int(r["launches_ok"]) for r in cell_runs), default=1)
        an.unverified = sum(1 for r in cell_runs if r.get("verification") == "unverified")
        if an.unverified:
            an.notes.append(f"unverified: {an.unverified} of {len(cell_runs)} cells were not checked (verify = "
                            "\"none\"): their runtimes are in the analysis, their results are not known to be right")
        why: dict[str, int] = {}
        for r in runs:
            if (str(r.get("app")), int(r.get("np") or 0)) == (a, n) and r.get("status") != "ok":
                k = str(r.get("reason") or r.get("status"))
                why[k] = why.get(k, 0) + 1
        an.failures = [{"reason": k, "runs": v} for k, v in sorted(why.items(), key=lambda kv: -kv[1])]
        if an.launches > 1:
            an.notes.append(f"each cell's runtime is the minimum of its {an.launches} launches (the "
                            "contamination guard of docs/study.md, 'Repeated launches'); every launch is in runs.jsonl")
        res.append(an)
    return res


def _fmt(v: float | None, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def text_table(apps: list[dict[str, Any]]) -> str:
    """Seed 004 Table 4 from analysis.json's apps, with n, the r's p-values and the two tests for
    dependent correlations."""
    hdr = ("app", "np", "n", "r_mean", "p", "r_std", "p", "Fisher z (seed)", "p (seed)", "Williams t", "p",
           "Steiger Z", "p", "rho_std", "p", "KS rej.", "MWU p (min)")
    rows = [hdr]
    for a in apps:
        mwp = min((float(m["p"]) for m in a["mann_whitney"]), default=None)
        rows.append((str(a["app"]), str(a["np"]), str(a["n"]), _fmt(a["r_mean"]["statistic"]),
                     _fmt(a["r_mean"]["p"], ".2g"), _fmt(a["r_std"]["statistic"]), _fmt(a["r_std"]["p"], ".2g"),
                     _fmt(a["fisher_z_seed"]["statistic"]), _fmt(a["fisher_z_seed"]["p"], ".3g"),
                     _fmt(a["williams_t"]["statistic"]), _fmt(a["williams_t"]["p"], ".3g"),
                     _fmt(a["steiger_z"]["statistic"]), _fmt(a["steiger_z"]["p"], ".3g"),
                     _fmt(a["rho_std"]["statistic"]), _fmt(a["rho_std"]["p"], ".2g"),
                     f"{a['ks_rejected']}/{sum(1 for t in a['tables'] if t['ks'] is not None)}", _fmt(mwp, ".3g")))
    w = [max(len(r[i]) for r in rows) for i in range(len(hdr))]
    return "\n".join("  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r)) for r in rows)


def findings(apps: list[dict[str, Any]]) -> list[str]:
    """One line per app and np: does the runtime grow with the tables' sd (r_std > 0, p < ALPHA)?"""
    out = []
    for a in apps:
        r, p, n = a["r_std"]["statistic"], a["r_std"]["p"], a["r_std"]["n"]
        fails = a.get("failures") or []
        if n == 0 and fails:
            out.append(f"{a['app']} np={a['np']}: no run passed; {fails[0]['runs']} runs: {fails[0]['reason']}")
            continue
        unv = " [unverified]" if a.get("unverified") else ""
        if r is None or p is None:
            out.append(f"{a['app']} np={a['np']}: r_std undefined (n = {n}){unv}")
            continue
        verdict = ("runtime grows with the table's sd" if r > 0 and p < ALPHA else
                   "runtime falls with the table's sd" if p < ALPHA else "no significant relation to the sd")
        rho, rp = a["rho_std"]["statistic"], a["rho_std"]["p"]
        rank = "" if rho is None or rp is None else f"; Spearman rho_std = {rho:.2f} (p = {rp:.2g})"
        raw = a.get("r_std_unblocked")
        design = ""
        if a.get("blocks"):
            design = (f"; runtimes relative to their block ({a['blocks']} blocks; raw: r_std = "
                      f"{_fmt(raw['statistic'])}, p = {_fmt(raw['p'], '.2g')})" if raw else "")
        if int(a.get("launches") or 1) > 1:
            design += f"; each cell the minimum of {a['launches']} launches"
        out.append(f"{a['app']} np={a['np']}: r_std = {r:.2f} (p = {p:.2g}, n = {n}): {verdict} "
                   f"(alpha {ALPHA:g}){rank}{design}{unv}")
    return out


def _resolve(results: str) -> Path:
    p = Path(results)
    if p.is_dir():
        p = p / "runs.jsonl"
    if not p.is_file():
        raise StudyError(f"{results}: no such file (a study's runs.jsonl, written by latscope study run)")
    return p


def to_json(res: list[AppAnalysis], source: Path) -> dict[str, Any]:
    from latscope import __version__

    return {"schema": SCHEMA, "tool": "latscope", "version": __version__, "runs_file": str(source),
            "alpha": ALPHA, "apps": [asdict(a) for a in res]}


def run(args: argparse.Namespace) -> int:
    from latscope import jsonio
    from latscope.parts import study as part
    from latscope.study.matrix import read_runs

    src = _resolve(args.results)
    _, runs = read_runs(src)
    if not runs:
        raise StudyError(f"{src}: no run records (has latscope study run recorded anything yet?)")
    out = Path(args.out) if args.out else src.parent
    if out.exists() and not out.is_dir():
        raise StudyError(f"-o {out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    res = analyze_runs(runs)
    doc = to_json(res, src)
    (out / "analysis.json").write_text(jsonio.dumps(doc, indent=1) + "\n")
    table = text_table(doc["apps"])
    (out / "table4.txt").write_text(table + "\n")
    (out / "table4.csv").write_text(part.csv_table(doc))
    figs = part.write_figures(doc, out)
    from latscope import report

    html = report.build([], out / "report.html", title="latscope study: latency variation (seed 004)")
    for a in res:
        for note in a.notes:
            print(f"{a.app} np={a.np}: {note}", file=sys.stderr)
    if getattr(args, "json", False):
        print(jsonio.dumps(doc, indent=1))
        return 0
    print(table)
    for line in findings(doc["apps"]):
        print(line)
    for f in [out / "analysis.json", out / "table4.txt", out / "table4.csv", *figs, html]:
        print(f)
    return 0
