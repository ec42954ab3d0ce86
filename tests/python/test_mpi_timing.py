"""Timing methods and clock synchronisation of latscope-bench coll (docs/collectives.md),
at np = 1..4. Clock synchronisation must recover a per-rank offset and drift injected through
the timer's test hook (LATSCOPE_TEST_CLOCK_SKEW="O,D": rank r's timer reads (1 + r D) t + r O).
Medians and minima only; 3 and 4 ranks share 2 cores, so tolerances are wide."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import NPS, mpirun
from latscope.results import load, under_load

FAST = ["--min-reps", "20", "--max-reps", "20", "--warmup", "5"]
SYNCS = ["mpibench", "skampi", "jk", "hca"]


def records(path: Path) -> tuple[dict, list[dict], list[dict]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return lines[0], [r for r in lines if r["type"] == "point"], [r for r in lines if r["type"] == "clock_sync"]


def run_env(np_: int, args: list[str], env: dict[str, str], timeout: float = 120):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return mpirun(np_, args, timeout=timeout)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.mark.parametrize("np_", [2, 3, 4])
@pytest.mark.parametrize("method", SYNCS)
def test_clock_sync_recovers_offset(np_, method, tmp_path):
    """A pure offset of r * 0.25 s: every method's model has offset -r * 0.25 s within 100 us
    (the true offset is 1e3 times larger), and the measured residual is below 100 us."""
    out = tmp_path / "s.jsonl"
    # a wide start window: the subject is the sync, and oversubscribed ranks (np 3-4 on 2 cores,
    # Open MPI's launcher does not yield) can miss a short one on every repetition
    cp = run_env(np_, ["coll", "--op", "barrier", "--alg", "native", "--sizes", "0", "--timing", "global",
                       "--clock-sync", method, "--start-window", "20ms", "-o", str(out)] + FAST,
                 {"LATSCOPE_TEST_CLOCK_SKEW": "0.25,0"})
    assert cp.returncode == 0, cp.stderr
    meta, pts, syncs = records(out)
    assert meta["clock_sync"]["method"] == method
    assert len(syncs) == 1 and syncs[0]["method"] == method
    s = syncs[0]
    assert s["model"] in ("offset", "drift")
    for r in range(np_):
        assert abs(s["offset_s"][r] + 0.25 * r) < 100e-6, (r, s)
    assert s["residual_max_s"] < 100e-6 and s["cost_s"] > 0
    assert len(s["residual_s"]) == np_ and s["residual_s"][0] == 0
    assert pts[0]["timing"] == "global" and pts[0]["reps_valid"] > 0
    # after synchronisation the global time of a barrier is a sane, positive duration
    assert 0 < pts[0]["median_s"] < 0.05


@pytest.mark.parametrize("np_", [2, 4])
@pytest.mark.parametrize("method", ["jk", "hca"])
def test_clock_sync_recovers_drift(np_, method, tmp_path):
    """Drift of r * 2e-2 (2 %, 1 ms over the 50 ms span at r = 1): the drift methods keep the
    line and recover each rank's rate within 15 %; offset-only methods would leave a residual
    that grows with time, the drift methods' residual stays small. The rate's error is a
    min-RTT offset's error (up to half the fastest round trip) over the span: 2000 ppm (100 us)
    was too little beside a CPU-bound process at np 4, where an offset 50 us off put one rank's
    rate 25 % off; 1 ms keeps the signal well above what load does to a round trip."""
    out = tmp_path / "d.jsonl"
    drift = 2e-2
    cp = run_env(np_, ["coll", "--op", "barrier", "--alg", "native", "--sizes", "0", "--timing", "global",
                       "--clock-sync", method, "-o", str(out)] + FAST, {"LATSCOPE_TEST_CLOCK_SKEW": f"0.01,{drift!r}"})
    assert cp.returncode == 0, cp.stderr
    s = records(out)[2][0]
    assert s["model"] == "drift" and s["drift_rejected"] is False
    for r in range(1, np_):
        expected = 1 / (1 + drift * r) - 1          # global = A + B local, local = (1 + rD) t + rO
        assert abs(s["drift"][r] - expected) < 0.15 * abs(expected), (r, s["drift"])
    assert s["residual_max_s"] < 100e-6


def test_start_window_shorter_than_residual_is_bad_input(tmp_path):
    """With no synchronisation and a 1 ms offset between the ranks' clocks, a 10 us start window
    cannot work: exit 2 naming the window, on every rank, no output points."""
    out = tmp_path / "w.jsonl"
    cp = run_env(2, ["coll", "--op", "barrier", "--alg", "native", "--sizes", "0", "--timing", "global",
                     "--clock-sync", "none", "--start-window", "10us", "-o", str(out)] + FAST,
                 {"LATSCOPE_TEST_CLOCK_SKEW": "0.001,0"})
    assert cp.returncode == 2, cp.stderr
    assert "--start-window 10 us" in cp.stderr and cp.stderr.count("error:") == 1
    assert records(out)[1] == []


def test_zero_valid_repetitions_is_an_error(tmp_path):
    """Every repetition spoiled (rank 1 reaches each common start 2 ms late; window 20 us): an
    error exit with a message, never a record of zeros."""
    out = tmp_path / "z.jsonl"
    cp = run_env(2, ["coll", "--op", "bcast", "--alg", "native", "--sizes", "8", "--timing", "global",
                     "--start-window", "20us", "-o", str(out)] + FAST, {"LATSCOPE_TEST_ARRIVE_LATE_S": "0.002"})
    assert cp.returncode == 3, cp.stderr
    assert "no valid repetition" in cp.stderr
    assert records(out)[1] == []


def test_some_late_repetitions_are_counted(tmp_path):
    """Late repetitions are not kept but counted: reps_invalid + reps_valid <= reps_total."""
    out = tmp_path / "v.jsonl"
    cp = mpirun(2, ["coll", "--op", "bcast", "--alg", "native", "--sizes", "8", "--timing", "global",
                    "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    p = records(out)[1][0]
    assert p["reps_valid"] + p["reps_invalid"] == p["reps_total"] == 20 and p["reps_valid"] > 0
    assert p["start_window_s"] > 0


@pytest.mark.parametrize("np_", NPS)
def test_timing_all_records(np_, tmp_path):
    """--timing all: one record per method (individual only where it applies), each with its wall
    time; local records carry per-rank min/avg/max; individual records per-task medians; the
    loader reads the clock_sync record."""
    out = tmp_path / "a.jsonl"
    cp = mpirun(np_, ["coll", "--op", "scatter", "--alg", "linear,native", "--sizes", f"0,{1024 * np_}",
                      "--timing", "all", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    meta, pts, syncs = records(out)
    assert meta["timing_method"] == "all" and len(syncs) == 1
    want = ["root", "max", "global", "local"]
    got = [(p["alg"], p["size_bytes"], p["timing"]) for p in pts]
    expect = []
    for alg in ("linear", "native"):
        for s in (0, 1024 * np_):
            expect += [(alg, s, t) for t in want + (["individual"] if alg == "linear" and np_ > 1 else [])]
    assert sorted(got) == sorted(expect)
    for p in pts:
        assert p["wall_s"] > 0
        # a fixed count is of repetitions run; global timing drops those a rank started late
        assert p["reps_valid"] + p["reps_invalid"] == 20
        assert p["reps_valid"] > 0
        if p["timing"] == "local":
            loc = p["local"]
            assert len(loc["per_rank"]) == np_
            assert loc["min_s"] <= loc["avg_s"] <= loc["max_s"]
            assert loc["imb_t_min_s"] <= loc["imb_t_avg_s"] <= loc["imb_t_max_s"]
        if p["timing"] == "individual":
            tasks = p["task_median_s"]
            assert len(tasks) == np_ and tasks[0] is None
            # the point is the slowest task
            assert max(tasks[1:]) == pytest.approx(p["median_s"])
    res = load(out)
    assert len(res.syncs) == 1 and set(res.points["timing"]) == set(want + (["individual"] if np_ > 1 else []))


def test_timing_methods_agree(tmp_path):
    """On a 1 MiB linear bcast at np 2 (the copy dominates, about 100 us), root, max, global and
    individual medians agree within 50 % + 10 us of the global one. Root and individual subtract
    a correction measured apart (the confirmation, the ack) and global rests on the clock model:
    beside a CPU-bound process these were 15-17 us off in some runs, which at 64 KiB (a 9 us copy)
    put root at -7 us; at 1 MiB the same errors leave every method within 20 % (10 runs). Where a
    CPU-bound process shares a rank's core the ranks time-slice and no method need agree: such a
    point must then say it was measured under load (latscope.results.under_load)."""
    out = tmp_path / "g.jsonl"
    cp = mpirun(2, ["coll", "--op", "bcast", "--alg", "linear", "--sizes", "1M", "--timing", "all",
                    "--min-reps", "50", "--max-reps", "50", "-o", str(out)])
    assert cp.returncode == 0, cp.stderr
    meta, pts, _ = records(out)
    med = {p["timing"]: p["median_s"] for p in pts}
    g = med["global"]
    assert g > 0
    for p in pts:
        m = p["timing"]
        if m not in ("root", "max", "individual") or abs(med[m] - g) <= 0.5 * g + 10e-6:
            continue
        # beside a CPU-bound process sharing a rank's core (a fresh clone beside a hog), the ranks
        # time-slice: a correction measured apart can be off by milliseconds (root -3.86 ms
        # against max 101 us), and a repetition that waits for a descheduled rank takes a slice
        # (max 6.8 ms against global's 0.16 ms, which drops repetitions a rank started late):
        # allowed only where the point itself says it was measured under load
        assert under_load(p, meta) is True, (m, med, p.get("load_others"))


@pytest.mark.parametrize("np_", [1, 2])   # not oversubscribed (3 spinning ranks on 2 cores time-slice)
def test_pipelined_and_dummy_work(np_, tmp_path):
    """--pipelined runs repetitions back to back (sync none in the metadata); --dummy-work adds
    untimed work: the time of a barrier does not include it."""
    out = tmp_path / "p.jsonl"
    dummy_s = 200e-6
    cp = mpirun(np_, ["coll", "--op", "barrier", "--alg", "native", "--sizes", "0", "--pipelined",
                      "--timing", "local", "--dummy-work", f"{dummy_s * 1e6:g}us", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    meta, pts, _ = records(out)
    assert meta["sync"] == "none"
    p = pts[0]
    assert p["reps_valid"] == 20 and p["timing"] == "local"
    # the barrier itself, not the work around it: a time that held the work would be at least
    # dummy_s (minima: load only adds time, so the fastest barrier is the barrier)
    assert p["min_s"] < 0.75 * dummy_s
