"""The mini-app suite's registry (docs/miniapps.md): one row per application.

A row names the application and its communication pattern; the program build/bin/latscope-<name>
describes the rest itself (``--describe``: summary, classes, iterations per class), so class lists
live only in the C source. ``latscope apps list`` and ``latscope apps run`` read this table; a new
application is one row here and one line in cmake/parts/miniapps.cmake."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from latscope.jobs.job import run_job
from latscope.run import LaunchError, build_dir, launch, program

EXIT_USAGE = 2


@dataclass(frozen=True)
class MiniApp:
    name: str
    study_class: str     # the class that runs 0.2-5 s at np 2 on the 2-core machine (docs/miniapps.md)
    pattern: str         # the communication pattern, one line (what the study varies latency under)

    @property
    def program(self) -> str:
        return f"latscope-{self.name}"


REGISTRY: tuple[MiniApp, ...] = (
    MiniApp("cg", "A", "allgather of the search direction + 2 allreduces per CG step"),
    MiniApp("ep", "W", "one allreduce at the end (the control: nearly no communication)"),
    MiniApp("is", "B", "allreduce of bucket sizes, alltoall + alltoallv of the keys per iteration"),
    MiniApp("lu", "W", "wavefront: per plane one small send east and south, then the reverse sweep"),
    MiniApp("ft", "A", "one alltoall transpose per 3-D FFT, a 16 KiB allreduce per time step"),
    MiniApp("mg", "A", "halo exchange with the slab neighbours on every level of every V-cycle step"),
)


class MiniAppError(ValueError):
    """Bad input naming the value and what is allowed (exit 2)."""


def names() -> list[str]:
    return [a.name for a in REGISTRY]


def get(name: str) -> MiniApp:
    for a in REGISTRY:
        if a.name == name:
            return a
    raise MiniAppError(f"unknown app '{name}'; known: {', '.join(names())}")


@dataclass
class Description:
    """What ``latscope-<app> --describe`` says; built=False when the program is not there."""

    app: MiniApp
    built: bool
    summary: str = ""
    classes: list[str] = field(default_factory=list)
    default_class: str = ""
    iters: dict[str, int] | None = None


def describe(app: MiniApp, timeout: float = 60.0) -> Description:
    """Runs the program once as a single process (MPI singleton) with --describe."""
    path = build_dir() / "bin" / app.program
    if not path.exists():
        return Description(app, built=False)
    cp = subprocess.run([str(path), "--describe"], capture_output=True, text=True, timeout=timeout)
    if cp.returncode != 0:
        raise LaunchError(f"{path} --describe exited {cp.returncode}: {cp.stderr.strip()[-300:]}")
    d: dict[str, Any] = json.loads(cp.stdout.strip().splitlines()[-1])
    return Description(app, True, str(d["summary"]), [str(c) for c in d["classes"]], str(d["default_class"]),
                       {str(k): int(v) for k, v in d["iters"].items()} if d.get("iters") else None)


def run(app: MiniApp, args: list[str], np_: int, timeout: float | None = None,
        capture: bool = False) -> subprocess.CompletedProcess[str]:
    """latscope-<app> ARGS under mpiexec -n np (run.launch: shared memory, yield when oversubscribed)."""
    ln = launch(np_)
    for w in ln.warnings:
        print(f"latscope: warning: {w}", file=sys.stderr)
    return run_job(ln.prefix + [str(program(app.program))] + args, ln.env, timeout, capture=capture)
