"""The study's design against a shared machine (docs/study.md, "Repeated
launches", "Blocks in the analysis", "Why a 2 x 2 block grid at np 2"): a plan's `launches` and
their order, each cell's minimum over its launches, runtimes taken relative to their block, and
the wavefront at np 2 growing with the delays' spread (real MPI, the real injector)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from latscope.study.analyze import analyze_group, analyze_runs, block_relative, cell_minima
from latscope.study.plan import parse_plan
from conftest import run_cli
from test_study_run import GOOD, LATSCOPE, REPO, _table


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A constant and a lognormal table of mean 20 us, sd 0 and 80 us (68 us after the tail's cut)."""
    d = tmp_path_factory.mktemp("design-tables")
    for name, kind in (("c.tbl", ["constant"]), ("l.tbl", ["lognormal", "--sd", "80us"])):
        _table(d, name, *kind, "--mean", "20us")
    return d


# test_study_run's plan at np 1 with the EP control beside CG; `launches` (and more) on line 2
PLAN = GOOD.replace("seed = 4", "{launches}seed = 3").replace("np = [1, 2]", "np = 1") + \
    '[apps.ep]\nargs = ["--class", "S"]\n'


def _plan(tmp_path: Path, tables: Path, launches: str, name: str = "plan.toml") -> Path:
    p = tmp_path / name
    p.write_text(PLAN.format(d=tables, launches=launches))
    return p


def test_launches_run_each_block_in_passes(tables: Path, tmp_path: Path) -> None:
    plain = parse_plan(_plan(tmp_path, tables, "", "plain.toml"))
    plan = parse_plan(_plan(tmp_path, tables, "launches = 3\n"))
    assert plain.launches == 1 and plan.launches == 3
    for b_plain, block in zip(plain.blocks(), plan.blocks()):
        assert len(block) == 3 * len(b_plain) == 12
        # pass 0 is the order the plan had without `launches`, and keeps its keys (resumable)
        assert [c.key for c in block[:4]] == [c.key for c in b_plain]
        for launch in range(3):
            p = block[4 * launch:4 * (launch + 1)]
            assert {c.launch for c in p} == {launch}
            assert sorted(c.cell_key for c in p) == sorted(c.key for c in b_plain)   # every cell once a pass
        assert len({c.key for c in block}) == 12
    # a later pass is shuffled on its own (seed 3: the passes' orders differ)
    block = plan.blocks()[0]
    assert len({tuple(c.cell_key for c in block[4 * k:4 * (k + 1)]) for k in range(3)}) > 1
    # the injector's seed is the cell's: its launches differ by the machine only
    assert len({plan.injector_seed(c) for c in block}) == 1


