"""liblatscope_systime.so (docs/budget.md, "Inside the MPI call"): a plain program's write() calls
are counted exactly, the start/stop window counts only its own, and an MPI ping-pong over TCP on
loopback shows at least one send-like and one receive-like call per message, with the time inside
them above zero and below the round trip; over shared memory the same window sees no call.
Real processes, no mocks; the time bounds compare sums within one window (a preemption inside a
syscall lengthens the window as much as the syscall), never a wall-clock constant."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from latscope.run import build_dir, launch, mpi_flavor, mpiexec_path, program

TIMEOUT = 60
ITERS = 2000


@pytest.fixture(scope="module")
def lib() -> str:
    path = build_dir() / "lib" / "liblatscope_systime.so"
    # make test builds first: a missing library is a failure, never a skip
    assert path.exists(), f"{path} not built (make build)"
    return str(path)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def plain_env(lib: str, out: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")}
    env.update(LD_PRELOAD=lib, LATSCOPE_SYSTIME_OUT=str(out))
    return env


def test_plain_program_write_count(lib: str, tmp_path: Path) -> None:
    out = tmp_path / "st.jsonl"
    r = subprocess.run([str(program("systime-writes")), "1234"], env=plain_env(lib, out), capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    (rec,) = records(out)
    assert rec["format"] == "latscope.systime/1"
    assert rec["rank"] is None and rec["pid"] > 0 and rec["window"] == "process"
    assert rec["calls"]["write"]["calls"] == 1234
    assert rec["calls"]["write"]["ns"] > 0
    assert rec["send_like"]["calls"] >= 1234
    assert 1e8 < rec["tsc_hz"] < 1e11
    # the kernel time of the writes happened inside the process's lifetime
    assert rec["calls"]["write"]["ns"] < rec["span_ns"]


def test_window_counts_only_its_calls(lib: str, tmp_path: Path) -> None:
    out = tmp_path / "st.jsonl"
    env = plain_env(lib, out)
    env["PMI_RANK"] = "7"
    r = subprocess.run([str(program("systime-writes")), "3", "5", "2"], env=env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["write_calls"] == 5
    (rec,) = records(out)
    assert rec["rank"] == 7 and rec["window"] == "start-stop" and rec["windows"] == 1
    assert rec["calls"]["write"]["calls"] == 5


def test_without_interposer_window_program_says_so(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([str(program("systime-writes")), "1", "1", "1"], env=env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 3 and "not preloaded" in r.stderr


def pingpong(lib: str, out: Path, tcp: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """np 2 systime-pingpong under the interposer, over TCP on loopback or over shared memory:
    (the ranks' stdout lines, the exit records)."""
    ln = launch(2)
    env = {k: v for k, v in ln.env.items() if k != "LD_PRELOAD"}
    prefix = list(ln.prefix)
    if mpi_flavor(mpiexec_path()) == "openmpi":
        btl = "tcp,self" if tcp else "vader,self"
        prefix[1:1] = ["--mca", "pml", "ob1", "--mca", "btl", btl, "-x", "LD_PRELOAD=" + lib]
    else:
        # MPICH: every rank through the netmod (no shared-memory shortcut), libfabric's tcp provider
        env.update(MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="tcp" if tcp else "shm")
        env["MPIR_CVAR_NOLOCAL"] = "1" if tcp else "0"
        prefix[1:1] = ["-genv", "LD_PRELOAD", lib]
    env["LATSCOPE_SYSTIME_OUT"] = str(out)
    r = subprocess.run(prefix + [str(program("systime-pingpong")), str(ITERS), "20"], env=env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = sorted((json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")), key=lambda d: d["rank"])
    recs = sorted((x for x in records(out) if x["rank"] is not None), key=lambda d: d["rank"])
    assert [x["rank"] for x in lines] == [0, 1] and [x["rank"] for x in recs] == [0, 1]
    return lines, recs


def test_mpi_pingpong_over_tcp(lib: str, tmp_path: Path) -> None:
    lines, recs = pingpong(lib, tmp_path / "st.jsonl", tcp=True)
    for ln, rec in zip(lines, recs):
        # each rank sends one message and receives one per round trip
        assert ln["send_like"]["calls"] >= ITERS and ln["recv_like"]["calls"] >= ITERS
        assert rec["window"] == "start-stop" and rec["send_like"]["calls"] == ln["send_like"]["calls"]
        assert ln["send_like"]["ns"] > 0 and ln["recv_like"]["ns"] > 0
        # nothing is counted twice: time inside calls fits in the window
        assert sum(c["ns"] for c in rec["calls"].values()) <= rec["span_ns"]
    # per message (2 per round trip): the kernel time of its send and its receive is above zero
    # and below the round trip (the window's span over ITERS: the same stretch of time the sums cover)
    kernel_per_msg = sum(x["send_like"]["ns"] + x["recv_like"]["ns"] for x in lines) / (2 * ITERS)
    rtt = recs[0]["span_ns"] / ITERS
    assert 0 < kernel_per_msg < rtt, (kernel_per_msg, rtt, lines)


def test_mpi_pingpong_over_shm_makes_no_syscall(lib: str, tmp_path: Path) -> None:
    lines, _ = pingpong(lib, tmp_path / "st.jsonl", tcp=False)
    # shared memory is polled in user space: the timed loop enters none of the wrapped calls
    for ln in lines:
        assert ln["send_like"]["calls"] == 0 and ln["recv_like"]["calls"] == 0, ln
