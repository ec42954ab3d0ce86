"""latscope-congest (seed 004 §5.1, Algorithm 3): the Mersenne Twister against its published
reference outputs, gap streams reproducible from the seed and distinct per rank, exponential
with the requested mean, the achieved load close to the requested one, a clean stop on
SIGTERM/SIGINT, and bad input rejected on every rank (exit 2, the value named) at np 1..4."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from latscope.results import under_load
from latscope.run import launch, mpi_flavor, mpiexec_path, program

from conftest import NPS, mpirun

TIMEOUT = 60
PROG = "latscope-congest"
# Achieved / requested for a run at a given bandwidth far below the machine's: Poisson
# counting noise is ~1/sqrt(messages) (< 1 % here), the rest is the leaky bucket's residue.
# "Far below" must hold on a busy machine too: beside one CPU-bound process the two ranks share
# their cores, and a pair asked for 100 MB/s of 4 KiB messages achieved 35 % to 99 % of it;
# at 40 MB/s it kept up every time (0.99).
LOAD_TOL = 0.05


def congest(np_: int, args: list[str], timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return mpirun(np_, args, timeout=timeout, prog=PROG)


def test_mt64_reference_outputs():
    cp = congest(1, ["--print-random", "10000", "--seed", "5489"])
    assert cp.returncode == 0, cp.stderr
    out = [int(x) for x in cp.stdout.split()]
    assert len(out) == 10000
    # MT19937-64 init_genrand64(5489): the reference program's first outputs, and the 10000th
    # output the C++ standard requires of std::mt19937_64 ([rand.predef])
    assert out[:3] == [14514284786278117030, 4620546740167642908, 13109570281517897720]
    assert out[9999] == 9981545732273789042


def gaps(np_: int, seed: str, n: int = 2000, extra: list[str] | None = None) -> dict[int, np.ndarray]:
    cp = congest(np_, ["--print-gaps", str(n), "--seed", seed, "--bandwidth", "1G", "--size", "1K",
                       "--load", "0.5"] + (extra or []))
    assert cp.returncode == 0, cp.stderr
    recs = [json.loads(line) for line in cp.stdout.splitlines() if line.startswith("{")]
    return {r["rank"]: np.array(r["gaps_ns"]) for r in recs}


def test_same_seed_same_gaps_different_ranks_differ():
    a, b, c = gaps(4, "7"), gaps(4, "7"), gaps(4, "8")
    assert sorted(a) == [0, 2]        # the senders of pairs 0->1 and 2->3
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[2], b[2])
    assert not np.array_equal(a[0], c[0])
    assert not np.array_equal(a[0], a[2])


def test_gaps_are_exponential_with_requested_mean():
    g = gaps(2, "3", n=20000)[0]
    mean_ns = 1024 / (0.5 * 1e9) * 1e9      # size / (load x bandwidth)
    assert g.mean() == pytest.approx(mean_ns, rel=0.03)
    ks = stats.kstest(g, "expon", args=(0, mean_ns))
    assert ks.pvalue > 1e-3, ks


def run_json(np_: int, args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "congest.json"
    cp = congest(np_, args + ["--json", str(out)])
    assert cp.returncode == 0, cp.stderr
    return cp, json.loads(out.read_text())


@pytest.mark.parametrize("load, bandwidth", [("0.2", 200e6), ("0.5", 80e6)])   # 40 MB/s each
def test_achieved_load_given_bandwidth(load, bandwidth, tmp_path):
    cp, rec = run_json(2, ["--duration", "1.5s", "--load", load, "--bandwidth", f"{bandwidth / 1e6:g}M", "--size",
                           "4K"], tmp_path)
    (pair,) = rec["pairs"]
    assert pair["requested_bytes_per_s"] == pytest.approx(float(load) * bandwidth)
    # a rate limiter must never send more than asked (+LOAD_TOL); other processes can only take
    # time from it, so the floor holds where they did not take the CPUs the pair needed (the run's
    # own load measure, results.under_load). Open MPI beside a busy process measured 0.93; beside
    # a CPU hog and three other jobs 0.795 (load_others then far above the 0.5 CPU margin).
    frac = pair["achieved_fraction_of_requested"]
    assert frac <= 1.0 + LOAD_TOL
    ld = rec["load"]
    assert ld["ranks"] == 2 and ld["cpus_available"] >= 1 and ld["oversubscribed"] == (ld["cpus_available"] < 2)
    loaded = under_load(ld, {"load": ld})
    if not loaded:
        assert frac >= 1.0 - 3 * LOAD_TOL, (frac, ld)
    assert pair["sent_bytes"] == pair["received_bytes"] == pair["messages"] * 4096
    assert rec["bandwidth_source"] == "given" and rec["stopped_by_signal"] is False
    assert "0->1" in cp.stdout and "total" in cp.stdout


def test_measured_bandwidth_and_odd_rank_idles(tmp_path):
    cp, rec = run_json(3, ["--duration", "1s", "--load", "0.1", "--size", "16K"], tmp_path)
    assert rec["bandwidth_source"] == "measured"
    assert rec["idle_rank"] == 2 and len(rec["pairs"]) == 1
    (pair,) = rec["pairs"]
    assert pair["bandwidth_bytes_per_s"] > 1e6
    # oversubscribed (3 ranks, 2 cores) and shared: only a check of scale, against a unit slip
    # (bits for bytes, x1000) in the measured case; beside another busy process under Open MPI the
    # pair achieved 0.31 of its request (test_achieved_load_given_bandwidth checks the rate)
    assert 0.1 < pair["achieved_fraction_of_requested"] < 1.5
    assert "the last rank idled" in cp.stdout


def rank_pids(launcher: int, exe: Path) -> list[int]:
    """The launcher's descendants running exe (the ranks; a launcher may put them in new sessions)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue

    def under(pid: int) -> bool:
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == launcher:
                return True
        return False

    pids = []
    for pid in parent:
        try:
            if under(pid) and os.readlink(f"/proc/{pid}/exe") == str(exe.resolve()):
                pids.append(pid)
        except OSError:
            continue
    return pids


