#!/usr/bin/env python3
"""Benchmark: a responsive `latscope`. Target: <= 0.2 s (median) for
`latscope --version`, `latscope --help`, `latscope CMD --help` for every command, and for
`latscope bench ...` up to the launch. Exit status 1 when the target is missed.

Each command runs --runs times, interleaved with a bare `python -c pass` of the same interpreter
(one round = every command once, the bare start first), so the machine's load hits all alike.
Printed per command: its median, and its median over the bare start's median in the same run.
"Up to the launch": `latscope bench p2p` with a launcher that exits at once, two ways: --launcher
true (the user's launcher line) and LATSCOPE_MPIEXEC=true (the mpiexec path: latscope still asks
it for its --version and builds the line), so the time is latscope's own Python work plus one or
two starts of /bin/true. Bytecode is cached as in an installed package (compiled once, in a
warm-up round that is not counted; into a temporary PYTHONPYCACHEPREFIX, whatever this shell's
PYTHONDONTWRITEBYTECODE says); one more row, outside the target, runs `--help` with
PYTHONDONTWRITEBYTECODE=1 and the interpreter's own caches: latscope's modules are compiled at
every start where the source tree has no __pycache__ (a checkout never written to). The heavy
libraries are kept off this path by importing them inside
the commands (latscope/commands.py); tests/python/test_cli_startup.py checks that, this times it."""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope import cli  # noqa: E402


def latscope_argv() -> list[str]:
    """The installed `latscope` script beside this interpreter, else `python -m latscope.cli`."""
    script = Path(sys.executable).parent / "latscope"
    return [str(script)] if script.exists() else [sys.executable, "-m", "latscope.cli"]


def commands() -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, argv after `latscope`, extra environment) for every case timed."""
    true = shutil.which("true") or "/bin/true"
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    cases: list[tuple[str, list[str], dict[str, str]]] = [("--version", ["--version"], {}), ("--help", ["--help"], {})]
    cases += [(f"{name} --help", [name, "--help"], {}) for name in sub.choices]
    cases += [("bench p2p --launcher true", ["bench", "p2p", "--launcher", true], {}),
              ("bench p2p (mpiexec = true)", ["bench", "p2p", "--np", "2"], {"LATSCOPE_MPIEXEC": true})]
    return cases


def timed(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    cp = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t = time.perf_counter() - t0
    if cp.returncode != 0:
        raise SystemExit(f"cli_startup: `{' '.join(argv)}` failed (exit {cp.returncode}): {cp.stderr.strip()}")
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="runs of every command (default 7; the median is printed)")
    ap.add_argument("--target", type=float, default=0.2, help="seconds, the most a median may take (default 0.2)")
    a = ap.parse_args()
    if a.runs < 1:
        print(f"cli_startup: --runs {a.runs}: must be at least 1", file=sys.stderr)
        return 2
    base = latscope_argv()
    cases = commands()
    bare: list[float] = []
    uncached: list[float] = []
    times: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    with tempfile.TemporaryDirectory(prefix="latscope-pyc-") as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        for k in range(a.runs + 1):   # round 0 compiles the bytecode: not counted
            t = timed([sys.executable, "-c", "pass"], env)
            ts = [timed(base + argv, {**env, **extra}) for _, argv, extra in cases]
            plain = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
            nc = timed(base + ["--help"], {**plain, "PYTHONDONTWRITEBYTECODE": "1"})
            if k == 0:
                continue
            bare.append(t)
            uncached.append(nc)
            for (label, _, _), x in zip(cases, ts):
                times[label].append(x)
    b = statistics.median(bare)
    print(f"{'command (latscope ...)':34s} {'median':>9s} {'/ bare python':>14s}   ({a.runs} runs each, interleaved)")
    print(f"{'python -c pass (bare start)':34s} {b * 1e3:7.1f} ms {1.0:13.2f}x")
    worst = 0.0
    for label, ts in times.items():
        m = statistics.median(ts)
        worst = max(worst, m)
        flag = "" if m <= a.target else f"   over the {a.target:g} s target"
        print(f"{label:34s} {m * 1e3:7.1f} ms {m / b:13.2f}x{flag}")
    m = statistics.median(uncached)
    print(f"{'--help, PYTHONDONTWRITEBYTECODE=1':34s} {m * 1e3:7.1f} ms {m / b:13.2f}x   (not in the target)")
    ok = worst <= a.target
    print(f"slowest median {worst * 1e3:.1f} ms: target <= {a.target * 1e3:.0f} ms {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
