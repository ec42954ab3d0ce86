"""``latscope sim-sweep``: a LogGOPS simulation (docs/sim.md) of generated schedules over a range of
P, each without and (given ``--table``) with the delay table's variation, and of GOAL files, into
one results file (``"bench": "sim"`` records, docs/results-schema.md) that ``latscope report``
draws: time vs P per algorithm, the finish-time histogram, the critical path."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_USAGE = 2
PROG = "latscope sim-sweep"
MAX_P = 1 << 30


def parse_p_list(text: str) -> list[int]:
    """``2,4,1000``, ``2^20`` (a power of two), ``2..2^20`` (every power of two in the range)."""
    def one(tok: str) -> int:
        tok = tok.strip()
        try:
            if "^" in tok:
                b, e = tok.split("^", 1)
                v = int(b) ** int(e)   # int ** int: an int (e >= 0 here; a negative e is refused below)
            else:
                v = int(tok)
        except ValueError:
            raise ValueError(f"--P {text!r}: {tok!r} is not a rank count (e.g. 1000, 2^20, 2..2^20)") from None
        if not isinstance(v, int) or not 1 <= v <= MAX_P:
            raise ValueError(f"--P {text!r}: {tok!r} = {v}: must be 1..2^30")
        return int(v)

    out: list[int] = []
    for part in text.split(","):
        if ".." in part:
            lo_s, hi_s = part.split("..", 1)
            lo, hi = one(lo_s), one(hi_s)
            if lo > hi:
                raise ValueError(f"--P {text!r}: the range {part!r} is empty")
            p = 1
            while p < lo:
                p *= 2
            out += [x for x in (p << i for i in range(64)) if x <= hi]
        else:
            out.append(one(part))
    if not out:
        raise ValueError(f"--P {text!r}: no rank count")
    return sorted(set(out))


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from latscope.sim_cli import add_sim_args
    p: argparse.ArgumentParser = subparsers.add_parser(
        "sim-sweep", help="LogGOPS simulation of algorithms over P, with and without a delay table: results for "
                          "latscope report", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--algos", default="dissemination", help="generated schedules, comma-separated (latscope sim --list;"
                                                            " default dissemination)")
    p.add_argument("--P", dest="P_list", default="2..2^16", help="ranks: 2,4,1000 or 2^20 or 2..2^20 (the powers of "
                                                                 "two in the range; default 2..2^16)")
    p.add_argument("--goal", action="append", default=[], metavar="FILE",
                   help="a GOAL file to simulate too (its own P; its critical path goes to the report); repeatable")
    p.add_argument("--critical-path", dest="cp_P", type=int, metavar="P",
                   help="each algorithm's critical path at P ranks (P joins the sweep; the engine's path, 32 bytes "
                        "per operation: P <= 2^20)")
    add_sim_args(p, table_help="latscope delay table: every point is run without it and with it (and the OS noise)")
    p.add_argument("--bins", type=int, default=20, help="histogram bins of the finish times (default 20)")
    p.add_argument("-o", "--out", default="sim.jsonl", help="results file (default sim.jsonl)")
    return p


def _fail(msg: str) -> int:
    sys.stderr.write(f"{PROG}: error: {msg}\n")
    return EXIT_USAGE


def _rank_stats(per_rank: Path) -> dict[str, float | None]:
    """Statistics of the ranks' finish times (seconds) from latscope-sim's --per-rank file."""
    import numpy as np
    ps = np.fromregex(str(per_rank), r'"finish_ps": *(-?\d+)', dtype=[("ps", np.int64)])["ps"]
    s = ps.astype(np.float64) / 1e12
    if not len(s):
        return {k: None for k in ("min_s", "median_s", "mean_s", "max_s", "sd_s", "p90_s", "p99_s")}
    return {"min_s": float(s.min()), "median_s": float(np.median(s)), "mean_s": float(s.mean()),
            "max_s": float(s.max()), "sd_s": float(s.std(ddof=1)) if len(s) > 1 else None,
            "p90_s": float(np.percentile(s, 90)), "p99_s": float(np.percentile(s, 99))}


def critical_path_summary(cp: dict[str, Any] | None, keep: int = 20) -> dict[str, Any] | None:
    """What a results record keeps of latscope-sim's critical path: its length, the ranks and
    messages on it, the time each kind of operation holds, and its last ``keep`` operations."""
    if not cp:
        return None
    ops: list[dict[str, Any]] = cp["ops"]
    busy: dict[str, float] = {}
    for o in ops:
        busy[o["op"]] = busy.get(o["op"], 0.0) + max(0.0, float(o["end_s"]) - float(o["start_s"]))
    return {"length": cp["length"], "ranks": len({o["rank"] for o in ops}),
            "messages": sum(1 for o in ops if o["op"] == "recv"),
            "busy_s": busy, "start_s": ops[0]["start_s"] if ops else None, "end_s": ops[-1]["end_s"] if ops else None,
            "ops": ops[-keep:]}


def point_record(res: Any, per_rank: Path, name: str) -> dict[str, Any]:
    """One results point (docs/results-schema.md, "Simulation records") of one simulation."""
    d = res.summary
    st = _rank_stats(per_rank)
    rec: dict[str, Any] = {"type": "point", "bench": "sim", "op": name, "mode": None, "schedule": d["schedule"],
                           "ranks": d["P"], "size_bytes": d["schedule"].get("size_bytes", 0),
                           "table": d["table"], "seed": d["seed"], "noise": d.get("noise"),
                           "variation": d["table"] is not None or d.get("noise") is not None,
                           "time_s": d["time_s"], "n": d["P"]}
    rec.update(st)
    rec.update({"ci_of": None, "ci_level": None, "ci_lo_s": None, "ci_hi_s": None, "ci_half_s": None, "rel_err": None,
                "reps_valid": None, "reps_total": None, "stop_reason": None,
                "events": d["events"], "messages": d["messages"], "delays": d["delays"],
                "delay_mean_s": d["delay_mean_s"], "histogram": d["histogram"],
                "critical_path": critical_path_summary(d.get("critical_path")), "params": d["params"],
                "wall_s": d["wall_s"], "events_per_s": d["events_per_s"], "peak_rss_bytes": d["peak_rss_bytes"]})
    return rec


def meta_record(args: argparse.Namespace, params: dict[str, Any], algos: list[str], Ps: list[int]) -> dict[str, Any]:
    """The metadata record: the results schema's fields, null where a simulation has no value
    (no MPI, no hosts), the simulated clock as the timer (1 ps, no overhead)."""
    import datetime

    import latscope
    from latscope.results import SCHEMA
    return {"type": "meta", "schema": SCHEMA, "tool": PROG, "version": latscope.__version__, "git_sha": None,
            "mpi_library": None, "mpi_standard": None, "ranks": None, "hosts": [], "rank_hosts": [],
            "timer": {"name": "simulated", "resolution_s": 1e-12, "overhead_s": 0.0},
            "timing_method": None, "clock_sync": None, "sync": None, "sync_requested": None, "rep_policy": None,
            "bench": "sim", "op": "sweep", "mode": None, "sizes_bytes": [args.size], "reply_bytes": None,
            "window": None, "seed": args.seed, "command_line": sys.argv,
            "utc_time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "ranks_per_host": None, "cpus_online": None, "cpus_available": None, "oversubscribed": None,
            "load": None, "job": None,
            "sim": {"algos": algos, "P": Ps, "goal": list(args.goal), "critical_path_P": args.cp_P,
                    "params": params, "table": args.table,
                    "noise": ({"period_s": args.noise_period, "detour_s": args.noise_detour}
                              if args.noise_period is not None else
                              {"trace": args.noise_trace} if args.noise_trace is not None else None)}}


def main(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    import tempfile

    from latscope import sim
    from latscope.models import ModelError
    from latscope.sim_cli import sim_params
    from latscope.units import fmt_time
    try:
        Ps = parse_p_list(args.P_list)
    except ValueError as e:
        return _fail(str(e))
    algos = [a.strip() for a in args.algos.split(",") if a.strip()]
    if args.bins < 1:
        return _fail(f"--bins {args.bins}: must be >= 1")
    try:
        known = sim.algorithms()
        bad = [a for a in algos if a not in known]
        if bad:
            return _fail(f"--algos: {', '.join(bad)}: unknown; valid: {', '.join(known)}")
        for gpath in args.goal:
            if not Path(gpath).is_file():
                return _fail(f"--goal {gpath}: no such file")
        par, noise = sim_params(args)
        if args.noise_trace is not None and not Path(args.noise_trace).is_file():
            return _fail(f"--noise-trace {args.noise_trace}: no such file")
        if args.noise_trace is not None and noise is not None:   # before any run: one line, nothing written
            return _fail(f"--noise-trace {args.noise_trace}: give either it or --noise-period/--noise-detour")
        variations: list[tuple[str | None, tuple[float, float] | None, str | None]] = [(None, None, None)]
        if args.table is not None or noise is not None or args.noise_trace is not None:
            variations.append((args.table, noise, args.noise_trace))
        out = Path(args.out)
        if args.cp_P is not None:
            if not 1 <= args.cp_P <= 1 << 20:
                return _fail(f"--critical-path {args.cp_P}: must be 1..2^20 (the path takes 32 bytes per operation)")
            Ps = sorted(set(Ps) | {args.cp_P})
        runs: list[tuple[str, dict[str, Any]]] = [(a, {"schedule": a, "P": P}) for a in algos for P in Ps]
        runs += [(Path(gp).name, {"schedule": Path(gp)}) for gp in args.goal]
        no_cp: set[str] = set()
        with tempfile.TemporaryDirectory(prefix="latscope-sim-sweep-") as tmp, out.open("w") as f:
            per_rank = Path(tmp) / "per_rank.jsonl"
            f.write(json.dumps(meta_record(args, dataclasses.asdict(par), algos, Ps)) + "\n")
            for name, what in runs:
                for table, nz, trace in variations:
                    kw: dict[str, Any] = dict(table=table, seed=args.seed, P=what.get("P"), size_bytes=args.size,
                                              k=args.k, per_rank=False, per_rank_path=per_rank, bins=args.bins,
                                              noise=nz, noise_trace=trace)
                    res = None
                    if what.get("P") is not None and what.get("P") == args.cp_P and name not in no_cp:
                        # the engine's own critical path of the generated schedule (docs/sim.md
                        # "Outputs"); a schedule it cannot follow (a shared-memory flag, rendezvous)
                        # is run without it, with a note
                        try:
                            res = sim.run(what["schedule"], par, critical_path=True, **kw)
                        except sim.SimError as e:
                            if "critical path" not in str(e):
                                raise
                            no_cp.add(name)
                            print(f"{PROG}: no critical path for {name}: {e}", file=sys.stderr)
                    if res is None:
                        res = sim.run(what["schedule"], par, **kw)
                    rec = point_record(res, per_rank, name)
                    f.write(json.dumps(rec, allow_nan=False) + "\n")
                    f.flush()
                    print(f"{name:<16} P = {rec['ranks']:>8} {'variation' if rec['variation'] else 'none':<9} "
                          f"last {fmt_time(rec['time_s'])}, median {fmt_time(rec['median_s'])} "
                          f"({rec['events']} events, {rec['wall_s']:.2g} s)", file=sys.stderr)
    except (sim.SimError, ModelError) as e:
        return _fail(str(e))
    except OSError as e:
        return _fail(f"{e.filename or args.out}: {e.strerror}")
    print(out)
    return 0

