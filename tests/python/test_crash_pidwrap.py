"""A launch whose ranks' PIDs would wrap around kernel.pid_max: the bundled MPICH dies with
SIGSEGV inside MPI_Init there (exit 11 or 139 from mpiexec, nothing on stderr), so the launcher
lets the PIDs wrap first (latscope.run.skip_pid_wrap). Writing /proc/sys/kernel/ns_last_pid
needs root, as the CI runs."""
from __future__ import annotations

from pathlib import Path

from conftest import mpirun

LAST = Path("/proc/sys/kernel/ns_last_pid")


def test_launch_across_pid_wrap() -> None:
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    # without skip_pid_wrap, np 4 crashed at 2 to 4 below the wrap point of mpiexec's PID (its
    # ranks then straddle it); the launcher's own `mpiexec --version` spends one or two more
    for k in range(4, 12):
        LAST.write_text(str(pid_max - k))
        cp = mpirun(4, ["--version"], timeout=60)
        assert cp.returncode == 0, (k, cp.returncode, cp.stdout[-400:], cp.stderr)
        assert cp.stdout.startswith("latscope-bench "), (k, cp.stdout)
