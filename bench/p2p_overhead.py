#!/usr/bin/env python3
"""Benchmark: latscope's 8-byte ping-pong median / a bare MPI_Send/MPI_Recv loop's
median. Target <= 1.02 in every round (5 of 5). Exit status 1 when the target is missed.

(a) the target, side by side in ONE launch per round (build/bin/steady-state): the bare loop
    (osu_latency's) and latscope's driver (lts_measure on the pingpong descriptor with the
    defaults latscope-bench uses: --sync auto, monotonic timer) for the same fixed count,
    alternated; a launch's own state (docs/measurement.md, "Launches") hits both.
(b) shown beside it, as it was first measured: latscope-bench and bench/bare_pingpong.c in
    separate launches, interleaved; its per-round ratio also carries the launch-to-launch spread."""
from __future__ import annotations

import argparse
import json
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
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--target", type=float, default=1.02)
    ap.add_argument("--sync", default="auto", help="latscope-bench's repetition separation in (b) (auto: the default; "
                                                   "barrier: every repetition isolated)")
    a = ap.parse_args()
    ln = launch(2)
    inl, lat, bare = [], [], []
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "pp.jsonl"
        for _ in range(a.rounds):
            cp = subprocess.run(ln.prefix + [str(program("steady-state")), str(a.size), "2", str(a.iters)],
                                env=ln.env, capture_output=True, text=True, timeout=300, check=True)
            d = json.loads(cp.stdout.splitlines()[0])
            inl.append((d["latscope_long_median_s"], d["osu_median_s"]))
            subprocess.run(ln.prefix + [str(program("latscope-bench")), "p2p", "--sizes", str(a.size),
                                        "--min-reps", str(a.iters), "--max-reps", str(a.iters), "--budget", "0",
                                        "--warmup", "100", "--sync", a.sync, "-o", str(out)],
                           env=ln.env, capture_output=True, text=True, timeout=300, check=True)
            lat.append(float(load(out).points["median_s"].iloc[0]))
            cp = subprocess.run(ln.prefix + [str(program("bare-pingpong")), str(a.iters), str(a.size)],
                                env=ln.env, capture_output=True, text=True, timeout=300, check=True)
            bare.append(float(cp.stdout.strip()))
    r_in = [x / y for x, y in inl]
    r_sep = [x / y for x, y in zip(lat, bare)]
    met = sum(r <= a.target for r in r_in)
    print(f"{a.size} B ping-pong one-way median, {a.iters} iterations, {a.rounds} rounds (np=2):")
    print(f"(a) one launch per round: latscope driver {statistics.median(x for x, _ in inl) * 1e9:7.1f} ns, "
          f"bare loop {statistics.median(y for _, y in inl) * 1e9:7.1f} ns")
    print(f"    ratio per round: {', '.join(f'{x:.3f}' for x in r_in)}  (worst {max(r_in):.3f})")
    print(f"(b) separate launches: latscope-bench --sync {a.sync} {statistics.median(lat) * 1e9:7.1f} ns, "
          f"bare-pingpong {statistics.median(bare) * 1e9:7.1f} ns")
    print(f"    ratio per round: {', '.join(f'{x:.3f}' for x in r_sep)}  (worst {max(r_sep):.3f}; "
          f"launch-to-launch spread of the bare loop {min(bare) * 1e9:.0f}..{max(bare) * 1e9:.0f} ns)")
    print(f"target (a) <= {a.target} in {a.rounds} of {a.rounds} rounds: {met} met -> "
          f"{'met' if met == a.rounds else 'MISSED'}")
    return 0 if met == a.rounds else 1


if __name__ == "__main__":
    sys.exit(main())
