"""MPI tests of latscope-bench p2p, valid at any number of ranks, run at np = 1, 2, 3, 4."""
from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import _LIBFABRIC_SHM, LOOP_BAD, NPS, assert_rejected, clean_stale_shm, mpirun
from latscope.results import load
from latscope.run import launch, program

# few repetitions: 3 and 4 ranks are oversubscribed on 2 cores
FAST = ["--min-reps", "20", "--max-reps", "20", "--warmup", "2"]


def expected_pairs(P: int) -> set[tuple[int, int]]:
    return {(i, j) for i in range(P) for j in range(i + 1, P)}


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("mode", ["seq", "par"])
def test_pingpong_all_pairs(np_, mode, tmp_path):
    out = tmp_path / "r.jsonl"
    cp = mpirun(np_, ["p2p", "--mode", mode, "--sizes", "0,8,1K", "-o", str(out), "--raw"] + FAST)
    if np_ < 2:
        assert cp.returncode == 2
        assert "needs at least 2 ranks" in cp.stderr and "has 1" in cp.stderr
        return
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    assert res.meta["ranks"] == np_ and res.meta["op"] == "pingpong" and res.meta["mode"] == mode
    assert res.meta["timer"]["overhead_s"] > 0 and res.meta["timer"]["resolution_s"] > 0
    df = res.points
    assert len(df) == 3 * len(expected_pairs(np_))
    for size in (0, 8, 1024):
        assert set(df[df.size_bytes == size]["pair"]) == expected_pairs(np_)
    assert (df["n"] == 20).all() and (df["stop_reason"] == "fixed").all()
    assert (df["min_s"] > 0).all() and (df["min_s"] <= df["median_s"]).all() and (df["median_s"] <= df["max_s"]).all()
    for i in range(len(df)):
        assert len(res.samples(i)) == 20
    if mode == "par":
        # a rank is in at most one pair per round
        for (_, rnd), g in df[df.size_bytes == 8].groupby(["size_bytes", "round"]):
            ranks = [r for p in g["pair"] for r in p]
            assert len(ranks) == len(set(ranks))


@pytest.mark.parametrize("np_", [2, 3, 4])
def test_seq_and_par_agree(np_, tmp_path):
    """Two launches, so minima (load only adds time; medians of two launches differed 5x beside
    a CPU-bound process: 1.2 us and 6.6 us). At np = 2 (one pair: the same schedule) within 50 %,
    each rank pinned to its own core (conftest.mpirun bind); when ranks share cores within 10x."""
    stats = {}
    for mode in ("seq", "par"):
        out = tmp_path / f"{mode}.jsonl"
        cp = mpirun(np_, ["p2p", "--mode", mode, "--sizes", "8", "--min-reps", "200", "--max-reps", "200", "-o", str(out)],
                    bind=np_ == 2)
        assert cp.returncode == 0, cp.stderr
        df = load(out).points
        stats[mode] = (df["median_s"].median(), df["min_s"].min())
    if np_ == 2:
        assert stats["seq"][1] == pytest.approx(stats["par"][1], rel=0.5)
    else:
        lo, hi = sorted((stats["seq"][1], stats["par"][1]))
        assert hi <= 10 * lo, stats


@pytest.mark.parametrize("np_", [2, 3, 4])
def test_adaptive_reps(np_, tmp_path):
    """The median stop rule stops by convergence (then the CI really is that tight) or by the
    budget; never runs to max_reps here."""
    out = tmp_path / "a.jsonl"
    cp = mpirun(np_, ["p2p", "--pairs", "0:1", "--sizes", "8", "--min-reps", "20", "--max-reps", "10000000",
                      "--stop-rule", "median", "--rel-err", "0.05", "--budget", "2", "-o", str(out)])
    assert cp.returncode == 0, cp.stderr
    p = load(out).points.iloc[0]
    assert p["stop_reason"] in ("converged", "budget")
    assert p["ci_of"] == "median" and p["ci_lo_s"] <= p["median_s"] <= p["ci_hi_s"]
    if p["stop_reason"] == "converged":
        assert p["rel_err"] <= 0.05
        assert p["reps_valid"] < 10000000


