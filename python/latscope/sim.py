"""LogGOPS simulation of a schedule (docs/sim.md): the Python side of ``latscope-sim``.

``run(schedule, params, table=None, seed=1)`` runs one schedule under the parameters of a
``latscope.params/1`` file (what `latscope fit logp` writes, docs/params-format.md), optionally
with per-message extra delays from a latscope delay table drawn as the injector draws them, and
returns per-rank finish times and the program's summary. The engine is the C program
(src/sim, apps/latscope_sim.c); this module turns parameters into its options and reads its
output. A schedule is the name of a generated algorithm (``"dissemination"``, with ``P``) or a
GOAL file (LogGOPSim/Schedgen text).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from latscope.models.errors import ModelError
from latscope.outputs import check_text
from latscope.models.params import (LogGPParams, LogPParams, ModelParams, ParamSet, PLogPParams, load_params,
                                    message_point)

__all__ = ["SimError", "LogGOPS", "SimResult", "algorithms", "run", "PROGRAM"]

PROGRAM = "latscope-sim"


class SimError(ValueError):
    """Bad input (parameters, schedule, table) or a schedule that deadlocks: one line naming it."""


@dataclass(frozen=True)
class LogGOPS:
    """LogGOPS parameters (Hoefler et al., LogGOPSim, HPDC 2010) in seconds, bytes.

    ``o_s_s``/``o_r_s``: the send and receive overheads (LogGOPS's ``o``, split as latscope's fits
    measure it); ``G_s_per_byte``/``O_s_per_byte``: gap and overhead per byte; ``S_bytes``: larger
    messages go by rendezvous (None: never)."""

    L_s: float
    o_s_s: float
    o_r_s: float
    g_s: float = 0.0
    G_s_per_byte: float = 0.0
    O_s_per_byte: float = 0.0
    S_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("L_s", "o_s_s", "o_r_s", "g_s", "G_s_per_byte", "O_s_per_byte"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise SimError(f"{name} = {v!r}: must be a finite number >= 0 (seconds)")
        if self.S_bytes is not None and (not isinstance(self.S_bytes, int) or self.S_bytes < 0):
            raise SimError(f"S_bytes = {self.S_bytes!r}: must be an integer >= 0 (bytes) or None")

    @classmethod
    def from_model(cls, model: ModelParams, *, size_bytes: float = 0) -> "LogGOPS":
        """From a model of a params file: LogP and LogGP as they are (LoGPC's long-message
        fields of a LogGP set are not used), PLogP at ``size_bytes``; Hockney cannot be split into
        overheads and latency and is refused."""
        if isinstance(model, LogGPParams):
            return cls(L_s=model.L_s, o_s_s=model.o_s_s, o_r_s=model.o_r_s, g_s=model.g_s,
                       G_s_per_byte=model.G_s_per_byte)
        if isinstance(model, LogPParams):
            return cls(L_s=model.L_s, o_s_s=model.o_s_s, o_r_s=model.o_r_s, g_s=model.g_s)
        if isinstance(model, PLogPParams):
            pt = message_point(model, size_bytes)
            return cls(L_s=max(pt.L_s, 0.0), o_s_s=pt.o_s_s, o_r_s=pt.o_r_s, g_s=min(pt.send_gap_s, pt.recv_gap_s))
        raise SimError(f"a {getattr(model, 'kind', type(model).__name__)} parameter set has no overheads to "
                       "simulate with: give a logp, loggp or plogp file (latscope fit logp writes loggp)")

    @classmethod
    def load(cls, params: "LogGOPS | ParamSet | ModelParams | str | os.PathLike[str]", *,
             size_bytes: float = 0) -> "LogGOPS":
        """From a LogGOPS, a ParamSet, a model, or the path of a ``latscope.params/1`` file."""
        if isinstance(params, LogGOPS):
            return params
        if isinstance(params, (str, os.PathLike)):
            try:
                params = load_params(os.fspath(params))
            except ModelError as e:
                raise SimError(str(e)) from None
        if isinstance(params, ParamSet):
            params = params.model
        return cls.from_model(params, size_bytes=size_bytes)

    def args(self) -> list[str]:
        """The options of latscope-sim (exact decimal text: the C side rounds to picoseconds)."""
        out = ["--L", repr(float(self.L_s)), "--o-s", repr(float(self.o_s_s)), "--o-r", repr(float(self.o_r_s)),
               "--g", repr(float(self.g_s)), "--G", repr(float(self.G_s_per_byte)),
               "--O", repr(float(self.O_s_per_byte))]
        if self.S_bytes is not None:
            out += ["--S", str(self.S_bytes)]
        return out


@dataclass(frozen=True)
class SimResult:
    """One simulation: the program's summary (``latscope.sim/1``) and per-rank finish times."""

    summary: dict[str, Any]
    finish_s: list[float] = field(default_factory=list)
    finish_ps: list[int] = field(default_factory=list)

    @property
    def P(self) -> int:
        return int(self.summary["P"])

    @property
    def time_s(self) -> float:
        """The end of the schedule: the last rank's finish time."""
        return float(self.summary["time_s"])

    @property
    def time_ps(self) -> int:
        return int(self.summary["time_ps"])


