"""MPI tests of the collective algorithms (algos-check) and latscope-bench coll, valid at any
number of ranks, run at np = 1, 2, 3, 4. Few repetitions: 3 and 4 ranks share 2 cores; no
wall-clock assertions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import LOOP_BAD, NPS, assert_rejected, mpirun

FAST = ["--min-reps", "10", "--max-reps", "10", "--warmup", "2"]
STATS = ["n", "min_s", "mean_s", "median_s", "max_s", "sd_s", "p90_s", "p99_s", "ci_of", "ci_level", "ci_lo_s",
         "ci_hi_s", "ci_half_s", "rel_err", "reps_valid", "reps_total", "stop_reason", "wall_s"]


def records(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert lines and lines[0]["type"] == "meta"
    return lines[0], lines[1:]


@pytest.mark.parametrize("np_", NPS)
def test_algorithms_match_native(np_):
    """Every bcast/scatter/gather algorithm moves the same data as the native op, every root,
    counts 0, 1, 3, 1000, contiguous and strided types, in place; registry checks."""
    cp = mpirun(np_, [], prog="algos-check")
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.strip() == "ok", cp.stdout


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("op,sizes", [("bcast", [0, 1, 65536]), ("scatter", [0, 12, 12288]),
                                      ("gather", [0, 12, 12288])])
def test_coll_records(np_, op, sizes, tmp_path):
    out = tmp_path / "c.jsonl"
    root = np_ - 1
    cp = mpirun(np_, ["coll", "--op", op, "--alg", "native,linear,binomial", "--sizes", ",".join(map(str, sizes)),
                      "--root", str(root), "-o", str(out), "--raw"] + FAST)
    assert cp.returncode == 0, cp.stderr
    meta, pts = records(out)
    assert meta["bench"] == "coll" and meta["op"] == op and meta["ranks"] == np_
    assert meta["sizes_bytes"] == sizes and meta["timing_method"] == "root"
    assert meta["mode"] is None and meta["window"] is None
    assert [(p["alg"], p["size_bytes"]) for p in pts] == [(a, s) for a in ("native", "linear", "binomial")
                                                          for s in sizes]
    for p in pts:
        assert p["type"] == "point" and p["bench"] == "coll" and p["op"] == op and p["root"] == root
        for f in STATS:
            assert f in p, f
        assert p["n"] == 10 and p["stop_reason"] == "fixed" and len(p["samples_s"]) == 10
        assert p["min_s"] <= p["median_s"] <= p["max_s"]
        assert p["timing"] == "root"
        if np_ > 1:
            # root timing subtracts the measured confirmation time; what falls below zero is
            # reported as it is and counted, never clamped (MPIBlib §2.1)
            assert p["confirm_s"] > 0
            assert p["negative_samples"] == sum(x < 0 for x in p["samples_s"])
        assert "group" not in p and "mode" not in p


@pytest.mark.parametrize("np_", NPS)
def test_coll_other_ops_and_timing(np_, tmp_path):
    """The native rows of the rootless and reduction ops, max timing, default (all) selection
    never includes null; the explicit null row runs."""
    for op in ("barrier", "reduce", "allreduce", "allgather", "alltoall"):
        out = tmp_path / f"{op}.jsonl"
        cp = mpirun(np_, ["coll", "--op", op, "--alg", "native", "--sizes", f"0,{8 * np_}", "--timing", "max", "-o",
                          str(out)] + FAST)
        assert cp.returncode == 0, (op, cp.stderr)
        meta, pts = records(out)
        assert meta["timing_method"] == "max"
        assert [p["alg"] for p in pts] == ["native", "native"], op
        assert all(p["min_s"] > 0 and p["n"] == 10 for p in pts)
    out = tmp_path / "null.jsonl"
    cp = mpirun(np_, ["coll", "--op", "bcast", "--alg", "null", "--sizes", "8", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    assert [p["alg"] for p in records(out)[1]] == ["null"]
    # "-linear" excludes from all (null is never in all)
    out = tmp_path / "ex.jsonl"
    cp = mpirun(np_, ["coll", "--op", "gather", "--alg", "-linear", "--sizes", "0", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    assert [p["alg"] for p in records(out)[1]] == ["native", "binomial"]
    # default sizes for split ops are per-rank blocks, so always divisible
    out = tmp_path / "def.jsonl"
    cp = mpirun(np_, ["coll", "--op", "scatter", "--alg", "native", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    assert all(s % np_ == 0 for s in records(out)[0]["sizes_bytes"])


def bad_cases(np_: int) -> list[tuple[list[str], str]]:
    cases = [
        (["--op", "teleport"], "'teleport'"),
        (["--op", "bcast", "--alg", "warp"], "'warp'"),
        (["--op", "scatter", "--alg", "native,-binomial,quantum"], "'quantum'"),
        (["--op", "bcast", "--alg", "-native,-linear,-binomial"], "selects no algorithm"),
        (["--root", str(np_)], f"--root '{np_}'"),
        (["--root", "-1"], "--root '-1'"),
        (["--root", "x"], "--root 'x'"),
        (["--timing", "psychic"], "'psychic'"),
        (["--timing", "root,psychic"], "'root,psychic'"),
        (["--clock-sync", "sundial", "--timing", "global"], "'sundial'"),
        (["--clock-sync", "hca"], "--timing global"),
        (["--start-window", "10us"], "--timing global"),
        (["--timing", "global", "--start-window", "0.5us"], "'0.5us'"),
        (["--timing", "global", "--start-window", "-3us"], "'-3us'"),
        (["--timing", "global", "--pipelined"], "pipelined"),
        (["--timing", "global", "--resync", "soon"], "'soon'"),
        (["--op", "gather", "--timing", "individual"], "--timing individual"),
        (["--op", "bcast", "--alg", "native", "--timing", "individual"], "--timing individual"),
        (["--dummy-work", "-30us"], "'-30us'"),
        (["--dummy-work", "30parsecs"], "'30parsecs'"),
        (["--window", "8"], "'--window'"),
        (["--pairs", "0:1"], "'--pairs'"),
    ] + LOOP_BAD
    if np_ > 1:
        # size not divisible by P: 1001 is odd and not a multiple of 3 or 4
        for op in ("scatter", "gather", "allgather", "alltoall"):
            cases.append((["--op", op, "--sizes", "0,1001"], "1001 B"))
    return cases


@pytest.mark.parametrize("np_", NPS)
def test_coll_bad_input(np_):
    """Every bad value: exit 2 on every rank, a message naming the value, printed once, no
    output, no hang."""
    for args, needle in bad_cases(np_):
        assert_rejected(mpirun(np_, ["coll"] + args, timeout=60), args, needle)
    cp = mpirun(np_, ["p2p", "--alg", "native"], timeout=60)
    assert cp.returncode == 2 and "'--alg'" in cp.stderr and cp.stderr.count("error:") == 1
