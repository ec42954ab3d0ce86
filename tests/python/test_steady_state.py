"""Steady state before stopping (docs/measurement.md "Steady state"), on real MPI
samples: the stop rule follows a state change made of real samples instead of stopping in the
state just left, and bench/steady_state.py counts latscope's warm-up in its repetitions."""
from __future__ import annotations

import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mpirun

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from steady_state_trace import read_trace  # noqa: E402

MIN_REPS, WARMUP = 200, 100   # lts_rep_policy_default
N = 10000   # repetitions traced per size


@pytest.mark.parametrize("sizes, splice", [
    # 64 KiB then 0 B (about 8x faster), the earlier state in fewer than min_reps samples: the
    # first check sees both, and a rule that stopped on its CI alone stops at 200 samples of which
    # up to 150 are 64 KiB (its median of the old state)
    ("64K,0", 150),
    # 0 B then 64 KiB from sample 170 on: the later state is only the newest 15 % of the first
    # check's samples, and the newer half's median is still of the earlier state; the newest
    # quarter's median is not (docs/measurement.md "Steady state", rule 2)
    ("0,64K", 170),
])
def test_rule_follows_a_real_state_change(sizes: str, splice: int, tmp_path: Path) -> None:
    """Two sizes traced in one launch and spliced (steady-state-trace's SPLICE): `splice` samples
    of the first, then the second's trace. The rule replayed from every 10th start within the first
    part stops in the later state, having discarded (nearly all of) the earlier one (or, not finding the rest
    stationary, reaches the end of the trace reporting the later state)."""
    # whether the rule finds the later state stationary within N samples depends on the machine:
    # a launch under load can move for its whole life, every replay then (honestly) reaching the
    # end of the trace. Up to three launches, each checked in full; one of them must converge.
    converged = []
    for launch in range(3):
        d = tmp_path / f"launch{launch}"
        d.mkdir()
        converged.append(_check_splice(sizes, splice, d))
        if converged[-1]:
            break
    assert any(converged), converged


def _check_splice(sizes: str, splice: int, tmp_path: Path) -> bool:
    """One launch of the splice test; every assertion but convergence. True if some replay converged."""
    cp = mpirun(2, [sizes, str(tmp_path / "t_"), str(N), "10", "0", str(splice)], prog="steady-state-trace", bind=True)
    assert cp.returncode == 0, cp.stderr
    first, second = (1 << 16, 0) if sizes == "64K,0" else (0, 1 << 16)
    early, _, _ = read_trace(tmp_path / f"t_{first}.txt")
    late, cores, late_replays = read_trace(tmp_path / f"t_{second}.txt")
    # pinned: each rank stayed on one core of its own for the whole trace
    assert len(early) == len(late) == N and len(cores) == 1 and len(next(iter(cores))) == len(set(next(iter(cores))))
    # the plain trace's replays: every one stops within the trace, by convergence or at its end
    assert late_replays and all(u >= MIN_REPS and w in ("converged", "end_of_trace") for _, u, _, _, w in late_replays)
    x = early[:splice] + late
    m_early = statistics.median(early[:splice])
    ratio = m_early / statistics.median(late)
    assert ratio > 3 or ratio < 1 / 3, ratio   # two states far apart, or the test proves nothing
    _, _, replays = read_trace(tmp_path / "t_splice.txt")
    assert [r[0] for r in replays] == list(range(0, splice, 10))
    # a replay may also run to the end of the trace without finding it stationary (the machine
    # moving under load): honest, as long as what it reports is of the later state
    for start, used, med, discarded, why in replays:
        assert why in ("converged", "end_of_trace") and used - discarded >= MIN_REPS, (start, used, discarded, why)
        # what the run saw of the later state: the rule's median must be of it, nearer (in ratio)
        # to it than to the earlier state, and within a factor 2 of it
        seen = statistics.median(x[max(start, splice):start + used])
        assert abs(math.log(med / seen)) < min(math.log(2), abs(math.log(med / m_early))), (start, med, seen, m_early)
        # and of what it kept, at most a quarter is of the earlier state: with more, the older
        # half's median (or the newest quarter's) is of the other state and the check fails. A rule
        # on the CI alone, or on the halves alone in the second case, stops at 200 samples of which
        # 150 (170) are of the earlier state.
        kept, early_kept = used - discarded, max(0, splice - start - discarded)
        assert early_kept <= kept // 4 + 1, (start, used, discarded, med)
    return any(r[4] == "converged" for r in replays)


def test_rule_sees_sub_levels_longer_than_its_first_stop(tmp_path: Path) -> None:
    """Sub-levels made of real samples (docs/measurement.md "Steady state", "Autocorrelated
    samples"): 600 repetitions of 0 B, then 200 of 64 KiB, alternating (steady-state-trace's
    BLOCK). Every 200 samples of it are one state, so the independent-sample CI with the halves
    check stops at 200 inside a block, reporting the 64 KiB state from every start within its
    block; the rule for back-to-back repetitions checks only once it has LTS_CI_BATCHES batches of
    LTS_CI_BATCH_LEN (1000 samples, more than a period), and its batch CI sees the 64 KiB batches.
    Replayed from every 20th start within the first period: none may report the 64 KiB state or
    stop within one period, and a stop must be of the majority (0 B) state."""
    n, a, b = 4000, 600, 200
    cp = mpirun(2, ["0,64K", str(tmp_path / "t_"), str(n), "20", "0", "0", str(a), str(b)], prog="steady-state-trace",
                bind=True)
    assert cp.returncode == 0, cp.stderr
    small, _, _ = read_trace(tmp_path / "t_0.txt")
    large, _, _ = read_trace(tmp_path / "t_65536.txt")
    m_small, m_large = statistics.median(small), statistics.median(large)
    assert m_large > 3 * m_small, (m_small, m_large)   # two states far apart, or the test proves nothing
    _, _, replays = read_trace(tmp_path / "t_blocks.txt")
    assert [r[0] for r in replays] == list(range(0, a + b, 20))
    for start, used, med, discarded, why in replays:
        assert why in ("converged", "end_of_trace"), (start, why)
        assert used > a + b, (start, used, why)
        assert abs(math.log(med / m_small)) < abs(math.log(med / m_large)), (start, med, m_small, m_large)


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
    assert reps_max >= WARMUP + MIN_REPS and math.isclose(ratio_max, reps_max / 2000, abs_tol=6e-4), row
    assert re.search(r"round 1: 8 B [+-]\d", cp.stdout)
    verdict = cp.stdout.strip().splitlines()[-1]
    assert verdict.startswith("target:") and verdict.endswith("met" if cp.returncode == 0 else "MISSED")
