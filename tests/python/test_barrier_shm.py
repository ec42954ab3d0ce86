"""The shared-memory barrier rows across "nodes" (docs/barriers.md "Barrier rows"): on one machine
every rank shares memory, so the node leaders' path of `shm` and `tree-shm` (leaders synchronise
by MPI messages, then release their node through the window) only runs with the test hook
LATSCOPE_TEST_SHM_NODE_SIZE=m (src/algos/barrier.c get_shm: "nodes" of m consecutive ranks).
Semantics as in test_barrier.py: barrier-check's staggered entry, back-to-back bursts, dup'd and
split communicators. No wall-clock assertions."""
from __future__ import annotations

import subprocess

import pytest

from latscope.run import launch, program


@pytest.mark.parametrize("np_, node_size", [(2, 1), (3, 2), (4, 2), (4, 3)])
def test_shm_rows_across_fake_nodes(np_, node_size):
    ln = launch(np_)
    env = dict(ln.env, LATSCOPE_TEST_SHM_NODE_SIZE=str(node_size))
    cp = subprocess.run(ln.prefix + [str(program("barrier-check")), "6", "30", "shm,tree-shm:k=2,tree-shm:k=3"],
                        env=env, capture_output=True, text=True, timeout=170)
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert cp.stdout.strip() == "ok"
    checked = [ln_.split()[1] for ln_ in cp.stderr.splitlines() if ln_.startswith("checking ")]
    assert checked == ["shm", "tree-shm:k=2", "tree-shm:k=3"]
