"""Shared fixtures: run latscope-bench under mpiexec at a given np with a timeout (no test may
hang), using the same launch settings as the CLI."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from latscope.run import cores, launch, mpi_flavor, mpiexec_path, program

NPS = [1, 2, 3, 4]
TIMEOUT = 120


def mpirun(np_: int, args: list[str], timeout: float = TIMEOUT, prog: str = "latscope-bench",
           bind: bool = False) -> subprocess.CompletedProcess:
    """bind: each rank pinned to a core of its own (np <= cores). For tests that compare minima of
    two launches: beside a CPU-bound process, unpinned ranks sometimes shared one core for a
    whole launch, and every repetition of a 2-rank exchange then waited a scheduler slice (a
    minimum RTT of 4 ms); pinned, the minima of 6 launch pairs agreed within 0.7 us."""
    ln = launch(np_)
    prefix = ln.prefix
    if bind:
        assert np_ <= cores(), f"bind: {np_} ranks on {cores()} cores"
        opt = "--bind-to" if mpi_flavor(mpiexec_path()) == "openmpi" else "-bind-to"
        prefix = prefix[:1] + [opt, "core"] + prefix[1:]
    return subprocess.run(prefix + [str(program(prog))] + args, env=ln.env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="session")
def golden() -> Path:
    return Path(__file__).resolve().parents[1] / "golden"


def clean_stale_shm() -> int:
    """Remove libfabric shm segments (/dev/shm/<pid>:<n>:<n>[:<n>]) whose process is gone. A SIGKILLed
    rank leaves its segment behind; a later rank that reuses the pid attaches to the stale one and
    MPI_Init fails ('Message truncated'). Returns the number removed."""
    removed = 0
    shm = Path("/dev/shm")
    if not shm.is_dir():
        return 0
    for f in shm.iterdir():
        m = re.fullmatch(r"(\d+):\d+:\d+(?::\d+)?", f.name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            try:
                f.unlink()
                removed += 1
            except OSError:
                pass
    return removed


@pytest.fixture(scope="session", autouse=True)
def _stale_shm():
    clean_stale_shm()
    yield
    clean_stale_shm()
