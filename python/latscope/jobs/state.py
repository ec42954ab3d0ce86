"""A record of every live job, so that what a latscope killed with SIGKILL (no handler runs)
left can still be found: its processes and segments. One JSON file per job in the state
directory (LATSCOPE_STATE_DIR, else /tmp/latscope-<uid>/jobs), rewritten when the job's
processes or segments change, removed when latscope has ended the job and cleaned up after it."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from latscope.jobs import procs


def state_dir() -> Path:
    d = os.environ.get("LATSCOPE_STATE_DIR")
    return Path(d) if d else Path(tempfile.gettempdir()) / f"latscope-{os.getuid()}" / "jobs"


@dataclass
class Record:
    owner: procs.Proc                 # the latscope that launched the job
    command: list[str]
    procs: set[procs.Proc] = field(default_factory=set)
    segments: set[str] = field(default_factory=set)
    path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {"schema": "latscope.job/1", "owner": list(self.owner), "command": self.command,
                "procs": sorted(list(p) for p in self.procs), "segments": sorted(self.segments)}

    @classmethod
    def from_json(cls, d: dict[str, Any], path: Path) -> Record:
        return cls(procs.Proc(*d["owner"]), [str(w) for w in d.get("command", [])],
                   {procs.Proc(int(p), int(s)) for p, s in d.get("procs", [])},
                   {str(s) for s in d.get("segments", [])}, path)

    def save(self) -> None:
        """Written whole, then renamed: a reader never sees half a record. Best effort: a job is
        never refused for want of a writable state directory."""
        try:
            d = state_dir()
            d.mkdir(parents=True, exist_ok=True)
            if self.path is None:
                self.path = d / f"{self.owner.pid}-{self.owner.start}-{id(self)}.json"
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.to_json()))
            os.replace(tmp, self.path)
        except OSError:
            pass

    def drop(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def records() -> list[Record]:
    out: list[Record] = []
    d = state_dir()
    if not d.is_dir():
        return out
    for f in sorted(d.glob("*.json")):
        try:
            out.append(Record.from_json(json.loads(f.read_text()), f))
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return out
