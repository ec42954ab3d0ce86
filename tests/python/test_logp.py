"""LogP/LogGP/PLogP measurement (latscope-bench logp) and fit (latscope fit logp): the fit recovers
a known extra send-side and receive-side cost added by the test hook (LATSCOPE_TEST_SEND_COST_S /
LATSCOPE_TEST_RECV_COST_S, busy-waited inside every send / receive call path of the logp
operations): o_s and o_r grow by the added amounts and L does not move; bad input exits 2 on every
np. The runs without and with the hook are two launches each: they are compared through an order
statistic, the minimum of each point's raw samples over its two launches, which load from other
processes cannot lower (noise only adds time), with each rank pinned to its own core
(conftest.mpirun bind). Their medians are not comparable: beside one CPU-bound process on this
2-core machine a 2-rank stream's median moved by up to 600 us from one launch to the next (3 of
10 runs failed). Within one run the fit's medians are checked exactly against the raw samples,
and comparisons between ops also use minima (over two launches)."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import NPS, mpirun
from latscope import cli, logp
from latscope.models import load_params
from latscope.results import Results, load

SEND_COST = 20e-6
RECV_COST = 30e-6
TOL = 4e-6   # on minima: what a launch's fastest repetition may differ by; the costs added are 20 and 30 us
TRAIN_DETOUR = 200e-6   # one preemption / daemon wake-up inside a whole train (rtt_train's ceiling)
# catch is a sweep, not timed repetitions (its own test below): left out of these runs
ARGS = ["logp", "--sizes", "0,64,1K,4K", "--min-reps", "40", "--max-reps", "40", "--warmup", "5",
        "--stop-rule", "median", "--raw", "--train", "8", "--ops", "all,-catch"]


def measure(tmp_path: Path, name: str, monkeypatch, send: float = 0.0, recv: float = 0.0) -> Results:
    out = tmp_path / f"{name}.jsonl"
    if send or recv:
        monkeypatch.setenv("LATSCOPE_TEST_SEND_COST_S", repr(send))
        monkeypatch.setenv("LATSCOPE_TEST_RECV_COST_S", repr(recv))
    else:
        monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
        monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    cp = mpirun(2, ARGS + ["-o", str(out)], timeout=120, bind=True)   # minima of two launches: conftest.mpirun
    monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
    monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    assert res.meta["bench"] == "logp" and res.meta["window"] == 8
    assert sorted(set(res.points["op"])) == ["flag", "g", "g_nb", "g_r", "irecv_wait", "mcast", "o_r", "o_s", "poll",
                                             "post", "rtt", "rtt_loop", "rtt_poll", "rtt_poll_any", "rtt_train",
                                             "rwait"]
    assert set(res.points["size_bytes"]) == {0, 64, 1024, 4096}
    # post, poll, flag, mcast do not depend on the size: measured once, at the smallest
    once = res.points[res.points["op"].isin(logp.AUX_OPS)]
    assert sorted(once["op"]) == ["flag", "irecv_wait", "mcast", "poll", "post", "rtt_loop", "rtt_poll",
                                  "rtt_poll_any", "rwait"] and set(once["size_bytes"]) == {0}
    # rtt_loop runs back to back (it isolates itself, --sync auto); the others after the stop-sync
    syncs = dict(zip(res.points["op"], res.points["sync"]))
    assert syncs["rtt_loop"] == syncs["rtt_poll"] == syncs["rwait"] == syncs["irecv_wait"] == syncs["rtt_poll_any"] == "none"
    assert syncs["rtt"] == "barrier"
    assert len(res.raw) == len(res.points) and all(len(v) == 40 for v in res.raw.values())
    return res


def res_window(res: Results) -> int:
    """Round trips per rtt_train sample (--train)."""
    return int(res.meta["window"])


def raw(res: Results, op: str, size: int = 0) -> np.ndarray:
    """The raw samples of one (op, size) point."""
    (i,) = np.flatnonzero((res.points["op"] == op).to_numpy() & (res.points["size_bytes"] == size).to_numpy())
    return np.asarray(res.samples(int(i)))


def minima(runs: list[Results]) -> Results:
    """The launches of one setting with every point's samples reduced to their minimum over all
    of them: fitted, each estimate is then that op's fastest repetition, through the fit's own
    code (L = RTT/2 - o_s - o_r, streams). Two launches, not one: a launch can sit in a slow state
    for a whole point, every one of its 40 repetitions delayed alike (Open MPI beside a CPU hog,
    8 launch pairs: a base o_r at 4 KiB of 34 us against 0.2 us in the others, flag 1.95 ms, a
    hooked irecv_wait 14.7 us above its cost; 4 of the 8 pairs broke TOL), and the minimum over
    two launches is free of such a state unless both launches land in it at the same point."""
    first = runs[0]
    keys = list(zip(first.points["op"], first.points["size_bytes"]))
    for r in runs[1:]:
        assert list(zip(r.points["op"], r.points["size_bytes"])) == keys
    return dataclasses.replace(first, raw={i: [min(min(r.raw[i]) for r in runs)] for i in first.raw})


def fastest(runs: list[Results], op: str, size: int = 0) -> float:
    """An op's fastest repetition over the launches of one setting (see minima)."""
    return min(float(raw(r, op, size).min()) for r in runs)


