"""latscope-bench seq: several commands in one launch (apps/cmd_seq.c). Each part writes the
records it writes alone, with its own command line; a bad part is refused with exit 2 on every
rank. Real MPI at np 2, a few repetitions."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_rejected, mpirun

FAST = ["--min-reps", "10", "--max-reps", "10", "--warmup", "2"]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_seq_runs_each_part_in_one_launch(tmp_path: Path) -> None:
    """logp, barrier rows, logp in one mpiexec: three files, each as its command alone writes it."""
    lp1, b, lp2 = tmp_path / "lp1.jsonl", tmp_path / "b.jsonl", tmp_path / "lp2.jsonl"
    logp = ["logp", "--sizes", "0", "--ops", "rtt,rtt_loop"] + FAST
    coll = ["coll", "--op", "barrier", "--alg", "native,linear", "--timing", "local", "--sync", "none", "--sizes", "0",
            "--dummy-work", "30us"] + FAST
    cp = mpirun(2, ["seq"] + logp + ["-o", str(lp1), "--then"] + coll + ["-o", str(b), "--then"] + logp
                + ["-o", str(lp2)])
    assert cp.returncode == 0, cp.stderr
    for path, bench, ops in ((lp1, "logp", ["rtt", "rtt_loop"]), (b, "coll", ["barrier", "barrier"]),
                             (lp2, "logp", ["rtt", "rtt_loop"])):
        recs = records(path)
        meta, pts = recs[0], recs[1:]
        assert meta["type"] == "meta" and meta["bench"] == bench, (path, meta)
        # the part's own command line, not the whole sequence's
        cl = meta["command_line"]
        assert cl[1] == bench and "--then" not in cl and "seq" not in cl, cl
        assert [p["op"] for p in pts] == ops
        assert all(p["n"] == 10 for p in pts)
    assert [p["alg"] for p in records(b)[1:]] == ["native", "linear"]


@pytest.mark.parametrize("args,needle", [
    ([], "missing command"),
    (["logp", "--then"], "empty part"),
    (["--then", "logp"], "empty part"),
    (["seq", "logp"], "cannot be nested"),
    (["logp", "--then", "nope"], "unknown command 'nope'"),
])
def test_seq_bad_parts_refused_before_running(args: list[str], needle: str, tmp_path: Path) -> None:
    cp = mpirun(2, ["seq"] + args)
    assert_rejected(cp, args, needle)


def test_seq_stops_at_a_bad_part(tmp_path: Path) -> None:
    """A bad option in the second part: the first part's results are written, the second's
    error is printed once, every rank exits 2 (no rank waits for a part that will not run)."""
    out = tmp_path / "lp.jsonl"
    args = ["logp", "--sizes", "0", "--ops", "rtt", "-o", str(out)] + FAST + ["--then", "coll", "--bogus"]
    cp = mpirun(2, ["seq"] + args)
    assert_rejected(cp, args, "'--bogus'")
    assert [r["op"] for r in records(out)[1:]] == ["rtt"]
