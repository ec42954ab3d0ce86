"""`latscope study run PLAN`: the experiment matrix of seed 004 §6-7 (docs/study.md, "study run").

Tables x applications x rank counts x repetitions, each run under the injector
(liblatscope_inject.so preloaded with the cell's delay table, as `latscope inject run` does),
in an order randomised within each repetition block. One JSON line per run, appended and
fsynced before the next starts, so an interrupted study loses at most the run in flight and a
rerun skips every finished cell."""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from latscope.study import StudyError
from latscope.study.appspec import RunSpec
from latscope.study.plan import Cell, Plan, parse_plan

HELP = "seed 004 §6-7: run the experiment matrix of a plan (tables x apps x ranks x repetitions), resumable"
SCHEMA = "latscope.study-run/1"
LINE_TAG = "latscope-miniapp"
ATTEMPTS = 2                  # a failed or timed-out run is retried once
TAIL = 600                    # characters of a failed run's output kept in its record


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("plan", help="the study plan (TOML; docs/study.md)")
    p.add_argument("-o", "--out", default="study-run",
                   help="output directory: runs.jsonl and the injector's logs (default study-run); "
                        "rerunning with the same directory resumes")
    p.add_argument("--net", action="store_true",
                   help="every run's ranks on the kept emulated Ethernet cluster ('latscope cluster up'), one per "
                        "node, MPI over TCP (docs/network.md); each cell's np must fit its nodes")


# ---------------------------------------------------------------- one run

@dataclass
class Outcome:
    status: str                    # ok | failed | timeout | error
    exit_status: int | None
    runtime_s: float | None
    verification: str | None
    fields: dict[str, str]
    wall_s: float
    tail: str
    reason: str | None = None      # why the run is not ok (one line)


def parse_line(out: str) -> dict[str, str] | None:
    """The mini-app's `latscope-miniapp key=value ...` line (docs/miniapps.md), the last one printed."""
    found = None
    for ln in out.splitlines():
        words = ln.split()
        if words and words[0] == LINE_TAG:
            found = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    return found


def _kill(proc: subprocess.Popen[str]) -> None:
    """mpiexec and every process below it (its proxy and ranks each call setsid: not one group)."""
    from latscope.jobs.job import end_tree
    end_tree(proc.pid, grace=False)
    proc.wait()


def _output_files(pattern: str, cwd: Path, since: float) -> str:
    """The text of the files matching `pattern` in `cwd` written since the launch began (HPCG's report)."""
    out = []
    for f in sorted(cwd.glob(pattern)):
        try:
            if f.is_file() and f.stat().st_mtime >= since - 1:
                out.append(f.read_text(errors="replace"))
        except OSError:
            continue
    return "\n".join(out)


def execute(cmd: list[str], env: dict[str, str], timeout_s: float, spec: RunSpec | None = None,
            cwd: Path | None = None) -> Outcome:
    """Run one launch and read it with `spec` (the app's timing and verification; the mini-app line
    when None)."""
    from latscope.study.appspec import last_line, make_spec, read

    spec = spec or make_spec("", {}, "latscope")
    t0 = time.monotonic()
    t_wall = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, cwd=cwd, errors="replace")
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return Outcome("timeout", None, None, None, {}, time.monotonic() - t0, "",
                       f"no exit within timeout_s = {timeout_s:g} s (killed)")
    except BaseException:
        _kill(proc)     # Ctrl-C: the run in flight goes, and nothing of it is recorded
        raise
    wall = time.monotonic() - t0
    text = out
    if spec.output_file:
        extra = _output_files(spec.output_file, cwd or Path.cwd(), t_wall)
        if not extra and proc.returncode == 0:
            return Outcome("error", None, None, None, {}, wall, out[-TAIL:],
                           f"no file {spec.output_file!r} written in {cwd or Path.cwd()}; last line: {last_line(out)}")
        text = out + "\n" + extra
    r = read(spec, text, proc.returncode, wall)
    return Outcome(r.status, proc.returncode, r.runtime_s, r.verification, r.fields, wall,
                   "" if r.status == "ok" else out[-TAIL:], r.reason)


