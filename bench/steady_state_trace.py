#!/usr/bin/env python3
"""What a missed round of bench/steady_state.py met: per-sample traces of
latscope's default ping-pong in one launch, the stop rule replayed on them, and a probe of what
moves with the ping-pong's state (build/bin/steady-state-trace; docs/measurement.md "Steady state").

Per size, one launch runs latscope's `pingpong` (defaults: back to back, monotonic timer) for N
repetitions and records every sample, the wall time and the core of each rank. Printed:
  - the medians of consecutive blocks of 1000 repetitions (how far, and how fast, the state moves)
    and the cores the ranks ran on (a migration would show);
  - the stop rule (the library's lts_rep_decide, replayed on the trace from every 50th repetition):
    how often it stops more than ±3 % from the median of the whole trace, and from the median of
    the 10,000 repetitions around its own run, and with how many repetitions;
  - with --probe-segments S: S segments of 1000 bare 8-byte MPI round trips, 500 bounces of one
    cache line between the two ranks' cores without MPI (where the host put the two virtual
    CPUs), and 200 runs of a fixed integer loop on rank 0 (the core's own speed). Segments are
    split into a fast and a slow state of the MPI median (the largest gap between sorted segment
    medians), with each state's durations and the two probes' medians in each state;
  - with --batch-replay B: an alternative rule replayed on the traces (here, in Python): the CI of
    the median taken from the medians of consecutive batches of B repetitions (a t-CI over at
    least 5 batches; the samples are autocorrelated, so the order-statistic CI, which counts every
    sample as independent, is too narrow), with the same halves/quarter check and halving.
    docs/measurement.md "Steady state" has the figures. The library's rule now has a batch CI of
    its own for back-to-back repetitions ("Autocorrelated samples"); bench/steady_state_rules.py
    replays that rule and the others tried on kept traces (--keep)."""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope.run import launch, program  # noqa: E402


