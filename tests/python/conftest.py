"""Shared fixtures: run latscope-bench under mpiexec at a given np with a timeout (no test may
hang), using the same launch settings as the CLI."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
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
    minimum RTT of 4 ms); pinned, the minima of 6 launch pairs agreed within 0.7 us. Tests that
    start more ranks than 4 x the cores do it on purpose (decompositions np 1..4 do not reach):
    oversubscribe=True, as --oversubscribe on the command line."""
    ln = launch(np_, oversubscribe=True)
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


# Shared-memory segments the MPIs leave in /dev/shm when a rank dies without MPI_Finalize (a test's
# SIGKILL, MPI_Abort after bad input): libfabric's are named <pid>:<n>:<n>[:<n>] after their owner;
# MPICH's (mpich_shm_<hash>_<n>, mpich_shar_tmp<random>) and Open MPI's (sm_segment.*, vader_segment.*)
# name no process, so they count as stale when no live process holds them open or mapped.
_LIBFABRIC_SHM = re.compile(r"(\d+):\d+:\d+(?::\d+)?")
_NAMELESS_SHM = re.compile(r"mpich_shm_\w+|mpich_shar_tmp\w+|(?:sm|vader)_segment\..+")


def _shm_in_use() -> set[str]:
    """Names of /dev/shm files that some live process has open (fd) or mapped (maps)."""
    used: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    t = os.readlink(fd)
                    if t.startswith("/dev/shm/"):
                        used.add(t[len("/dev/shm/"):].removesuffix(" (deleted)"))
            for line in (proc / "maps").read_text().splitlines():
                i = line.find("/dev/shm/")
                if i >= 0:
                    used.add(line[i + len("/dev/shm/"):].removesuffix(" (deleted)"))
        except OSError:   # gone, or not ours to read
            continue
    return used


def clean_stale_shm(min_age_s: float = 30.0, pid_named_only: bool = False) -> int:
    """Remove the MPIs' /dev/shm segments whose ranks are gone. A SIGKILLed or aborted rank leaves its
    segment behind; a later rank that reuses the pid (libfabric) or the name attaches to the stale
    one and MPI_Init fails ('Message truncated'), and 22 of them were left by one `make test`. A
    nameless segment younger than min_age_s is kept: its job may be starting (created, not yet
    mapped). pid_named_only: libfabric's segments alone (a /proc lookup each, cheap enough to run
    after every test). Returns the number removed."""
    removed = 0
    shm = Path("/dev/shm")
    if not shm.is_dir():
        return 0
    used: set[str] | None = None
    now = time.time()
    for f in shm.iterdir():
        m = _LIBFABRIC_SHM.fullmatch(f.name)
        if m:
            stale = not Path(f"/proc/{m.group(1)}").exists()
        elif not pid_named_only and _NAMELESS_SHM.fullmatch(f.name):
            with contextlib.suppress(OSError):
                if now - f.stat().st_mtime < min_age_s:
                    continue
            if used is None:
                used = _shm_in_use()
            stale = f.name not in used
        else:
            continue
        if stale:
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


@pytest.fixture(autouse=True)
def _stale_pid_shm():
    # pids wrap here at 32768 (kernel.pid_max), so within one suite a rank can get the pid of a rank
    # a test killed before: its libfabric segment must be gone by then, not only at the session's end
    yield
    clean_stale_shm(pid_named_only=True)


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


class _CliTimeout(BaseException):
    """Raised by SIGALRM inside run_cli; a BaseException so that cli.main's catch-all (one line,
    exit 1) does not swallow it, and subprocess.run kills the program it waits for on the way."""


def run_cli(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """`latscope ARGV` in process, through latscope.cli.main as the console script calls it: the
    same code path without a new interpreter and its imports (1 to 2 s a command). As
    subprocess.run(capture_output=True): the exit status, and stdout and stderr, the command's
    own and those of the programs it starts (file descriptors 1 and 2, captured too). env
    replaces os.environ and cwd the working directory for the call; both are restored. Past
    timeout seconds it raises subprocess.TimeoutExpired, as subprocess.run would: no test hangs."""
    from latscope import cli

    def expire(signum: int, frame: object) -> None:
        raise _CliTimeout()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    py_out, py_err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryFile("w+") as fd_out, tempfile.TemporaryFile("w+") as fd_err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved_fds = os.dup(1), os.dup(2)
        old_handler = signal.signal(signal.SIGALRM, expire)
        try:
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            if cwd is not None:
                os.chdir(cwd)
            os.dup2(fd_out.fileno(), 1)
            os.dup2(fd_err.fileno(), 2)
            signal.setitimer(signal.ITIMER_REAL, timeout)
            with contextlib.redirect_stdout(py_out), contextlib.redirect_stderr(py_err):
                try:
                    rc = cli.main(list(argv))
                except SystemExit as e:   # argparse's own exit (usage errors, --help)
                    rc = e.code if isinstance(e.code, int) else 1
        except _CliTimeout:
            raise subprocess.TimeoutExpired(["latscope", *argv], timeout) from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            os.dup2(saved_fds[0], 1)
            os.dup2(saved_fds[1], 2)
            os.close(saved_fds[0])
            os.close(saved_fds[1])
            os.chdir(saved_cwd)
            if env is not None:
                os.environ.clear()
                os.environ.update(saved_env)
        fd_out.seek(0)
        fd_err.seek(0)
        return subprocess.CompletedProcess(["latscope", *argv], rc, py_out.getvalue() + fd_out.read(),
                                           py_err.getvalue() + fd_err.read())


@pytest.fixture(scope="session")
def characterized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`latscope characterize --quick --np 2`, in process (latscope.cli.main), once a session: its
    output directory and what it printed. test_characterize.py checks its files, report and
    summary; test_json_outputs.py that every JSON file it wrote is strict (each ran its own, about
    18 s and 8 s)."""
    from latscope import cli
    out = tmp_path_factory.mktemp("characterize") / "demo"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        rc = cli.main(["characterize", "--quick", "--np", "2", "--out", str(out)])
    assert rc == 0, printed.getvalue()[-3000:]
    return out, printed.getvalue()
