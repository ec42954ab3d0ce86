"""latscope net / latscope cluster (docs/network.md): bad input refused before anything is made,
the rows' LogP costs (the seed's own figures), the emulated cluster made and removed (also after
SIGTERM and SIGKILL), and on it: every barrier row correct at P = 1..8 (no rank leaves before all
arrive; the fake row caught), delivery and retransmission under iptables loss, the LogP record.
The cluster needs root; those tests say so in their skip reason."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from latscope.net import cluster as C
from latscope.net import model

LATSCOPE = [sys.executable, "-m", "latscope.cli"]
TIMEOUT = 300
REASON = C.skip_reason()
needs_cluster = pytest.mark.skipif(REASON is not None, reason=f"the emulated cluster {REASON}")


def cli(args: list[str], timeout: float = TIMEOUT, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("LATSCOPE_QUICK", None)
    return subprocess.run(LATSCOPE + args, capture_output=True, text=True, timeout=timeout, env=env, **kw)


def ours(pid: int) -> list[str]:
    return [n for n in C.list_namespaces() if C.owner(n) == str(pid)]


def rows(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for ln in path.read_text().splitlines():
        r = json.loads(ln)
        if r["type"] == "barrier":
            out[r["alg"]] = r
    return out


@pytest.mark.parametrize("args, needle", [
    (["--nodes", "9"], "--nodes 9: must be in 1..8"),
    (["--nodes", "0"], "--nodes 0"),
    (["--rate", "100mbs"], "--rate '100mbs'"),
    (["--rate", "0mbit"], "--rate '0mbit'"),
    (["--loss", "70%"], "--loss '70%'"),
    (["--loss", "lots"], "--loss 'lots'"),
    (["--mtu", "100"], "--mtu '100'"),
    (["--algs", "shuffle"], "unknown barrier 'shuffle'"),
    (["--algs", "pairwise-2net"], "'pairwise-2net' needs 2 networks"),
    (["--networks", "3"], "--networks 3"),
    (["--recv", "spin"], "--recv 'spin'"),
    (["--reps", "0"], "--reps 0"),
])
def test_bad_input_one_line_exit_2_nothing_left(tmp_path: Path, args: list[str], needle: str) -> None:
    before = set(C.list_namespaces())
    r = cli(["net", "run", "-o", str(tmp_path / "x.jsonl"), *args])
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "x.jsonl").exists()
    assert set(C.list_namespaces()) <= before


def test_bad_cluster_input(tmp_path: Path) -> None:
    r = cli(["cluster", "up", "--nodes", "12"])
    assert r.returncode == 2 and "--nodes 12" in r.stderr
    assert not any(C.owner(n) == C.KEEP for n in C.list_namespaces())


def test_seed_parameters_reproduce_its_figures() -> None:
    """Seed 002 §5.1.1's o_s 3, L 17.5, o_r 9.5 us: shuffle-exchange at 32 nodes 5 x 30 = 150 us
    (it measured 170), the binary tree with a multicast release 6 x 30 = 180 us (it measured 200);
    the 4-ary tree loses to shuffle-exchange at 16 nodes as 3 o_r > o_s + L (§5.1.2)."""
    reg = {r["name"]: r for r in __import__("latscope.net_cli", fromlist=["registry"]).registry()}
    p = model.SEED_PARAMS
    assert model.cost(reg["pairwise"]["cost"], 32, p) == pytest.approx(150e-6)
    assert model.cost(reg["mtree2"]["cost"], 32, p) == pytest.approx(180e-6)
    assert model.cost(reg["mtree4"]["cost"], 16, p) > model.cost(reg["pairwise"]["cost"], 16, p)
    # the seed's proposal: no interrupts, so a cheaper receive and no interrupt in the gap (g = o_s)
    fast_or = dict(p, **{"or": 1e-6, "orm": 1e-6, "g": 3e-6})
    assert model.cost(reg["mtree4"]["cost"], 16, fast_or) < model.cost(reg["pairwise"]["cost"], 16, fast_or)
    for r in reg.values():
        assert model.cost(r["cost"], 1, p) == 0, r["name"]
    r = cli(["net", "predict", "--seed-params", "--nodes", "32", "--algs", "pairwise,mtree2"])
    assert r.returncode == 0, r.stderr
    assert "150 us" in r.stdout and "180 us" in r.stdout


def test_cost_expression_refuses_other_python() -> None:
    with pytest.raises(model.NetDataError):
        model.cost("__import__('os').getpid()", 2, model.SEED_PARAMS)


def test_selection_grammar() -> None:
    from latscope.net_cli import registry, select
    reg = registry()
    names = [r["name"] for r in select("all", reg, 1)]
    assert "null" not in names and "pairwise" in names and "pairwise-2net" not in names
    assert "pairwise-2net" in [r["name"] for r in select("all", reg, 2)]
    assert [r["name"] for r in select("-linear", reg, 1)] == [n for n in names if n != "linear"]
    with pytest.raises(ValueError, match="unknown barrier 'x'"):
        select("pairwise,x", reg, 1)


@needs_cluster
def test_cluster_up_status_down() -> None:
    r = cli(["cluster", "up", "--nodes", "3", "--networks", "2", "--rate", "1gbit", "--mtu", "9000", "--loss", "1%"])
    try:
        assert r.returncode == 0, r.stderr
        nss = [n for n in C.list_namespaces() if C.owner(n) == C.KEEP]
        assert len(nss) == 4   # three nodes and the switch
        link = subprocess.run(["ip", "-n", f"{C.PREFIX}{C.KEEP}-n1", "-d", "link", "show", "lts1"],
                              capture_output=True, text=True).stdout
        assert "mtu 9000" in link
        qd = subprocess.run(["ip", "netns", "exec", f"{C.PREFIX}{C.KEEP}-n1", "tc", "qdisc", "show", "dev", "lts0"],
                            capture_output=True, text=True).stdout
        assert "tbf" in qd and "1Gbit" in qd
        ipt = subprocess.run(["ip", "netns", "exec", f"{C.PREFIX}{C.KEEP}-n2", "iptables", "-S", "INPUT"],
                             capture_output=True, text=True).stdout
        assert "statistic" in ipt and "DROP" in ipt
        st = json.loads(cli(["cluster", "status", "--json"]).stdout)
        assert st["kept"]["nodes"] == 3 and st["kept"]["networks"] == 2
        again = cli(["cluster", "up", "--nodes", "2"])
        assert again.returncode == 2 and "exists already" in again.stderr
    finally:
        d = cli(["cluster", "down"])
    assert d.returncode == 0, d.stderr
    assert not any(C.owner(n) == C.KEEP for n in C.list_namespaces())


@needs_cluster
def test_cluster_launch_places_mpi_ranks_on_nodes(tmp_path: Path) -> None:
    """latscope bench with the cluster as its launcher line: MPI over TCP across the node namespaces."""
    up = cli(["cluster", "up", "--nodes", "2"])
    try:
        assert up.returncode == 0, up.stderr
        launcher = " ".join(LATSCOPE + ["cluster", "launch"])
        out = tmp_path / "p.jsonl"
        r = cli(["bench", "p2p", "--launcher", launcher, "--sizes", "8", "--max-reps", "300", "-o", str(out)])
        assert r.returncode == 0, r.stderr
        recs = [json.loads(x) for x in out.read_text().splitlines()]
        pts = [x for x in recs if x.get("type") != "meta" and x.get("median_s") is not None]
        assert pts and pts[0]["median_s"] > 0
        bad = cli(["cluster", "launch", "--np", "3", "true"])
        assert bad.returncode == 2 and "--np 3" in bad.stderr
    finally:
        cli(["cluster", "down"])
    assert not any(C.owner(n) == C.KEEP for n in C.list_namespaces())


@needs_cluster
def test_net_option_places_every_command_on_the_kept_cluster(tmp_path: Path) -> None:
    """--net on bench, barrier bench, bench logp (for fit logp), coll compare, budget and study run:
    the ranks on the kept cluster's nodes (MPI over TCP), the cluster recorded with the results;
    misuse refused in one line, exit 2, before anything starts."""
    gone = cli(["bench", "p2p", "--net", "--sizes", "8", "-o", str(tmp_path / "none.jsonl")])
    assert gone.returncode == 2 and "no kept cluster" in gone.stderr and "Traceback" not in gone.stderr
    up = cli(["cluster", "up", "--nodes", "2", "--rate", "1gbit"])
    try:
        assert up.returncode == 0, up.stderr
        p = tmp_path / "p.jsonl"
        r = cli(["bench", "p2p", "--net", "--sizes", "8", "--max-reps", "300", "-o", str(p)])
        assert r.returncode == 0, r.stderr
        meta = json.loads(p.read_text().splitlines()[0])
        assert meta["emulated_network"].startswith("2 nodes") and "rate 1gbit" in meta["emulated_network"]
        b = tmp_path / "b.jsonl"
        r = cli(["barrier", "bench", "--net", "--alg", "linear", "--reps", "20", "-o", str(b)])
        assert r.returncode == 0, r.stderr
        assert json.loads(b.read_text().splitlines()[0])["emulated_network"] is not None
        lp = tmp_path / "lp.jsonl"
        r = cli(["bench", "logp", "--net", "--sizes", "0,1K", "--budget", "0.1", "-o", str(lp)])
        assert r.returncode == 0, r.stderr
        r = cli(["fit", "logp", str(lp), "--json", str(tmp_path / "lp.json")])
        assert r.returncode == 0, r.stderr
        r = cli(["coll", "compare", "--net", "--ops", "bcast", "--sizes", "8", "--budget", "0.05"])
        assert r.returncode == 0, r.stderr
        assert "bcast" in r.stdout
        r = cli(["budget", "--net", "--rungs", "udp-poll,udp-veth-poll", "--runs", "1", "--quick", "--json"])
        assert r.returncode == 0, r.stderr
        bmeta = json.loads(r.stdout.splitlines()[0])
        assert "rate 1gbit" in bmeta["emulated_network"]
        plan = tmp_path / "plan.toml"
        plan.write_text('repetitions = 1\nseed = 1\nnp = 2\ntimeout_s = 60\n[tables]\nnone = "none"\n'
                        '[apps.cg]\nargs = ["--class", "S"]\n')
        r = cli(["study", "run", str(plan), "--net", "-o", str(tmp_path / "st")])
        assert r.returncode == 0, r.stderr
        runs = [json.loads(x) for x in (tmp_path / "st" / "runs.jsonl").read_text().splitlines()]
        assert runs[0]["cluster"]["rate"] == "1gbit"
        assert [x["status"] for x in runs[1:]] == ["ok"] and "latscope.net.launch --np 2" in runs[1]["command"]
        plan.write_text(plan.read_text().replace("np = 2", "np = 3"))
        for args, needle in ((["study", "run", str(plan), "--net", "-o", str(tmp_path / "st3")], "np 3: must be in 1..2"),
                             (["bench", "p2p", "--net", "--np", "3", "--sizes", "8"], "--np 3: must be in 1..2"),
                             (["bench", "p2p", "--net", "--launcher", "mpiexec -n 2", "--sizes", "8"],
                              "--net and --launcher"),
                             (["barrier", "bench", "--net", "--hostfile", "h", "--reps", "2"], "--net and --hostfile")):
            bad = cli(args)
            assert bad.returncode == 2 and needle in bad.stderr, (args, bad.stderr)
            assert len(bad.stderr.strip().splitlines()) == 1, (args, bad.stderr)
        assert not (tmp_path / "st3").exists()
    finally:
        cli(["cluster", "down"])
    assert not any(C.owner(n) == C.KEEP for n in C.list_namespaces())
    left = subprocess.run(["pgrep", "-f", "ltsnet-keep"], capture_output=True, text=True).stdout.split()
    assert not left


@needs_cluster
@pytest.mark.parametrize("p", range(1, 9))
def test_every_row_is_a_barrier(tmp_path: Path, p: int) -> None:
    """Random arrival delays; for every repetition the last arrival precedes the first departure
    (one host: CLOCK_MONOTONIC is the ranks' common clock). The fake row, which does not
    synchronise, must be caught by the same check."""
    out = tmp_path / "c.jsonl"
    r = cli(["net", "run", "--nodes", str(p), "--networks", "2", "--algs", "all,null", "--check", "--reps", "40",
             "--warmup", "5", "--logp-reps", "0", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    got = rows(out)
    assert set(got) == {x["name"] for x in __import__("latscope.net_cli", fromlist=["registry"]).registry()}
    for name, row in got.items():
        assert row["ranks"] == p and row["check"]["checked"] == 40
        if name == "null":
            if p > 1:
                assert row["check"]["violations"] > 0, "the check cannot tell a non-barrier"
        else:
            assert row["check"]["violations"] == 0, (name, row["check"])
    assert C.status()["stale"] == []   # the run's namespaces went with it


@needs_cluster
def test_loss_every_barrier_completes_retransmissions_counted(tmp_path: Path) -> None:
    """5 % of UDP datagrams dropped at every receiver (iptables statistic DROP in INPUT): every
    barrier completes and is still a barrier, the gaps in the sequence numbers count the losses,
    the retransmissions on request replace them, and the mean shows the timeouts."""
    out = tmp_path / "l.jsonl"
    r = cli(["net", "run", "--nodes", "3", "--loss", "5%", "--algs", "concurrent,pairwise,mtree2", "--check",
             "--reps", "150", "--timeout-us", "1000", "--logp-reps", "0", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    for name, row in rows(out).items():
        c = row["counters"]
        assert row["check"]["violations"] == 0, name
        assert c["lost"] > 0 and c["retransmissions"] > 0 and c["timeouts"] > 0, (name, c)
    assert "lost" in r.stdout and "worst row" in r.stdout


@needs_cluster
def test_logp_record_and_compare(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    r = cli(["net", "run", "--nodes", "2", "--algs", "pairwise,mtree2", "--reps", "100", "--logp-reps", "100",
             "-o", str(out)])
    assert r.returncode == 0, r.stderr
    run = model.read(out)
    assert run.meta["cluster"]["nodes"] == 2 and run.meta["cluster"]["rate"] == "100mbit"
    assert run.logp is not None
    for name in ("os", "or", "g", "osm", "orm"):
        p = run.logp.params[name]
        assert p.value_s is not None and p.value_s > 0 and p.lo_s is not None and p.lo_s <= p.value_s <= p.hi_s
    table = model.compare(run)
    assert {t["alg"] for t in table} == {"pairwise", "mtree2"}
    assert all(t["predicted_s"] is not None and t["predicted_s"] > 0 for t in table)
    c = cli(["net", "compare", str(out)])
    assert c.returncode == 0 and "worst row:" in c.stdout and "pairwise" in c.stdout


@needs_cluster
def test_busy_poll_receive(tmp_path: Path) -> None:
    out = tmp_path / "b.jsonl"
    r = cli(["net", "run", "--nodes", "2", "--recv", "poll", "--algs", "dissemination", "--check", "--reps", "50",
             "--logp-reps", "20", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    assert model.read(out).meta["recv"] == "poll"
    assert rows(out)["dissemination"]["check"]["violations"] == 0


def _start(tmp_path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop("LATSCOPE_QUICK", None)
    # long enough to be caught inside the namespaces; the orphaned ranks of a SIGKILL end by --reps
    return subprocess.Popen(LATSCOPE + ["net", "run", "--nodes", "3", "--algs", "dissemination", "--reps", "20000",
                                        "--logp-reps", "0", "-o", str(tmp_path / "k.jsonl")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(p: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while len(ours(p.pid)) < 4:
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the namespaces never appeared"
        time.sleep(0.05)


@needs_cluster
def test_cluster_removed_on_sigterm(tmp_path: Path) -> None:
    p = _start(tmp_path)
    _wait_for(p)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert p.returncode != 0
    assert ours(p.pid) == []


@needs_cluster
def test_cluster_of_sigkilled_run_removed(tmp_path: Path) -> None:
    p = _start(tmp_path)
    _wait_for(p)
    p.kill()   # no handler runs: the namespaces stay until the next run or `cluster down`
    p.communicate(timeout=60)
    assert ours(p.pid), "SIGKILL cannot be caught: the namespaces should still be there"
    st = json.loads(cli(["cluster", "status", "--json"]).stdout)
    assert set(ours(p.pid)) <= set(st["stale"])
    r = cli(["net", "run", "--nodes", "2", "--algs", "pairwise", "--reps", "20", "--logp-reps", "0",
             "-o", str(tmp_path / "n.jsonl")])
    assert r.returncode == 0, r.stderr
    assert ours(p.pid) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_non_root_one_line_exit_2() -> None:
    with tempfile.TemporaryDirectory(prefix="latscope-net-nobody-") as d:
        Path(d).chmod(0o777)
        env = dict(os.environ, HOME=d, TMPDIR=d)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *LATSCOPE, "net", "run",
                            "--nodes", "2", "-o", f"{d}/x.jsonl"], capture_output=True, text=True, env=env, cwd=d,
                           timeout=TIMEOUT)
        assert r.returncode == 2, r.stderr
        assert "needs root" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *LATSCOPE, "cluster", "up"],
                           capture_output=True, text=True, env=env, cwd=d, timeout=TIMEOUT)
        assert r.returncode == 2 and "needs root" in r.stderr


def _net_ranks(out: Path) -> list[int]:
    """The latscope-net ranks of the launch writing `out` (their command lines name it)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"latscope-net") and str(out).encode() in argv:
            pids.append(int(d.name))
    return sorted(pids)


