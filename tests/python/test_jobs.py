"""Every launch is a job latscope owns: a signal to latscope or its --timeout ends the whole job
(launcher, hydra proxy, ranks), keeps the finished points, says so in one line, and leaves no
process and no /dev/shm segment of the job behind (latscope/jobs/job.py)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from latscope.jobs import procs

LATSCOPE = str(Path(sys.executable).with_name("latscope"))
# long enough that a signal always lands while points are still being measured
LONG = ["--sizes", "0,1:4M:x2", "--min-reps", "3000", "--max-reps", "3000"]
# the timeout test needs a run that outlasts its 6 s on an idle machine too (LONG took about 4 s there)
LONGER = ["--sizes", "0,1:4M:x2", "--min-reps", "12000", "--max-reps", "12000"]


def _start(tmp: Path, args: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, LATSCOPE_STATE_DIR=str(tmp / "state"))
    return subprocess.Popen([LATSCOPE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp)


def _record(tmp: Path, ranks: int, deadline_s: float = 60) -> dict:
    """The job's record once its ranks and their segments are in it (the job is then running)."""
    t_end = time.monotonic() + deadline_s
    while time.monotonic() < t_end:
        for f in (tmp / "state").glob("*.json"):
            try:
                rec = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            bench = [p for p in rec["procs"] if _comm(p[0]) == "latscope-bench"]
            if len(bench) == ranks and rec["segments"] and (tmp / "pp.jsonl").exists():
                return rec
        time.sleep(0.1)
    raise AssertionError(f"no running job of {ranks} ranks within {deadline_s} s")


def _first_point(path: Path, deadline_s: float = 60) -> None:
    t_end = time.monotonic() + deadline_s
    while time.monotonic() < t_end:
        if '"type":"point"' in path.read_text():
            return
        time.sleep(0.1)
    raise AssertionError(f"no point in {path} within {deadline_s} s")


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _survivors(rec: dict) -> list[tuple[int, str]]:
    return [(p[0], _comm(p[0])) for p in rec["procs"] if procs.alive(procs.Proc(p[0], p[1]))]


def _segments_left(rec: dict) -> list[str]:
    return [s for s in rec["segments"] if Path("/dev/shm", s).exists()]


@pytest.mark.parametrize("np_", [2, 4])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_ends_whole_job(tmp_path: Path, np_: int, sig: signal.Signals) -> None:
    proc = _start(tmp_path, ["bench", "p2p", "--np", str(np_), *LONG, "-o", "pp.jsonl"])
    try:
        rec = _record(tmp_path, np_)
        # the job is a tree, not one group: hydra's proxy and each rank call setsid
        kinds = sorted(_comm(p[0]) for p in rec["procs"])
        assert kinds.count("latscope-bench") == np_ and "mpiexec" in kinds and "hydra_pmi_proxy" in kinds, kinds
        sessions = {os.getsid(p[0]) for p in rec["procs"] if _comm(p[0])}
        assert len(sessions) > 1, sessions
        _first_point(tmp_path / "pp.jsonl")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    m = re.search(rf"latscope: stopped by {sig.name} after (\d+) of (\d+) points?; (results kept in pp.jsonl|"
                  r"no point finished)", err)
    assert m, err
    done = int(m.group(1))
    kept = [ln for ln in (tmp_path / "pp.jsonl").read_text().splitlines() if '"type":"point"' in ln]
    assert len(kept) == done
    assert "BAD TERMINATION" not in out + err and "YOU CAN IGNORE" not in out + err, out + err
    assert err.strip().splitlines()[-1] == m.group(0), err
    assert _survivors(rec) == []
    assert _segments_left(rec) == []
    assert list((tmp_path / "state").glob("*.json")) == []   # the record went with the job


def test_timeout_ends_whole_job(tmp_path: Path) -> None:
    proc = _start(tmp_path, ["bench", "p2p", "--np", "2", *LONGER, "-o", "pp.jsonl", "--timeout", "6"])
    rec = _record(tmp_path, 2)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 124, err
    assert re.search(r"latscope: timed out after 6 s, with \d+( of \d+)? points?; ", err), err
    assert "internal error" not in err and "TimeoutExpired" not in err
    assert _survivors(rec) == [] and _segments_left(rec) == []