def pct(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


Replay = tuple[int, int, float, int, str]   # start, repetitions used, median, discarded, stop reason


def read_trace(path: Path) -> tuple[list[float], set[tuple[int, int]], list[Replay]]:
    """A trace file of steady-state-trace: its samples, the (rank 0, rank 1) cores seen, and the
    stop rule's replays."""
    samples: list[float] = []
    cores: set[tuple[int, int]] = set()
    replays: list[Replay] = []
    for line in path.read_text().splitlines():
        p = line.split()
        if p[0] == "#replay":
            replays.append((int(p[1]), int(p[2]), float(p[3]), int(p[4]), p[5]))
        elif not line.startswith("#"):
            samples.append(float(p[2]))
            cores.add((int(p[3]), int(p[4])))
    return samples, cores, replays


def size_report(path: Path, target: float, window: int) -> None:
    samples, cores, replays = read_trace(path)
    n, med = len(samples), statistics.median(samples)
    blocks = [statistics.median(samples[i:i + 1000]) / med - 1 for i in range(0, n - 999, 1000)]
    print(f"{path.stem.rsplit('_', 1)[-1]:>6} B: {n} repetitions, median {med * 1e6:.3f} us, cores (rank 0, rank 1) "
          f"{sorted(cores)}; 1000-repetition blocks from the median: p5 {pct(blocks, .05) * 100:+.1f}% "
          f"p50 {pct(blocks, .5) * 100:+.1f}% p95 {pct(blocks, .95) * 100:+.1f}%, "
          f"{sum(abs(b) > target for b in blocks)} of {len(blocks)} beyond ±{target * 100:.0f}%")
    far_all = far_local = 0
    for start, used, m, _disc, _why in replays:
        c = start + used // 2
        lo = max(0, min(c - window // 2, n - window))
        far_all += abs(m / med - 1) > target
        far_local += abs(m / statistics.median(samples[lo:lo + window]) - 1) > target
    used_all = [u for _, u, _, _, _ in replays]
    print(f"         stop rule replayed from {len(replays)} starts: beyond ±{target * 100:.0f}% of the trace's median "
          f"{far_all} ({100 * far_all / len(replays):.1f}%), of the {window} repetitions around the run {far_local} "
          f"({100 * far_local / len(replays):.1f}%); repetitions p50 {pct(used_all, .5)} p90 {pct(used_all, .9)} "
          f"max {max(used_all)}")


def _one_state(x: list[float], tol: float) -> bool:
    """The library's stationarity check (src/core/reps.c one_state): halves, newest quarter."""
    n, m = len(x), statistics.median(x)
    h, q = n // 2, n // 4
    return (abs(statistics.median(x[-h:]) - statistics.median(x[:h])) / m <= tol
            and abs(statistics.median(x[-q:]) - statistics.median(x[:-q])) / m <= tol)


T975 = {4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def _batch_rule(x: list[float], start: int, batch: int, tol: float = 0.025) -> tuple[float, int]:
    """Median and repetitions used by the batch-median rule from x[start] on."""
    kept: list[float] = []
    i, nxt = start, 5 * batch
    while i < len(x):
        kept.append(x[i])
        i += 1
        if len(kept) < nxt:
            continue
        nxt = len(kept) + max(1, len(kept) // 50)
        k = len(kept) // batch
        meds = [statistics.median(kept[len(kept) - (j + 1) * batch:len(kept) - j * batch]) for j in range(k)]
        half = T975.get(k - 1, 2.2 if k <= 30 else 2.0) * statistics.stdev(meds) / k ** 0.5
        if half / statistics.median(kept) <= tol:
            if _one_state(kept, tol):
                return statistics.median(kept), i - start
            kept = kept[len(kept) // 2:]
            nxt = max(5 * batch, len(kept) + 1)
    return statistics.median(kept), i - start


def batch_report(path: Path, batch: int, target: float, window: int) -> None:
    x, _, _ = read_trace(path)
    far, used = 0, []
    starts = range(0, max(1, len(x) - window - 5000), 500)
    for s0 in starts:
        m, u = _batch_rule(x, s0, batch)
        lo = max(0, min(s0 + u // 2 - window // 2, len(x) - window))
        far += abs(m / statistics.median(x[lo:lo + window]) - 1) > target
        used.append(u)
    print(f"         batch rule (batches of {batch}) from {len(used)} starts: beyond ±{target * 100:.0f}% of the "
          f"{window} repetitions around the run {far} ({100 * far / len(used):.1f}%); repetitions p50 "
          f"{pct(used, .5)} p90 {pct(used, .9)} max {max(used)}")


def probe_report(path: Path) -> None:
    rows = [[float(v) for v in line.split()] for line in path.read_text().splitlines() if not line.startswith("#")]
    mpi = [r[2] for r in rows]
    s = sorted(mpi)
    # the two states: split at the largest gap between sorted segment medians (within p5..p95, so
    # one outlier does not make a state of its own)
    lo, hi = int(0.05 * len(s)), int(0.95 * len(s))
    k = max(range(lo, hi), key=lambda i: s[i + 1] - s[i])
    cut = (s[k] + s[k + 1]) / 2
    state = ["fast" if x <= cut else "slow" for x in mpi]
    durations: dict[str, list[float]] = {"fast": [], "slow": []}
    begin = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or state[i] != state[begin]:
            end = rows[i][1] if i < len(rows) else rows[-1][1] + (rows[-1][1] - rows[0][1]) / max(1, len(rows) - 1)
            durations[state[begin]].append(end - rows[begin][1])
            begin = i
    print(f"probe: {len(rows)} segments over {rows[-1][1]:.1f} s; MPI 8 B split at {cut * 1e9:.0f} ns")
    for name in ("fast", "slow"):
        g = [r for r, st in zip(rows, state) if st == name]
        if not g:
            continue
        d = durations[name]
        print(f"  {name}: {len(g)} segments, MPI 8 B {statistics.median(r[2] for r in g) * 1e9:.0f} ns, "
              f"cache-line bounce {statistics.median(r[3] for r in g) * 1e9:.1f} ns, "
              f"fixed loop {statistics.median(r[4] for r in g) * 1e9:.0f} ns, MPI 8 B after a random wait "
              f"{statistics.median(r[5] for r in g) * 1e9:.0f} ns; {len(d)} stretches, "
              f"lasting median {statistics.median(d) * 1e3:.0f} ms, longest {max(d) * 1e3:.0f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="0,8,1K,64K")
    ap.add_argument("--reps", type=int, default=100000, help="repetitions traced per size (>= 1000)")
    ap.add_argument("--probe-segments", type=int, default=0, help="segments of the state probe (0: none)")
    ap.add_argument("--pin", action="store_true", help="each rank bound to a core of its own (latscope.run.launch)")
    ap.add_argument("--target", type=float, default=0.03)
    ap.add_argument("--keep", help="directory to keep the traces in (default: a temporary one)")
    ap.add_argument("--batch-replay", type=int, default=0, metavar="B",
                    help="also replay a rule whose CI comes from medians of B-repetition batches (0: no)")
    a = ap.parse_args()
    if a.reps < 1000 or a.probe_segments < 0 or a.batch_replay < 0:
        print(f"--reps {a.reps} / --probe-segments {a.probe_segments} / --batch-replay {a.batch_replay}: need reps "
              ">= 1000, segments >= 0, batch >= 0",
              file=sys.stderr)
        return 2
    ln = launch(2, pin=a.pin)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(a.keep or tmp)
        d.mkdir(parents=True, exist_ok=True)
        cp = subprocess.run(ln.prefix + [str(program("steady-state-trace")), a.sizes, str(d / "trace_"), str(a.reps),
                                         "50", str(a.probe_segments)],
                            env=ln.env, capture_output=True, text=True, timeout=600)
        if cp.returncode == 2:   # bad sizes: the program's usage line
            print(f"--sizes {a.sizes}: {cp.stderr.strip()}", file=sys.stderr)
            return 2
        if cp.returncode:
            print(f"steady-state-trace failed (exit {cp.returncode}): {cp.stderr.strip()[-500:]}")
            return 1
        window = min(10000, a.reps)
        for f in sorted(d.glob("trace_*.txt"), key=lambda p: (p.stem == "trace_probe", len(p.stem), p.stem)):
            if f.stem == "trace_probe":
                probe_report(f)
            else:
                size_report(f, a.target, window)
                if a.batch_replay:
                    batch_report(f, a.batch_replay, a.target, window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
