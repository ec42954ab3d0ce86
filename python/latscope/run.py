"""Launching latscope's C programs under mpiexec (the bundled MPICH by default, any MPI the user
points at, or the user's own launcher line such as 'srun -N 4 -n 64')."""
from __future__ import annotations

import argparse
import functools
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from latscope.jobs.job import JobStopped, run_job

REPO = Path(__file__).resolve().parents[2]
# Where `pip install .` puts the C parts (pyproject.toml: wheel.install-dir), in the build tree's
# layout: bin/latscope-bench, bin/latscope-congest, lib/liblatscope_inject.so.
NATIVE = Path(__file__).resolve().parent / "_native"


class LaunchError(RuntimeError):
    """A program or MPI that cannot be found or started (message says which and where)."""


def add_launcher_args(p: argparse.ArgumentParser) -> None:
    """The options of every command that starts ranks (`latscope bench`, `latscope characterize`,
    `latscope tune`, `latscope barrier bench`, `latscope coll compare`); --net is turned into a
    launcher line before the command runs (apply_net)."""
    g = p.add_argument_group("launching")
    g.add_argument("--np", type=int, default=None, help="ranks on this machine (default: 2)")
    g.add_argument("--launcher", help="your own launcher line, e.g. 'srun -N 4 -n 64' (replaces mpiexec -n)")
    g.add_argument("--hostfile", help="hostfile for mpiexec")
    g.add_argument("--net", action="store_true",
                   help="ranks on the kept emulated Ethernet cluster ('latscope cluster up'), one per node, "
                        "MPI over TCP (docs/network.md); --np: 1..nodes, default every node")
    g.add_argument("--timeout", type=timeout_seconds, default=None,
                   help="end the whole job after this many seconds (exit status 124; finished points kept)")
    g.add_argument("--oversubscribe", action="store_true",
                   help=f"allow --np beyond {OVERSUBSCRIBE_FACTOR} x the cores here (refused otherwise)")


def apply_net(args: argparse.Namespace) -> None:
    """--net: the command's ranks on the kept cluster, as a launcher line (latscope.net.launch);
    ValueError (exit 2) without a kept cluster, as non-root, or beside --launcher/--hostfile."""
    if not getattr(args, "net", False) or not hasattr(args, "launcher"):
        return
    for opt in ("launcher", "hostfile"):
        if getattr(args, opt, None):
            raise ValueError(f"--net and --{opt} {getattr(args, opt)!r}: give one (--net is a launcher line of its own)")
    from latscope.net.launch import launcher_line
    args.launcher = launcher_line(args.np)


# More ranks than this many per core is a mistake rather than a measurement: each waits a
# scheduler slice per message (README.md, "Running on small machines"); --oversubscribe allows it.
OVERSUBSCRIBE_FACTOR = 4


