"""What dead launches left: the jobs of a latscope that is gone (killed with SIGKILL, so none of
its handlers ran) and MPI segments in /dev/shm that no live process holds. A live job -- one
whose latscope still runs, or any process holding a segment -- is never touched."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from latscope.jobs import procs, shm, state
from latscope.jobs.job import _terminate


@dataclass
class Cleaned:
    live_jobs: list[state.Record] = field(default_factory=list)
    dead_jobs: list[tuple[state.Record, list[procs.Proc]]] = field(default_factory=list)   # with the processes ended
    segments: list[shm.Segment] = field(default_factory=list)


def clean(dry_run: bool = False, min_age_s: float = shm.MIN_AGE_S) -> Cleaned:
    out = Cleaned()
    for rec in state.records():
        if procs.alive(rec.owner):
            out.live_jobs.append(rec)
            continue
        left = sorted(p for p in rec.procs if procs.alive(p))
        if left and not dry_run:
            _terminate(set(left), threading.Event(), set)
        out.segments += shm.remove(sorted(rec.segments), f"left by the job of latscope pid {rec.owner.pid}", dry_run)
        out.dead_jobs.append((rec, left))
        if not dry_run:
            rec.drop()
    live_segments = {s for r in out.live_jobs for s in r.segments}
    done = {s.name for s in out.segments}
    cands = [n for n in shm.stale(min_age_s) if n not in live_segments and n not in done]
    out.segments += shm.remove(cands, "stale: its creator is gone and no process holds it", dry_run)
    return out

