#!/usr/bin/env python3
"""Benchmark: the study harness's own cost per run (`latscope study run`: plan, launch
line, injector preload and its logs, the record appended and fsynced, progress), as a share of a
1 s run. Side by side in one session: R bare launches `mpiexec -n 2 latscope-cg` (the cost any
MPI run has) and one `latscope study run` of R runs of the same app (table "none": no injector;
and a table of zero delays: the injector loaded, calibrated and logging, adding no delay).
The study's start-up (Python, scipy for the tables, the plan) is paid once per study and measured
apart: the wall time of the same command again, when every cell is finished and nothing runs.
Overhead per run = bookkeeping + launch: bookkeeping = (study wall - start-up - the runs' own
wall_s) / R (everything the harness does between launches), launch = median wall_s of the study's
runs - median bare wall (medians: the machine is shared). Target: the harness's
(no injector) <= 5 % of 1 s; the injector's own cost per launch is printed beside it. Exit
status 1 when the target is missed."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope.run import launch, program  # noqa: E402

TARGET = 0.05
RUN_S = 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=20, help="runs per variant (default 20)")
    ap.add_argument("--app", default="cg", help="mini-app (default cg, class S: ~20 ms of work)")
    a = ap.parse_args()
    ln = launch(2)
    app = str(program(f"latscope-{a.app}"))
    latscope = [sys.executable, "-m", "latscope.cli"]
    with tempfile.TemporaryDirectory() as td:
        d = Path(td)
        subprocess.run(latscope + ["tables", "make", "constant", "--mean", "0us", "-o", str(d / "zero.tbl")],
                       check=True, capture_output=True)
        walls: dict[str, float] = {}
        startup: dict[str, float] = {}
        book: dict[str, float] = {}
        bare: list[float] = []
        for variant, table in (("injector, zero delays", "zero.tbl"), ("no injector", "none")):
            (d / "plan.toml").write_text(f'repetitions = {a.runs}\nnp = 2\n[tables]\nt = "{table}"\n[apps.{a.app}]\n')
            for _ in range(3):      # bare launches interleaved with the study runs, so both see the same machine
                t0 = time.monotonic()
                subprocess.run(ln.prefix + [app], env=ln.env, check=True, capture_output=True)
                bare.append(time.monotonic() - t0)
            cmd = latscope + ["study", "run", str(d / "plan.toml"), "-o", str(d / variant.replace(" ", "_"))]
            t0 = time.monotonic()
            subprocess.run(cmd, check=True, capture_output=True)
            wall = time.monotonic() - t0
            t0 = time.monotonic()
            subprocess.run(cmd, check=True, capture_output=True)     # all finished: start-up only
            startup[variant] = time.monotonic() - t0
            recs = [json.loads(x) for x in (d / variant.replace(" ", "_") / "runs.jsonl").read_text().splitlines()]
            runs = [r["wall_s"] for r in recs if r["type"] == "run"]
            book[variant] = (wall - startup[variant] - sum(runs)) / len(runs)
            walls[variant] = statistics.median(runs)
        for _ in range(a.runs - len(bare)):
            t0 = time.monotonic()
            subprocess.run(ln.prefix + [app], env=ln.env, check=True, capture_output=True)
            bare.append(time.monotonic() - t0)
    b = statistics.median(bare)
    print(f"bare mpiexec -n 2 latscope-{a.app}: median {b * 1e3:.1f} ms per launch ({len(bare)} launches)")
    ok = True
    for variant, w in walls.items():
        over = w - b + book[variant]
        share = over / RUN_S
        if variant == "no injector":
            ok = share <= TARGET
        print(f"latscope study run ({variant}): start-up {startup[variant]:.2f} s once; launch median "
              f"{w * 1e3:.1f} ms ({(w - b) * 1e3:+.1f} ms), bookkeeping {book[variant] * 1e3:.1f} ms per run: "
              f"{over * 1e3:+.1f} ms = {100 * share:.1f} % of a {RUN_S:g} s run"
              + (f" (target <= {100 * TARGET:g} %)" if variant == "no injector" else " (the injector's own cost)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