@pytest.mark.parametrize("target", ["ranks", "launcher"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_cleanly(sig, target, tmp_path):
    """The signal reaching the ranks stops the run: exit 0, the load printed. Sent to the
    launcher, MPICH's mpiexec forwards it to the ranks; Open MPI's prterun forwards it too but
    then reports exit 1 and may drop the ranks' output, so there only the JSON is checked."""
    out = tmp_path / "c.json"
    ready = tmp_path / "ready"
    ln = launch(2)
    exe = program(PROG)
    # the test hook: the sender (rank 0) creates ready.0 once it has sent 10000 messages (about
    # 1.4 s at this rate), so the signal reaches a run under way (MPI_Init over and the handlers
    # installed on both ranks) and long enough that the backlog a busy machine leaves at the stop
    # (a few ms) is a small part of the load achieved
    p = subprocess.Popen(ln.prefix + [str(exe), "--duration", "0", "--load", "0.3", "--bandwidth", "100M",
                                      "--size", "4K", "--json", str(out)],
                         env=dict(ln.env, LATSCOPE_TEST_READY_FILE=str(ready), LATSCOPE_TEST_READY_MSGS="10000"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # a generous deadline, not a fixed sleep: Open MPI's launcher and MPI_Init alone can take
        # seconds on a busy machine
        deadline = time.monotonic() + TIMEOUT
        while not (tmp_path / "ready.0").exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.02)
        assert (tmp_path / "ready.0").exists(), f"the run never got under way (exit {p.poll()})"
        if target == "ranks":
            pids = rank_pids(p.pid, exe)
            assert len(pids) == 2, pids
            for pid in pids:
                os.kill(pid, sig)
        else:
            p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if target == "ranks" or mpi_flavor(mpiexec_path()) != "openmpi":
        assert p.returncode == 0, stderr
        assert "stopped by a signal" in stdout
    rec = json.loads(out.read_text())
    assert rec["stopped_by_signal"] is True
    (pair,) = rec["pairs"]
    # every message sent before the stop is counted and was received: at least the 10000 the
    # ready hook waited for, each of 4K
    assert pair["messages"] >= 10000 and pair["sent_bytes"] == pair["received_bytes"] == 4096 * pair["messages"]
    # the rate is over the time the run actually lasted (the stop's, not a requested duration:
    # there is none): never above the request. Below it, others can only take time from the
    # sender, by any amount: Open MPI beside a CPU hog gave 0.69 once and 0.22 in a fresh-clone
    # run, so no floor here; the rate itself is test_achieved_load_given_bandwidth's subject
    assert pair["elapsed_s"] > 0 and pair["achieved_fraction_of_requested"] == pytest.approx(
        pair["sent_bytes"] / pair["elapsed_s"] / pair["requested_bytes_per_s"], rel=1e-6)   # 9 digits in JSON
    assert 0.0 < pair["achieved_fraction_of_requested"] <= 1.1


BAD = [
    (["--load", "0"], "--load '0'"),
    (["--load", "1.5"], "--load '1.5'"),
    (["--load", "half"], "--load 'half'"),
    (["--bandwidth", "-3G"], "--bandwidth '-3G'"),
    (["--bandwidth", "10Gfurlongs"], "--bandwidth '10Gfurlongs'"),
    (["--size", "0"], "--size '0'"),
    (["--size", "2G"], "--size '2G'"),
    (["--duration", "-1s"], "--duration '-1s'"),
    (["--duration", "5 fortnights"], "--duration '5 fortnights'"),
    (["--seed", "-1"], "--seed '-1'"),
    (["--print-gaps", "10"], "--print-gaps needs --bandwidth"),
    (["--print-gaps", "0", "--bandwidth", "1G"], "--print-gaps '0'"),
    (["--json", "/nonexistent-dir/x.json", "--duration", "1s"], "--json '/nonexistent-dir/x.json'"),
    (["--frobnicate"], "'--frobnicate'"),
    (["extra"], "unexpected argument 'extra'"),
]


# Every rank parses the same arguments the same way; what depends on the rank count is who
# reports and that no rank waits for another: the whole list at np 2, and at the other rank counts
# one case of each kind (a bad value, a stray argument, the output file only rank 0 opens). Each
# case is a launch (about 1.3 s under Open MPI): the full list at every np cost 80 s there.
KINDS = [BAD[0], BAD[-1], BAD[-3]]


@pytest.mark.parametrize("np_", NPS)
def test_bad_input_exit_2_on_all_ranks(np_):
    for args, needle in (BAD if np_ == 2 else KINDS):
        if np_ == 1 and "--json" in args:   # a real run at np 1 is refused before the file is tried
            needle = "needs at least 2 ranks"
        cp = congest(np_, args, timeout=30)
        assert cp.returncode == 2, (args, cp.stdout, cp.stderr)
        assert needle in cp.stderr, (args, cp.stderr)
        assert cp.stderr.count("latscope-congest: error:") == 1, cp.stderr   # rank 0 reports, once


def test_one_rank_is_too_few():
    cp = congest(1, ["--duration", "1s"])
    assert cp.returncode == 2
    assert "needs at least 2 ranks" in cp.stderr and "this run has 1" in cp.stderr