def check_fit_of_run(res: Results, f: logp.LogPFit) -> None:
    """Within one run: every estimate is the median of its op's raw samples, its CI (order
    statistics of those samples) brackets it, and L = RTT/2 - o_s - o_r (seed 002 §5.1)."""
    for r in f.rows:
        for op, e in (("o_s", r.o_s), ("o_r", r.o_r), ("rtt", r.rtt), ("g", r.g), *r.stream.items()):
            assert e.value_s == pytest.approx(float(np.median(raw(res, op, r.size_bytes))), rel=1e-12), op
            assert e.ci_lo_s <= e.value_s <= e.ci_hi_s, op
        assert r.L_s == pytest.approx(r.rtt.value_s / 2 - r.o_s.value_s - r.o_r.value_s, rel=1e-12, abs=1e-15)
        assert sorted(r.stream) == ["g_nb", "g_r", "rtt_train"]
    assert (f.o_s_s, f.o_r_s, f.L_s) == (f.rows[0].o_s.value_s, f.rows[0].o_r.value_s, f.rows[0].L_s)


def test_fit_recovers_added_send_and_receive_costs(tmp_path, monkeypatch):
    # launches alternate (base, hook, base, hook) so that a slow stretch of the machine falls on both
    base_runs, hook_runs = [], []
    for k in range(2):
        base_runs.append(measure(tmp_path, f"base{k}", monkeypatch))
        hook_runs.append(measure(tmp_path, f"hook{k}", monkeypatch, SEND_COST, RECV_COST))
    for run in base_runs + hook_runs:
        check_fit_of_run(run, logp.fit_logp([run]))
    # the hook's busy-wait lies inside the timed calls: no repetition, hence no median, is below it
    for hook_run in hook_runs:
        for h in logp.fit_logp([hook_run]).rows:
            assert h.o_s.value_s >= SEND_COST and h.o_r.value_s >= RECV_COST and h.g.value_s >= SEND_COST
            assert h.rtt.value_s / 2 >= SEND_COST + RECV_COST
    base, hook = logp.fit_logp([minima(base_runs)]), logp.fit_logp([minima(hook_runs)])
    for b, h in zip(base.rows, hook.rows):
        assert b.size_bytes == h.size_bytes
        assert h.o_s.value_s - b.o_s.value_s == pytest.approx(SEND_COST, abs=TOL), b.size_bytes
        assert h.o_r.value_s - b.o_r.value_s == pytest.approx(RECV_COST, abs=TOL), b.size_bytes
        if b.size_bytes == base.rows[0].size_bytes:   # poll (smallest size only): its receive pays it too
            assert h.size_bytes == 0 and hook.aux_s("poll") - base.aux_s("poll") == pytest.approx(RECV_COST, abs=TOL)
            # irecv_wait times the receiver's MPI_Wait alone: the receive cost, not the partner's send cost
            assert hook.aux_s("irecv_wait") - base.aux_s("irecv_wait") == pytest.approx(RECV_COST, abs=TOL)
            # rtt_poll_any: a round trip, both costs on each way (the wildcard receive's too)
            d = hook.aux_s("rtt_poll_any") - base.aux_s("rtt_poll_any")
            assert d / 2 == pytest.approx(SEND_COST + RECV_COST, abs=TOL)
        # RTT/2 grows by both costs, so L = RTT/2 - o_s - o_r stays where it was
        assert h.rtt.value_s / 2 - b.rtt.value_s / 2 == pytest.approx(SEND_COST + RECV_COST, abs=TOL)
        assert h.L_s == pytest.approx(b.L_s, abs=TOL), b.size_bytes
        # every send of a train pays the send cost: g >= o_s
        assert h.g.value_s - b.g.value_s == pytest.approx(SEND_COST, abs=TOL)
        # the streams: every Isend of g_nb pays the send cost, every receive of g_r the receive
        # cost, and a back-to-back round trip both twice (time per message / round trip)
        assert h.stream["g_nb"].value_s - b.stream["g_nb"].value_s == pytest.approx(SEND_COST, abs=TOL)
        assert h.stream["g_r"].value_s - b.stream["g_r"].value_s == pytest.approx(RECV_COST, abs=TOL)
        # a train's sample is the mean of its `--train` round trips: its fastest of 40 can still
        # carry one detour when every train is hit (CI, Open MPI: +10.5 us per round trip, one
        # ~84 us detour in each 0.8 ms hooked train). Noise cannot lower it: the floor holds at
        # 2*TOL, the ceiling allows one TRAIN_DETOUR per train on top.
        d_train = h.stream["rtt_train"].value_s - b.stream["rtt_train"].value_s
        assert 2 * (SEND_COST + RECV_COST) - 2 * TOL <= d_train <= (
            2 * (SEND_COST + RECV_COST) + 2 * TOL + TRAIN_DETOUR / res_window(hook_runs[0])), b.size_bytes
    assert hook.o_s_s - base.o_s_s == pytest.approx(SEND_COST, abs=TOL)
    assert hook.o_r_s - base.o_r_s == pytest.approx(RECV_COST, abs=TOL)
    assert hook.L_s == pytest.approx(base.L_s, abs=TOL)


