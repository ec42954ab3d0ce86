#!/usr/bin/env python3
"""Benchmark: the LogGOPS simulator's scale and speed (docs/sim.md "Scale").

Targets: >= 10 M events/s on one core; a 1,048,576-rank dissemination barrier with a lognormal
delay table in <= 10 s and <= 2 GB peak RSS; memory linear in P (bytes/rank printed at several P).
A reference figure for LogGOPSim (262,144 ranks) is printed beside the 2^18-rank run as quoted,
not measured in the run: this script does not build or run LogGOPSim.

Printed: events/s of a lock-step 2^20-rank dissemination barrier (no table: every rank's events
at one instant) and of the run with the table, per CPU second of the program (it is
single-threaded: "one core") and per wall second; the table run's wall time (the whole program:
start, schedule, output) and peak RSS; bytes/rank at P = 2^14 .. 2^20. Each figure is the median
of --runs runs, with their min and max. Exit status 1 when a target is missed. The machine may be
shared: CPU seconds are what the simulator used, wall seconds what a user waits.

--baseline BIN measures another latscope-sim (e.g. one built from an earlier commit) side by side
in the same run: the runs of the two alternate, so both see the same load, and the ratio of their
CPU times is printed.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope.run import program  # noqa: E402

TARGET_EVENTS_PER_S = 10e6
TARGET_WALL_S = 10.0
TARGET_RSS = 2 << 30
PARAMS = ["--L", "1e-6", "--o", "2e-7"]   # one hop 1.4 us; the table adds 2 us mean per message


def run(args: list[str], binary: Path | None = None) -> dict[str, float]:
    """One latscope-sim run: its summary plus wall and CPU seconds measured from here."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cp = subprocess.run([str(binary or program("latscope-sim")), *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cp.returncode != 0:
        sys.exit(f"latscope-sim {' '.join(args)}: {cp.stderr.strip()}")
    d: dict[str, float] = json.loads(cp.stdout)
    d["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    d["outer_wall_s"] = wall
    return d


KEYS = ("cpu_s", "outer_wall_s", "wall_s", "peak_rss_bytes", "engine_bytes")


def summarise(rs: list[dict[str, float]]) -> dict[str, Any]:
    """The first run's summary with the median of each cost over the runs, its min and max, and every
    run's CPU seconds (cpu_s_all)."""
    out: dict[str, Any] = dict(rs[0])
    for k in KEYS:
        vals = [float(r[k]) for r in rs]
        out[k], out[k + "_min"], out[k + "_max"] = statistics.median(vals), min(vals), max(vals)
    out["cpu_s_all"] = [float(r["cpu_s"]) for r in rs]
    return out


def side_by_side(args: list[str], runs: int, baseline: Path | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """`runs` runs of this build's latscope-sim and, alternating with them, of `baseline`."""
    mine: list[dict[str, float]] = []
    base: list[dict[str, float]] = []
    for _ in range(runs):
        mine.append(run(args))
        if baseline is not None:
            base.append(run(args, baseline))
            if (base[-1]["time_ps"], base[-1]["events"]) != (mine[-1]["time_ps"], mine[-1]["events"]):
                sys.exit(f"the baseline's result differs: {base[-1]['time_ps']} ps, {base[-1]['events']} events "
                         f"against {mine[-1]['time_ps']} ps, {mine[-1]['events']} events")
    return summarise(mine), (summarise(base) if base else None)


def line(label: str, d: dict[str, Any]) -> str:
    ev = float(d["events"])
    return (f"  {label:<34} {int(ev):>9} events  CPU {d['cpu_s']:5.2f} s ({d['cpu_s_min']:.2f}-{d['cpu_s_max']:.2f})"
            f"  {ev / d['cpu_s'] / 1e6:5.2f} M events/s CPU ({ev / d['cpu_s_max'] / 1e6:.2f}-"
            f"{ev / d['cpu_s_min'] / 1e6:.2f})  wall {d['outer_wall_s']:5.2f} s ({d['outer_wall_s_min']:.2f}-"
            f"{d['outer_wall_s_max']:.2f})  peak RSS {d['peak_rss_bytes'] / 2**20:6.1f} MiB")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--P", type=int, default=1 << 20, help="ranks of the main runs (default 2^20)")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure, median reported (default 3)")
    ap.add_argument("--baseline", type=Path, help="another latscope-sim to measure side by side (e.g. an earlier "
                                                  "commit's build)")
    a = ap.parse_args()
    if a.baseline is not None and not a.baseline.is_file():
        sys.exit(f"--baseline {a.baseline}: no such program")
    with tempfile.TemporaryDirectory(prefix="sim-scale-") as tmp:
        table = Path(tmp) / "lognormal.txt"
        cp = subprocess.run([sys.executable, "-m", "latscope.cli", "tables", "make", "lognormal", "--mean", "2us",
                             "--sd", "1us", "-o", str(table)], capture_output=True, text=True)
        if cp.returncode != 0:
            sys.exit(f"latscope tables make: {cp.stderr.strip()}")
        base = ["--algo", "dissemination"] + PARAMS
        ok = True
        print(f"latscope-sim, dissemination barrier, L = 1 us, o = 0.2 us; table: lognormal mean 2 us, sd 1 us; "
              f"median of {a.runs} runs (min-max)" + (f"; baseline {a.baseline}, alternating" if a.baseline else ""))
        rows = []
        for label, extra in (("lock-step (no table)", []), ("lognormal table", ["--table", str(table), "--seed", "1"])):
            d, b = side_by_side(base + ["--P", str(a.P)] + extra, a.runs, a.baseline)
            rows.append((label, d))
            print(line(f"P = {a.P} {label}", d) + f"  barrier {d['time_s'] * 1e6:.3f} us")
            if b is not None:
                print(line(f"P = {a.P} {label}, baseline", b))
                print(f"    this build / baseline: CPU time x{d['cpu_s'] / b['cpu_s']:.2f} (median), "
                      f"x{d['cpu_s_min'] / b['cpu_s_min']:.2f} (best runs): {b['cpu_s'] / d['cpu_s']:.2f}x faster")
        lock, tab = rows[0][1], rows[1][1]
        rate = float(lock["events"]) / lock["cpu_s"]
        rate_tab = float(tab["events"]) / tab["cpu_s"]
        print(f"target >= {TARGET_EVENTS_PER_S / 1e6:.0f} M events/s on one core: lock-step {rate / 1e6:.2f}, "
              f"{'ok' if rate >= TARGET_EVENTS_PER_S else 'MISSED'}; with the table {rate_tab / 1e6:.2f}  "
              f"{'ok' if rate_tab >= TARGET_EVENTS_PER_S else 'MISSED'} (medians)")
        # the median decides; the runs below the target say how much margin a slower spell of a shared host leaves
        for label, d in rows:
            rates = [float(d["events"]) / c for c in d["cpu_s_all"]]
            below = sum(r < TARGET_EVENTS_PER_S for r in rates)
            print(f"  {label}: {len(rates) - below} of {len(rates)} runs >= {TARGET_EVENTS_PER_S / 1e6:.0f} M events/s "
                  f"(slowest {min(rates) / 1e6:.2f}, fastest {max(rates) / 1e6:.2f})")
        # both are judged: the 2^20-rank target is the run with the lognormal table
        ok &= rate >= TARGET_EVENTS_PER_S and rate_tab >= TARGET_EVENTS_PER_S
        if a.P == 1 << 20:
            w, rss = tab["outer_wall_s"], tab["peak_rss_bytes"]
            good = w <= TARGET_WALL_S and rss <= TARGET_RSS
            print(f"target 2^20 ranks with the table <= {TARGET_WALL_S:.0f} s and <= 2 GB: {w:.2f} s wall "
                  f"({tab['cpu_s']:.2f} s CPU), {rss / 2**30:.3f} GB  {'ok' if good else 'MISSED'}")
            ok &= good
        print("memory per rank (with the table):")
        per = []
        for P in (1 << 14, 1 << 16, 1 << 18, 1 << 20):
            if P > a.P:
                break
            d = run(base + ["--P", str(P), "--table", str(table)])
            per.append((P, d["engine_bytes"] / P, d["peak_rss_bytes"] / P))
            print(f"  P = {P:>8}: engine {d['engine_bytes'] / P:7.1f} B/rank, peak RSS {d['peak_rss_bytes'] / P:7.1f} "
                  f"B/rank, {d['outer_wall_s']:.2f} s wall")
            if P == 1 << 18:
                print(f"    here {d['outer_wall_s']:.2f} s, {d['peak_rss_bytes'] / 2**30:.3f} GB; LogGOPSim at "
                      "262,144 ranks, QUOTED (not measured in this run): 20.9-25.8 s and 1.79 GiB, built from its "
                      "source with -O3 and run on a 2-core VM of this kind (11.6 s and 1.8 GB in an earlier quote)")
        # bytes/rank = a constant (the program, libc, the wheel's 64 Ki buckets: ~16 MiB of RSS) / P
        # + a per-rank part; the marginal bytes per added rank between successive P is that part
        for i in (1, 2):
            marg = [((x2[i] * x2[0] - x1[i] * x1[0]) / (x2[0] - x1[0])) for x1, x2 in zip(per, per[1:])]
            if marg:
                print(f"  marginal {('engine', 'peak RSS')[i - 1]} bytes per added rank: "
                      + ", ".join(f"{m:.1f}" for m in marg))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
