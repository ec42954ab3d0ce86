#!/usr/bin/env python3
"""Benchmark (seed 001 Table 1): wall time to benchmark scatter over 0..100 KiB
in 1 KiB steps, one repetition per size, with global vs max vs root timing, as ratios to root.
Runs are interleaved (root, max, global, root, ...) so machine drift hits every method alike.
The wall time is the whole latscope-bench process (global: clock synchronisation included) and,
separately, the sum of the points' own wall_s (the measuring alone)."""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope.results import load  # noqa: E402
from latscope.run import launch, program  # noqa: E402

METHODS = ["root", "max", "global"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--op", default="scatter")
    ap.add_argument("--alg", default="native")
    ap.add_argument("--reps", type=int, default=1, help="repetitions per size (seed: 1)")
    a = ap.parse_args()
    ln = launch(a.np)
    sizes = "0:100K:+1K"
    proc: dict[str, list[float]] = {m: [] for m in METHODS}
    points: dict[str, list[float]] = {m: [] for m in METHODS}
    with tempfile.TemporaryDirectory() as td:
        for _ in range(a.rounds):
            for m in METHODS:
                out = Path(td) / f"{m}.jsonl"
                t0 = time.perf_counter()
                subprocess.run(ln.prefix + [str(program("latscope-bench")), "coll", "--op", a.op, "--alg", a.alg,
                                            "--sizes", sizes, "--timing", m, "--min-reps", str(a.reps),
                                            "--max-reps", str(a.reps), "--warmup", "0", "-o", str(out)],
                               env=ln.env, capture_output=True, text=True, timeout=600, check=True)
                proc[m].append(time.perf_counter() - t0)
                res = load(out)
                sync = sum(s["cost_s"] + s["check_cost_s"] for s in res.syncs)
                points[m].append(float(res.points["wall_s"].sum()) + sync)
    print(f"# {a.op} ({a.alg}) 0..100 KiB step 1 KiB, {a.reps} repetition(s) per size, np={a.np}, "
          f"median of {a.rounds} interleaved rounds")
    print(f"{'timing':8s} {'process wall':>13s} {'÷ root':>7s} {'measuring (+sync)':>18s} {'÷ root':>7s}")
    for m in METHODS:
        pw, mw = statistics.median(proc[m]), statistics.median(points[m])
        print(f"{m:8s} {pw:12.3f}s {pw / statistics.median(proc['root']):7.2f} {mw * 1e3:16.2f}ms "
              f"{mw / statistics.median(points['root']):7.2f}")
    print("seed 001 Table 1 (16-node cluster, LAM): scatter global 28.7 s, max 0.8 s, root 0.8 s (36x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