def inject_summary(log_dir: Path) -> dict[str, Any] | None:
    """The injector's per-rank logs (latscope.inject-log/1, src/inject/inject.c) summed over ranks:
    how many delays, their requested and achieved mean. None when no rank wrote one."""
    from latscope.inject import read_logs

    logs = read_logs(log_dir / "inject")
    if not logs:
        return None
    n = sum(int(r.get("count", 0)) for r in logs)
    req = sum(int(r.get("requested_ns_sum", 0)) for r in logs) * 1e-9
    ach = sum(int(r.get("achieved_ns_sum", 0)) for r in logs) * 1e-9
    calls: dict[str, int] = {}
    for r in logs:
        for k, v in (r.get("calls") or {}).items():
            calls[k] = calls.get(k, 0) + int(v)
    return {"ranks": len(logs), "count": n, "requested_sum_s": req, "achieved_sum_s": ach,
            "requested_mean_s": req / n if n else None, "achieved_mean_s": ach / n if n else None,
            "calls": calls}


def host_info() -> dict[str, Any]:
    from latscope.run import cores

    try:
        load1: float | None = os.getloadavg()[0]
    except OSError:
        load1 = None
    return {"name": platform.node(), "cores": cores(), "loadavg_1m": load1}


def run_cell(plan: Plan, cell: Cell, attempt: int, out_dir: Path, net: bool = False) -> dict[str, Any]:
    """Run one cell once and return its record (not yet written). net: on the kept cluster
    (its launcher line; pinning is the nodes' business there)."""
    from latscope.inject import ENV_KEYS, InjectSettings
    from latscope.run import launch, program

    if net:
        from latscope.net.launch import launcher_line
        ln = launch(None, launcher_line(cell.np))
    else:
        ln = launch(cell.np, pin=plan.pin)
    prog = cell.app.program if "/" in cell.app.program else str(program(cell.app.program))
    app_cmd = [prog, *cell.app.args]
    nth = f".l{cell.launch}" if cell.launch else ""
    log_dir = out_dir / "logs" / f"{cell.app.name}.{cell.table.name}.np{cell.np}.r{cell.rep}{nth}.a{attempt}"
    log_dir.mkdir(parents=True, exist_ok=True)
    for old in log_dir.glob("inject.*.json"):
        old.unlink()
    seed = plan.injector_seed(cell)
    if cell.table.path is None:
        env = {k: v for k, v in ln.env.items() if k not in ENV_KEYS}
    else:
        s = InjectSettings(cell.table.path, str(seed), calls=plan.calls, log_prefix=log_dir / "inject",
                           coll=plan.coll)
        env = s.env(ln.env)
        # The injector goes into the ranks only, through `env` under the launcher: preloaded into
        # mpiexec and its proxies as well (as `latscope inject run` does), it loads the MPI library
        # into each of them, +150 ms a launch here against +20 ms (bench/study_overhead.py).
        app_cmd = ["env", f"LD_PRELOAD={env['LD_PRELOAD']}", *app_cmd]
        if ln.env.get("LD_PRELOAD"):
            env["LD_PRELOAD"] = ln.env["LD_PRELOAD"]
        else:
            del env["LD_PRELOAD"]
    if cell.app.env:
        # under the launcher, as the injector: into the ranks (mpiexec passes its environment on)
        env.update(dict(cell.app.env))
    cmd = ln.prefix + app_cmd
    o = execute(cmd, env, cell.app.timeout_s, cell.app.spec, cell.app.cwd)
    return {"type": "run", "cell": cell.cell_key, "app": cell.app.name, "table": cell.table.name,
            "table_distribution": cell.table.distribution, "table_mean_s": cell.table.mean_s,
            "table_sd_s": cell.table.sd_s, "np": cell.np, "rep": cell.rep, "launch": cell.launch, "attempt": attempt,
            "seed": seed, "status": o.status, "exit_status": o.exit_status, "runtime_s": o.runtime_s,
            "verification": o.verification, "reason": o.reason, "wall_s": o.wall_s,
            "inject": inject_summary(log_dir) if cell.table.path is not None else None,
            "miniapp": o.fields or None, "host": host_info(),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": shlex.join(cmd),
            **({"output_tail": o.tail} if o.tail else {})}