def test_back_to_back_stop_waits_for_the_batches(tmp_path):
    """docs/measurement.md "Autocorrelated samples": a round trip run back to back (the auto sync
    for one pair) stops by convergence only once its median's batch CI has its 5 batches of 200
    samples (a rule with the independent-sample CI alone stops at 200 here), and its stop keeps a
    median that the order-statistic CI also covers. Isolated repetitions have no batch CI."""
    out = tmp_path / "a.jsonl"
    cp = mpirun(2, ["p2p", "--pairs", "0:1", "--sizes", "8", "--rel-err", "0.05", "--budget", "5", "-o", str(out)],
                bind=True)
    assert cp.returncode == 0, cp.stderr
    p = load(out).points.iloc[0]
    assert p["sync"] == "none" and p["stop_reason"] in ("converged", "max_reps", "budget"), p
    if p["stop_reason"] == "converged":
        assert p["n"] >= 1000 and p["ci_lo_s"] <= p["median_s"] <= p["ci_hi_s"], p
    # isolated (a stop-sync after every repetition): the order-statistic CI and the halves only,
    # so a stop from min_reps on, which a batch CI would forbid below 1000
    out = tmp_path / "b.jsonl"
    cp = mpirun(2, ["p2p", "--pairs", "0:1", "--sizes", "8", "--sync", "barrier", "--rel-err", "0.5", "--budget", "5",
                    "-o", str(out)], bind=True)
    assert cp.returncode == 0, cp.stderr
    p = load(out).points.iloc[0]
    assert p["sync"] == "barrier" and p["stop_reason"] == "converged" and p["n"] < 1000, p


def test_back_to_back_record_reports_the_batch_ci(tmp_path):
    """A back-to-back point's record reports the wider of the order-statistic CI and the batch CI
    its stop rule judged (src/bench/results.c, docs/measurement.md "Autocorrelated samples"),
    recomputed here from its raw samples: the newest B >= 5 batches of 200, half-width
    t_{B-1} sd(batch medians) / sqrt(B), relative to the median."""
    import numpy as np
    from scipy import stats

    out = tmp_path / "a.jsonl"
    cp = mpirun(2, ["p2p", "--pairs", "0:1", "--sizes", "0,8", "--rel-err", "0.05", "--budget", "5", "--raw",
                    "-o", str(out)], bind=True)
    assert cp.returncode == 0, cp.stderr
    points = [r for r in map(json.loads, out.read_text().splitlines()) if r.get("type") == "point"]
    assert len(points) == 2
    for p in points:
        x = np.asarray(p["samples_s"])
        assert p["sync"] == "none" and len(x) == p["n"] >= 1000, p["n"]
        L = 200
        B = len(x) // L
        tail = x[len(x) - B * L:].reshape(B, L)
        med = np.median(tail, axis=1)
        batch = stats.t.ppf(0.975, B - 1) * med.std(ddof=1) / np.sqrt(B) / abs(p["median_s"])
        assert p["rel_err"] >= batch * (1 - 1e-3), (p["rel_err"], batch)  # samples: 9 digits in JSON
        assert p["ci_hi_s"] - p["ci_lo_s"] == pytest.approx(2 * p["ci_half_s"], rel=1e-6)
        assert p["ci_lo_s"] <= p["median_s"] <= p["ci_hi_s"], p


