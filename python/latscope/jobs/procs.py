"""Processes as /proc shows them. A process is (pid, start time in clock ticks since boot): a pid
alone can be reused (pid_max wraps within one test suite here), the pair cannot."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import NamedTuple

PROC = Path("/proc")
SHM = "/dev/shm/"


class Proc(NamedTuple):
    pid: int
    start: int


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of a process, None if it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'
    f = text[text.rfind(")") + 2:].split()
    return f[0], int(f[1]), int(f[19])


def of(pid: int) -> Proc | None:
    s = _stat(pid)
    return Proc(pid, s[2]) if s else None


def alive(p: Proc) -> bool:
    """The same process still runs (a zombie has ended)."""
    s = _stat(p.pid)
    return s is not None and s[2] == p.start and s[0] not in ("Z", "X")


def pids() -> list[int]:
    return [int(d.name) for d in PROC.iterdir() if d.name.isdigit()]


def _children(pid: int) -> list[int] | None:
    """The children of a process from /proc/PID/task/TID/children (None where the kernel lacks the
    file): reading a job's few processes costs far less than reading every process's stat (13 ms
    a scan on this loaded 2-core machine, a share of the cores the ranks measure on)."""
    out: list[int] = []
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return []
    for t in tasks:
        try:
            out += [int(x) for x in (t / "children").read_text().split()]
        except FileNotFoundError:
            if not (PROC / str(pid)).exists():
                return []
            return None
        except (OSError, ValueError):
            continue
    return out


def descendants(roots: set[int]) -> set[Proc]:
    """Every live process below the given pids (children, grandchildren, ...), roots included.
    MPICH's hydra proxy and its ranks each call setsid, so neither a process group nor a session
    holds a job: its tree does."""
    found: set[Proc] = set()
    stack = list(roots)
    seen: set[int] = set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        s = _stat(pid)
        if s is None or s[0] in ("Z", "X"):
            continue
        found.add(Proc(pid, s[2]))
        kids = _children(pid)
        if kids is None:
            return _descendants_by_scan(roots)
        stack += kids
    return found


def _descendants_by_scan(roots: set[int]) -> set[Proc]:
    """descendants() from every process's parent, where /proc has no children files."""
    children: dict[int, list[Proc]] = {}
    found: set[Proc] = set()
    for pid in pids():
        s = _stat(pid)
        if s is None or s[0] in ("Z", "X"):
            continue
        children.setdefault(s[1], []).append(Proc(pid, s[2]))
        if pid in roots:
            found.add(Proc(pid, s[2]))
    stack = list(roots)
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in found:
                found.add(c)
                stack.append(c.pid)
    return found


def shm_held_by(pid: int) -> set[str]:
    """Names of the /dev/shm files a process has open or mapped."""
    held: set[str] = set()
    d = PROC / str(pid)
    with contextlib.suppress(OSError):
        for fd in (d / "fd").iterdir():
            with contextlib.suppress(OSError):
                t = os.readlink(fd)
                if t.startswith(SHM):
                    held.add(t[len(SHM):].removesuffix(" (deleted)"))
    with contextlib.suppress(OSError):
        for line in (d / "maps").read_text().splitlines():
            i = line.find(SHM)
            if i >= 0:
                held.add(line[i + len(SHM):].removesuffix(" (deleted)"))
    return held


def shm_in_use() -> set[str]:
    """Names of /dev/shm files that some live process holds."""
    used: set[str] = set()
    for pid in pids():
        used |= shm_held_by(pid)
    return used
