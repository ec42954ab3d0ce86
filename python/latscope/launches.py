"""Launch-to-launch variation (docs/measurement.md "Launches").

One `mpiexec` launch can sit in one state for its whole life: its ranks' placement, the pages
its buffers got, the MPI's choice of shared-memory paths. Here the isolated 8 B ping-pong median
is bimodal across launches (about 1.19 us or 1.47 us) while each launch's own CI is a few percent
wide: a single launch's CI says nothing about the next launch. `latscope bench ... --launches N`
repeats the same latscope-bench command in N separate launches, all into one results file (each
record carries its `launch` index: docs/results-schema.md, "Several launches"), and this module
summarises them per point:

  - the launch medians, their spread (min, max, sd, IQR);
  - a CI for the median across launches: the Student-t interval on the N launch medians (each
    launch is one draw of the launch state; scipy.stats.t), null for N = 1;
  - whether the launches disagree beyond their own CIs: Cochran's Q heterogeneity test (the
    meta-analysis test of "these estimates share one true value, given their standard errors").
    Each launch contributes the estimate its CI is about (the mean or the median, the record's
    `ci_of`) with standard error ci_half / quantile; Q = sum w_i (x_i - x_w)^2, w_i = 1/se_i^2, is
    chi-square with N - 1 degrees of freedom when they agree. Disagreement: p < DISAGREE_ALPHA.
    Unlike "some pair of CIs does not overlap" it uses every launch at once, its false-alarm rate
    does not grow with the number of pairs, and I^2 = (Q - df) / Q says how much of the spread is
    between launches rather than within them.
"""
from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from scipy import stats

from latscope import jsonio
from latscope.results import Results, noisy
from latscope.jobs.job import JobStopped
from latscope.run import check_launch, run_program
from latscope.units import fmt_size, fmt_time

# A launch-to-launch difference this unlikely under "one true value" is reported: 1 %, so that a
# file of a few dozen agreeing points does not warn by chance.
DISAGREE_ALPHA = 0.01

# The columns that name a point (those present in a file): the same point in every launch.
KEY_COLUMNS = ["bench", "op", "alg", "timing", "mode", "pair", "root", "size_bytes", "reply_bytes", "window"]


def parse_launches(text: str) -> int:
    """--launches N: a positive integer; ValueError naming the value otherwise."""
    try:
        n = int(text, 10)
    except (TypeError, ValueError):
        raise ValueError(f"--launches '{text}': must be a positive integer (the number of separate "
                         "mpiexec launches, e.g. 3)") from None
    if n < 1:
        raise ValueError(f"--launches '{text}': must be a positive integer (the number of separate "
                         "mpiexec launches, e.g. 3)")
    return n


def split_output(extra: list[str]) -> tuple[str, list[str]]:
    """(the -o/--output value of latscope-bench arguments, or "-", and the arguments without it)."""
    out, rest, i = "-", [], 0
    while i < len(extra):
        a = extra[i]
        if a in ("-o", "--output") and i + 1 < len(extra):
            out = extra[i + 1]
            i += 2
            continue
        if a.startswith("--output="):
            out = a.split("=", 1)[1]
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            out = a[2:]
        else:
            rest.append(a)
        i += 1
    return out, rest


def run_launches(n: int, kind: str, extra: list[str], np_: int | None, launcher: str | None,
                 hostfile: str | None, timeout: float | None, oversubscribe: bool = False) -> int:
    """N launches of `latscope-bench KIND EXTRA`, one after the other, into one results file (the
    -o of EXTRA, or standard output): every record gains `launch` (0..N-1) and the metadata records
    `launches` (N). Then the across-launch table and any disagreement on standard error. Returns
    the first failing launch's exit status (the launches before it stay in the file), else 0.
    A signal or --timeout (JobStopped) keeps what the launches measured so far, the one in
    flight included, and says so."""
    out, args = split_output(extra)
    rc = 0
    check_launch(np_, launcher, hostfile, oversubscribe)
    if out != "-":
        try:
            open(out, "w").close()   # the user's file is judged before N launches are spent
        except OSError as e:
            print(f"latscope: error: --output '{out}': cannot be written ({e.strerror}); give a writable path "
                  "or - for standard output", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="latscope-launches-") as td:
        combined = Path(td) / "all.jsonl"
        with open(combined, "w") as sink:
            for k in range(n):
                part = Path(td) / f"launch{k}.jsonl"
                print(f"latscope: launch {k + 1} of {n}", file=sys.stderr)
                try:
                    cp = run_program("latscope-bench", [kind] + args + ["-o", str(part)], np_, launcher, hostfile,
                                     timeout, quiet=k > 0, oversubscribe=oversubscribe)
                except JobStopped as e:
                    _append(part, k, n, sink)
                    sink.close()
                    done = _keep(combined, out)
                    where = "standard output" if out == "-" else out
                    sep = e.sep if e.sep.startswith(",") else "," + e.sep
                    e.detail = (f" in launch {k + 1} of {n}{sep} {done} point{'s' if done != 1 else ''}"
                                + (f"; results kept in {where}" if done else "; nothing measured"))
                    raise
                _append(part, k, n, sink)
                if cp.returncode != 0:
                    print(f"latscope: launch {k + 1} of {n} failed (exit {cp.returncode}); the launches before "
                          "it are kept", file=sys.stderr)
                    rc = cp.returncode
                    break
        _keep(combined, out)
        text = combined.read_text()
        if rc or not text:
            return rc
        from latscope.results import load
        table = launch_table(load(combined))
    if not table.empty:
        print_launch_table(table, sys.stderr)
    for w in disagreement_warnings(table):
        print(f"latscope: warning: {w}", file=sys.stderr)
    return 0