def test_fit_cli_writes_loggp_and_plogp(tmp_path, monkeypatch, capsys):
    out = tmp_path / "m.jsonl"
    monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
    cp = mpirun(2, ARGS + ["-o", str(out)], timeout=120)
    assert cp.returncode == 0, cp.stderr
    pj, qj = tmp_path / "p.json", tmp_path / "q.json"
    # as a user runs it: its own process
    fp = subprocess.run([sys.executable, "-m", "latscope.cli", "fit", "logp", str(out), "--json", str(pj),
                         "--plogp-json", str(qj)], capture_output=True, text=True, timeout=120)
    text = fp.stdout
    assert fp.returncode == 0, fp.stderr
    assert "LogGP: L =" in text and "Hockney" in text and "PLogP" in text
    p = load_params(pj)
    assert p.model.kind == "loggp" and p.model.P == 2
    assert p.model.o_s_s > 0 and p.model.o_r_s > 0 and p.model.G_s_per_byte >= 0
    doc = json.loads(pj.read_text())
    assert [r["size_bytes"] for r in doc["source"]["per_size"]] == [0, 64, 1024, 4096]
    # the stream table travels in source (the twins' refined models read it), params unchanged
    st = doc["source"]["stream"]
    assert st["sizes_bytes"] == [0, 64, 1024, 4096]
    assert all(v > 0 for k in ("g_nb_s", "g_r_s", "rtt_train_s") for v in st[k])
    assert all("g_r" in r and r["g_r"]["value_s"] > 0 for r in doc["source"]["per_size"])
    assert set(doc["params"]) == {"L_s", "o_s_s", "o_r_s", "g_s", "G_s_per_byte", "P"}
    assert "g_r (receive train)" in text
    q = load_params(qj)
    assert q.model.kind == "plogp" and q.model.sizes_bytes == (0, 64, 1024, 4096)


