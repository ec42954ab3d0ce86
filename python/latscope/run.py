"""Launching latscope's C programs under mpiexec (the bundled MPICH by default, any MPI the user
points at, or the user's own launcher line such as 'srun -N 4 -n 64')."""
from __future__ import annotations

import argparse
import functools
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Where `pip install .` puts the C parts (pyproject.toml: wheel.install-dir), in the build tree's
# layout: bin/latscope-bench, bin/latscope-congest, lib/liblatscope_inject.so.
NATIVE = Path(__file__).resolve().parent / "_native"


class LaunchError(RuntimeError):
    """A program or MPI that cannot be found or started (message says which and where)."""


def add_launcher_args(p: argparse.ArgumentParser) -> None:
    """The options of every command that starts ranks (`latscope bench`, `latscope characterize`)."""
    g = p.add_argument_group("launching")
    g.add_argument("--np", type=int, default=None, help="ranks on this machine (default: 2)")
    g.add_argument("--launcher", help="your own launcher line, e.g. 'srun -N 4 -n 64' (replaces mpiexec -n)")
    g.add_argument("--hostfile", help="hostfile for mpiexec")
    g.add_argument("--timeout", type=float, default=None, help="kill the run after this many seconds")


def build_dir() -> Path:
    """LATSCOPE_BUILD_DIR if set; else the installed package's own programs (pip install .);
    else the checkout's build/ (make build, with the package installed editable)."""
    if os.environ.get("LATSCOPE_BUILD_DIR"):
        return Path(os.environ["LATSCOPE_BUILD_DIR"])
    if (NATIVE / "bin").is_dir():
        return NATIVE
    return REPO / "build"


def missing(p: Path) -> LaunchError:
    """The error for a program or library that is not where build_dir() says."""
    how = "reinstall latscope (pip install .)" if build_dir() == NATIVE else "build first (make build)"
    return LaunchError(f"{p} does not exist: {how}, or set LATSCOPE_BUILD_DIR")


def program(name: str) -> Path:
    """Path of a built latscope executable (e.g. 'latscope-bench')."""
    p = build_dir() / "bin" / name
    if not p.exists():
        raise missing(p)
    return p


def library(name: str) -> Path:
    """Path of a built latscope library to preload (e.g. 'liblatscope_inject.so'), resolved."""
    p = build_dir() / "lib" / name
    if not p.exists():
        raise missing(p)
    return p.resolve()


def user_command(command: list[str], usage: str, np_: int | None) -> list[str]:
    """The user's command after `--` (inject run, trace run); ValueError naming what is wrong."""
    cmd = list(command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise ValueError(f"no command: {usage}")
    if np_ is not None and np_ < 1:
        raise ValueError(f"--np {np_}: must be a positive number of ranks")
    return cmd


def mpiexec_path() -> str:
    for var in ("LATSCOPE_MPIEXEC", "MPIEXEC"):
        if os.environ.get(var):
            return os.environ[var]
    venv = Path(sys.prefix) / "bin" / "mpiexec"
    if venv.exists():
        return str(venv)
    found = shutil.which("mpiexec")
    if not found:
        raise LaunchError("no mpiexec: install the bundled MPI (make setup) or set MPIEXEC=/path/to/mpiexec")
    return found


@functools.lru_cache(maxsize=8)
def mpi_flavor(mpiexec: str) -> str:
    """'openmpi', 'mpich' or 'unknown', from the launcher's --version text."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
        text = out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if "Open MPI" in text or "OpenRTE" in text or "prterun" in text.lower():
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text or "hydra" in text:
        return "mpich"
    return "unknown"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass
class Launch:
    """How to start np ranks: the argv prefix and the environment."""

    prefix: list[str]
    env: dict[str, str]
    warnings: list[str] = field(default_factory=list)


def launch(np_: int | None, launcher: str | None = None, hostfile: str | None = None,
           pin: bool = False) -> Launch:
    """Build the launch line. A user launcher line is used as given (its own -n); otherwise
    mpiexec -n np with settings that keep the MPI on shared memory and, when more ranks than
    cores, make waiting ranks yield (oversubscription with busy polling is pathological:
    README.md "Running on small machines"). pin: each rank bound to a core of its own when
    every rank has one, so that two ranks never take turns on one core while another process
    holds the other (their round trips then each pay two context switches: 4.9 us for a 1.2 us
    half round trip, seen beside a CPU-bound process)."""
    env = dict(os.environ)
    warnings: list[str] = []
    if launcher:
        return Launch(shlex.split(launcher), env, warnings)
    if np_ is None or np_ < 1:
        raise ValueError(f"--np {np_}: must be a positive number of ranks")
    mpiexec = mpiexec_path()
    flavor = mpi_flavor(mpiexec)
    prefix = [mpiexec]
    over = hostfile is None and np_ > cores()
    if over:
        warnings.append(f"oversubscribed: {np_} ranks on {cores()} cores; waiting ranks are set to yield, "
                        "and latencies include operating-system scheduling delays")
    if flavor == "openmpi":
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if hostfile is None:
            prefix += ["--oversubscribe"]
        if over:
            prefix += ["--mca", "mpi_yield_when_idle", "1"]
        if hostfile:
            prefix += ["--hostfile", hostfile]
        if pin and not over and hostfile is None:
            prefix += ["--bind-to", "core"]
    else:
        if hostfile is None:
            # stay on shared memory on one machine
            env.setdefault("MPIR_CVAR_CH4_NETMOD", "ofi")
            env.setdefault("FI_PROVIDER", "shm")
        if over:
            env.setdefault("MPIR_CVAR_CH4_PROGRESS_THROTTLE", "1")
        if hostfile:
            prefix += ["-f", hostfile]
        if pin and not over and hostfile is None:
            prefix += ["-bind-to", "core"]
    prefix += ["-n", str(np_)]
    skip_pid_wrap(2 * np_ + 32)
    return Launch(prefix, env, warnings)


def skip_pid_wrap(margin: int) -> None:
    """Let the launch start after the kernel's PIDs wrap, not across it. The bundled MPICH 5.0.2
    (ch4, ofi netmod with the shm provider) dies with SIGSEGV inside MPI_Init, no message, when
    the PIDs of one launch's ranks wrap around kernel.pid_max (a rank numbered below the one
    started before it): every time when /proc/sys/kernel/ns_last_pid is set a few below
    pid_max, and in the CI now and then (a busy machine with pid_max 32768 wraps every few
    thousand launches; tests/python/test_crash_pidwrap.py). When fewer than `margin` PIDs are left before the
    wrap, they are spent on short-lived processes first. Nothing to do where /proc says nothing."""
    try:
        pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
        last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    except (OSError, ValueError):
        return
    if pid_max - last > margin:
        return
    true = shutil.which("true") or "/bin/true"
    for _ in range(margin + 16):   # bounded: other processes spend PIDs too
        try:
            subprocess.run([true], check=False)
            now = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
        except (OSError, ValueError):
            return
        if now < last:   # wrapped
            return
        last = now


def run_program(name: str, args: list[str], np_: int | None, launcher: str | None = None,
                hostfile: str | None = None, timeout: float | None = None, quiet: bool = False,
                capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Run a latscope program under the launcher; stderr passes through (progress)."""
    ln = launch(np_, launcher, hostfile)
    if not quiet:
        for w in ln.warnings:
            print(f"latscope: warning: {w}", file=sys.stderr)
    cmd = ln.prefix + [str(program(name))] + list(args)
    return subprocess.run(cmd, env=ln.env, timeout=timeout, text=True,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None)