def _append(part: Path, k: int, n: int, sink: IO[str]) -> None:
    """Launch k's records, each marked with its launch, onto the combined file."""
    if not part.exists():
        return
    for line in part.read_text().splitlines():
        if line.strip():
            try:
                rec = json.loads(line)
            except ValueError:   # the last line of a launch ended mid-write
                continue
            rec["launch"] = k
            if rec.get("type") == "meta":
                rec["launches"] = n
            sink.write(jsonio.dumps(rec) + "\n")


def _keep(combined: Path, out: str) -> int:
    """The combined records to the user's file (or standard output); returns the points kept."""
    text = combined.read_text()
    if out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    elif text:
        Path(out).write_text(text)
    else:
        Path(out).unlink(missing_ok=True)   # nothing measured: no empty "results" file
    return sum(1 for ln in text.splitlines() if '"type": "point"' in ln or '"type":"point"' in ln)


def _estimate_and_se(r: pd.Series) -> tuple[float, float] | None:
    """(the value a launch's CI is about, its standard error) or None without a CI."""
    half, n, level = r.get("ci_half_s"), r.get("n"), r.get("ci_level")
    if half is None or pd.isna(half) or level is None or pd.isna(level) or n is None or pd.isna(n):
        return None
    x = r.get("mean_s") if r.get("ci_of") == "mean" else r.get("median_s")
    if x is None or pd.isna(x):
        return None
    q = (stats.t.ppf((1 + level) / 2, df=int(n) - 1) if r.get("ci_of") == "mean" and int(n) > 1
         else stats.norm.ppf((1 + level) / 2))
    # a zero-width CI (identical samples) is as precise as the timer: a floor keeps w finite
    return float(x), max(float(half) / float(q), 1e-12)


def heterogeneity(rows: pd.DataFrame) -> tuple[float | None, float | None, float | None]:
    """Cochran's Q over the launches of one point: (Q, p, I^2), None when fewer than two launches
    have a CI."""
    es = [e for e in (_estimate_and_se(r) for _, r in rows.iterrows()) if e is not None]
    if len(es) < 2:
        return None, None, None
    x = np.array([e[0] for e in es])
    w = 1.0 / np.array([e[1] for e in es]) ** 2
    xw = float(np.sum(w * x) / np.sum(w))
    q = float(np.sum(w * (x - xw) ** 2))
    dof = len(es) - 1
    p = float(stats.chi2.sf(q, dof))
    i2 = max(0.0, (q - dof) / q) if q > 0 else 0.0
    return q, p, i2


