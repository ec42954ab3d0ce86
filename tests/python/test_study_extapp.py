"""The study on programs latscope did not write (docs/your-application.md): examples/intsort.c,
built here with the venv's mpicc, prints its time NPB-style, LULESH-style, free-form (ms) or not
at all; it can fail its verification, hang or crash. Real MPI, real injector, np 2."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from latscope import study_cli

from conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
LATSCOPE = [sys.executable, "-m", "latscope.cli"]
SRC = REPO / "examples" / "intsort.c"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the built program and a constant 20 us delay table."""
    d = tmp_path_factory.mktemp("extapp")
    mpicc = Path(sys.prefix) / "bin" / "mpicc"
    cp = subprocess.run([str(mpicc), "-O2", "-o", str(d / "extapp"), str(SRC)], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, cp.stderr
    cp = run_cli(["tables", "make", "constant", "--mean", "20us", "-o", str(d / "c20.tbl")])
    assert cp.returncode == 0, cp.stderr
    return d


def _records(path: Path) -> list[dict[str, Any]]:
    return [r for r in (json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()) if r["type"] == "run"]


GOOD = """\
repetitions = 3
np = 2
seed = 3
timeout_s = 30

[tables]
none = "none"
c20 = "c20.tbl"

[apps.npb]
program = "./extapp"
args = ["--style", "npb"]
runtime = "npb"

[apps.lulesh]
program = "./extapp"
args = ["--style", "lulesh"]
runtime = "lulesh"

[apps.free]
program = "./extapp"
args = ["--style", "free"]
runtime_regex = 'solve: ([0-9.]+) ms'
runtime_unit = "ms"
verify_reject = 'FAILED'
env = {EXTAPP_UNUSED = "1"}
"""


def test_external_programs_run_resume_analyze_report(work: Path, tmp_path: Path) -> None:
    plan = work / "good.toml"
    plan.write_text(GOOD)
    out = tmp_path / "out"
    runs = out / "runs.jsonl"
    cmd = [*LATSCOPE, "study", "run", str(plan), "-o", str(out)]
    # killed (SIGKILL) after a few runs, then resumed: nothing lost, nothing run twice
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.exists() and len(runs.read_text().splitlines()) >= 1 + 4:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the study ended before it could be stopped"
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = len(_records(runs))
    assert 4 <= before < 18
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert f"{before} finished before, {18 - before} to go" in cp.stderr
    recs = _records(runs)
    assert len(recs) == 18 and len({r["cell"] for r in recs}) == 18
    for r in recs:
        assert r["status"] == "ok" and r["verification"] == "passed" and r["reason"] is None, r
        # each in seconds: a runtime read in the wrong unit (free prints ms) would exceed the launch
        assert 0 < r["runtime_s"] < r["wall_s"], r
    for app in ("npb", "lulesh", "free"):
        inj = [r for r in recs if r["app"] == app and r["table"] == "c20"]
        plain = [r for r in recs if r["app"] == app and r["table"] == "none"]
        # 200 iterations of alltoall + alltoallv + sendrecv + ..., each delayed 20 us: >= 12 ms
        # added to a run of ~5 ms
        assert min(r["inject"]["count"] for r in inj) >= 600
        assert float(np.median([r["runtime_s"] for r in inj])) > float(np.median([r["runtime_s"] for r in plain])) + 0.006
    # analyze -> report
    cp = subprocess.run([*LATSCOPE, "study", "analyze", str(out)], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    doc = json.loads((out / "analysis.json").read_text())
    assert sorted(a["app"] for a in doc["apps"]) == ["free", "lulesh", "npb"]
    assert all(a["n"] == 3 and a["unverified"] == 0 and a["failures"] == [] for a in doc["apps"])
    html = (out / "report.html").read_text()
    assert "npb np 2" in html or "npb" in html
    assert "Traceback" not in cp.stderr
    # --json: the same document on standard output, nothing else there
    cp = subprocess.run([*LATSCOPE, "study", "analyze", str(out), "--json"], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["apps"] == doc["apps"]


BAD = """\
repetitions = 1
np = 2
timeout_s = 30

[tables]
c20 = "c20.tbl"

[apps.badverify]
program = "./extapp"
args = ["--style", "npb", "--fail-verify"]
runtime = "npb"

[apps.notime]
program = "./extapp"
args = ["--style", "none"]
runtime = "npb"

[apps.hang]
program = "./extapp"
args = ["--hang"]
runtime = "wall"
timeout_s = 1.5

[apps.crash]
program = "./extapp"
args = ["--crash"]
runtime = "npb"

[apps.wall]
program = "./extapp"
args = ["--style", "none"]
runtime = "wall"
verify = "none"
"""


def test_failing_runs_say_why(work: Path, tmp_path: Path) -> None:
    plan = work / "bad.toml"
    plan.write_text(BAD)
    out = tmp_path / "out"
    cp = subprocess.run([*LATSCOPE, "study", "run", str(plan), "-o", str(out)], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 1, cp.stderr           # ran to its end; some cells failed twice
    recs = _records(out / "runs.jsonl")
    by: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        by.setdefault(r["app"], []).append(r)
    assert {k: len(v) for k, v in by.items()} == {"badverify": 2, "notime": 2, "hang": 2, "crash": 2, "wall": 1}
    for r in by["badverify"]:
        assert r["status"] == "failed" and r["verification"] == "failed" and r["exit_status"] == 0
        assert r["runtime_s"] is not None
        assert r["reason"].startswith("verification: the output matches 'UNSUCCESSFUL'"), r["reason"]
    for r in by["notime"]:
        assert r["status"] == "error" and r["runtime_s"] is None
        assert r["reason"] == ("runtime pattern 'Time in seconds =' (preset npb) not found in the output; "
                               "last line: 'done'")
    for r in by["hang"]:
        assert r["status"] == "timeout" and r["reason"] == "no exit within timeout_s = 1.5 s (killed)"
    for r in by["crash"]:
        assert r["status"] == "error" and r["exit_status"] != 0
        assert r["reason"].startswith(f"exit status {r['exit_status']}")
        assert "Segmentation fault" in r["reason"] or "SIGSEGV" in r["reason"], r["reason"]
    (w,) = by["wall"]
    assert w["status"] == "ok" and w["verification"] == "unverified" and 0 < w["runtime_s"] == w["wall_s"]
    # the progress line says why
    assert "error - (runtime pattern 'Time in seconds =' (preset npb) not found in the output" in cp.stderr
    assert "timeout - (no exit within timeout_s = 1.5 s (killed))" in cp.stderr
    assert "(unverified)" in cp.stderr
    cp = subprocess.run([*LATSCOPE, "study", "analyze", str(out)], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "notime np=2: no run passed; 2 runs: runtime pattern 'Time in seconds =' (preset npb) not found" in cp.stdout
    assert "hang np=2: no run passed; 2 runs: no exit within timeout_s = 1.5 s (killed)" in cp.stdout
    assert "wall np=2: r_std undefined (n = 1) [unverified]" in cp.stdout
    doc = json.loads((out / "analysis.json").read_text())
    wall = next(a for a in doc["apps"] if a["app"] == "wall")
    assert wall["unverified"] == 1 and any("unverified" in n for n in wall["notes"])
    assert "unverified" in (out / "report.html").read_text()


def test_apps_listing(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = work / "list.toml"
    plan.write_text(GOOD + '\n[apps.wall]\nprogram = "./extapp"\nruntime = "wall"\nverify = "none"\n')
    assert study_cli.main(["apps", str(plan)]) == 0
    out = capsys.readouterr().out
    assert f"npb: {work}/extapp --style npb" in out
    assert "  runtime  preset npb: Time in seconds =\n" in out
    assert "  verified must match /Verification\\s*=\\s*SUCCESSFUL/, must not match /UNSUCCESSFUL/" in out
    assert "  runtime  preset lulesh: Elapsed time = T (s)\n  verified exit status 0\n" in out
    assert "  runtime  /solve: ([0-9.]+) ms/ in ms\n  verified must not match /FAILED/, exit status 0\n" in out
    assert "  env      EXTAPP_UNUSED=1\n" in out
    assert "  runtime  wall time of the launch\n  verified none (unverified)\n" in out
    assert study_cli.main(["apps", str(plan), "--json"]) == 0
    apps = {a["name"]: a for a in json.loads(capsys.readouterr().out)}
    assert apps["npb"]["runtime"] == "preset npb: Time in seconds ="
    assert apps["wall"]["verified"] == "none (unverified)" and apps["wall"]["nps"] == [2]


@pytest.mark.parametrize("edit,key,words", [
    (lambda s: s.replace("'solve: ([0-9.]+) ms'", "'solve: ([0-9.]+ ms'"), "runtime_regex",
     ["app 'free'", "runtime_regex = 'solve: ([0-9.]+ ms'", "not a valid regular expression"]),
    (lambda s: s.replace("'solve: ([0-9.]+) ms'", "'solve: [0-9.]+ ms'"), "runtime_regex",
     ["app 'free'", "needs a group"]),
    (lambda s: s.replace('runtime = "lulesh"', 'runtime = "hpl"'), "runtime",
     ["app 'lulesh'", "runtime = 'hpl'", "unknown preset", "npb, lulesh, hpcg, latscope, wall"]),
    (lambda s: s.replace('runtime_unit = "ms"', 'runtime_unit = "min"'), "runtime_unit",
     ["app 'free'", "runtime_unit = 'min'", "s, ms, us, ns"]),
    (lambda s: s.replace("verify_reject = 'FAILED'", "verify_reject = 'FAIL(ED'"), "verify_reject",
     ["app 'free'", "verify_reject = 'FAIL(ED'"]),
    (lambda s: s.replace('runtime = "npb"', 'runtime = "npb"\nverify = "maybe"'), "verify",
     ["app 'npb'", "verify = 'maybe'", "exit, none"]),
    (lambda s: s.replace('program = "./extapp"\nargs = ["--style", "lulesh"]',
                         'program = "./c20.tbl"\nargs = ["--style", "lulesh"]'), "program",
     ["app 'lulesh'", "program = './c20.tbl'", "not executable"]),
    (lambda s: s.replace('program = "./extapp"\nargs = ["--style", "lulesh"]',
                         'program = "no-such-program-xyz"\nargs = ["--style", "lulesh"]'), "program",
     ["app 'lulesh'", "'no-such-program-xyz'", "not in build/bin nor on PATH"]),
])
def test_bad_app_settings_exit_2_before_anything_runs(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      edit: Any, key: str, words: list[str]) -> None:
    plan = work / f"bad-{key}.toml"
    text = edit(GOOD)
    assert text != GOOD
    plan.write_text(text)
    out = tmp_path / "out"
    assert study_cli.main(["run", str(plan), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    line = next(i for i, (a, b) in enumerate(zip(text.splitlines(), GOOD.splitlines()), 1) if a != b)
    assert f"{plan}:{line}: " in err, err
    for w in words:
        assert w in err, err
    assert not out.exists()


# ---------------------------------------------------------------- latency sensitivity

def test_sensitivity_slope_counts_the_delayed_calls(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "sens"
    cp = subprocess.run([*LATSCOPE, "study", "sensitivity", "--levels", "0,20", "--classes", "all,p2p",
                         "--repetitions", "3", "--runtime", "npb", "-o", str(out), "--",
                         str(work / "extapp"), "--style", "npb"], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    doc = json.loads((out / "sensitivity.json").read_text())
    prof = {c["calls"]: c for c in doc["classes"]}
    # per rank and run: 200 x (alltoall + alltoallv + sendrecv) + the final reduce/allreduce/barrier
    assert prof["all"]["delayed_calls_per_rank"] == 603
    assert prof["p2p"]["delayed_calls_per_rank"] == 200
    for c, p in prof.items():
        assert p["n"] == 6
        # every delayed call of a rank is on the critical path here (the ranks wait for each other
        # at every call); on a loaded machine a delay costs more than itself, never much less
        assert p["critical_calls_per_run"] >= 0.5 * p["delayed_calls_per_rank"], (c, p)
        assert p["median_runtime_s"][1] > p["median_runtime_s"][0] + 0.5 * p["delayed_calls_per_rank"] * 20e-6
    assert "latency-critical messages per run" in cp.stdout and "on the critical path" in cp.stdout
    assert (out / "sensitivity.png").stat().st_size > 1000
    cp = subprocess.run([*LATSCOPE, "study", "sensitivity", "--levels", "0,1", "--classes", "p2p", "--repetitions",
                         "1", "--runtime", "npb", "--json", "-o", str(tmp_path / "sens-json"), "--",
                         str(work / "extapp"), "--style", "npb"], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["classes"][0]["calls"] == "p2p"


@pytest.mark.parametrize("argv,words", [
    (["--levels", "0,x"], ["--levels '0,x'"]),
    (["--levels", "5"], ["--levels '5'", "at least two"]),
    (["--classes", "all,rma"], ["--classes 'all,rma'", "all, p2p, coll"]),
    (["--runtime", "hpl"], ["--runtime 'hpl'", "unknown preset"]),
    (["--runtime-regex", "T=([0-9.]+"], ["not a valid regular expression"]),
])
def test_sensitivity_bad_input_exit_2(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      argv: list[str], words: list[str]) -> None:
    out = tmp_path / "sens"
    assert study_cli.main(["sensitivity", *argv, "-o", str(out), "--", str(work / "extapp")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err
    assert not out.exists()


def test_sensitivity_not_executable_exit_2(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert study_cli.main(["sensitivity", "-o", str(tmp_path / "s"), "--", str(work / "c20.tbl")]) == 2
    assert "c20.tbl': not an executable program" in capsys.readouterr().err


# ---------------------------------------------------------------- traces of it

@pytest.mark.parametrize("np_", [2, 3])
def test_trace_replays_alltoallv_as_messages(work: Path, tmp_path: Path, np_: int) -> None:
    # intsort's keys go by MPI_Alltoallv: traced, it runs as the pairwise exchange of MPI_Sendrecv
    # (the program's own verification checks every key arrived), and the GOAL schedule holds
    # those messages instead of a computation of the call's traced time
    iters = 50
    cmd = ["--np", str(np_), "--", str(work / "extapp"), "--style", "npb", "--iters", str(iters)]
    cp = subprocess.run([*LATSCOPE, "trace", "run", "-o", str(tmp_path / "tr"), *cmd], capture_output=True,
                        text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "Verification    =               SUCCESSFUL" in cp.stdout
    assert "MPI_Alltoallv" not in cp.stderr
    assert "collectives replayed as computation 0.0 %" in cp.stdout
    sends = int(cp.stdout.split(" sends,")[0].rsplit(" ", 1)[1])
    env = dict(os.environ, LATSCOPE_TRACE_ALLTOALLV="computation")
    cp = subprocess.run([*LATSCOPE, "trace", "run", "-o", str(tmp_path / "trc"), *cmd], capture_output=True,
                        text=True, timeout=120, env=env)
    assert cp.returncode == 0, cp.stderr
    assert f"no latscope algorithm for MPI_Alltoallv ({iters * np_} calls)" in cp.stderr
    sends_c = int(cp.stdout.split(" sends,")[0].rsplit(" ", 1)[1])
    assert sends - sends_c == iters * np_ * (np_ - 1)       # P - 1 messages per rank and call


def test_hpcg_preset_reads_the_report_file(work: Path, tmp_path: Path) -> None:
    # HPCG writes its result to HPCG-Benchmark_<version>_<date>.txt in its directory, not to stdout
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    prog = tmp_path / "fake-hpcg.sh"
    prog.write_text("#!/bin/sh\nprintf 'Benchmark Time Summary::Total=1.25\\nFinal Summary::HPCG result is VALID "
                    "with a GFLOP/s rating of=1.0\\n' > HPCG-Benchmark_3.1_x.txt\necho started\n")
    prog.chmod(0o755)
    plan = tmp_path / "hpcg.toml"
    plan.write_text(f'repetitions = 1\nnp = 2\n[tables]\nnone = "none"\n[apps.hpcg]\nprogram = "{prog}"\n'
                    f'runtime = "hpcg"\ncwd = "run"\n')
    cp = subprocess.run([*LATSCOPE, "study", "run", str(plan), "-o", str(tmp_path / "out")], capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    (r,) = _records(tmp_path / "out" / "runs.jsonl")
    assert r["status"] == "ok" and r["runtime_s"] == 1.25 and r["verification"] == "passed"
