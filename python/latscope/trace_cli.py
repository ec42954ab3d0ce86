"""``latscope trace``: record a real run's MPI calls and turn them into a GOAL schedule (docs/trace.md).

``run`` starts any MPI command with liblatscope_trace.so preloaded; each rank writes
DIR/trace.<rank>.bin, and the trace is converted to DIR/trace.goal (``--no-goal``: not), which
``latscope sim DIR/trace.goal --params P`` replays. ``goal`` converts a trace directory. ``hops``
prints, per message size, how long a message took from its send to the return of a receive that
was already waiting for it, beside the replay's charge for it with ``--params``.

Bad input: ``latscope trace: error: ...`` naming the value and what is allowed, exit 2."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from latscope.run import timeout_seconds

EXIT_USAGE = 2
PROG = "latscope trace"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "trace", help="record an MPI run's calls (PMPI) and convert them to a GOAL schedule for latscope sim",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="tcmd", required=True)
    r = sub.add_parser("run", help="run a command with liblatscope_trace.so preloaded, then convert",
                       description="latscope trace run [-o DIR] -- COMMAND... A COMMAND that starts with "
                                   "mpiexec/mpirun/srun runs as given; otherwise --np N starts it under mpiexec.")
    r.add_argument("-o", "--output", default="latscope-trace", metavar="DIR",
                   help="directory for trace.<rank>.bin and trace.goal (default latscope-trace)")
    r.add_argument("--goal", metavar="FILE", help="write the GOAL schedule here (default DIR/trace.goal)")
    r.add_argument("--no-goal", action="store_true", help="only record; convert later with latscope trace goal")
    r.add_argument("--np", type=int, help="start COMMAND under mpiexec -n NP")
    r.add_argument("--timeout", type=timeout_seconds, help="end the command after this many seconds (exit 124)")
    r.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    g = sub.add_parser("goal", help="convert a trace directory to a GOAL schedule")
    g.add_argument("trace_dir", metavar="DIR", help="a directory written by latscope trace run")
    g.add_argument("more", nargs="*", metavar="MORE",
                   help="traces of repeated runs of the same program: each computation is the median over "
                        "all of them (a stall in one run is dropped)")
    g.add_argument("-o", "--output", required=True, metavar="FILE", help="the GOAL file to write")
    h = sub.add_parser("hops", help="per message size: send to the waiting receiver's return, measured in the trace",
                       description="Per message size, the time from a send's entry to the return of the receive "
                                   "that was already waiting for it (one host's cycle counter: one clock), with "
                                   "--params beside what the replay charges (docs/trace.md \"Message hops\").")
    h.add_argument("trace_dir", metavar="DIR", help="a directory written by latscope trace run")
    h.add_argument("--params", metavar="FILE",
                   help="latscope fit logp's JSON: print the replay's hop beside (latscope.trace.replay_params)")
    h.add_argument("--json", action="store_true", help="one JSON object per size instead of the table")
    for q in (r, g):
        q.add_argument("--min-gap", type=int, default=1, metavar="NS",
                       help="computation gaps shorter than NS nanoseconds are left out (default 1)")
    return p


def _convert(trace_dir: str, goal: str, min_gap_ns: int, more: list[str] | None = None) -> None:
    from latscope.trace import to_goal
    from latscope.units import fmt_time
    st = to_goal(trace_dir, goal, min_gap_ns=min_gap_ns, also=more or [])
    span = max(st.span_s)
    print(f"{goal}: {st.ranks} ranks, {st.calls} calls traced -> {st.sends} sends, {st.recvs} receives, "
          f"{st.calcs} computations; traced span {fmt_time(span)} "
          f"(computation {100 * max(st.calc_s) / span if span else 0:.0f} % on the busiest rank; collectives "
          f"replayed as computation {100 * (st.approximated_share() or 0):.1f} %)")
    if st.approximated:
        calls = ", ".join(f"{n} ({c} calls)" for n, c in sorted(st.approximated.items()))
        print(f"{PROG}: note: no latscope algorithm for {calls}: each replayed as a computation of the time it took "
              f"in the traced run (docs/trace.md)", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from latscope.inject_cli import LAUNCHERS
    from latscope.jobs.job import JobStopped, run_job
    from latscope.run import launch, mpi_flavor, mpiexec_path, user_command
    from latscope.trace import TraceError, library_path
    try:
        cmd = user_command(args.command, "latscope trace run [-o DIR] -- mpiexec -n 2 PROGRAM [ARGS...]", args.np)
    except ValueError as e:
        raise TraceError(str(e)) from None
    d = Path(args.output)
    try:
        d.mkdir(parents=True, exist_ok=True)
        probe = d / ".latscope-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise TraceError(f"-o {args.output!r}: cannot write there ({e.strerror})") from None
    goal = args.goal or str(d / "trace.goal")
    if not Path(goal).resolve().parent.is_dir():
        raise TraceError(f"--goal {goal!r}: its directory does not exist")
    for old in d.glob("trace.*.bin"):
        old.unlink()
    env = dict(os.environ)
    prefix: list[str] = []
    is_launcher = Path(cmd[0]).name in LAUNCHERS
    if is_launcher and args.np is not None:
        raise TraceError(f"{cmd[0]} already starts the ranks: drop --np, or give the program alone")
    if not is_launcher and args.np is not None:
        ln = launch(args.np)
        for w in ln.warnings:
            print(f"latscope: warning: {w}", file=sys.stderr)
        env, prefix = ln.env, ln.prefix
        if mpi_flavor(mpiexec_path()) == "openmpi":   # Open MPI forwards only what -x names to other hosts
            prefix = prefix[:1] + ["-x", "LD_PRELOAD", "-x", "LATSCOPE_TRACE_DIR"] + prefix[1:]
    lib = str(library_path())
    env["LD_PRELOAD"] = lib + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["LATSCOPE_TRACE_DIR"] = str(d.resolve())
    try:
        cp = run_job(prefix + cmd, env, args.timeout)
    except FileNotFoundError:
        raise TraceError(f"command {cmd[0]!r}: not found") from None
    except JobStopped as e:
        e.detail = "; the command and its ranks were ended"
        raise
    if cp.returncode != 0:
        print(f"{PROG}: the command exited with status {cp.returncode}; the trace is not converted", file=sys.stderr)
        return cp.returncode
    if not args.no_goal:
        _convert(str(d), goal, args.min_gap)
    return 0


def _hops(args: argparse.Namespace) -> int:
    from latscope.jsonio import dumps
    from latscope.trace import hops, model_hop_s, replay_params
    par = replay_params(args.params) if args.params else None
    rows = hops(args.trace_dir)
    if not rows:
        print(f"{PROG}: {args.trace_dir}: the trace holds no messages between ranks")
        return 0
    if args.json:
        for h in rows:
            d = {"size_bytes": h.size_bytes, "messages": h.messages, "waited": h.waited, "median_s": None,
                 "p10_s": None, "p90_s": None, "model_s": model_hop_s(par, h.size_bytes) if par else None}
            for k in ("median", "p10", "p90"):
                v = getattr(h, f"{k}_ns")
                d[f"{k}_s"] = v * 1e-9 if v is not None else None
            print(dumps(d))
        return 0
    print(f"{'bytes':>8} {'messages':>9} {'waited':>7} {'median':>9} {'p10':>9} {'p90':>9}"
          + (f" {'replay':>9} {'ratio':>6}" if par else "") + "   (ns; the send's entry to the waiting receive's return)")
    for h in rows:
        def ns(v: float | None) -> str:
            return f"{v:9.0f}" if v is not None else f"{'-':>9}"
        line = f"{h.size_bytes:>8} {h.messages:>9} {h.waited:>7} {ns(h.median_ns)} {ns(h.p10_ns)} {ns(h.p90_ns)}"
        if par:
            m = model_hop_s(par, h.size_bytes) * 1e9
            line += f" {m:9.0f} " + (f"{h.median_ns / m:6.2f}" if h.median_ns is not None and m > 0 else f"{'-':>6}")
        print(line)
    return 0


def main(args: argparse.Namespace) -> int:
    from latscope.run import LaunchError
    from latscope.sim import SimError
    from latscope.trace import TraceError
    try:
        if args.tcmd == "hops":
            return _hops(args)
        if args.min_gap < 0:
            raise TraceError(f"--min-gap {args.min_gap}: must be >= 0 (nanoseconds)")
        if args.tcmd == "run":
            return _run(args)
        _convert(args.trace_dir, args.output, args.min_gap, args.more)
        return 0
    except (TraceError, LaunchError, SimError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
