"""`latscope study run` and `latscope study analyze` (docs/study.md).

The statistics are checked against published worked examples, against an independent Monte
Carlo computation and against scipy; the runner with the real mini-apps under the injector:
a study killed (SIGKILL) mid-way and rerun loses and redoes nothing, a failed and a timed-out
run are recorded and retried once, bad plans exit 2 naming the line."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from latscope import study_cli
from latscope.study.analyze import analyze_group, fisher_z_seed, steiger_z, williams_t

from conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
LATSCOPE = [sys.executable, "-m", "latscope.cli"]


# ---------------------------------------------------------------- statistics

def test_williams_t_howell_example() -> None:
    # Howell, Statistical Methods for Psychology (6th ed., p. 262), as computed in B. Weaver's
    # published SPSS syntax (Williams1959.sps): r12 = .80, r13 = .72, r23 = .89, n = 26
    # -> t = 1.361, df = 23, two-sided p = .187
    t = williams_t(0.80, 0.72, 0.89, 26)
    assert t.df == 23
    assert t.statistic == pytest.approx(1.361, abs=5e-4)
    assert t.p == pytest.approx(0.187, abs=5e-4)


def _trivariate(rho12: float, rho13: float, rho23: float, n: int, reps: int, seed: int) -> np.ndarray:
    """reps samples of n from a trivariate normal: the sample r12, r13, r23 of each (reps x 3)."""
    cov = np.array([[1, rho12, rho13], [rho12, 1, rho23], [rho13, rho23, 1]])
    x = np.random.default_rng(seed).multivariate_normal(np.zeros(3), cov, size=(reps, n))
    x = x - x.mean(axis=1, keepdims=True)
    s = np.einsum("rni,rnj->rij", x, x)
    d = np.sqrt(np.einsum("rii->ri", s))
    r = s / d[:, :, None] / d[:, None, :]
    return np.stack([r[:, 0, 1], r[:, 0, 2], r[:, 1, 2]], axis=1)


@pytest.mark.parametrize("test", [steiger_z, williams_t])
def test_dependent_correlation_tests_calibrated_by_monte_carlo(test: Any) -> None:
    # An independent computation: under H0 (rho12 = rho13, here with a strong rho23 as in a study
    # whose tables' mean and sd move together), a correct statistic is ~N(0, 1) (Williams: t with
    # n-3 df), so 5 % of samples reject at 0.05. The seed's independent-sample Fisher z ignores
    # rho23: its standard error is too large by sqrt(1/(1 - s)), and it rejects far less often.
    n, reps = 40, 4000
    rs = _trivariate(0.5, 0.5, 0.7, n, reps, seed=7)
    p = np.array([test(a, b, c, n).p for a, b, c in rs])
    stat = np.array([test(a, b, c, n).statistic for a, b, c in rs])
    assert 0.035 <= float(np.mean(p < 0.05)) <= 0.065
    assert float(np.std(stat)) == pytest.approx(1.0, abs=0.06)
    seed_p = np.array([fisher_z_seed(a, b, n).p for a, b, c in rs])
    two_sided = 2 * np.minimum(seed_p, 1 - seed_p)
    assert float(np.mean(two_sided < 0.05)) < 0.01


def test_steiger_equals_williams_for_large_n() -> None:
    # both estimate the same asymptotic variance of r12 - r13 (Steiger 1980, eqs. 7 and 14)
    z, t = steiger_z(0.6, 0.45, 0.3, 5000), williams_t(0.6, 0.45, 0.3, 5000)
    assert z.statistic is not None and t.statistic is not None
    assert z.statistic == pytest.approx(t.statistic, rel=0.01)


def test_fisher_z_seed_formula() -> None:
    # seed 004 §7: z = (artanh r_mean - artanh r_std) / sqrt(2/(n-3)), p = Phi(z)
    f = fisher_z_seed(0.70, 0.89, 103)
    z = (math.atanh(0.70) - math.atanh(0.89)) / math.sqrt(2 / 100)
    assert f.statistic == pytest.approx(z, rel=1e-12)
    assert f.p == pytest.approx(float(stats.norm.cdf(z)), rel=1e-12)
    assert f.n == 103


def _runs(rng: np.random.Generator) -> list[dict[str, Any]]:
    tabs = [("none", "none", 0.0, 0.0), ("c20", "constant", 20e-6, 0.0), ("l20", "lognormal", 20e-6, 40e-6),
            ("c60", "constant", 60e-6, 0.0), ("l60", "lognormal", 60e-6, 50e-6), ("l60b", "lognormal", 60e-6, 1e-4)]
    out = []
    for rep in range(7):
        for name, d, m, s in tabs:
            out.append({"app": "lu", "table": name, "table_distribution": d, "table_mean_s": m, "table_sd_s": s,
                        "runtime_s": 1 + 1e3 * m + 4e3 * s + float(rng.normal(0, 0.02))})
    return out


def test_analysis_matches_scipy() -> None:
    runs = _runs(np.random.default_rng(3))
    a = analyze_group("lu", 2, runs, 0)
    inj = [r for r in runs if r["table"] != "none"]
    y = np.array([r["runtime_s"] for r in inj])
    xm = np.array([r["table_mean_s"] for r in inj])
    xs = np.array([r["table_sd_s"] for r in inj])
    assert a.n == len(inj) == 35
    for got, x in ((a.r_mean, xm), (a.r_std, xs)):
        ref = stats.pearsonr(x, y)
        assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert got.p == pytest.approx(ref.pvalue, rel=1e-9)
    assert a.r_mean_sd == pytest.approx(stats.pearsonr(xm, xs).statistic, rel=1e-12)
    assert a.r_std.statistic is not None and a.r_mean.statistic is not None
    assert a.williams_t.statistic == pytest.approx(
        williams_t(a.r_std.statistic, a.r_mean.statistic, a.r_mean_sd or 0.0, 35).statistic)
    # KS per table: scipy's kstest against the normal with the runtimes' own mean and sd
    t60 = next(t for t in a.tables if t.table == "l60")
    y60 = np.array([r["runtime_s"] for r in runs if r["table"] == "l60"])
    ks = stats.kstest(y60, "norm", args=(y60.mean(), y60.std(ddof=1)))
    assert t60.ks is not None and t60.ks.statistic == pytest.approx(ks.statistic) and t60.ks.p == pytest.approx(ks.pvalue)
    # Mann-Whitney: each lognormal table against the constant table of its mean, and nothing else
    pairs = {(m.uniform, m.lognormal) for m in a.mann_whitney}
    assert pairs == {("c20", "l20"), ("c60", "l60"), ("c60", "l60b")}
    m = next(m for m in a.mann_whitney if m.lognormal == "l60b")
    ref = stats.mannwhitneyu([r["runtime_s"] for r in runs if r["table"] == "c60"],
                             [r["runtime_s"] for r in runs if r["table"] == "l60b"], alternative="two-sided")
    assert m.u == pytest.approx(ref.statistic) and m.p == pytest.approx(ref.pvalue)
    assert a.baseline == "none"


def test_equal_means_leave_r_mean_undefined() -> None:
    rng = np.random.default_rng(5)
    runs = [{"app": "ep", "table": f"t{k}", "table_distribution": "lognormal", "table_mean_s": 2e-5,
             "table_sd_s": k * 1e-5, "runtime_s": 1 + float(rng.normal(0, 0.01))} for k in range(4) for _ in range(5)]
    a = analyze_group("ep", 2, runs, 0)
    assert a.r_mean.statistic is None and a.r_std.statistic is not None
    assert a.williams_t.statistic is None and a.fisher_z_seed.statistic is None
    assert any("means are equal" in n for n in a.notes)


# ---------------------------------------------------------------- plans

def _table(d: Path, name: str, *args: str) -> None:
    cp = run_cli(["tables", "make", *args, "-o", str(d / name)])
    assert cp.returncode == 0, cp.stderr


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("study-tables")
    _table(d, "c.tbl", "constant", "--mean", "5us")
    _table(d, "l.tbl", "lognormal", "--mean", "5us", "--sd", "10us")
    return d


GOOD = """\
repetitions = 2
seed = 4
np = [1, 2]
timeout_s = 60