# ---------------------------------------------------------------- the file

def append(f: TextIO, rec: dict[str, Any]) -> None:
    """One record, on disk before the next run starts (a kill loses at most the run in flight)."""
    from latscope import jsonio

    line = jsonio.dumps(rec) + "\n"
    # Ctrl-C waits until the record is whole and on disk (a KeyboardInterrupt between write and
    # flush would leave half a line)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def read_runs(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(meta, run records) of a runs.jsonl; a torn last line (a kill mid-write) is dropped."""
    if not path.exists():
        return None, []
    meta, runs = None, []
    lines = path.read_text().splitlines()
    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            continue
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError:
            if i == len(lines):
                continue
            raise StudyError(f"{path}:{i}: not JSON: not a study's runs file (or damaged)") from None
        if not isinstance(rec, dict):
            raise StudyError(f"{path}:{i}: not a study record")
        if rec.get("type") == "meta":
            if rec.get("schema") != SCHEMA:
                raise StudyError(f"{path}:{i}: schema {rec.get('schema')!r}, expected {SCHEMA!r}")
            meta = meta or rec
        elif rec.get("type") == "run":
            runs.append(rec)
    if runs and meta is None:
        raise StudyError(f"{path}: run records without a {SCHEMA} metadata record")
    return meta, runs


def run_key(rec: dict[str, Any]) -> str:
    """A record's Cell.key: its cell, and which launch of it (records before `launches` have none: 0)."""
    launch = int(rec.get("launch") or 0)
    return str(rec.get("cell")) + (f"|l{launch}" if launch else "")


def finished(runs: list[dict[str, Any]]) -> tuple[set[str], dict[str, int]]:
    """(launches done, by Cell.key: one ok run or ATTEMPTS failed ones; attempts so far per key)."""
    tries: dict[str, int] = {}
    done: set[str] = set()
    for r in runs:
        k = run_key(r)
        tries[k] = tries.get(k, 0) + 1
        if r.get("status") == "ok" or tries[k] >= ATTEMPTS:
            done.add(k)
    return done, tries