def test_post_flag_mcast_reach_the_parameter_file(tmp_path, monkeypatch, capsys):
    """The costs beyond LogP that the barrier loop simulation uses: post (time in MPI_Irecv with
    nothing to match), flag (one-way shared-memory flag latency) and mcast (one-way MPI_Bcast,
    measured out by a broadcast and back by a message: the fit subtracts the ping-pong's half)."""
    monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
    monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    res = measure(tmp_path, "aux", monkeypatch)
    f = logp.fit_logp([res])
    pts = res.points.set_index("op")
    rtt0 = f.rows[0].rtt.value_s
    # the fit's values: the medians of the raw samples (mcast: less the ping-pong's half)
    assert f.aux_s("post") == pytest.approx(float(np.median(raw(res, "post"))), rel=1e-12) and f.aux_s("post") > 0
    assert f.aux_s("flag") == pytest.approx(float(np.median(raw(res, "flag"))), rel=1e-12) and f.aux_s("flag") > 0
    assert f.aux_s("poll") == pytest.approx(float(np.median(raw(res, "poll"))), rel=1e-12) and f.aux_s("poll") > 0
    # the way back is a polled message in the loop's state: rtt_poll's half when measured (it is here)
    assert f.aux_s("mcast") == pytest.approx(float(pts.loc["mcast", "median_s"]) - f.aux["rtt_poll"].value_s / 2)
    assert rtt0 > 0
    # how the ops compare, on minima: load lengthens the exchanges between the two ranks (rtt,
    # flag, mcast) and not a lone MPI_Irecv (post), so medians would compare unevenly; and over two
    # launches (see minima: one Open MPI launch beside a CPU hog had every flag repetition at
    # 1.95 ms, a whole-point slow state, against a 0.7 us round trip)
    runs = [res, measure(tmp_path, "aux2", monkeypatch)]
    rtt_min = fastest(runs, "rtt")
    assert 0 < fastest(runs, "post") < rtt_min     # queueing a receive is cheaper than a round trip
    assert 0 < fastest(runs, "flag") < rtt_min     # a cache line beats a message round trip
    assert 0 < fastest(runs, "poll") < rtt_min     # the message is there: no round trip inside
    # out by a broadcast, back by a polled message: more than that message alone (the closest
    # comparison here: 0.095 us above, MPICH, 42 launches, with and without 1-4 CPU hogs)
    assert fastest(runs, "mcast") > fastest(runs, "rtt_poll") / 2
    # rwait: a send, then a blocking receive of the polled partner's reply: at least one polled hop
    assert fastest(runs, "rwait") > fastest(runs, "rtt_poll") / 2
    # irecv_wait: completing a receive whose message is there: no round trip inside, and more than
    # queueing a receive with nothing to match (it finds, matches and completes one)
    assert fastest(runs, "post") < fastest(runs, "irecv_wait") < rtt_min
    # each op's spread for the barrier loop simulation (docs/barriers.md "The loop under measured
    # noise"): deviations from the median through min, median, p90, p99, averaged over the runs
    jt = logp.jitter_tables(runs)
    for op in ("o_s", "o_r", "post", "poll", "irecv_wait", "rwait", "mcast", "flag"):
        qs, ds = zip(*jt[op])
        assert qs == (0.0, 0.5, 0.9, 0.99, 1.0) and ds[1] == 0.0 and list(ds) == sorted(ds), op
        recs = [r.points[(r.points["op"] == op)].sort_values("size_bytes").iloc[0] for r in runs]
        assert ds[0] == pytest.approx(sum(float(x["min_s"]) - float(x["median_s"]) for x in recs) / 2, abs=1e-15)
        assert ds[3] == pytest.approx(sum(float(x["p99_s"]) - float(x["median_s"]) for x in recs) / 2, abs=1e-15)
    pj = tmp_path / "p.json"
    f.write(pj, res.meta)
    src = json.loads(pj.read_text())["source"]
    assert src["post_s"] == f.aux_s("post") and src["flag_s"] == f.aux_s("flag") and src["mcast_s"] == f.aux_s("mcast")
    assert src["poll_s"] == f.aux_s("poll")
    # the loop's L: rtt_loop/2 - o_s - o_r (the barrier loop simulation's hop)
    assert f.L_loop_s == pytest.approx(f.aux["rtt_loop"].value_s / 2 - f.o_s_s - f.o_r_s)
    assert src["L_loop_s"] == f.L_loop_s and src["rtt_loop_s"] == f.aux["rtt_loop"].value_s
    # the polled receiver's L and the blocking wait's floor (docs/barriers.md "Blocking waits")
    assert f.L_poll_s == pytest.approx(f.aux["rtt_poll"].value_s / 2 - f.o_s_s - f.aux["poll"].value_s)
    assert f.wait_s == pytest.approx(max(f.aux["rwait"].value_s - f.o_s_s, 0.0))
    assert src["L_poll_s"] == f.L_poll_s and src["wait_s"] == f.wait_s and src["rwait_s"] == f.aux["rwait"].value_s
    # linear-2net's wildcard poll over two communicators: its leg of rtt_poll_any
    assert f.L_poll_any_s == pytest.approx(f.aux["rtt_poll_any"].value_s - f.aux["rtt_poll"].value_s / 2 - f.o_s_s
                                           - f.aux["poll"].value_s)
    assert src["L_poll_any_s"] == f.L_poll_any_s
    assert src["irecv_wait_s"] == f.aux_s("irecv_wait") and f.aux_s("irecv_wait") == pytest.approx(
        float(np.median(raw(res, "irecv_wait"))), rel=1e-12)
    assert src["post"]["ci_lo_s"] <= src["post_s"] <= src["post"]["ci_hi_s"]
    from latscope.logp_cli import print_fit
    print_fit(f)
    assert "not in LogP: post (MPI_Irecv, nothing to match)" in capsys.readouterr().out


