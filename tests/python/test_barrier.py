"""Barrier algorithms (issue 4): semantics of every registry row under staggered entry
(barrier-check, tests/c/barrier_check.c) at np = 1..4, and at np = 5..8 in the slower set below;
the latscope-bench selection of parametrised rows and its bad input (exit 2, the value named, on
every np). 3 and more ranks share 2 cores here: iterations are few; no wall-clock assertions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import NPS, mpirun

FAST = ["--min-reps", "5", "--max-reps", "5", "--warmup", "1", "--sizes", "0"]


@pytest.mark.parametrize("np_", NPS)
def test_every_barrier_row_waits_for_the_last_rank(np_):
    """Staggered entry (rank r waits ((r + it) % P) * 30 us): no rank leaves before the last one
    entered; back-to-back bursts leave no message behind; dup'd and split communicators too."""
    cp = mpirun(np_, ["10", "30"], prog="barrier-check", timeout=170)
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert cp.stdout.strip() == "ok"
    checked = [ln.split()[1] for ln in cp.stderr.splitlines() if ln.startswith("checking ")]
    for name in ("native", "dissemination", "pairwise", "binomial", "linear", "linear-bcast", "linear-2net",
                 "tournament") + tuple(f"{t}:k={k}" for t in ("tree", "tree-bcast", "tree-shm") for k in (2, 3, 4)) + (
                     "tree-2net:k=2", "tree-2net:k=3", "tree-2net:k=4"):
        assert name in checked, name


@pytest.mark.parametrize("np_", [2, 3])
def test_the_check_catches_a_non_barrier(np_):
    """The `null` row does not synchronise: barrier-check must fail on it (the test can fail)."""
    cp = mpirun(np_, ["3", "200", "null"], prog="barrier-check", timeout=120)
    assert cp.returncode != 0
    assert "before the last rank entered" in cp.stderr


# SLOWER SET: 5..8 ranks on 2 cores (heavily oversubscribed), four iterations each; still run by
# `make test` (about 20-40 s in all here).
@pytest.mark.parametrize("np_", [5, 6, 7, 8])
def test_slow_set_barrier_rows_at_5_to_8_ranks(np_):
    cp = mpirun(np_, ["4", "30"], prog="barrier-check", timeout=170)
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert cp.stdout.strip() == "ok"


@pytest.mark.parametrize("np_", NPS)
def test_parametrised_rows_in_records(np_, tmp_path):
    out = tmp_path / "b.jsonl"
    cp = mpirun(np_, ["coll", "--op", "barrier", "--alg", "tree:k=3,tree,dissemination,tree-shm:k=2,-tree:k=4",
                      "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    recs = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    assert [r["alg"] for r in recs[1:]] == ["tree:k=3", "dissemination", "tree-shm:k=2"]
    assert all(r["n"] == 5 for r in recs[1:])


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("alg, needle", [
    ("tree:k=1", "'tree:k=1': k must be an integer from 2"),
    ("tree:k=x", "'tree:k=x': k must be an integer from 2"),
    ("dissemination:k=2", "dissemination takes no parameters"),
    ("tree:q=2", "unknown parameter 'q=2'"),
    ("hyperspace", "unknown algorithm 'hyperspace'"),
])
def test_bad_algorithm_exit_2_naming_the_value(np_, alg, needle):
    cp = mpirun(np_, ["coll", "--op", "barrier", "--alg", alg] + FAST, timeout=60)
    assert cp.returncode == 2, (cp.returncode, cp.stderr)
    assert needle in cp.stderr
    assert cp.stderr.count(needle) == 1   # rank 0 reports; the others exit 2 quietly
    assert cp.stdout == ""