def _drop_torn_tail(path: Path) -> None:
    """A kill in the middle of a write leaves a last line without its newline: cut it off, so that
    the next record starts on a line of its own (read_runs has already ignored it)."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        print(f"latscope study run: warning: {path}: dropped a torn last record ({len(data) - keep} bytes)",
              file=sys.stderr)
        with open(path, "r+b") as f:
            f.truncate(keep)


def _meta(plan: Plan, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    from latscope import __version__

    return {"type": "meta", "schema": SCHEMA, "tool": "latscope", "version": __version__,
            "plan": str(plan.path.resolve()), "plan_digest": plan.digest, "plan_text": plan.text,
            "seed": plan.seed, "repetitions": plan.repetitions, "launches": plan.launches, "pin": plan.pin, "calls": plan.calls, "coll": plan.coll,
            "tables": [{"name": t.name, "path": None if t.path is None else str(t.path),
                        "distribution": t.distribution, "mean_s": t.mean_s, "sd_s": t.sd_s} for t in plan.tables],
            "apps": [{"name": a.name, "program": a.program, "args": list(a.args), "np": list(a.nps),
                      "timeout_s": a.timeout_s, "timing": a.spec.timing_text(), "verify": a.spec.verify,
                      "verify_text": a.spec.verify_text(), "env": dict(a.env),
                      "cwd": None if a.cwd is None else str(a.cwd)} for a in plan.apps],
            "host": host_info(), "command": shlex.join(sys.argv),
            "cluster": None if cluster is None else {k: cluster.get(k) for k in ("nodes", "networks", "rate", "mtu_bytes", "loss")},
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _fmt_eta(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def run(args: argparse.Namespace) -> int:
    plan = parse_plan(Path(args.plan))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise StudyError(f"-o {out}: exists and is not a directory")
    for a in plan.apps:       # every program exists before the first run
        if "/" not in a.program:
            from latscope.run import LaunchError, program
            try:
                program(a.program)
            except LaunchError as e:
                raise StudyError(f"app '{a.name}': {e}") from None
    net = bool(getattr(args, "net", False))
    kept: dict[str, Any] | None = None
    if net:   # every cell fits the kept cluster before the first run (ValueError: exit 2)
        from latscope.net.launch import check_np, kept_cluster
        kept = kept_cluster()
        for n in sorted({c.np for block in plan.blocks() for c in block}):
            check_np(kept, n, "np")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runs.jsonl"
    meta, runs = read_runs(path)
    if meta is not None and meta.get("plan_digest") != plan.digest:
        print(f"latscope study run: warning: {path} was started from a different plan text; finished "
              "cells with the same app, table, np and repetition are kept", file=sys.stderr)
    done, tries = finished(runs)
    cells = [c for block in plan.blocks() for c in block]
    todo = [c for c in cells if c.key not in done]
    print(f"latscope study run: {len(cells)} runs in {plan.repetitions} blocks; {len(cells) - len(todo)} "
          f"finished before, {len(todo)} to go -> {path}", file=sys.stderr)
    n_ok = n_bad = 0
    t_start = time.monotonic()
    _drop_torn_tail(path)
    with open(path, "a") as f:
        if meta is None:
            append(f, _meta(plan, kept if net else None))
        try:
            # a failed run goes back in the queue, after every other run: a transient cause (another
            # process relinking a library, a burst of load) has passed by then, and the retry does
            # not sit next to the failure in time
            queue = list(todo)
            i = 0
            while i < len(queue):
                cell = queue[i]
                i += 1
                attempt = tries.get(cell.key, 0) + 1
                rec = run_cell(plan, cell, attempt, out, net)
                append(f, rec)
                tries[cell.key] = attempt
                if rec["status"] == "ok" or attempt >= ATTEMPTS:
                    done.add(cell.key)
                else:
                    queue.append(cell)
                el = time.monotonic() - t_start
                eta = el / i * (len(queue) - i)
                rt = rec["runtime_s"]
                what = f"{rt:.3f} s" if rt is not None else "-"
                if rec.get("reason"):
                    what += f" ({rec['reason']})"
                elif rec.get("verification") == "unverified":
                    what += " (unverified)"
                again = "; retried at the end" if cell.key not in done else ""
                lpart = f" launch={cell.launch}" if plan.launches > 1 else ""
                print(f"[{i}/{len(queue)}] {cell.app.name} {cell.table.name} np={cell.np} rep={cell.rep}{lpart}"
                      f"{' (retry)' if attempt > 1 else ''}: {rec['status']} {what}{again}; "
                      f"elapsed {_fmt_eta(el)}, ETA {_fmt_eta(eta)}", file=sys.stderr)
                if rec["status"] == "ok":
                    n_ok += 1
                elif cell.key in done:
                    n_bad += 1
        except KeyboardInterrupt:
            print(f"latscope study run: interrupted; {len(done)} of {len(cells)} runs recorded in {path}; "
                  "rerun the same command to resume", file=sys.stderr)
            return 130
    print(f"latscope study run: {n_ok} runs ok, {n_bad} failed twice (recorded); {path}", file=sys.stderr)
    print(path)
    # every cell ran; exit 1 tells a script that some of them failed (their records say why)
    return 1 if n_bad else 0
