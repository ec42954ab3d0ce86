"""Mini-apps LU, FT and MG (docs/miniapps.md): verification at np 1..4 with the
same bits at every np, the serial rerun behind --iters, the fault flag failing verification
(exit 1), bad arguments and disallowed np (exit 2, one line from rank 0, no hang). Class S
throughout: each launch takes well under a second here."""
from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from conftest import NPS, mpirun

APPS = ["lu", "ft", "mg"]


def run(np_: int, app: str, *args: str) -> subprocess.CompletedProcess[str]:
    return mpirun(np_, list(args), prog=f"latscope-{app}", timeout=120)


def result(cp: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = cp.stdout.splitlines()
    assert len(lines) == 1, cp.stdout    # exactly one result line, from rank 0
    rec: dict[str, Any] = json.loads(lines[0])
    return rec


@pytest.mark.parametrize("app", APPS)
def test_verifies_at_np_1_to_4_with_the_same_bits(app: str) -> None:
    """Every decomposition computes every value with the same operations in the same order, and
    the verified quantity is summed in a fixed order: the printed value (15 digits) is the same
    at every np, and equals the stored serial reference (LU, MG) or NPB's published checksum
    within NPB's 1e-12 (FT)."""
    values = set()
    for np_ in NPS:
        cp = run(np_, app, "--json")
        assert cp.returncode == 0, (np_, cp.stdout, cp.stderr)
        r = result(cp)
        assert (r["kind"], r["app"], r["class"], r["np"], r["verification"]) == (
            "latscope-miniapp", app, "S", np_, "passed")
        assert r["runtime_s"] > 0
        if app == "ft":
            assert r["iters"] == 6
            assert abs(r["value"] - r["reference"]) <= 1e-12 * abs(r["reference"])
        else:
            assert r["value"] == r["reference"]
        values.add(r["value"])
    assert len(values) == 1, values


@pytest.mark.parametrize("app, np_, iters", [("lu", 3, "7"), ("lu", 4, "5"), ("mg", 3, "4"), ("ft", 3, "2")])
def test_iters_verifies_against_a_rerun_or_the_step_s_reference(app: str, np_: int, iters: str) -> None:
    """With --iters, LU and MG compare with rank 0's serial rerun of the same iterations (LU value
    by value, bitwise); FT with NPB's checksum of that step."""
    cp = run(np_, app, "--iters", iters, "--json")
    assert cp.returncode == 0, cp.stderr
    r = result(cp)
    assert r["verification"] == "passed" and r["iters"] == int(iters)
    default = result(run(1, app, "--json"))["value"]
    assert r["value"] != default           # a different computation, not the class's
    if app != "ft":
        assert r["value"] == r["reference"]


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("np_", [1, 3])
def test_injected_fault_fails_verification(app: str, np_: int) -> None:
    cp = run(np_, app, "--inject-fault", "--json")
    assert cp.returncode == 1, (cp.stdout, cp.stderr)
    r = result(cp)
    assert r["verification"] == "failed"
    assert r["value"] != r["reference"]


def test_lu_fault_found_by_the_serial_rerun() -> None:
    cp = run(2, "lu", "--iters", "5", "--inject-fault")
    assert cp.returncode == 1
    assert "verification=failed" in cp.stdout
    assert "values differ from the serial run" in cp.stderr


@pytest.mark.parametrize("app, args, needle", [
    ("lu", ["--class", "Q"], "--class Q: unknown class; allowed: S, W, A"),
    ("ft", ["--iters", "7"], "--iters 7: NPB's published checksums cover 6 time steps; allowed: 1 to 6"),
    ("mg", ["--iters", "0"], "--iters 0: must be an integer from 1"),
    ("mg", ["--cycles", "3"], "unknown argument '--cycles'"),
])
def test_bad_arguments_exit_2_naming_the_value(app: str, args: list[str], needle: str) -> None:
    cp = run(2, app, *args)
    assert cp.returncode == 2, (cp.returncode, cp.stderr)
    assert cp.stdout == ""
    assert cp.stderr.count(needle) == 1, cp.stderr   # rank 0 says it once; the other ranks agree quietly


@pytest.mark.parametrize("app, np_, cls, needle", [
    ("mg", 32, "S", "np 32: class S has 31 interior planes to split; allowed: 1 to 31 ranks"),
    ("ft", 33, "W", "np 33: class W (128 x 128 x 32) has 32 planes to split; allowed: 1 to 32 ranks"),
    ("lu", 37, "S", "np 37: its 37 x 1 process grid has more ranks in x than class S has points (32)"),
])
def test_np_the_kernel_cannot_split_exits_2_on_every_rank(app: str, np_: int, cls: str, needle: str) -> None:
    """Decided from the command line and np alone, identically on every rank, before any
    communication: the many ranks all exit 2 (they leave right after MPI_Init: about 0.5 s)."""
    cp = run(np_, app, "--class", cls)
    assert cp.returncode == 2, (cp.returncode, cp.stderr)
    assert cp.stdout == ""
    assert cp.stderr.count(needle) == 1, cp.stderr


@pytest.mark.parametrize("app, np_, args", [
    ("ft", 12, ["--class", "W", "--iters", "2"]),   # zb = 3: rank 11 owns no z plane, rank 10 two
    ("mg", 12, []),                                  # coarse levels: most ranks own no plane
    ("lu", 9, ["--iters", "3"]),                     # a 3 x 3 grid: rank 4 has all four neighbours
])
def test_uneven_and_empty_blocks(app: str, np_: int, args: list[str]) -> None:
    """Decompositions np 1..4 do not reach: a rank with nothing to own (FT's padded all-to-all
    blocks, MG's coarse levels) and LU's interior rank. Oversubscribed, but about 0.5 s each."""
    cp = run(np_, app, *args, "--json")
    assert cp.returncode == 0, cp.stderr
    r = result(cp)
    assert r["verification"] == "passed" and r["np"] == np_
    if app != "ft":
        assert r["value"] == r["reference"]
