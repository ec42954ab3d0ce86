#!/usr/bin/env python3
"""Benchmark: residual clock-synchronisation error after each method and its
cost, at np = 2 and 4 (medians over runs; methods interleaved). The residual is measured after the
synchronisation on the synchronised clocks (SKaMPI bounds, rank 0 against each rank); its own
uncertainty (half the bounds' width) is printed alongside: a residual below it is noise."""
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

METHODS = ["none", "mpibench", "skampi", "jk", "hca"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--np", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "s.jsonl"
        for np_ in a.np:
            ln = launch(np_)
            rows: dict[str, list[tuple[float, float, float]]] = {m: [] for m in METHODS}
            for _ in range(a.rounds):
                for m in METHODS:
                    subprocess.run(ln.prefix + [str(program("latscope-bench")), "coll", "--op", "barrier", "--alg",
                                                "native", "--sizes", "0", "--timing", "global", "--clock-sync", m,
                                                "--min-reps", "5", "--max-reps", "5", "-o", str(out)],
                                   env=ln.env, capture_output=True, text=True, timeout=300, check=True)
                    s = load(out).syncs[0]
                    rows[m].append((s["residual_max_s"], s["residual_bound_s"], s["cost_s"]))
            print(f"# np={np_}{' (oversubscribed: more ranks than cores)' if np_ > 2 else ''}, median of {a.rounds}")
            print(f"{'method':9s} {'residual max':>13s} {'uncertainty':>12s} {'cost':>10s}")
            for m in METHODS:
                r = [statistics.median(x[i] for x in rows[m]) for i in range(3)]
                print(f"{m:9s} {r[0] * 1e6:11.3f}us {r[1] * 1e6:10.3f}us {r[2] * 1e3:8.2f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
