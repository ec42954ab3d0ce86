"""latscope under a real Slurm (docs/slurm.md): run by `make test-slurm` inside
tests/slurm/with-slurm.sh, which brings up a one-node Slurm (this host, 2 CPUs) and sets
SLURM_CONF. The bundled MPICH speaks PMI-1/PMI-2, so every srun line says --mpi=pmi2 (the
generated slurm.conf has MpiDefault=none, as a site whose default is something else would:
docs/slurm.md)."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from latscope.run import build_dir

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))
import test_docs  # noqa: E402  (the docs test's block reader and runner: one convention for both)

SRUN = ["srun", "--mpi=pmi2", "-n", "2"]
TIMEOUT = 120
LATSCOPE = str(Path(sys.executable).parent / "latscope")


@pytest.fixture(scope="module", autouse=True)
def under_slurm() -> None:
    assert os.environ.get("SLURM_CONF"), "no SLURM_CONF: run these tests with `make test-slurm`"


def node() -> str:
    return socket.gethostname().split(".")[0]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["LATSCOPE_QUICK"] = "1"   # smoke-test sizes (recorded in rep_policy.quick)
    e["PATH"] = f"{Path(sys.executable).parent}:{e['PATH']}"
    return e


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cp = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert cp.returncode == 0, f"{cmd}: exit {cp.returncode}\n{cp.stdout[-2000:]}\n{cp.stderr[-2000:]}"
    assert "Traceback" not in cp.stdout + cp.stderr
    return cp


def meta_of(path: Path) -> dict[str, Any]:
    m: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return m


def check_slurm_meta(m: dict[str, Any], ranks: int) -> None:
    """One MPI job of `ranks` ranks (not `ranks` singletons), labelled with its Slurm job."""
    assert m["type"] == "meta" and m["ranks"] == ranks, m
    assert m["rank_hosts"] == [socket.gethostname()] * ranks   # MPI_Get_processor_name
    job = m["job"]
    assert job["scheduler"] == "slurm"
    assert re.fullmatch(r"[1-9][0-9]*", job["id"]), job
    assert job["nodelist"] == node()


def test_bench_p2p_launcher_srun(tmp_path: Path) -> None:
    out = tmp_path / "pp.jsonl"
    run([LATSCOPE, "bench", "p2p", "--launcher", " ".join(SRUN),
         "--sizes", "8,1K", "-o", str(out)], tmp_path)
    check_slurm_meta(meta_of(out), 2)
    points = [json.loads(x) for x in out.read_text().splitlines()[1:]]
    assert [p["size_bytes"] for p in points] == [8, 1024] and all(p["median_s"] > 0 for p in points)


def test_each_srun_is_its_own_job(tmp_path: Path) -> None:
    """The job id comes from each launch's environment, not from a constant: two sruns outside an
    allocation are two jobs; inside one `salloc`, two steps of the same job."""
    ids = []
    for k in range(2):
        out = tmp_path / f"b{k}.jsonl"
        run(SRUN + [str(build_dir() / "bin" / "latscope-bench"), "coll", "--op", "barrier", "--alg", "native",
                    "--sizes", "0", "-o", str(out)], tmp_path)
        ids.append(int(meta_of(out)["job"]["id"]))
    assert ids[1] > ids[0]
    out = tmp_path / "alloc.jsonl"
    cp = run(["salloc", "-n", "2", "bash", "-c",
              f"echo JOB=$SLURM_JOB_ID; {' '.join(SRUN)} {build_dir() / 'bin' / 'latscope-bench'} coll "
              f"--op barrier --alg native --sizes 0 -o {out}"], tmp_path)
    alloc = re.search(r"JOB=(\d+)", cp.stdout)
    assert alloc and meta_of(out)["job"]["id"] == alloc.group(1)


def test_srun_bench_coll(tmp_path: Path) -> None:
    out = tmp_path / "bc.jsonl"
    run(SRUN + [str(build_dir() / "bin" / "latscope-bench"), "coll", "--op", "bcast", "--alg", "native,binomial",
                "--sizes", "8,1K", "-o", str(out)], tmp_path)
    check_slurm_meta(meta_of(out), 2)
    points = [json.loads(x) for x in out.read_text().splitlines()[1:] if '"point"' in x]
    assert {(p["alg"], p["size_bytes"]) for p in points} == {(a, s) for a in ("native", "binomial") for s in (8, 1024)}


def test_inject_run_reaches_every_rank_through_srun(tmp_path: Path) -> None:
    """`inject run ... -- srun ...`: srun passes the injector's environment (LD_PRELOAD and the
    LATSCOPE_INJECT_* settings) to every task; each rank's injector writes its own log at
    MPI_Finalize, with its rank, the seed and the delays it added."""
    tbl = tmp_path / "ln10.tbl"
    run([LATSCOPE, "tables", "make", "lognormal", "--mean", "10us", "--sd", "5us",
         "-o", str(tbl)], tmp_path)
    cp = run([LATSCOPE, "inject", "run", "--table", str(tbl), "--seed", "42",
              "--log", "inj/", "--", *SRUN, str(build_dir() / "bin" / "example-ring"), "--rounds", "200"], tmp_path)
    assert "2 ranks" in cp.stdout, cp.stdout
    for r in range(2):
        log = json.loads((tmp_path / "inj" / f"inject.{r}.json").read_text())
        assert log["rank"] == r and log["seed"] == 42
        # every round's sendrecv is delayed (rank filter and call filter: all), at 10 us mean
        assert log["calls"]["sendrecv"] == 200 and log["count"] >= 200
        assert log["requested_ns_sum"] > 200 * 1000 and log["achieved_ns_sum"] >= log["requested_ns_sum"] * 0.9


def test_singletons_are_refused(tmp_path: Path) -> None:
    """srun without a PMI the MPI speaks starts N separate one-rank jobs: latscope-bench says so
    (exit 2) instead of writing one file from N singletons."""
    cp = subprocess.run(["srun", "--mpi=none", "-n", "2", str(build_dir() / "bin" / "latscope-bench"), "coll",
                         "--op", "barrier", "--sizes", "0", "-o", str(tmp_path / "x.jsonl")],
                        cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert cp.returncode != 0
    assert "--mpi=pmi2" in cp.stderr and "Traceback" not in cp.stderr


def slurm_blocks() -> list[test_docs.Block]:
    return [b for d in test_docs.DOCS for b in test_docs.blocks(d) if b.tag == "sh slurm"]


def test_docs_have_slurm_blocks() -> None:
    assert any(b.doc.name == "README.md" for b in slurm_blocks())


@pytest.mark.parametrize("block", slurm_blocks(), ids=str)
def test_doc_slurm_block_runs_as_written(block: test_docs.Block, tmp_path: Path) -> None:
    """The docs' `sh slurm` blocks, run here as written (the docs test only parse-checks them).
    The files they use are made first by the same document's `latscope tables make` lines."""
    makers = [c for b in test_docs.blocks(block.doc) if b.tag == "sh" for c in test_docs.commands(b.text)
              if test_docs.words_of(c)[:3] == ["latscope", "tables", "make"]]
    prep = test_docs.Block(block.doc, block.line, "sh", "\n".join(makers) + "\n")
    test_docs.run_sh(prep, tmp_path)
    test_docs.run_sh(block, tmp_path)