[tables]
c = "{d}/c.tbl"
l = "{d}/l.tbl"

[apps.cg]
args = ["--class", "S"]
"""


@pytest.mark.parametrize("edit,line,words", [
    (lambda s: s.replace("[apps.cg]", "[apps.xy]"), 10, ["unknown app 'xy'", "cg"]),
    (lambda s: s.replace("l.tbl", "missing.tbl"), 8, ["table 'l'", "no such file"]),
    (lambda s: s.replace("repetitions = 2", "repetitions = 0"), 1, ["'repetitions' = 0", ">= 1"]),
    (lambda s: s.replace("repetitions = 2", 'repetitions = "2"'), 1, ["'repetitions' = '2'", "integer"]),
    (lambda s: s.replace("np = [1, 2]", "np = [1, \"two\"]"), 3, ["'np'"]),
    (lambda s: s.replace('args = ["--class", "S"]', 'args = "--class S"'), 11, ["'apps.cg.args'", "list"]),
    (lambda s: s.replace("timeout_s = 60", "timeout_s = -1"), 4, ["'timeout_s' = -1"]),
    (lambda s: s + "colour = 1\n", 12, ["unknown key 'colour'"]),
    (lambda s: s.replace("seed = 4", 'seed = 4\ncoll = "packets"'), 3, ["'coll' = 'packets'", "calls, messages"]),
    (lambda s: s.replace("seed = 4", "seed = = 4"), 2, ["not valid TOML"]),
])
def test_bad_plan_exit_2_naming_the_line(tables: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         edit: Any, line: int, words: list[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(edit(GOOD.format(d=tables)))
    assert study_cli.main(["run", str(plan), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{plan}:{line}: " in err, err
    for w in words:
        assert w in err, err
    assert not (tmp_path / "out").exists()


def test_bad_plan_cli_one_line(tables: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(GOOD.format(d=tables).replace("repetitions = 2", "repetitions = 0"))
    cp = subprocess.run([*LATSCOPE, "study", "run", str(plan)], capture_output=True, text=True, cwd=tmp_path)
    assert cp.returncode == 2
    assert cp.stderr.strip() == f"latscope study run: error: {plan}:1: 'repetitions' = 0: must be >= 1"
    assert "Traceback" not in cp.stderr


# ---------------------------------------------------------------- running (real mini-app, real MPI)

def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def _start(cmd: list[str], runs: Path, n: int) -> subprocess.Popen[str]:
    """Start a study; return once it has recorded n runs (meta + n lines), still running. The
    study gets SIGINT's default disposition, as in a terminal: started from a background job of a
    non-interactive shell (a CI script run with `&`), it would inherit SIGINT ignored, and Python
    then leaves Ctrl-C ignored (the study ran to its end in such a run)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.exists() and len(runs.read_text().splitlines()) >= 1 + n:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the study ended before it could be stopped"
    return proc


