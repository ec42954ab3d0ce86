"""LogP/LogGP/PLogP measurement (latscope-bench logp) and fit (latscope fit logp): the fit recovers
a known extra send-side and receive-side cost added by the test hook (LATSCOPE_TEST_SEND_COST_S /
LATSCOPE_TEST_RECV_COST_S, busy-waited inside every send / receive call path of the logp
operations): o_s and o_r grow by the added amounts and L does not move. Assertions are on medians
with tolerances of a few microseconds (the machine is shared); bad input exits 2 on every np."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import NPS, mpirun
from latscope import cli, logp
from latscope.models import load_params
from latscope.results import load

SEND_COST = 20e-6
RECV_COST = 30e-6
TOL = 4e-6   # medians on a shared 2-core machine; the costs added are 20 and 30 us
ARGS = ["logp", "--sizes", "0,64,1K,4K", "--min-reps", "40", "--max-reps", "40", "--warmup", "5",
        "--stop-rule", "median", "--raw", "--train", "8"]


def measure(tmp_path: Path, name: str, monkeypatch, send: float = 0.0, recv: float = 0.0) -> logp.LogPFit:
    out = tmp_path / f"{name}.jsonl"
    if send or recv:
        monkeypatch.setenv("LATSCOPE_TEST_SEND_COST_S", repr(send))
        monkeypatch.setenv("LATSCOPE_TEST_RECV_COST_S", repr(recv))
    else:
        monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
        monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    cp = mpirun(2, ARGS + ["-o", str(out)], timeout=120)
    monkeypatch.delenv("LATSCOPE_TEST_SEND_COST_S", raising=False)
    monkeypatch.delenv("LATSCOPE_TEST_RECV_COST_S", raising=False)
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    assert res.meta["bench"] == "logp" and res.meta["window"] == 8
    assert sorted(set(res.points["op"])) == ["flag", "g", "g_nb", "g_r", "mcast", "o_r", "o_s", "post", "rtt",
                                             "rtt_train"]
    assert set(res.points["size_bytes"]) == {0, 64, 1024, 4096}
    # post, flag, mcast do not depend on the size: measured once, at the smallest
    once = res.points[res.points["op"].isin(logp.AUX_OPS)]
    assert sorted(once["op"]) == ["flag", "mcast", "post"] and set(once["size_bytes"]) == {0}
    return logp.fit_logp([res])


def test_fit_recovers_added_send_and_receive_costs(tmp_path, monkeypatch):
    base = measure(tmp_path, "base", monkeypatch)
    hook = measure(tmp_path, "hook", monkeypatch, SEND_COST, RECV_COST)
    for b, h in zip(base.rows, hook.rows):
        assert b.size_bytes == h.size_bytes
        assert h.o_s.value_s - b.o_s.value_s == pytest.approx(SEND_COST, abs=TOL), b.size_bytes
        assert h.o_r.value_s - b.o_r.value_s == pytest.approx(RECV_COST, abs=TOL), b.size_bytes
        # RTT/2 grows by both costs, so L = RTT/2 - o_s - o_r stays where it was
        assert h.rtt.value_s / 2 - b.rtt.value_s / 2 == pytest.approx(SEND_COST + RECV_COST, abs=TOL)
        assert h.L_s == pytest.approx(b.L_s, abs=TOL), b.size_bytes
        # every send of a train pays the send cost: g >= o_s
        assert h.g.value_s - b.g.value_s == pytest.approx(SEND_COST, abs=TOL)
        # the streams: every Isend of g_nb pays the send cost, every receive of g_r the receive
        # cost, and a back-to-back round trip both twice (time per message / round trip)
        assert h.stream["g_nb"].value_s - b.stream["g_nb"].value_s == pytest.approx(SEND_COST, abs=TOL)
        assert h.stream["g_r"].value_s - b.stream["g_r"].value_s == pytest.approx(RECV_COST, abs=TOL)
        assert h.stream["rtt_train"].value_s - b.stream["rtt_train"].value_s == pytest.approx(
            2 * (SEND_COST + RECV_COST), abs=2 * TOL)
        # the medians' CIs (order statistics of the raw samples) bracket them
        for e in (h.o_s, h.o_r, h.rtt, h.g):
            assert e.ci_lo_s <= e.value_s <= e.ci_hi_s
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
    f = measure(tmp_path, "aux", monkeypatch)
    res = load(tmp_path / "aux.jsonl")
    pts = res.points.set_index("op")
    rtt0 = f.rows[0].rtt.value_s
    assert 0 < f.post_s < rtt0                 # queueing a receive is cheaper than a round trip
    assert 0 < f.flag_s < rtt0                 # a cache line beats a message round trip
    assert f.mcast_s == pytest.approx(float(pts.loc["mcast", "median_s"]) - rtt0 / 2)
    assert float(pts.loc["mcast", "median_s"]) > rtt0 / 2   # out by a broadcast, back by a message
    pj = tmp_path / "p.json"
    f.write(pj, res.meta)
    src = json.loads(pj.read_text())["source"]
    assert src["post_s"] == f.post_s and src["flag_s"] == f.flag_s and src["mcast_s"] == f.mcast_s
    assert src["post"]["ci_lo_s"] <= src["post_s"] <= src["post"]["ci_hi_s"]
    from latscope.logp_cli import print_fit
    print_fit(f)
    assert "not in LogP: post (MPI_Irecv, nothing to match)" in capsys.readouterr().out


def test_flag_is_skipped_for_a_pair_on_two_nodes(tmp_path, monkeypatch):
    """No shared memory between the pair (test hook: "nodes" of one rank): flag is not measured,
    said on stderr, and everything else is."""
    out = tmp_path / "n.jsonl"
    monkeypatch.setenv("LATSCOPE_TEST_SHM_NODE_SIZE", "1")
    cp = mpirun(2, ["logp", "--sizes", "0", "--ops", "post,flag,mcast", "--min-reps", "10", "--max-reps", "10",
                    "-o", str(out)], timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "flag not measured: ranks 0 and 1 are on different nodes" in cp.stderr
    assert sorted(load(out).points["op"]) == ["mcast", "post"]


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