def test_flag_is_skipped_for_a_pair_on_two_nodes(tmp_path, monkeypatch):
    """No shared memory between the pair (test hook: "nodes" of one rank): flag and catch are not
    measured, said on stderr, and everything else is."""
    out = tmp_path / "n.jsonl"
    monkeypatch.setenv("LATSCOPE_TEST_SHM_NODE_SIZE", "1")
    cp = mpirun(2, ["logp", "--sizes", "0", "--ops", "post,flag,mcast,catch", "--min-reps", "10", "--max-reps", "10",
                    "-o", str(out)], timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "flag not measured: ranks 0 and 1 are on different nodes" in cp.stderr
    assert "catch not measured: ranks 0 and 1 are on different nodes" in cp.stderr
    assert sorted(load(out).points["op"]) == ["mcast", "post"]


def test_catch_boundary_of_a_posted_receive(tmp_path, monkeypatch):
    """logp's catch (docs/barriers.md "The catch boundary, measured"): a sweep of the partner's
    send start around a posted receive's MPI_Wait call, 29 leads from -400 ns to +1 us, 64 trials
    each. The record's samples are the boundary's quantiles read off the caught fraction (made
    monotone): nondecreasing, within the swept leads; the boundary lies within +-1 us of the call
    (a send started 1 us ahead was there long before the wait's look; one started 400 ns after the
    call cannot be there at it). The fit writes its median to the parameter file (source.catch_s,
    which may be negative) and its spread to the loop simulation's jitter tables."""
    monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
    monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    out = tmp_path / "c.jsonl"
    cp = mpirun(2, ["logp", "--sizes", "0,64", "--ops", "catch,o_s,o_r,rtt,g", "--min-reps", "20", "--max-reps", "20",
                    "--raw", "-o", str(out)], timeout=120, bind=True)
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    pts = res.points[res.points["op"] == "catch"]
    assert len(pts) == 1 and int(pts["size_bytes"].iloc[0]) == 0 and int(pts["n"].iloc[0]) == 29 * 64
    assert pts["stop_reason"].iloc[0] == "fixed"
    b = raw(res, "catch")
    assert len(b) == 29 * 64 and list(b) == sorted(b)   # the quantile function of the boundary
    assert -400e-9 - 1e-12 <= b[0] and b[-1] <= 1000e-9 + 1e-12
    r = pts.iloc[0]
    assert float(r["min_s"]) <= float(r["median_s"]) <= float(r["p90_s"]) <= float(r["p99_s"])
    assert -1e-6 < float(r["median_s"]) < 1e-6
    f = logp.fit_logp([res])
    assert f.aux_s("catch") == pytest.approx(float(np.median(b)), rel=1e-12, abs=1e-15)
    qs, ds = zip(*logp.jitter_tables([res])["catch"])
    assert qs == (0.0, 0.5, 0.9, 0.99, 1.0) and list(ds) == sorted(ds)
    pj = tmp_path / "p.json"
    f.write(pj, res.meta)
    assert json.loads(pj.read_text())["source"]["catch_s"] == f.aux_s("catch")


def test_catch_record_keeps_its_order_statistic_ci(tmp_path):
    """Under the default (adaptive) policy, catch's record is still a fixed count of quantiles, not
    repetitions in order: its CI stays the order-statistic one (two of its own samples), never the
    batch CI of back-to-back repetitions (src/bench/results.c), which over sorted quantiles would
    claim an uncertainty of the whole sweep."""
    out = tmp_path / "c.jsonl"
    cp = mpirun(2, ["logp", "--sizes", "0", "--ops", "catch", "--raw", "-o", str(out)], timeout=120, bind=True)
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    r = res.points[res.points["op"] == "catch"].iloc[0]
    b = raw(res, "catch")
    assert r["stop_reason"] == "fixed" and r["sync"] == "none"
    for k in ("ci_lo_s", "ci_hi_s"):
        assert min(abs(x - float(r[k])) for x in b) <= 1e-9 * max(1e-9, abs(float(r[k]))) + 1e-18, (k, r[k])


def test_fit_without_stream_ops(tmp_path, monkeypatch):
    """Records of the four classic measurements only (older runs, --ops o_s,o_r,rtt,g) fit as
    before, with no stream table."""
    out = tmp_path / "c.jsonl"
    monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
    monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    cp = mpirun(2, ["logp", "--sizes", "0,64,1K", "--ops", "o_s,o_r,rtt,g", "--min-reps", "10", "--max-reps", "10",
                    "--train", "4", "-o", str(out)], timeout=120)
    assert cp.returncode == 0, cp.stderr
    f = logp.fit_logp([load(out)])
    assert [r.size_bytes for r in f.rows] == [0, 64, 1024] and all(not r.stream for r in f.rows)
    assert f.stream_table() is None and f.source()["stream"] is None


def test_fit_bad_input_exit_2(tmp_path, capsys, golden):
    assert cli.main(["fit", "logp", str(golden / "results_p2p_v1.jsonl")]) == 2
    assert "no logp records" in capsys.readouterr().err
    assert cli.main(["fit", "logp", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("args, needle", [
    (["--train", "1"], "--train '1'"),
    (["--ops", "o_s,telepathy"], "'telepathy'"),
    (["--pair", "0:0"], "--pair '0:0'"),
    (["--delay", "-3us"], "--delay '-3us'"),
])
def test_bench_bad_input_exit_2(np_, args, needle):
    cp = mpirun(np_, ["logp", "--sizes", "0"] + args, timeout=60)
    if np_ == 1 and args[0] == "--pair":
        needle = "at least 2 ranks"   # the first error is the one reported
    assert cp.returncode == 2, cp.stderr
    assert needle in cp.stderr and cp.stdout == ""


def test_one_rank_is_not_a_pair():
    cp = mpirun(1, ["logp", "--sizes", "0"], timeout=60)
    assert cp.returncode == 2 and "at least 2 ranks" in cp.stderr


def test_bad_test_hook_value_is_refused_on_every_rank(monkeypatch):
    """The hooks are read by the program (apps/test_hooks.c), not the library: a malformed value
    is named, exit 2 on every rank, never taken as zero."""
    monkeypatch.setenv("LATSCOPE_TEST_SEND_COST_S", "2us")
    cp = mpirun(2, ["logp", "--sizes", "0", "--ops", "o_s", "--max-reps", "5"], timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert "LATSCOPE_TEST_SEND_COST_S='2us'" in cp.stderr and "seconds >= 0" in cp.stderr
