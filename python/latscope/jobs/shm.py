"""The MPIs' shared-memory segments in /dev/shm. A rank that dies without MPI_Finalize (a signal,
MPI_Abort) leaves them; a later rank that reuses the name (libfabric's carry the creator's pid,
and pids wrap) attaches to the stale one and MPI_Init fails ('Message truncated').

libfabric's are named <pid>:<n>:<n>[:<n>] after their creator; MPICH's (mpich_shm_<hash>_<n>,
mpich_shar_tmp<random>) and Open MPI's (sm_segment.*, vader_segment.*) name no process: one of
those is stale when no live process holds it open or mapped."""
from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from latscope.jobs import procs

SHM_DIR = Path("/dev/shm")
PID_NAMED = re.compile(r"(\d+):\d+:\d+(?::\d+)?")
NAMELESS = re.compile(r"mpich_shm_\w+|mpich_shar_tmp\w+|(?:sm|vader)_segment\..+")
# a nameless segment younger than this may belong to a job that is starting: left alone
MIN_AGE_S = 30.0


def is_mpi_segment(name: str) -> bool:
    return bool(PID_NAMED.fullmatch(name) or NAMELESS.fullmatch(name))


def names() -> set[str]:
    """The MPI segments in /dev/shm now."""
    if not SHM_DIR.is_dir():
        return set()
    return {f.name for f in SHM_DIR.iterdir() if is_mpi_segment(f.name)}


@dataclass
class Segment:
    name: str
    size_bytes: int
    why: str


def remove(cands: Iterable[str], why: str, dry_run: bool = False) -> list[Segment]:
    """Unlink those of cands that no live process holds; returns what was (or would be) removed."""
    cands = [c for c in cands if (SHM_DIR / c).exists()]
    if not cands:
        return []
    used = procs.shm_in_use()
    out: list[Segment] = []
    for c in cands:
        if c in used:
            continue
        f = SHM_DIR / c
        try:
            size = f.stat().st_size
            if not dry_run:
                f.unlink()
        except OSError:
            continue
        out.append(Segment(c, size, why))
    return out


def stale(min_age_s: float = MIN_AGE_S) -> list[str]:
    """MPI segments no live job can own: a pid-named one whose pid is gone, a nameless one older
    than min_age_s (that nobody holds: remove() checks)."""
    now = time.time()
    out: list[str] = []
    for name in sorted(names()):
        m = PID_NAMED.fullmatch(name)
        if m:
            if not (procs.PROC / m.group(1)).exists():
                out.append(name)
            continue
        with contextlib.suppress(OSError):
            if now - (SHM_DIR / name).stat().st_mtime >= min_age_s:
                out.append(name)
    return out