def test_killed_study_resumes_losing_and_redoing_nothing(tables: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    # class W (0.2-0.3 s a run): the study is still running when it is stopped (class S runs take
    # 0.03 s, and the last ones could finish before the signal)
    plan.write_text(GOOD.format(d=tables).replace("repetitions = 2", "repetitions = 3")
                    .replace('"--class", "S"', '"--class", "W"'))   # 2 x 1 x 2 x 3 = 12
    out = tmp_path / "out"
    runs = out / "runs.jsonl"
    cmd = [*LATSCOPE, "study", "run", str(plan), "-o", str(out)]
    proc = _start(cmd, runs, 4)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = runs.read_bytes()
    before = [r for r in _records(runs) if r["type"] == "run"] if first.endswith(b"\n") else None
    assert before is not None and 4 <= len(before) < 12
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert runs.read_bytes().startswith(first)                 # nothing finished was lost or rewritten
    recs = _records(runs)
    assert [r["type"] for r in recs].count("meta") == 1
    after = [r for r in recs if r["type"] == "run"][len(before):]
    done_before = {r["cell"] for r in before if r["status"] == "ok"}
    assert not done_before & {r["cell"] for r in after}        # nothing finished was redone
    ok = [r for r in recs if r["type"] == "run" and r["status"] == "ok"]
    cells = {f"cg|{t}|{n}|{k}" for t in ("c", "l") for n in (1, 2) for k in range(3)}
    assert sorted(r["cell"] for r in ok) == sorted(cells)      # every cell exactly once
    assert f"{12 - len(before)} to go" in cp.stderr and "ETA" in cp.stderr
    for r in ok:
        assert r["verification"] == "passed" and r["runtime_s"] > 0 and r["host"]["cores"] >= 1
        # the injector ran with the cell's table: one summary over all ranks, delays as requested
        inj = r["inject"]
        assert inj["ranks"] == r["np"]
        if r["np"] > 1:       # (alone, CG sends nothing)
            assert inj["count"] > 0 and inj["requested_mean_s"] == pytest.approx(5e-6, rel=0.5)
    # within each repetition block, every (table, np) once: the blocks are complete
    for k in range(3):
        assert sorted((r["table"], r["np"]) for r in ok if r["rep"] == k) == [("c", 1), ("c", 2), ("l", 1), ("l", 2)]
    # and a rerun of a finished study runs nothing (this and the analysis in process: the same
    # code path without an interpreter's imports; the killed run above needs a process of its own)
    cp = run_cli(cmd[len(LATSCOPE):])
    assert cp.returncode == 0 and "0 to go" in cp.stderr
    assert len(_records(runs)) == len(recs)
    # the analysis of it: n = the verified runs of each np
    cp = run_cli(["study", "analyze", str(out)])
    assert cp.returncode == 0, cp.stderr
    doc = json.loads((out / "analysis.json").read_text())
    assert {(a["app"], a["np"], a["n"]) for a in doc["apps"]} == {("cg", 1, 6), ("cg", 2, 6)}
    assert (out / "fig14.png").exists() and "Table 4" in (out / "report.html").read_text()


def test_failed_and_timed_out_runs_recorded_and_retried_once(tables: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(f"""\
repetitions = 1
np = 1

[tables]
c = "{tables}/c.tbl"

[apps.fault]
program = "latscope-cg"
args = ["--inject-fault"]

[apps.slow]
program = "latscope-cg"
args = ["--iters", "1000000"]
timeout_s = 1.5
""")
    out = tmp_path / "out"
    cp = subprocess.run([*LATSCOPE, "study", "run", str(plan), "-o", str(out)], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 1, cp.stderr                          # the study ran to its end; some cells failed
    recs = [r for r in _records(out / "runs.jsonl") if r["type"] == "run"]
    assert [r["attempt"] for r in recs] == [1, 1, 2, 2]          # the retries after every first run
    by = {(r["app"], r["attempt"]): r for r in recs}
    assert sorted(by) == [("fault", 1), ("fault", 2), ("slow", 1), ("slow", 2)]
    for k in (1, 2):
        assert by[("fault", k)]["status"] == "failed" and by[("fault", k)]["verification"] == "failed"
        assert by[("fault", k)]["exit_status"] == 1
        assert by[("slow", k)]["status"] == "timeout" and by[("slow", k)]["runtime_s"] is None
    assert "retried at the end" in cp.stderr and "(retry)" in cp.stderr
    # finished (twice failed) cells are not run again
    cp = subprocess.run([*LATSCOPE, "study", "run", str(plan), "-o", str(out)], capture_output=True, text=True,
                        timeout=60)
    assert "0 to go" in cp.stderr
    assert len([r for r in _records(out / "runs.jsonl") if r["type"] == "run"]) == 4


def test_ctrl_c_loses_only_the_run_in_flight(tables: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(GOOD.format(d=tables).replace("np = [1, 2]", "np = 1").replace("repetitions = 2", "repetitions = 3")
                    .replace('"--class", "S"', '"--class", "W"'))   # W: still running when Ctrl-C comes
    out = tmp_path / "out"
    runs = out / "runs.jsonl"
    cmd = [*LATSCOPE, "study", "run", str(plan), "-o", str(out)]
    proc = _start(cmd, runs, 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "rerun the same command to resume" in err and "Traceback" not in err
    before = [r for r in _records(runs) if r["type"] == "run"]
    assert 2 <= len(before) < 6 and all(r["status"] == "ok" for r in before)
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    cells = [r["cell"] for r in _records(runs) if r["type"] == "run"]
    assert sorted(cells) == sorted(f"cg|{t}|1|{k}" for t in ("c", "l") for k in range(3))


def test_analyze_writes_table4_figures_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(np.random.default_rng(11))
    for k, r in enumerate(runs):
        r.update(type="run", cell=f"lu|{r['table']}|2|{k}", np=2, rep=k, attempt=1, status="ok")
    f = tmp_path / "runs.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [{"type": "meta", "schema": "latscope.study-run/1"}, *runs]) + "\n")
    assert study_cli.main(["analyze", str(f), "-o", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:6] == ["app", "np", "n", "r_mean", "p", "r_std"]
    assert "lu np=2: r_std = " in out and "runtime grows with the table's sd" in out
    a = tmp_path / "a"
    assert sorted(p.name for p in a.glob("fig*.png")) == [f"fig{k}.png" for k in range(11, 17)]
    doc = json.loads((a / "analysis.json").read_text())
    assert doc["schema"] == "latscope.study-analysis/1" and doc["apps"][0]["n"] == 35
    assert (a / "table4.csv").read_text().splitlines()[1].startswith("lu,2,35,")
    html = (a / "report.html").read_text()
    assert html.count("<img") == 6 and "Williams" in html and "NaN" not in (a / "analysis.json").read_text()


def test_analyze_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert study_cli.main(["analyze", str(tmp_path / "nothing.jsonl")]) == 2
    (tmp_path / "x.jsonl").write_text('{"type": "meta", "schema": "latscope.results/3"}\n')
    assert study_cli.main(["analyze", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "no such file" in err[0] and "latscope.study-run/1" in err[1]