@needs_cluster
def test_rank_killed_mid_run_ends_the_job_with_rows_on_disk(tmp_path: Path) -> None:
    out = tmp_path / "kill.jsonl"
    env = dict(os.environ)
    env.pop("LATSCOPE_QUICK", None)
    p = subprocess.Popen(LATSCOPE + ["net", "run", "--nodes", "3", "--algs", "pairwise,dissemination",
                                     "--reps", "40000", "--logp-reps", "0", "-o", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not (out.exists() and '"barrier"' in out.read_text()):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the first row never finished"
        time.sleep(0.1)
    ranks = _net_ranks(out)
    assert len(ranks) == 3
    os.kill(ranks[-1], signal.SIGKILL)
    t0 = time.monotonic()
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0
    assert time.monotonic() - t0 < 60, "the job did not end in bounded time"
    assert "dissemination" in rows(out)   # the row finished first (registry order) stayed on disk
    assert ours(p.pid) == []
    assert _net_ranks(out) == []


@needs_cluster
def test_report_section_answers_the_seed(tmp_path: Path) -> None:
    r = cli(["net", "run", "--nodes", "3", "--networks", "2", "--reps", "60", "--logp-reps", "60",
             "-o", str(tmp_path / "net.jsonl")])
    assert r.returncode == 0, r.stderr
    b = cli(["bench", "p2p", "--np", "2", "--sizes", "8", "--max-reps", "200", "-o", str(tmp_path / "p2p.jsonl")])
    assert b.returncode == 0, b.stderr
    rep = cli(["report", str(tmp_path / "p2p.jsonl"), "-o", str(tmp_path / "r.html")])
    assert rep.returncode == 0, rep.stderr
    page = (tmp_path / "r.html").read_text()
    assert "Barriers over an emulated Ethernet cluster" in page
    assert "does not beat" in page or "beats" in page
    assert "mtree3-2net" in page and "150 µs" in page   # the report writes µs; the seed's parameters: pairwise at 32 nodes
    p = cli(["net", "predict", "--from", str(tmp_path / "net.jsonl")])
    assert p.returncode == 0 and "measured at P = 3: pairwise-2net" in p.stdout
