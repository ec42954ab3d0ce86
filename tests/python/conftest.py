"""Shared fixtures: run latscope-bench under mpiexec at a given np with a timeout (no test may
hang), using the same launch settings as the CLI."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from latscope.run import launch, program

NPS = [1, 2, 3, 4]
TIMEOUT = 120


def mpirun(np_: int, args: list[str], timeout: float = TIMEOUT, prog: str = "latscope-bench") -> subprocess.CompletedProcess:
    ln = launch(np_)
    return subprocess.run(ln.prefix + [str(program(prog))] + args, env=ln.env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def run_mpi():
    return mpirun


@pytest.fixture(scope="session")
def golden() -> Path:
    return Path(__file__).resolve().parents[1] / "golden"