def _binary() -> Path:
    from latscope.run import LaunchError, program
    try:
        return program(PROGRAM)
    except LaunchError as e:
        raise SimError(str(e)) from None


def algorithms() -> dict[str, str]:
    """The generated schedules latscope-sim knows: name -> what it is (its registry, in C)."""
    out = subprocess.run([str(_binary()), "--list"], capture_output=True, text=True, check=True).stdout
    rows = [line.split(None, 1) for line in out.splitlines() if line.strip()]
    return {r[0]: (r[1] if len(r) > 1 else "") for r in rows}


def _is_goal(schedule: str | os.PathLike[str]) -> bool:
    return isinstance(schedule, os.PathLike) or str(schedule).endswith(".goal") or os.sep in str(schedule)


def run(schedule: str | os.PathLike[str], params: "LogGOPS | ParamSet | ModelParams | str | os.PathLike[str]",
        table: str | os.PathLike[str] | None = None, seed: int = 1, *, P: int | None = None, size_bytes: int = 0,
        k: int | None = None,
        per_rank: bool = True, per_rank_path: str | os.PathLike[str] | None = None, bins: int = 20,
        goal_unit_s: float | None = None, noise: tuple[float, float] | None = None,
        noise_trace: str | os.PathLike[str] | None = None, critical_path: bool = False, timeout_s: float | None = None) -> SimResult:
    """Simulate ``schedule`` (a generated algorithm's name with ``P`` ranks and, for a tree, arity
    ``k``; or a GOAL file) under
    ``params``, with per-message delays drawn from ``table`` (a delay-table file) by the injector's
    generator seeded with ``seed``. Per-rank finish times are read back when ``per_rank``, or left
    in ``per_rank_path`` (JSONL) when given. ``noise = (period_s, detour_s)``: OS noise, every
    period each rank's CPU is taken for the detour; or ``noise_trace``, a file of detours repeated
    from a phase per rank (docs/sim.md "Variation"). ``critical_path``: a generated schedule's
    critical path too, in ``summary["critical_path"]`` (a GOAL schedule's is always there). Bad input and deadlocks raise :class:`SimError`."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SimError(f"seed = {seed!r}: must be an integer >= 0")
    par = LogGOPS.load(params, size_bytes=size_bytes)
    cmd = [str(_binary())]
    if _is_goal(schedule):
        if P is not None:
            raise SimError("P is for a generated schedule; a GOAL file gives num_ranks itself")
        try:
            check_text(schedule, "GOAL file", "a GOAL text schedule (docs/sim.md)")
        except ValueError as e:
            raise SimError(str(e)) from None
        except OSError:
            pass   # latscope-sim names a missing file itself
        cmd += ["--goal", str(schedule)]
    else:
        if P is None:
            raise SimError(f"schedule {schedule!r}: a generated schedule needs P (ranks)")
        cmd += ["--algo", str(schedule), "--P", str(P), "--size", str(size_bytes)]
        if k is not None:
            cmd += ["--k", str(k)]
    cmd += par.args() + ["--seed", str(seed), "--bins", str(bins)]
    if table is not None:
        cmd += ["--table", str(table)]
    if goal_unit_s is not None:
        cmd += ["--goal-unit", repr(float(goal_unit_s))]
    if noise is not None:
        cmd += ["--noise-period", repr(float(noise[0])), "--noise-detour", repr(float(noise[1]))]
    if noise_trace is not None:
        cmd += ["--noise-trace", str(noise_trace)]
    if critical_path:
        cmd += ["--critical-path"]
    with tempfile.TemporaryDirectory(prefix="latscope-sim-") as tmp:
        pr = Path(per_rank_path) if per_rank_path is not None else Path(tmp) / "per_rank.jsonl"
        if per_rank or per_rank_path is not None:
            cmd += ["--per-rank", str(pr)]
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise SimError(f"{PROGRAM} did not finish within {timeout_s} s") from None
        if cp.returncode != 0:
            msg = cp.stderr.strip().splitlines()[-1] if cp.stderr.strip() else f"exit status {cp.returncode}"
            raise SimError(msg.removeprefix(f"{PROGRAM}: error: "))
        summary: dict[str, Any] = json.loads(cp.stdout)
        fs: list[float] = []
        fps: list[int] = []
        if per_rank and per_rank_path is None:
            with pr.open() as f:
                for line in f:
                    rec = json.loads(line)
                    fs.append(float(rec["finish_s"]))
                    fps.append(int(rec["finish_ps"]))
    return SimResult(summary=summary, finish_s=fs, finish_ps=fps)