def timeout_seconds(text: str) -> float:
    """--timeout S: a positive, finite number of seconds (argparse type: a bad value is one line, exit 2)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"'{text}': must be a positive number of seconds, e.g. 20")
    return v


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
    # judged here, where the user stands: under mpiexec a missing program is an execvp error per rank
    exe = cmd[0]
    found = exe if os.sep in exe else shutil.which(exe)
    if found is None or not os.path.isfile(found):
        where = f" (from {os.getcwd()})" if os.sep in exe and not os.path.isabs(exe) else " (not on PATH)" \
            if os.sep not in exe else ""
        raise ValueError(f"command {exe!r}: no such program{where}")
    if not os.access(found, os.X_OK):
        raise ValueError(f"command {exe!r}: not an executable program")
    return cmd


def exec_latscope_bench() -> None:
    """The `latscope-bench` console script: the built program, found as every latscope command
    finds it (build_dir: LATSCOPE_BUILD_DIR, the installed package, the checkout's build/), run
    in this process's place, so `mpiexec -n 2 latscope-bench ...` works from any directory and the
    ranks are the C program itself."""
    try:
        exe = program("latscope-bench")
    except LaunchError as e:
        print(f"latscope-bench: error: {e}", file=sys.stderr)
        sys.exit(2)
    os.execv(str(exe), [str(exe), *sys.argv[1:]])


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


_COUNT_OPTS = ("-n", "-np", "--np", "--n", "-c", "--ntasks")


def launcher_ranks(words: list[str]) -> int | None:
    """The rank count a launcher line sets (-n 4, -np 4, -n4, --ntasks=4, -c 4), None if none."""
    for i, w in enumerate(words):
        m = re.fullmatch(r"(-n|-np|--np|--n|-c|--ntasks)=?(\d+)", w)
        if m:
            return int(m.group(2))
        if w in _COUNT_OPTS and i + 1 < len(words) and words[i + 1].isdigit():
            return int(words[i + 1])
    return None


def check_launch(np_: int | None, launcher: str | None = None, hostfile: str | None = None,
                 oversubscribe: bool = False) -> None:
    """Misuse refused before anything starts (ValueError naming the value and what is allowed):
    --np beyond OVERSUBSCRIBE_FACTOR x the cores without --oversubscribe, an --np that the
    launcher line contradicts, a hostfile that cannot be read."""
    if launcher is not None:
        try:
            words = shlex.split(launcher)
        except ValueError as e:
            raise ValueError(f"--launcher {launcher!r}: {e}") from None
        if not words:
            raise ValueError("--launcher '': give a launcher line, e.g. 'srun -n 4'")
        n = launcher_ranks(words)
        if np_ is not None and n is not None and n != np_:
            raise ValueError(f"--np {np_} and --launcher {launcher!r} (which starts {n} ranks) disagree: "
                             "give one of them, or the same count")
        return
    if np_ is None or np_ < 1:
        raise ValueError(f"--np {np_}: must be a positive number of ranks")
    if hostfile is not None:
        try:
            with open(hostfile):
                pass
        except OSError as e:
            raise ValueError(f"--hostfile {hostfile!r}: cannot be read ({e.strerror}); give a readable "
                             "file of host names") from None
    if (hostfile is None and np_ > OVERSUBSCRIBE_FACTOR * cores() and not oversubscribe
            and os.environ.get("LATSCOPE_OVERSUBSCRIBE") != "1"):
        raise ValueError(f"--np {np_}: more than {OVERSUBSCRIBE_FACTOR} x the {cores()} cores here "
                         f"(at most {OVERSUBSCRIBE_FACTOR * cores()}); add --oversubscribe to run it anyway")


def launch(np_: int | None, launcher: str | None = None, hostfile: str | None = None,
           pin: bool = False, oversubscribe: bool = False) -> Launch:
    """Build the launch line. A user launcher line is used as given (its own -n); otherwise
    mpiexec -n np with settings that keep the MPI on shared memory and, when more ranks than
    cores, make waiting ranks yield (oversubscription with busy polling is pathological:
    README.md "Running on small machines"). pin: each rank bound to a core of its own when
    every rank has one, so that two ranks never take turns on one core while another process
    holds the other (their round trips then each pay two context switches: 4.9 us for a 1.2 us
    half round trip, seen beside a CPU-bound process)."""
    env = dict(os.environ)
    warnings: list[str] = []
    check_launch(np_, launcher or None, hostfile, oversubscribe)
    if launcher:
        return Launch(shlex.split(launcher), env, warnings)
    assert np_ is not None
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


def output_of(args: list[str]) -> str | None:
    """The -o/--output value of latscope-bench arguments, None without one."""
    out = None
    for i, a in enumerate(args):
        if a in ("-o", "--output") and i + 1 < len(args):
            out = args[i + 1]
        elif a.startswith("--output="):
            out = a.split("=", 1)[1]
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            out = a[2:]
    return out


def count_points(path: str | None) -> int | None:
    """The point records in a results file, None where it cannot be read."""
    if path is None or path == "-":
        return None
    try:
        with open(path, "rb") as f:
            return sum(1 for ln in f if b'"type": "point"' in ln or b'"type":"point"' in ln)
    except OSError:
        return None


def stopped_detail(output: str | None, planned_file: str | None, sep: str = " after") -> str:
    """' after 12 of 23 points; results kept in pp.jsonl' (sep: the words before the count), or
    what of it is known."""
    done = count_points(output)
    planned = None
    if planned_file:
        try:
            planned = int(Path(planned_file).read_text().strip())
        except (OSError, ValueError):
            planned = None
    if done is None:
        return "; the whole job was ended" + ("; results went to standard output" if output == "-" else "")
    of = f" of {planned}" if planned else ""
    kept = f"; results kept in {output}" if done else f"; no point finished ({output} is empty)"
    return f"{sep} {done}{of} point{'s' if (planned or done) != 1 else ''}{kept}"


def run_program(name: str, args: list[str], np_: int | None, launcher: str | None = None,
                hostfile: str | None = None, timeout: float | None = None, quiet: bool = False,
                capture: bool = False, oversubscribe: bool = False) -> subprocess.CompletedProcess[str]:
    """Run a latscope program under the launcher as a job latscope owns (jobs/job.py); stderr
    passes through (progress), MPI's termination banners summarised. On a signal or --timeout
    it raises JobStopped, whose line says how many points finished and where they are."""
    ln = launch(np_, launcher, hostfile, oversubscribe=oversubscribe)
    if not quiet:
        for w in ln.warnings:
            print(f"latscope: warning: {w}", file=sys.stderr)
    cmd = ln.prefix + [str(program(name))] + list(args)
    env = dict(ln.env)
    fd, planned = tempfile.mkstemp(prefix="latscope-planned-")
    os.close(fd)
    env["LATSCOPE_POINTS_PLANNED_FILE"] = planned
    try:
        return run_job(cmd, env, timeout, capture=capture)
    except JobStopped as e:
        e.detail = stopped_detail(output_of(list(args)), planned, e.sep)
        raise
    finally:
        Path(planned).unlink(missing_ok=True)