@pytest.mark.parametrize("np_", NPS)
def test_other_ops(np_, tmp_path):
    if np_ < 2:
        cp = mpirun(np_, ["p2p", "--op", "bandwidth"])
        assert cp.returncode == 2 and "needs at least 2 ranks" in cp.stderr
        return
    # roundtrip with empty replies (MPIBlib two-roundtrip) on a chosen pair
    out = tmp_path / "rt.jsonl"
    cp = mpirun(np_, ["p2p", "--op", "roundtrip", "--reply-size", "0", "--pairs", f"{np_ - 1}:0", "--sizes", "0,64K",
                      "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    df = load(out).points
    assert list(df["pair"]) == [(np_ - 1, 0)] * 2 and (df["reply_bytes"] == 0).all()
    # bandwidth: bytes per second reported
    out = tmp_path / "bw.jsonl"
    cp = mpirun(np_, ["p2p", "--op", "bandwidth", "--window", "8", "--sizes", "64K", "--pairs", "0:1", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    p = load(out).points.iloc[0]
    assert p["bandwidth_bytes_per_s"] == pytest.approx(8 * 65536 / p["median_s"])
    # point-to-two: every triplet (i; j<k) exactly once, rank-disjoint within a round
    out = tmp_path / "p2.jsonl"
    cp = mpirun(np_, ["p2p", "--op", "p2two", "--sizes", "1K", "-o", str(out)] + FAST)
    if np_ < 3:
        assert cp.returncode == 2 and "needs at least 3 ranks" in cp.stderr
        return
    assert cp.returncode == 0, cp.stderr
    df = load(out).points
    want = {(i, j, k) for i in range(np_) for j, k in itertools.combinations(range(np_), 2) if i not in (j, k)}
    assert set(df["pair"]) == want and len(df) == len(want)
    for _, g in df.groupby("round"):
        ranks = [r for t in g["pair"] for r in t]
        assert len(ranks) == len(set(ranks))


BAD = [
    (["--sizes", "-8"], "'-8'"),
    (["--sizes", "0:1M:x1"], "factor"),
    (["--min-reps", "0"], "--min-reps '0'"),
    (["--confidence", "1.5"], "--confidence 1.5"),
    (["--confidence", "0"], "--confidence 0"),
    (["--rel-err", "-0.1"], "--rel-err -0.1"),
    (["--budget", "-1"], "--budget -1"),
    (["--op", "teleport"], "'teleport'"),
    (["--mode", "sideways"], "'sideways'"),
    (["--timing", "global"], "'global'"),
    (["--stop-rule", "mode"], "'mode'"),
    (["--pairs", "0:99"], "rank 99 is out of range"),
    (["--pairs", "0:0"], "appears twice"),
    (["--pairs", "0-1"], "'0-1'"),
    (["--triplets", "0:1:2"], "--triplets applies only"),
    (["--window", "0"], "--window '0'"),
    (["--window", "1024", "--op", "bandwidth", "--sizes", "4M"], "--window 1024"),
    (["--reply-size", "8"], "--reply-size applies"),
    (["--seed", "-3"], "--seed '-3'"),
    (["--warmup", "x"], "--warmup 'x'"),
] + LOOP_BAD


@pytest.mark.parametrize("np_", NPS)
def test_bad_input(np_):
    """Every bad value: exit 2 on every rank, a message naming the value, no hang, no output."""
    for args, needle in BAD:
        # with one rank, the rank count is the first thing wrong for the pair-dependent cases
        assert_rejected(mpirun(np_, ["p2p"] + args, timeout=60), args, needle,
                        "needs at least 2 ranks" if np_ == 1 else None)
    for args in (["teleport"], []):
        cp = mpirun(np_, args, timeout=60)
        assert cp.returncode == 2 and "error:" in cp.stderr


def test_killed_run_keeps_finished_points(tmp_path):
    """Each point is flushed when complete: a run killed midway leaves a loadable file."""
    out = tmp_path / "k.jsonl"
    ln = launch(2)
    proc = subprocess.Popen(ln.prefix + [str(program("latscope-bench")), "p2p", "--sizes", "0:1M:+4K", "--min-reps",
                                         "2000", "--max-reps", "2000", "-o", str(out)], env=ln.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if out.exists() and len(out.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)   # launcher and ranks alike
    finally:
        proc.wait(timeout=30)
        # the killed ranks leave their shm segments behind: remove them once the ranks are gone
        deadline = time.time() + 10
        while time.time() < deadline:
            clean_stale_shm()
            if not any(_LIBFABRIC_SHM.fullmatch(f.name) for f in Path("/dev/shm").iterdir()):
                break
            time.sleep(0.1)
    res = load(out)
    assert len(res.points) >= 2
    assert res.points["n"].eq(2000).all()


@pytest.mark.parametrize("timing, want", [("root", "none"), ("max", "barrier")])
def test_auto_sync_follows_the_timing_method(timing, want, tmp_path):
    """--sync auto leaves the stop-sync out of a ping-pong (it isolates itself) unless the timing
    method needs every repetition to start together (max): then the points say barrier, as the
    metadata does (a max-timed ping-pong run back to back was once recorded as barrier)."""
    out = tmp_path / "p.jsonl"
    cp = mpirun(2, ["p2p", "--op", "pingpong", "--timing", timing, "--sizes", "8", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    recs = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    assert recs[0]["sync"] == want and [r["sync"] for r in recs[1:]] == [want]
