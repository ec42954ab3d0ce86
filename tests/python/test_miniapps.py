"""The mini-app suite (docs/miniapps.md): CG, IS, EP verify at np 1..4 against NPB's published
values, fail (exit 1) when their computation is perturbed (--inject-fault), and refuse bad input
with exit 2 and one line on every rank count; `latscope apps` lists and runs them.

Class S throughout (the smallest); no wall-clock assertions."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import NPS, mpirun
from latscope import miniapps
from latscope.run import program

APPS = ["cg", "ep", "is"]     # this file's apps; the registry may hold more (each tests its own)


def result(cp: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The one `latscope-miniapp key=value ...` line on stdout (rank 0 prints exactly one)."""
    lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("latscope-miniapp ")]
    assert len(lines) == 1, f"expected one result line:\n{cp.stdout}\n{cp.stderr}"
    return dict(w.split("=", 1) for w in lines[0].split()[1:])


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("app", APPS)
def test_verifies_at_every_np(app: str, np_: int) -> None:
    """NPB's class S: CG's zeta within 1e-10 of 8.5971775078648, EP's sx (and sy) within 1e-8,
    IS's 5 partial checks per iteration + the full sort check (51 of 51)."""
    cp = mpirun(np_, ["--class", "S"], prog=f"latscope-{app}")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    r = result(cp)
    assert r["app"] == app and r["class"] == "S" and r["np"] == str(np_) and r["verification"] == "passed"
    value, ref = float(r["value"]), float(r["reference"])
    tol = {"cg": 1e-10, "ep": 1e-8, "is": 0.0}[app]
    assert abs(value - ref) <= tol * abs(ref)
    assert ref == {"cg": 8.5971775078648, "ep": -3.247834652034740e+3, "is": 51.0}[app]
    assert float(r["runtime_s"]) > 0


@pytest.mark.parametrize("np_", [1, 2])
@pytest.mark.parametrize("app", APPS)
def test_perturbed_run_fails_verification(app: str, np_: int) -> None:
    """--inject-fault changes one matrix entry (CG), one received key (IS), sx by 1 (EP): exit 1."""
    cp = mpirun(np_, ["--inject-fault"], prog=f"latscope-{app}")
    assert cp.returncode == 1, cp.stdout + cp.stderr
    r = result(cp)
    assert r["verification"] == "failed" and r["value"] != r["reference"]


def test_json_form() -> None:
    cp = mpirun(2, ["--json", "--class", "S"], prog="latscope-is")
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.strip().splitlines()
    assert len(lines) == 1
    d = json.loads(lines[0])
    assert d == {**d, "kind": "latscope-miniapp", "app": "is", "class": "S", "np": 2, "iters": 10,
                 "verification": "passed", "value": 51, "reference": 51}
    assert isinstance(d["runtime_s"], float)


def test_cg_other_iteration_count_checks_against_a_serial_run() -> None:
    """NPB's zeta holds for 15 iterations only; with --iters 2 the reference is rank 0's serial run."""
    cp = mpirun(2, ["--iters", "2"], prog="latscope-cg")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    r = result(cp)
    assert float(r["reference"]) != 8.5971775078648
    assert abs(float(r["value"]) - float(r["reference"])) <= 1e-10 * float(r["reference"])


BAD = [
    ("cg", ["--class", "X"], "--class X: unknown class; allowed: S, W, A"),
    ("cg", ["--iters", "0"], "--iters 0: must be an integer from 1 to 1000000"),
    ("cg", ["--iters", "two"], "--iters two"),
    ("is", ["--iters", "11"], "--iters 11"),
    ("ep", ["--iters", "3"], "--iters 3: ep has no iteration loop"),
    ("ep", ["--bogus"], "unknown argument '--bogus'"),
    ("is", ["--class"], "--class: needs a value"),
]


@pytest.mark.parametrize("np_", [2, 3])
@pytest.mark.parametrize("app,args,msg", BAD)
def test_bad_arguments_exit_2_on_every_rank(app: str, args: list[str], msg: str, np_: int) -> None:
    """Every rank reads the same command line and stops with 2; one message (rank 0), no hang."""
    cp = mpirun(np_, args, prog=f"latscope-{app}", timeout=60)
    assert cp.returncode == 2, cp.stdout + cp.stderr
    assert msg in cp.stderr and cp.stderr.count(f"latscope-{app}:") == 1
    assert "latscope-miniapp" not in cp.stdout


def test_every_registered_app_describes_itself() -> None:
    """The registry's rows and the programs agree: every row's program is built and has the row's
    study class (classes come from the program)."""
    for app in miniapps.REGISTRY:
        d = miniapps.describe(app)
        assert d.built and app.study_class in d.classes, (app, d)
        if app.name not in APPS:
            continue
        assert d.classes[0] == d.default_class == "S"
        assert (d.iters is None) == (app.name == "ep")
        cp = subprocess.run([str(program(app.program)), "--help"], capture_output=True, text=True, timeout=60)
        assert cp.returncode == 0 and "--class" in cp.stdout


def latscope(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "latscope.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_apps_list_and_run() -> None:
    cp = latscope("apps", "list")
    assert cp.returncode == 0, cp.stderr
    for app in APPS:
        assert any(ln.split()[:2] == [app, f"latscope-{app}"] for ln in cp.stdout.splitlines()), cp.stdout
    cp = latscope("apps", "run", "ep", "--np", "2", "--class", "S")
    assert cp.returncode == 0, cp.stderr
    assert result(cp)["verification"] == "passed"
    cp = latscope("apps", "run", "nosuch")
    assert cp.returncode == 2 and "unknown app 'nosuch'; known: " in cp.stderr and "Traceback" not in cp.stderr
    cp = latscope("apps", "run", "is", "--iters", "11")   # the program's own exit 2 comes through
    assert cp.returncode == 2 and "--iters 11" in cp.stderr