def test_killed_rank_banner_summarised_and_segments_removed(tmp_path: Path) -> None:
    """A rank killed under the job (as the OOM killer would): MPICH's banner becomes one line, and
    the segments the dead rank left are removed once the job has ended."""
    proc = _start(tmp_path, ["bench", "p2p", "--np", "2", *LONG, "-o", "pp.jsonl"])
    rec = _record(tmp_path, 2)
    rank = next(p[0] for p in rec["procs"] if _comm(p[0]) == "latscope-bench")
    os.kill(rank, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "BAD TERMINATION" not in out + err and "YOU CAN IGNORE" not in out + err, out + err
    assert re.search(rf"latscope: mpiexec: rank process {rank} on \S+ exited with code 9", err), err
    assert _survivors(rec) == [] and _segments_left(rec) == []


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_bad_timeout_refused(value: str) -> None:
    cp = subprocess.run([LATSCOPE, "bench", "p2p", "--np", "2", "--timeout", value], capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert f"--timeout: '{value}': must be a positive number of seconds" in cp.stderr, cp.stderr
    assert cp.stderr.count("error:") == 1 and "error:" in cp.stderr.strip().splitlines()[-1], cp.stderr


def _clean(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LATSCOPE_STATE_DIR=str(tmp / "state"))
    return subprocess.run([LATSCOPE, "clean", *extra], env=env, capture_output=True, text=True, timeout=60)


def test_clean_ends_what_a_killed_latscope_left(tmp_path: Path) -> None:
    """latscope killed with SIGKILL runs no handler: its job goes on, orphaned. `latscope clean`
    leaves a live job alone, and ends the dead one's processes and removes its segments."""
    live = _start(tmp_path, ["bench", "p2p", "--np", "2", *LONG, "-o", "pp.jsonl"])
    try:
        live_rec = _record(tmp_path, 2)
        cp = _clean(tmp_path)
        assert cp.returncode == 0, cp.stderr
        assert f"live job of latscope pid {live.pid}" in cp.stdout, cp.stdout
        assert len(_survivors(live_rec)) == len(live_rec["procs"])   # untouched
        assert _segments_left(live_rec) == [s for s in live_rec["segments"] if not s.startswith("mpich_shar_tmp")]
        live.kill()   # SIGKILL: the job is orphaned
        live.wait()
        assert _survivors(live_rec), "the orphaned job should still run until cleaned"
        time.sleep(0.5)
        dry = _clean(tmp_path, "--dry-run")
        assert f"dead job of latscope pid {live.pid}" in dry.stdout and "would end" in dry.stdout, dry.stdout
        assert _survivors(live_rec)
        cp = _clean(tmp_path)
        assert cp.returncode == 0, cp.stderr
        assert f"dead job of latscope pid {live.pid}" in cp.stdout and "ended" in cp.stdout, cp.stdout
        t_end = time.monotonic() + 10
        while _survivors(live_rec) and time.monotonic() < t_end:
            time.sleep(0.1)
        assert _survivors(live_rec) == []
        _clean(tmp_path)   # the dead ranks' segments, once nothing holds them
        assert _segments_left(live_rec) == []
        assert list((tmp_path / "state").glob("*.json")) == []
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()


def test_signal_during_launches_keeps_points_and_removes_temporary_files(tmp_path: Path) -> None:
    """--launches N gathers its launches in a temporary directory: a SIGTERM keeps what the
    launches measured in the user's file and removes the directory (and the job's segments)."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = dict(os.environ, LATSCOPE_STATE_DIR=str(tmp_path / "state"), TMPDIR=str(tmpdir))
    proc = subprocess.Popen([LATSCOPE, "bench", "p2p", "--np", "2", *LONG, "--launches", "3", "-o", "pp.jsonl"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        t_end = time.monotonic() + 60
        rec = None
        while time.monotonic() < t_end and rec is None:
            for f in (tmp_path / "state").glob("*.json"):
                parts = list(tmpdir.glob("latscope-launches-*/launch0.jsonl"))
                try:
                    r = json.loads(f.read_text())
                except (OSError, ValueError):
                    continue
                if parts and '"type":"point"' in parts[0].read_text() and r["segments"]:
                    rec = r
            time.sleep(0.1)
        assert rec is not None, "no point measured within 60 s"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    m = re.search(r"latscope: stopped by SIGTERM in launch 1 of 3, after (\d+) points?; results kept in pp.jsonl", err)
    assert m, err
    kept = [json.loads(ln) for ln in (tmp_path / "pp.jsonl").read_text().splitlines()]
    assert sum(r["type"] == "point" for r in kept) == int(m.group(1)) >= 1
    assert all(r["launch"] == 0 for r in kept)
    assert list(tmpdir.iterdir()) == []
    assert _survivors(rec) == [] and _segments_left(rec) == []


def test_signal_ends_inject_run_command(tmp_path: Path) -> None:
    """`latscope inject run --np 2 -- PROGRAM`: the user's program under mpiexec is a job too."""
    table = tmp_path / "ln.tbl"
    cp = subprocess.run([LATSCOPE, "tables", "make", "lognormal", "--mean", "10us", "--sd", "5us", "-o", str(table)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    ring = Path(__file__).resolve().parents[2] / "build" / "bin" / "example-ring"
    env = dict(os.environ, LATSCOPE_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.Popen([LATSCOPE, "inject", "run", "--table", str(table), "--seed", "1", "--np", "2", "--",
                             str(ring), "--rounds", "1000000"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        t_end = time.monotonic() + 60
        rec = None
        while time.monotonic() < t_end and rec is None:
            for f in (tmp_path / "state").glob("*.json"):
                try:
                    r = json.loads(f.read_text())
                except (OSError, ValueError):
                    continue
                if sum(_comm(p[0]) == "example-ring" for p in r["procs"]) == 2 and r["segments"]:
                    rec = r
            time.sleep(0.1)
        assert rec is not None
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "latscope: stopped by SIGINT; the command and its ranks were ended", err
    assert "BAD TERMINATION" not in out + err
    assert _survivors(rec) == [] and _segments_left(rec) == []
