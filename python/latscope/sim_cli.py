"""``latscope sim``: LogGOPS simulation of a schedule at any P (docs/sim.md). A schedule is a
generated algorithm (``latscope sim dissemination --P 1048576``; ``--list`` shows them) or a GOAL
file (LogGOPSim/Schedgen text); parameters come from ``--params FILE`` (``latscope fit logp``'s
output) and/or explicit values; ``--table FILE --seed N`` adds per-message delays drawn as the
injector draws them. Bad input and deadlocking schedules: one line naming them, exit 2."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from latscope.sim import LogGOPS

EXIT_USAGE = 2
PROG = "latscope sim"


def add_sim_args(p: argparse.ArgumentParser, *, table_help: str) -> argparse._ArgumentGroup:
    """The options `latscope sim` and `latscope sim-sweep` share: a generated schedule's size and
    arity, the parameters (--params and explicit values), LogGOPS's O and S, the variation.
    Returns the "LogGOPS extras" group (for a command's own extras)."""
    from latscope.model_options import add_model_value_args, arg_type, parse_per_byte, parse_time
    p.add_argument("--size", type=int, default=0, help="message bytes of a generated broadcast (default 0)")
    p.add_argument("--k", type=int, help="arity of a generated tree (default 4)")
    add_model_value_args(p)
    g = p.add_argument_group("LogGOPS extras")
    g.add_argument("--O", dest="O_s_per_byte", type=arg_type(parse_per_byte), help="overhead per byte O, e.g. 0.1ns")
    g.add_argument("--S", dest="S_bytes", type=int, help="eager/rendezvous threshold S in bytes (default: no rendezvous)")
    v = p.add_argument_group("variation")
    v.add_argument("--table", help=table_help)
    v.add_argument("--seed", type=int, default=1, help="the injector's seed (default 1)")
    v.add_argument("--noise-period", type=arg_type(parse_time), help="OS noise: a detour every PERIOD on each rank")
    v.add_argument("--noise-detour", type=arg_type(parse_time), help="OS noise: the detour's length (< the period)")
    v.add_argument("--noise-trace", metavar="FILE", help="OS noise from a trace of detours, 'START DURATION' seconds a "
                   "line (docs/sim.md \"Variation\"), repeated from a phase per rank")
    return g


def sim_params(args: argparse.Namespace) -> "tuple[LogGOPS, tuple[float, float] | None]":
    """(LogGOPS, noise) from the options of add_sim_args; SimError/ModelError name bad input."""
    import dataclasses

    from latscope import sim
    from latscope.model_options import params_from_args
    model, _ = params_from_args(args)
    par = sim.LogGOPS.from_model(model, size_bytes=args.size)
    extra = {k: getattr(args, k) for k in ("O_s_per_byte", "S_bytes") if getattr(args, k) is not None}
    if extra:
        par = dataclasses.replace(par, **extra)
    if (args.noise_period is None) != (args.noise_detour is None):
        raise sim.SimError("OS noise needs both --noise-period and --noise-detour")
    return par, (None if args.noise_period is None else (args.noise_period, args.noise_detour))


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from latscope.model_options import arg_type, parse_time
    p: argparse.ArgumentParser = subparsers.add_parser(
        "sim", help="LogGOPS simulation of a schedule (generated algorithm or GOAL file), delay tables, any P",
        description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("schedule", nargs="?", help="a generated algorithm (see --list) or a GOAL file (*.goal)")
    p.add_argument("--list", action="store_true", help="list the generated schedules, then exit")
    p.add_argument("--P", type=int, help="ranks (a generated schedule)")
    g = add_sim_args(p, table_help="latscope delay table (docs/delay-table.md): an extra delay per message")
    g.add_argument("--goal-unit", type=arg_type(parse_time), help="a GOAL calc's unit (default 1ns)")
    o = p.add_argument_group("output")
    o.add_argument("--critical-path", action="store_true",
                   help="a generated schedule's critical path too (a GOAL schedule's is always found)")
    o.add_argument("--per-rank", metavar="FILE", help="per-rank finish times, JSON Lines")
    o.add_argument("--bins", type=int, default=20, help="histogram bins of the finish times (default 20)")
    o.add_argument("--json", action="store_true", help="print the summary (latscope.sim/1) as JSON")
    return p


def _fail(msg: str) -> int:
    sys.stderr.write(f"{PROG}: error: {msg}\n")
    return EXIT_USAGE


def main(args: argparse.Namespace) -> int:
    import json

    from latscope import sim
    from latscope.models import ModelError
    from latscope.units import fmt_time
    try:
        if args.list:
            for name, what in sim.algorithms().items():
                print(f"{name:<16} {what}")
            return 0
        if not args.schedule:
            return _fail("give a schedule: a generated algorithm (--list) or a GOAL file")
        # the schedule and P are named before the parameters are looked at: a misspelt algorithm
        # is the error to report, not the missing --L
        if not args.schedule.endswith(".goal") and not Path(args.schedule).exists():
            algos = sim.algorithms()
            if args.schedule not in algos:
                return _fail(f"schedule {args.schedule!r}: neither a generated algorithm ({', '.join(algos)}) "
                             "nor an existing GOAL file")
            if args.P is not None and args.P < 1:
                return _fail(f"--P {args.P}: must be >= 1 (ranks)")
        par, noise = sim_params(args)
        if args.bins < 1:
            return _fail(f"--bins {args.bins}: must be >= 1")
        res = sim.run(args.schedule, par, table=args.table, seed=args.seed, P=args.P, size_bytes=args.size, k=args.k,
                      per_rank=False, per_rank_path=args.per_rank, bins=args.bins, goal_unit_s=args.goal_unit, noise=noise,
                      noise_trace=args.noise_trace, critical_path=args.critical_path)
    except (sim.SimError, ModelError) as e:
        return _fail(str(e))
    d = res.summary
    if args.json:
        print(json.dumps(d))
        return 0
    sched = d["schedule"].get("algo") or d["schedule"].get("goal")
    var = f", table {d['table']} seed {d['seed']} (mean extra delay {fmt_time(d['delay_mean_s'])})" if d["table"] else ""
    nz = d.get("noise")
    if nz and "trace" in nz:
        var += f", OS noise trace {nz['trace']} ({nz['detours']} detours every {fmt_time(nz['span_s'])})"
    elif nz:
        var += f", OS noise {fmt_time(nz['detour_s'])} every {fmt_time(nz['period_s'])}"
    print(f"{sched}: P = {d['P']}{var}")
    print(f"  finish: last {fmt_time(d['time_s'])}, median {fmt_time(d['finish_median_s'])}, "
          f"first {fmt_time(d['finish_min_s'])}")
    print(f"  {d['messages']} messages, {d['events']} events in {d['wall_s']:.3g} s")
    h = d["histogram"]
    counts = h["counts"]
    if h["hi_s"] > h["lo_s"]:
        width = (h["hi_s"] - h["lo_s"]) / len(counts)
        top = max(counts)
        for i, c in enumerate(counts):
            bar = "#" * (round(40 * c / top) if top else 0)
            print(f"  {fmt_time(h['lo_s'] + i * width):>10} {c:>9} {bar}")
    cp = d.get("critical_path")
    if cp:
        ops = cp["ops"]
        ranks = len({o["rank"] for o in ops})
        print(f"  critical path: {cp['length']} operations on {ranks} ranks"
              + (f" (the last {len(ops)} shown)" if len(ops) < cp["length"] else ""))
        shown = ops if len(ops) <= 12 else ops[:6] + [None] + ops[-5:]
        for o in shown:
            if o is None:
                print("    ...")
                continue
            what = o["op"] if o["op"] == "calc" else \
                f"{o['op']} {o['bytes']}b {'to' if o['op'] == 'send' else 'from'} {o['peer']} tag {o['tag']}"
            print(f"    {fmt_time(o['start_s']):>10} .. {fmt_time(o['end_s']):>10}  rank {o['rank']}: {what} "
                  + (f"(line {o['line']})" if "line" in o else f"(step {o['step']})"))
    if args.per_rank:
        print(f"  per-rank finish times: {args.per_rank}")
    return 0
