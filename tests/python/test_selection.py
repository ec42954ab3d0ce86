"""Eligibility of measured points in every argmin over medians (latscope.selection,
docs/tune-format.md "Which candidates are ranked") outside `latscope tune` (tested in
test_tune.py): the best barrier of `barrier compare` (and bench/barrier.py's best / native, which
reads the same columns) and the report's "fastest" collective. Records are fixed by hand: each
case puts the smallest time on a point that must not win."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import write_params, write_records
from latscope import barrier, cli
from latscope.models import load_params
from latscope.parts import collectives
from latscope.report import ReportInput
from latscope.results import load

META = {"type": "meta", "schema": "latscope.results/1", "ranks": 2, "bench": "coll",
        "rep_policy": {"rel_err_target": 0.025}, "command_line": ["latscope-bench", "coll", "--dummy-work", "30us"]}


def _pt(alg: str, med: float | None, lo: float | None, hi: float | None, stop: str = "converged",
        rel_err: float | None = 0.01, n: int = 100, **kw) -> dict:
    return {"type": "point", "bench": "coll", "op": "barrier", "alg": alg, "size_bytes": 0, "n": n, "reps_valid": n,
            "reps_total": n, "median_s": med, "ci_lo_s": lo, "ci_hi_s": hi, "rel_err": rel_err, "stop_reason": stop,
            **kw}


def _barrier_file(tmp_path: Path) -> Path:
    """native 0.5 us (eligible); dissemination -0.2 us (negative); tree:k=4 0.3 us but stopped
    on the budget with its CI [0.1, 0.6] us over native's; pairwise 0.4 us with no valid
    repetition; linear 0.9 us. The best is native (without the rule: dissemination)."""
    def local(m):
        return {"local": {"avg_s": m, "per_rank": [{"median_s": m}] * 2}} if m is not None else {}
    recs = [META,
            _pt("native", 0.5e-6, 0.49e-6, 0.51e-6, **local(0.5e-6)),
            _pt("dissemination", -0.2e-6, -0.25e-6, -0.15e-6, **local(-0.2e-6)),
            _pt("tree:k=4", 0.3e-6, 0.1e-6, 0.6e-6, stop="budget", rel_err=0.8, **local(0.3e-6)),
            _pt("pairwise", 0.4e-6, None, None, n=0, **local(0.4e-6)),
            _pt("linear", 0.9e-6, 0.89e-6, 0.91e-6, **local(0.9e-6))]
    return write_records(tmp_path / "b2.jsonl", recs)


def _params(tmp_path: Path) -> Path:
    return write_params(tmp_path / "p.json")


def test_barrier_best_sets_aside_negative_invalid_and_nonconverged(tmp_path, capsys):
    f, params = _barrier_file(tmp_path), _params(tmp_path)
    df = barrier.compare(load_params(params).model, [str(f)], L_raw_s=-301e-9).set_index("alg")
    assert list(barrier.best_rows(df.reset_index())["alg"]) == ["native"]
    assert df.loc["dissemination", "set_aside"].startswith("median -0.200 us is not positive")
    assert df.loc["tree:k=4", "set_aside"].startswith("not converged (stop budget, rel_err 0.8 > target 0.025)")
    assert "overlaps native's" in df.loc["tree:k=4", "set_aside"]
    assert df.loc["pairwise", "set_aside"].startswith("no valid repetition")
    assert df.loc["linear", "set_aside"] == "" and not df.loc["linear", "best"]
    assert cli.main(["barrier", "compare", "--params", str(params), str(f)]) == 0
    out = capsys.readouterr().out
    assert "best measured at P = 2: native 500" in out
    assert "set aside at P = 2: dissemination: median -0.200 us is not positive" in out
    assert cli.main(["barrier", "compare", "--params", str(params), str(f), "--json"]) == 0
    pts = {p["alg"]: p for p in json.loads(capsys.readouterr().out)["points"]}
    assert [a for a, p in pts.items() if p["best"]] == ["native"] and pts["tree:k=4"]["set_aside"]


def test_barrier_nothing_eligible_names_none(tmp_path, capsys):
    recs = [META, _pt("native", -0.1e-6, -0.2e-6, -0.05e-6), _pt("linear", None, None, None, n=0)]
    f = write_records(tmp_path / "b.jsonl", recs)
    assert cli.main(["barrier", "compare", "--params", str(_params(tmp_path)), str(f)]) == 0
    out = capsys.readouterr().out
    assert "best measured at P = 2: none eligible" in out and "set aside at P = 2: native" in out


def test_report_fastest_collective_is_eligible(tmp_path):
    """The report's algorithms table: at 0 B native's root-timed median is negative and is not
    'fastest'; at 1 KiB binomial's is the smallest but did not converge and overlaps linear's."""
    meta = dict(META, bench="coll", sync="barrier")
    def p(alg, size, med, lo, hi, **kw):
        return dict(_pt(alg, med, lo, hi, **kw), op="scatter", size_bytes=size, timing="root")
    recs = [meta, p("native", 0, -0.6e-6, -0.7e-6, -0.5e-6, negative_samples=90), p("linear", 0, 0.6e-6, 0.59e-6, 0.61e-6),
            p("binomial", 0, 1.6e-6, 1.59e-6, 1.61e-6),
            p("native", 1024, 2.0e-6, 1.98e-6, 2.02e-6), p("linear", 1024, 1.5e-6, 1.48e-6, 1.52e-6),
            p("binomial", 1024, 1.2e-6, 0.9e-6, 1.6e-6, stop="max_reps", rel_err=0.3)]
    f = write_records(tmp_path / "c.jsonl", recs)
    html = collectives.section_algorithms(ReportInput([load(f)], {}, tmp_path))
    assert html is not None
    import re
    cells = [re.findall(r"<td>([^<]*)</td>", r) for r in html.split("<tr>")]
    fastest = {c[1]: c[2] for c in cells if len(c) > 3}
    assert fastest == {"0 B": "linear", "1 KiB": "linear"}   # without the rule: native, binomial
    assert "scatter 0 B native: median -0.600 us is not positive; 90 of 100 samples negative" in html
    assert "scatter 1 KiB binomial: not converged (stop max_reps, rel_err 0.3 &gt; target 0.025)" in html
