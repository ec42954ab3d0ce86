#!/usr/bin/env python3
"""Benchmark (a), issue 2: latscope's 8-byte ping-pong median / a bare MPI_Send/MPI_Recv loop's
median, measured side by side in one run (runs interleaved so drift hits both). Target <= 1.02.
Exit status 1 when the target is missed."""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope.results import load  # noqa: E402
from latscope.run import launch, program  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iters", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--target", type=float, default=1.02)
    ap.add_argument("--sync", default="auto", help="latscope's repetition separation (auto: the default; barrier: isolated)")
    a = ap.parse_args()
    ln = launch(2)
    lat, bare = [], []
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "pp.jsonl"
        for _ in range(a.rounds):
            cp = subprocess.run(ln.prefix + [str(program("latscope-bench")), "p2p", "--sizes", str(a.size),
                                             "--min-reps", str(a.iters), "--max-reps", str(a.iters), "--budget", "0",
                                             "--warmup", "100", "--sync", a.sync, "-o", str(out)],
                                env=ln.env, capture_output=True, text=True, timeout=300, check=True)
            lat.append(float(load(out).points["median_s"].iloc[0]))
            cp = subprocess.run(ln.prefix + [str(program("bare-pingpong")), str(a.iters), str(a.size)],
                                env=ln.env, capture_output=True, text=True, timeout=300, check=True)
            bare.append(float(cp.stdout.strip()))
    ratios = [x / y for x, y in zip(lat, bare)]
    r = statistics.median(ratios)
    print(f"8 B ping-pong one-way median over {a.rounds} interleaved runs of {a.iters} iterations (np=2):")
    print(f"  latscope (--sync {a.sync}, fixed count)            {statistics.median(lat) * 1e9:8.1f} ns")
    print(f"  bare MPI_Send/MPI_Recv loop                         {statistics.median(bare) * 1e9:8.1f} ns")
    print(f"  ratio latscope / bare: median {r:.3f}  (per run: {', '.join(f'{x:.3f}' for x in ratios)})")
    print(f"  target <= {a.target}: {'met' if r <= a.target else 'MISSED'}")
    return 0 if r <= a.target else 1


if __name__ == "__main__":
    sys.exit(main())