def test_bad_launches_exit_2_naming_the_line(tables: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from latscope import study_cli

    for bad, words in (("launches = 0\n", "'launches' = 0: must be >= 1"),
                       ('launches = "3"\n', "'launches' = '3': must be an integer >= 1"),
                       ("pin = 1\n", "'pin' = 1: true or false")):
        p = _plan(tmp_path, tables, bad)
        assert study_cli.main(["run", str(p), "-o", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip()
        assert f"{p}:2: {words}" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def _rec(table: str, sd: float, rep: int, launch: int, rt: float, status: str = "ok") -> dict[str, Any]:
    return {"type": "run", "cell": f"lu|{table}|2|{rep}", "app": "lu", "table": table, "np": 2, "rep": rep,
            "launch": launch, "attempt": 1, "status": status, "table_distribution": "lognormal" if sd else "constant",
            "table_mean_s": 2e-5, "table_sd_s": sd, "runtime_s": rt if status == "ok" else None}


def test_cell_minimum_over_its_launches() -> None:
    runs = [_rec("c", 0, 0, 0, 0.30), _rec("c", 0, 0, 1, 0.10), _rec("c", 0, 0, 2, 0.20),
            _rec("l", 4e-5, 0, 0, 0.50), _rec("l", 4e-5, 0, 1, 0.0, "error"), _rec("l", 4e-5, 0, 2, 0.40)]
    cells = {r["cell"]: r for r in cell_minima([r for r in runs if r["status"] == "ok"])}
    assert cells["lu|c|2|0"]["runtime_s"] == 0.10 and cells["lu|c|2|0"]["launches_ok"] == 3
    assert cells["lu|c|2|0"]["runtimes_s"] == [0.30, 0.10, 0.20] and cells["lu|c|2|0"]["launch"] == 1
    assert cells["lu|l|2|0"]["runtime_s"] == 0.40 and cells["lu|l|2|0"]["launches_ok"] == 2


def _blocked_study(rng: np.random.Generator) -> list[dict[str, Any]]:
    """Runtime = (1 + 2 sd/40us %) x the block's machine state (every other block 2x slower, as
    when another tenant's long job shares the cores) x 1 % noise; 8 blocks of 5 tables."""
    out = []
    for rep in range(8):
        state = 2.0 if rep % 2 else 1.0
        for k, sd in enumerate((0, 10e-6, 20e-6, 40e-6, 80e-6)):
            out.append(_rec(f"s{k}", sd, rep, 0, (1 + 0.02 * sd / 40e-6) * state * (1 + float(rng.normal(0, 0.01)))))
    return out


def test_runtimes_relative_to_their_block() -> None:
    runs = _blocked_study(np.random.default_rng(7))
    keep, y, n_blocks = block_relative(runs)
    assert n_blocks == 8 and keep == list(range(40))
    raw = np.array([r["runtime_s"] for r in runs])
    ref = np.concatenate([raw[5 * b:5 * b + 5] / raw[5 * b:5 * b + 5].mean() for b in range(8)]) * raw.mean()
    assert np.allclose(y, ref, rtol=1e-12)
    a = analyze_group("lu", 2, runs, 0)
    xs = np.array([r["table_sd_s"] for r in runs])
    assert a.blocks == 8 and a.r_std.n == 40
    assert a.r_std.statistic == pytest.approx(stats.pearsonr(xs, ref).statistic, rel=1e-12)
    assert a.r_std.p == pytest.approx(stats.pearsonr(xs, ref).pvalue, rel=1e-9)
    assert a.r_std_unblocked is not None
    assert a.r_std_unblocked.statistic == pytest.approx(stats.pearsonr(xs, raw).statistic, rel=1e-12)
    # the block states swamp the raw r; relative to its block the effect is plain
    assert a.r_std_unblocked.p is not None and a.r_std_unblocked.p > 0.05
    assert a.r_std.statistic is not None and a.r_std.statistic > 0.8 and a.r_std.p is not None and a.r_std.p < 1e-6
    assert any("relative to its block" in n for n in a.notes)
    # an incomplete block (a cell that failed twice) is left out of the blocked correlations
    del runs[7]
    keep, y, n_blocks = block_relative(runs)
    assert n_blocks == 7 and len(keep) == 35 and all(runs[i]["rep"] != 1 for i in keep)
    # one complete block is no design to adjust for: the raw runtimes, as before
    assert block_relative(runs[:5])[2] == 0
    assert analyze_group("lu", 2, runs[:5], 0).blocks == 0


def test_study_with_launches_records_resumes_and_analyzes(tables: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(d=tables, launches="launches = 2\npin = true\n")
                    .replace("[apps.ep]\nargs = [\"--class\", \"S\"]\n", ""))
    out = tmp_path / "out"
    cmd = [*LATSCOPE, "study", "run", str(plan), "-o", str(out)]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "launch=1" in cp.stderr
    recs = [json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines()]
    assert recs[0]["launches"] == 2 and recs[0]["pin"] is True
    runs = [r for r in recs if r["type"] == "run"]
    assert sorted((r["cell"], r["launch"]) for r in runs) == \
        sorted((f"cg|{t}|1|{k}", n) for t in ("c", "l") for k in range(2) for n in range(2))
    assert all(r["status"] == "ok" for r in runs)
    # pin: each rank bound to a core of its own (MPICH's -bind-to core, Open MPI's --bind-to core)
    assert all("bind-to core" in r["command"] for r in runs)
    assert len({r["seed"] for r in runs if r["rep"] == 0}) == 1
    # the rerun and the analysis in process (conftest.run_cli: the same code path, without an
    # interpreter's imports each)
    cp = run_cli(cmd[len(LATSCOPE):], timeout=60)
    assert cp.returncode == 0 and "0 to go" in cp.stderr
    [a] = analyze_runs(runs)
    assert a.n == 4 and a.launches == 2 and a.blocks == 2
    cp = run_cli(["study", "analyze", str(out)])
    assert cp.returncode == 0, cp.stderr
    assert "each cell the minimum of 2 launches" in cp.stdout
    assert "minimum of its 2 launches" in (out / "report.html").read_text()


def test_lu_at_np_2_grows_with_the_delays_spread(tables: Path) -> None:
    """At np 2 the wavefront is a 2 x 2 block grid (miniapps/lu.c): a block waits for the later of
    two neighbours, so at equal mean delay a lognormal table (sd 4x the mean) slows it. The
    minimum of 3 interleaved launches each (another tenant only adds time). `latscope inject run`
    in process (conftest.run_cli): the runtimes are latscope-lu's own, the launches as before."""
    lu = str(REPO / "build" / "bin" / "latscope-lu")
    got: dict[str, list[float]] = {"c": [], "l": []}
    for _ in range(3):
        for t in ("c", "l"):
            cp = run_cli(["inject", "run", "--table", str(tables / f"{t}.tbl"), "--seed", "1",
                          "--np", "2", "--", lu, "--class", "S", "--iters", "20"])
            assert cp.returncode == 0, cp.stdout + cp.stderr
            line = next(ln for ln in cp.stdout.splitlines() if ln.startswith("latscope-miniapp"))
            fields = dict(w.split("=", 1) for w in line.split()[1:])
            assert fields["verification"] == "passed"
            got[t].append(float(fields["runtime_s"]))
    # measured here: +35 % (0.62 -> 0.84 s at 100 iterations); a 2 x 1 chain gave +3 %
    assert min(got["l"]) > 1.15 * min(got["c"]), got
