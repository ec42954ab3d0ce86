"""Shared fixtures: run latscope-bench under mpiexec at a given np with a timeout (no test may
hang), using the same launch settings as the CLI."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

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


# Bad values of what every measuring command of latscope-bench shares (the driver's loop options:
# sizes, repetitions, sync, timer, output; and the argument grammar), each with what its message
# names: every command rejects them alike.
LOOP_BAD = [
    (["--sizes", "2G"], "'2G'"),
    (["--sizes", "8,abc"], "'abc'"),
    (["--min-reps", "50", "--max-reps", "10"], "--max-reps 10"),
    (["--sync", "psychic"], "'psychic'"),
    (["--timer", "sundial"], "'sundial'"),
    (["--output", "/nonexistent-dir/r.jsonl"], "/nonexistent-dir/r.jsonl"),
    (["--bogus"], "'--bogus'"),
    (["stray"], "'stray'"),
]


def assert_rejected(cp: subprocess.CompletedProcess, args: list[str], needle: str, or_else: str | None = None) -> None:
    """A bad value under mpiexec: exit 2 on every rank, a message naming it (needle; or or_else)
    printed once (by rank 0), nothing on stdout: no output, no hang."""
    assert cp.returncode == 2, (args, cp.returncode, cp.stderr)
    assert needle in cp.stderr or (or_else is not None and or_else in cp.stderr), (args, cp.stderr)
    assert cp.stderr.count("error:") == 1, (args, cp.stderr)
    assert cp.stdout == "", (args, cp.stdout)


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


# LogGP parameters as `latscope logp` fitted them here once (L clamped to 0; the raw fit's L,
# source.L_raw_s, below 0): the tests of `latscope barrier compare` predict from them.
LOGGP_PARAMS = {"schema": "latscope.params/1", "model": "loggp",
                "params": {"L_s": 0.0, "o_s_s": 259e-9, "o_r_s": 708e-9, "g_s": 115e-9, "G_s_per_byte": 0.0},
                "source": {"L_raw_s": -301e-9}}


def write_params(path: Path, doc: dict[str, Any] = LOGGP_PARAMS) -> Path:
    path.write_text(json.dumps(doc))
    return path


def write_records(path: Path, recs: list[dict[str, Any]]) -> Path:
    """A results file (JSON Lines) of the records given, the metadata first."""
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def write_barrier_results(path: Path, ranks: int, medians: dict[str, float], meta: dict[str, Any] | None = None,
                          extra: dict[str, dict[str, Any]] | None = None) -> Path:
    """A results file as `latscope-bench coll --op barrier` writes it: one point per algorithm with
    the median given, the same on every rank (local.per_rank); meta and extra (per algorithm) add
    or replace fields of the metadata and of the points."""
    recs = [{"type": "meta", "schema": "latscope.results/2", "ranks": ranks, "bench": "coll",
             "command_line": ["latscope-bench", "coll", "--dummy-work", "30us"], **(meta or {})}]
    for alg, m in medians.items():
        recs.append({"type": "point", "bench": "coll", "op": "barrier", "alg": alg, "size_bytes": 0, "n": 10,
                     "median_s": m, "local": {"avg_s": m, "per_rank": [{"median_s": m}] * ranks},
                     **(extra or {}).get(alg, {})})
    return write_records(path, recs)