def launch_table(res: Results, confidence: float = 0.95, alpha: float = DISAGREE_ALPHA) -> pd.DataFrame:
    """One row per point measured in more than one launch: the key columns, ``launches``,
    ``medians_s`` (per launch, in launch order), ``ci_lo_s``/``ci_hi_s`` lists (each launch's own
    CI), ``mean_of_medians_s``, ``min_s``/``max_s``/``sd_s``/``iqr_s`` of the launch medians,
    ``across_ci_lo_s``/``across_ci_hi_s`` (t-interval at ``confidence``), ``q``, ``p``, ``i2``,
    ``disagree`` (p < alpha) and ``noisy_launches`` (launches that measured it under load or
    oversubscribed)."""
    df = res.points
    if df.empty or "launch" not in df:
        return pd.DataFrame()
    keys = [k for k in KEY_COLUMNS if k in df]
    rows = []
    flag = noisy(df)
    for key, g in df.assign(_noisy=flag).groupby(keys, dropna=False, sort=False):
        g = g.sort_values("launch")
        if g["launch"].nunique() < 2:
            continue
        med = g["median_s"].to_numpy(dtype=float)
        k = len(med)
        mean = float(np.mean(med))
        sd = float(np.std(med, ddof=1))
        lo, hi = (stats.t.interval(confidence, df=k - 1, loc=mean, scale=sd / math.sqrt(k)) if sd > 0
                  else (mean, mean))
        q, p, i2 = heterogeneity(g)
        q75, q25 = np.percentile(med, [75, 25])
        rows.append(dict(zip(keys, key if isinstance(key, tuple) else (key,))) | {
            "launches": k, "medians_s": med.tolist(),
            "launch_ci_lo_s": g["ci_lo_s"].tolist(), "launch_ci_hi_s": g["ci_hi_s"].tolist(),
            "mean_of_medians_s": mean, "min_s": float(med.min()), "max_s": float(med.max()), "sd_s": sd,
            "iqr_s": float(q75 - q25), "confidence": confidence,
            "across_ci_lo_s": float(lo), "across_ci_hi_s": float(hi),
            "q": q, "p": p, "i2": i2, "disagree": bool(p is not None and p < alpha),
            "noisy_launches": [int(x) for x in g.loc[g["_noisy"], "launch"]],
        })
    return pd.DataFrame(rows)


def fmt_p(p: float | None) -> str:
    """A p-value for people: below double precision's resolution of 1 - p it is '<1e-16', not 0."""
    if p is None or pd.isna(p):
        return "-"
    return "<1e-16" if p < 1e-16 else f"{p:.2g}"


def point_label(r: pd.Series | dict[str, Any]) -> str:
    op = str(r.get("op"))
    alg = r.get("alg")
    if alg is not None and not (isinstance(alg, float) and math.isnan(alg)):
        op += f":{alg}"
    pair = r.get("pair")
    where = "->".join(map(str, pair)) if isinstance(pair, tuple) else "all"
    return f"{op} {fmt_size(r.get('size_bytes') or 0)} {where}"


def print_launch_table(t: pd.DataFrame, out: IO[str] | None = None) -> None:
    """The across-launch table, one line per point (standard output by default)."""
    out = out or sys.stdout
    print(f"# across {int(t['launches'].max())} launches: launch medians, spread, "
          f"{100 * t['confidence'].iloc[0]:g}% t-interval on the launch medians, Cochran's Q p", file=out)
    print(f"{'point':<30} {'launch medians':<36} {'min..max':>21} {'sd':>9} {'CI (across)':>23} {'Q p':>8}",
          file=out)
    for _, r in t.iterrows():
        meds = ", ".join(fmt_time(m) for m in r["medians_s"])
        ci = f"[{fmt_time(r['across_ci_lo_s'])}, {fmt_time(r['across_ci_hi_s'])}]"
        p = fmt_p(r["p"])
        mark = "  DISAGREE" if r["disagree"] else ""
        noise = f"  (under load/oversubscribed in launch {','.join(map(str, r['noisy_launches']))})" \
            if r["noisy_launches"] else ""
        print(f"{point_label(r):<30} {meds:<36} {fmt_time(r['min_s']) + '..' + fmt_time(r['max_s']):>21} "
              f"{fmt_time(r['sd_s']):>9} {ci:>23} {p:>8}{mark}{noise}", file=out)


def disagreement_warnings(t: pd.DataFrame) -> list[str]:
    """One warning when some points' launches disagree beyond their own CIs (empty otherwise)."""
    if t.empty or not t["disagree"].any():
        return []
    bad = t[t["disagree"]]
    ex = bad.iloc[0]
    return [f"launches disagree beyond their own CIs at {len(bad)} of {len(t)} points (Cochran's Q, "
            f"p < {DISAGREE_ALPHA:g}), e.g. {point_label(ex)}: launch medians "
            f"{', '.join(fmt_time(m) for m in ex['medians_s'])} (p = {fmt_p(ex['p'])}, I^2 = {100 * ex['i2']:.0f}%). "
            "One launch can stay in a slower state for its whole life: a single launch's CI understates "
            "the uncertainty; quote the across-launch interval"]
