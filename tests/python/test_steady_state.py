"""Steady state before stopping (issue 12 item 6; docs/measurement.md "Steady state"), on real MPI
samples: the stop rule follows a state change made of real samples instead of stopping in the
state just left, and bench/steady_state.py counts latscope's warm-up in its repetitions."""
from __future__ import annotations

import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

from conftest import mpirun

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from steady_state_trace import read_trace  # noqa: E402
SPLICE = 150   # fewer than the default min_reps (200): the first check sees both states
MIN_REPS, WARMUP = 200, 100   # lts_rep_policy_default


def test_rule_follows_a_real_state_change(tmp_path: Path) -> None:
    """64 KiB round trips, then 0 B ones (about 8x faster), both traced in one launch: the rule
    replayed from every start within the 64 KiB part stops in the 0 B state, having discarded the
    64 KiB samples as warm-up. A rule that stopped on its CI alone stops at 200 samples of which
    up to 150 are 64 KiB: its median is then of the old state."""
    cp = mpirun(2, ["64K,0", str(tmp_path / "t_"), "3000", "10", "0", str(SPLICE)], prog="steady-state-trace", bind=True)
    assert cp.returncode == 0, cp.stderr
    slow, _, _ = read_trace(tmp_path / "t_65536.txt")
    fast, cores, fast_replays = read_trace(tmp_path / "t_0.txt")
    # pinned: each rank stayed on one core of its own for the whole trace
    assert len(slow) == len(fast) == 3000 and len(cores) == 1 and len(next(iter(cores))) == len(set(next(iter(cores))))
    # the plain traces' replays: every one stops within the trace, by convergence or at its end
    assert fast_replays and all(u >= MIN_REPS and w in ("converged", "end_of_trace") for _, u, _, _, w in fast_replays)
    x = slow[:SPLICE] + fast
    m_slow, m_fast = statistics.median(slow[:SPLICE]), statistics.median(fast)
    assert m_slow > 3 * m_fast, (m_slow, m_fast)   # two states far apart, or the test proves nothing
    _, _, replays = read_trace(tmp_path / "t_splice.txt")
    assert [r[0] for r in replays] == list(range(0, SPLICE, 10))
    for start, used, med, discarded, why in replays:
        kept = used - discarded
        assert why == "converged" and kept >= MIN_REPS, (start, used, discarded, why)
        # what the run saw of the later state; the rule's median must be of it: nearer (in
        # ratio) to it than to the earlier one, and no faster than half of it
        seen = statistics.median(x[max(start, SPLICE):start + used])
        assert seen / 2 < med < math.sqrt(seen * m_slow), (start, med, seen, m_slow)
        if SPLICE - start >= MIN_REPS // 4:   # a quarter of the first check's samples were 64 KiB
            assert discarded > 0, (start, used, med)


def test_bench_counts_the_warmup(tmp_path: Path) -> None:
    """bench/steady_state.py, one short round: it prints a row per size, each latscope run's
    repetitions counted with its warm-up (at least WARMUP + MIN_REPS), the per-round line and a
    verdict, and exits 0 (met) or 1 (missed), never with a traceback."""
    cp = subprocess.run([sys.executable, str(ROOT / "bench" / "steady_state.py"), "--rounds", "1", "--sizes", "8",
                         "--alternations", "2", "--osu-iters", "2000", "--pin"],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode in (0, 1), cp.stdout + cp.stderr
    assert "Traceback" not in cp.stderr
    row = next(line for line in cp.stdout.splitlines() if re.match(r"\s+8\s", line))
    cells = row.split()
    reps_max, ratio_max = int(cells[-9]), float(cells[-8])
    assert reps_max >= WARMUP + MIN_REPS and math.isclose(ratio_max, reps_max / 2000, rel_tol=1e-3), row
    assert re.search(r"round 1: 8 B [+-]\d", cp.stdout)
    verdict = cp.stdout.strip().splitlines()[-1]
    assert verdict.startswith("target:") and verdict.endswith("met" if cp.returncode == 0 else "MISSED")
