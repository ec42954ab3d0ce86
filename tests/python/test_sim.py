"""The LogGOPS simulator (docs/sim.md): exactness against latscope.models' closed forms
and the barrier loop simulation, the generated schedules against barrier_sim's programs, GOAL
import (round trip, LogGOPSim syntax, errors), determinism, and the injector's draw sequence."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from latscope import sim
from latscope.models import LogGPParams, LogPParams, message_point
from latscope.models.barrier import barrier_time_s
from latscope.models.barrier_sim import SIM_ROWS, SimParams, _binomial_bcast, simulate, single_shot_s
from latscope.run import build_dir, launch, program
from test_inject import write_table

TIMEOUT = 60
# whole picoseconds, so the engine's integer times and the closed forms' floats meet exactly
L, OS, OR = 1.234e-6, 2.1e-7, 3.3e-7
POW2 = [2, 4, 16, 256, 4096, 1 << 16]
ANY_P = [2, 3, 5, 7, 12, 100, 1000, 1023, 1025, 40000, (1 << 16) - 1, 1 << 16]


def lsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(program("latscope-sim")), *args], capture_output=True, text=True, timeout=TIMEOUT)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    # 0..~30 us, far from uniform, no two neighbours alike
    return write_table(tmp_path / "t.txt", [(i * 7919) % 4099 * 7 + (i % 13) * 1000 for i in range(4096)])


# ---- exactness -------------------------------------------------------------------------------

@pytest.mark.parametrize("g", [0.0, 4.5e-7])
def test_dissemination_equals_the_closed_form_at_every_P(g: float) -> None:
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=g)
    h_ps = round(L * 1e12) + round(OS * 1e12) + round(OR * 1e12)
    for P in ANY_P:
        r = sim.run("dissemination", par, P=P, per_rank=False)
        want = barrier_time_s(par, P, "dissemination")
        assert r.time_ps == h_ps * math.ceil(math.log2(P)), P        # integer: exact
        assert close(r.time_s, want), (P, r.time_s, want)
        assert r.summary["finish_min_s"] == r.time_s                  # every rank leaves together


@pytest.mark.parametrize("g", [0.0, 4.5e-7])
def test_linear_equals_the_closed_form(g: float) -> None:
    # gather: h + (P-2) max(o_r, g); release: h + (P-2) max(o_s, g) (docs/models.md)
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=g)
    for P in [2, 3, 5, 64, 1000, 4096]:
        r = sim.run("linear", par, P=P, per_rank=False)
        assert close(r.time_s, barrier_time_s(par, P, "linear")), P


def test_pairwise_equals_the_closed_form_at_powers_of_two() -> None:
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=0.0)
    for P in POW2:
        r = sim.run("pairwise", par, P=P, per_rank=False)
        assert close(r.time_s, barrier_time_s(par, P, "shuffle-exchange")), P


def test_binomial_bcast_equals_h_log2_P_at_powers_of_two() -> None:
    # LogGP, 1000-byte messages: h = o_s + L + 999 G + o_r (message_point), ceil(log2 P) hops
    par = LogGPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=1e-7, G_s_per_byte=2e-10)
    hop = message_point(par, 1000).hop_s
    for P in POW2:
        r = sim.run("binomial-bcast", par, P=P, size_bytes=1000, per_rank=False)
        assert close(r.time_s, hop * math.log2(P)), (P, r.time_s, hop * math.log2(P))


@pytest.mark.parametrize("g", [0.0, 4.5e-7])
def test_agrees_with_barrier_sim_on_the_rows_it_generates(g: float) -> None:
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=g)
    sp = SimParams(o_s_s=OS, o_r_s=OR, L_s=L, g_s=g)
    bcast = lambda me, P, k: _binomial_bcast(me, P, "b")   # noqa: E731
    rows = [(name, SIM_ROWS[name]) for name in ("dissemination", "linear", "pairwise", "binomial", "tournament",
                                                 "tree")]
    for P in [1, 2, 3, 5, 6, 8, 13, 33, 64, 100]:
        for name, prog in rows + [("binomial-bcast", bcast)]:
            r = sim.run(name, par, P=P, k=2)
            assert prog is not None
            times = simulate(prog, P, 2, sp)
            want = [t[0] for t in times]
            assert all(close(a, b) or a == b for a, b in zip(r.finish_s, want)), (name, P, r.finish_s, want)
            assert close(r.time_s, single_shot_s(prog, P, 2, sp)) or P == 1


MSG_ROWS = ["tree-bcast", "tree-2net", "linear-bcast", "linear-2net", "tree-shm"]


@pytest.mark.parametrize("g", [0.0, 4.5e-7])
def test_agrees_with_barrier_sim_on_the_rows_released_by_bcast_or_shared_memory(g: float) -> None:
    # barrier_sim's defaults: MPI_Bcast as MPICH's binomial point-to-point broadcast
    # (bcast="p2p"), a shared-memory flag seen L after the store (flag_s unset), polling
    # costs o_r (poll_s unset); rank by rank, at k = 2 and 3
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=g)
    sp = SimParams(o_s_s=OS, o_r_s=OR, L_s=L, g_s=g)
    for name in MSG_ROWS:
        prog = SIM_ROWS[name]
        assert prog is not None
        for k in (2, 3):
            for P in [1, 2, 3, 5, 8, 13, 64, 100]:
                r = sim.run(name, par, P=P, k=k)
                want = [t[0] for t in simulate(prog, P, k, sp)]
                assert all(close(a, b) or a == b for a, b in zip(r.finish_s, want)), (name, k, P, r.finish_s, want)
    # the flag release: the leader stores when its gather ends, every other rank leaves L later
    r = sim.run("tree-shm", par, P=64, k=4)
    assert close(max(r.finish_s) - r.finish_s[0], L) and r.finish_s[1:] == [max(r.finish_s)] * 63


def test_a_flag_schedule_has_no_goal_text() -> None:
    cp = lsim("--algo", "tree-shm", "--P", "4", "--goal-out", "-")
    assert cp.returncode == 2 and cp.stdout == ""
    assert "tree-shm" in cp.stderr and "GOAL" in cp.stderr and len(cp.stderr.splitlines()) == 1


@pytest.mark.parametrize("k", [3, 4, 7])
def test_tree_agrees_with_barrier_sim_at_any_k(k: int) -> None:
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=4.5e-7)
    sp = SimParams(o_s_s=OS, o_r_s=OR, L_s=L, g_s=4.5e-7)
    prog = SIM_ROWS["tree"]
    assert prog is not None
    for P in [2, 3, k, k + 1, k * k, 50]:
        r = sim.run("tree", par, P=P, k=k)
        want = [t[0] for t in simulate(prog, P, k, sp)]
        assert all(close(a, b) or a == b for a, b in zip(r.finish_s, want)), (k, P)


# ---- the generated schedules are barrier_sim's (and so src/algos') ----------------------------

def goal_ops(text: str) -> dict[int, list[tuple[str, int, int]]]:
    """rank -> [(kind, peer, tag)] of a GOAL text in file order."""
    out: dict[int, list[tuple[str, int, int]]] = {}
    rank = -1
    for line in text.splitlines():
        w = line.split()
        if w[:1] == ["rank"]:
            rank = int(w[1])
            out[rank] = []
        elif len(w) >= 5 and w[1] in ("send", "recv"):
            out[rank].append((w[1], int(w[4]), int(w[6])))
    return out


def expand_bcast(ops: list[tuple[object, ...]], me: int, P: int) -> list[tuple[object, ...]]:
    """barrier_sim's MPI_Bcast op as its point-to-point schedule (what simulate's expand does)."""
    return [x for op in ops for x in (_binomial_bcast(me, P, str(op[1])) if op[0] == "bcast" else [op])]


@pytest.mark.parametrize("name", ["dissemination", "linear", "pairwise", "binomial", "tournament", "tree",
                                  "binomial-bcast", "tree-bcast", "tree-2net", "linear-bcast", "linear-2net"])
def test_generated_schedules_are_barrier_sims_programs(name: str) -> None:
    py = SIM_ROWS.get(name) or (lambda me, P, k: _binomial_bcast(me, P, "b"))
    for P in [1, 2, 3, 5, 6, 8, 13, 64]:
        cp = lsim("--algo", name, "--P", str(P), "--k", "3", "--goal-out", "-")
        assert cp.returncode == 0, cp.stderr
        got = goal_ops(cp.stdout)
        for me in range(P):
            want = [op for op in expand_bcast(py(me, P, 3), me, P) if op[0] in ("send", "irecv")]
            assert [(k, p) for k, p, _ in got[me]] == [("send" if op[0] == "send" else "recv", op[1]) for op in want]
            # the tags name the same messages: one C tag per Python tag
            pairs = {(t, op[2]) for (_, _, t), op in zip(got[me], want)}
            assert len({a for a, _ in pairs}) == len(pairs) == len({b for _, b in pairs})


# ---- GOAL ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,P", [("dissemination", 16), ("dissemination", 13), ("linear", 9),
                                    ("binomial-bcast", 11)])
def test_goal_round_trip(tmp_path: Path, name: str, P: int) -> None:
    f = tmp_path / f"{name}.goal"
    assert lsim("--algo", name, "--P", str(P), "--size", "64", "--goal-out", str(f)).returncode == 0
    par = LogGPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=0.0, G_s_per_byte=1e-9)
    gen = sim.run(name, par, P=P, size_bytes=64)
    imp = sim.run(f, par)
    assert imp.finish_ps == gen.finish_ps
    assert imp.summary["messages"] == gen.summary["messages"]


LOGGOPSIM_STYLE = """\
// a ping-pong with a wildcard receive and a computation, LogGOPSim's syntax
num_ranks 2

rank 0 {
l1: send 8b to 1 tag 0 cpu 0 nic 0
l2: recv 8b from 1 tag 0
l2 requires l1
}

rank 1 {
/* any source,
   any tag */
l1: recv 8b from -1 tag -1
l2: send 8b to 0 tag 0
l3: calc 100 cpu 0
l2 requires l1
l3 irequires l2
}
"""


def test_goal_in_loggopsim_syntax(tmp_path: Path) -> None:
    f = tmp_path / "pp.goal"
    f.write_text(LOGGOPSIM_STYLE)
    par = sim.LogGOPS(L_s=1e-6, o_s_s=2e-7, o_r_s=2e-7)
    r = sim.run(f, par)
    # rank 1 receives at o + L + o = 1.4 us, sends (CPU to 1.6 us), then 100 ns of calc;
    # rank 0's receive ends at 1.4 + 0.2 + 1 + 0.2 = 2.8 us
    assert r.finish_ps == [2_800_000, 1_700_000]


def test_loggopsim_readme_example(tmp_path: Path) -> None:
    """LogGOPSim's README: its 16-rank dissemination example (every receive posted at the start,
    round j's send after round j-1's receive, 1-byte messages) ends at 22000 ns with its default
    parameters (L 2500, o 1500, g 1000 ns): 4 rounds of o + L + o."""
    lines = ["num_ranks 16"]
    for r in range(16):
        lines.append(f"rank {r} {{")
        for j, d in enumerate((1, 2, 4, 8)):
            lines += [f"l{2 * j + 1}: send 1b to {(r + d) % 16} tag 0", f"l{2 * j + 2}: recv 1b from {(r - d) % 16} tag 0"]
            if j:
                lines.append(f"l{2 * j + 1} requires l{2 * j}")
        lines.append("}")
    f = tmp_path / "dissemination_16.goal"
    f.write_text("\n".join(lines) + "\n")
    r = sim.run(f, sim.LogGOPS(L_s=2.5e-6, o_s_s=1.5e-6, o_r_s=1.5e-6, g_s=1e-6, G_s_per_byte=6e-9))
    assert r.finish_ps == [22_000_000] * 16


def test_critical_path_names_the_messages_and_ranks_that_decided_the_end(tmp_path: Path) -> None:
    f = tmp_path / "pp.goal"
    f.write_text(LOGGOPSIM_STYLE)
    cp = sim.run(f, sim.LogGOPS(L_s=1e-6, o_s_s=2e-7, o_r_s=2e-7)).summary["critical_path"]
    # rank 0's send, rank 1's receive and answer, rank 0's receive; not rank 1's calc
    assert [(o["rank"], o["op"], o["line"]) for o in cp["ops"]] == [(0, "send", 5), (1, "recv", 13), (1, "send", 14),
                                                                   (0, "recv", 6)]
    assert cp["length"] == 4 and cp["ops"][-1]["end_s"] == 2.8e-6
    # a generated dissemination barrier as GOAL: one message per round, rank by rank, each hop
    # starting where the previous one ended
    g = tmp_path / "d.goal"
    assert lsim("--algo", "dissemination", "--P", "8", "--goal-out", str(g)).returncode == 0
    r = sim.run(g, sim.LogGOPS(L_s=1e-6, o_s_s=2e-7, o_r_s=2e-7))
    ops = r.summary["critical_path"]["ops"]
    assert [o["op"] for o in ops] == ["send", "recv"] * 3
    for a, b in zip(ops[1::2], ops[2::2]):   # a receive, then that rank's next send
        assert a["rank"] == b["rank"] and a["end_s"] == b["start_s"]
    for s_, rcv in zip(ops[0::2], ops[1::2]):
        assert rcv["peer"] == s_["rank"] and s_["peer"] == rcv["rank"]
    assert ops[-1]["end_s"] == r.time_s
    assert sim.run("dissemination", sim.LogGOPS(L_s=1e-6, o_s_s=2e-7, o_r_s=2e-7), P=8).summary["critical_path"] is None


# rank 0 posts a receive after 1 us of calc, computes 5 us once it is posted (irequires), then
# answers: the message arrives at 1.2 us but the CPU takes it at 6 us (ends 6.2 us)
IREQ_TINY = """num_ranks 2
rank 0 {
l1: calc 1000
l2: recv 8b from 1 tag 0
l3: calc 5000
l4: send 8b to 1 tag 0
l2 requires l1
l3 irequires l2
l4 requires l2
l4 requires l3
}
rank 1 {
l1: send 8b to 0 tag 0
l2: recv 8b from 0 tag 0
}
"""


def path_key(o: dict[str, object]) -> tuple[object, ...]:
    return (o["rank"], o["op"], o.get("peer"), o.get("tag"), o.get("bytes"), o["start_s"], o["end_s"])


GENERATED = ["dissemination", "linear", "pairwise", "binomial", "tournament", "tree", "tree-bcast", "tree-2net",
             "linear-bcast", "linear-2net", "binomial-bcast"]   # every row but tree-shm (no GOAL text)


@pytest.mark.parametrize("name", GENERATED)
def test_generated_critical_path_is_the_goal_routes(tmp_path: Path, name: str, table: Path) -> None:
    # the engine's own path of a generated schedule (--critical-path) against the path of the same
    # schedule written as GOAL and run as such, wherever the two progress rules (docs/sim.md
    # "Semantics") give every rank the same finish time; it ends at the end time
    par = LogGPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=1e-7, G_s_per_byte=1e-9)
    agreed = 0
    for P in (2, 5, 8, 16, 33):
        f = tmp_path / f"{name}{P}.goal"
        assert lsim("--algo", name, "--P", str(P), "--size", "8", "--goal-out", str(f)).returncode == 0
        for tab in (None, table):
            gen = sim.run(name, par, tab, seed=3, P=P, size_bytes=8, critical_path=True)
            cp = gen.summary["critical_path"]
            assert cp["length"] == len(cp["ops"]) >= 1 and cp["ops"][-1]["end_s"] == gen.time_s
            for a, b in zip(cp["ops"], cp["ops"][1:]):
                assert a["start_s"] <= b["end_s"]
            imp = sim.run(f, par, tab, seed=3)
            if imp.finish_ps == gen.finish_ps:
                agreed += 1
                assert [path_key(o) for o in cp["ops"]] == \
                    [path_key(o) for o in imp.summary["critical_path"]["ops"]], (name, P, tab)
            # asking for the path changes nothing else
            assert gen.finish_ps == sim.run(name, par, tab, seed=3, P=P, size_bytes=8).finish_ps
    assert agreed >= 4, name


def test_generated_critical_path_covers_every_row_but_tree_shm() -> None:
    assert sorted(GENERATED + ["tree-shm"]) == sorted(sim.algorithms())


def test_generated_critical_path_refusals() -> None:
    cp = lsim("--algo", "tree-shm", "--P", "8", "--L", "1e-6", "--critical-path")
    assert cp.returncode == 2 and "shared-memory flag" in cp.stderr
    cp = lsim("--algo", "binomial-bcast", "--P", "8", "--size", "100", "--S", "10", "--L", "1e-6", "--critical-path")
    assert cp.returncode == 2 and "rendezvous" in cp.stderr


def nonblocking_pingpong_goal(iters: int) -> tuple[str, set[tuple[int, int, int]]]:
    """trace-pingpong's nonblocking mode as GOAL (docs/trace.md): per iteration each rank posts
    its receive, computes 1 us and sends once it is posted (irequires), and waits for both
    (requires). Returns the text and the irequires edges as (rank, dependent's line, its line)."""
    lines, ireq = ["num_ranks 2"], set()
    for r in (0, 1):
        lines.append(f"rank {r} {{")
        first = len(lines) + 1   # the 1-based line number of the block's first operation
        body: list[str] = []
        deps: list[str] = []
        for i in range(iters):
            body += [f"r{i}: recv 8b from {1 - r} tag 1", f"c{i}: calc 1000", f"s{i}: send 8b to {1 - r} tag 1",
                     f"w{i}: calc 0"]
            deps += [f"c{i} irequires r{i}", f"s{i} requires c{i}", f"w{i} requires r{i}", f"w{i} requires s{i}"]
            if i:
                deps.append(f"r{i} requires w{i - 1}")
            ireq.add((r, first + 4 * i + 1, first + 4 * i))
        lines += body + deps + ["}"]
    return "\n".join(lines) + "\n", ireq


def test_critical_path_through_irequires(tmp_path: Path) -> None:
    """irequires is "started", requires "completed" (LogGOPSim): a receive posted early and
    completed late, behind an operation that irequires it, is on the path once, where it
    completed, and the path goes on from what posted it (it used to loop between the two)."""
    f = tmp_path / "tiny.goal"
    f.write_text(IREQ_TINY)
    par = sim.LogGOPS(L_s=1e-6, o_s_s=2e-7, o_r_s=2e-7)
    r = sim.run(f, par)
    assert r.finish_ps == [6_400_000, 7_600_000]
    cp = r.summary["critical_path"]
    # rank 0's calc (0..1) posts the receive (1..6.2, its message taken when the CPU is free),
    # the 5 us calc that irequires it holds the CPU (1..6), the answer (6.2..6.4), rank 1's receive
    assert [(o["rank"], o["op"], o["line"], round(o["start_s"] * 1e12), round(o["end_s"] * 1e12))
            for o in cp["ops"]] == [(0, "calc", 3, 0, 1_000_000), (0, "calc", 5, 1_000_000, 6_000_000),
                                    (0, "recv", 4, 1_000_000, 6_200_000), (0, "send", 6, 6_200_000, 6_400_000),
                                    (1, "recv", 14, 0, 7_600_000)]
    assert cp["length"] == 5
    g = tmp_path / "nb.goal"
    text, ireq = nonblocking_pingpong_goal(200)
    g.write_text(text)
    r = sim.run(g, par)
    cp = r.summary["critical_path"]
    ops = cp["ops"]
    keys = [(o["rank"], o["line"]) for o in ops]
    assert len(keys) == len(set(keys)) == cp["length"] and cp["length"] >= 4 * 200, cp["length"]
    assert ops[-1]["end_s"] == r.time_s and ops[0]["start_s"] == 0
    for a, b in zip(ops, ops[1:]):   # a chain of causes back in time
        if (b["rank"], b["line"], a["line"]) in ireq and a["rank"] == b["rank"]:
            assert a["start_s"] <= b["start_s"], (a, b)        # b waited for a to start
        else:
            assert a["end_s"] <= b["end_s"], (a, b)            # b waited for a to complete
            if b["op"] != "recv":                              # a receive's own start is its posting
                assert a["end_s"] <= b["start_s"], (a, b)


def test_rendezvous_adds_the_handshake(tmp_path: Path) -> None:
    f = tmp_path / "one.goal"
    f.write_text("num_ranks 2\nrank 0 {\nl1: send 101b to 1\n}\nrank 1 {\nl1: recv 101b from 0\n}\n")
    eager = sim.run(f, sim.LogGOPS(L_s=1e-6, o_s_s=1e-7, o_r_s=1e-7, G_s_per_byte=1e-9))
    rndv = sim.run(f, sim.LogGOPS(L_s=1e-6, o_s_s=1e-7, o_r_s=1e-7, G_s_per_byte=1e-9, S_bytes=100))
    # eager: o + 100 G + L + o; rendezvous: request (o + L), answer (o + L), then the data
    assert eager.finish_ps[1] == 100_000 + 100_000 + 1_000_000 + 100_000
    assert rndv.finish_ps[1] == eager.finish_ps[1] + 2 * (100_000 + 1_000_000)


@pytest.mark.parametrize("text,needle", [
    ("num_ranks 2\nrank 0 {\nl1: recv 8b from 1 tag 5\n}\nrank 1 {\n}\n",
     "rank 0: recv 8b from 1 tag 5 never matched"),
    ("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\nrank 1 {\nl1: recv 8b from 0 tag 4\n}\n",
     "rank 1: recv 8b from 0 tag 4 never matched"),
    ("num_ranks 1\nrank 0 {\nl1: calc 5\nl2: calc 5\nl1 requires l2\nl2 requires l1\n}\n",
     "rank 0: calc never became ready"),
    ("num_ranks 2\nrank 0 {\nl1: snd 8b to 1\n}\n", "x.goal:3: unknown operation 'snd'"),
    ("num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n", "x.goal:3: send needs a size in bytes like '8b'"),
    ("num_ranks 2\nrank 0 {\nl1: send 8b to 2\n}\n", "x.goal:3: send to rank '2': valid: 0..1"),
    ("num_ranks 2\nrank 0 {\nl1: send 8b to 1\nl1 requires l9\n}\n", "label 'l9' is not defined"),
    ("num_ranks 2\nrank 0 {\nl1: send 8b to 1\n", "missing '}'"),
    ("rank 0 {\n}\n", "'rank' before 'num_ranks N'"),
])
def test_bad_goal_and_deadlock_exit_2_with_one_line(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "x.goal"
    f.write_text(text)
    cp = subprocess.run([sys.executable, "-m", "latscope.cli", "sim", str(f), "--L", "1us", "--o", "0.1us"],
                        capture_output=True, text=True, timeout=TIMEOUT)
    assert cp.returncode == 2, cp.stdout + cp.stderr
    assert needle in cp.stderr and "Traceback" not in cp.stderr
    assert len(cp.stderr.strip().splitlines()) == 1


def test_bad_options_exit_2() -> None:
    for args in (["--algo", "nope", "--P", "4"], ["--algo", "linear"], ["--algo", "linear", "--P", "0"],
                 ["--algo", "linear", "--P", "4", "--L", "-1"], ["--goal", "/nonexistent.goal"]):
        cp = lsim(*args)
        assert cp.returncode == 2 and cp.stderr.startswith("latscope-sim: error: "), (args, cp.stderr)


# ---- determinism and variation ----------------------------------------------------------------

def test_same_seed_same_output_different_seed_different_draws(table: Path) -> None:
    par = sim.LogGOPS(L_s=L, o_s_s=OS, o_r_s=OR)
    a = sim.run("dissemination", par, table=table, seed=7, P=300)
    b = sim.run("dissemination", par, table=table, seed=7, P=300)
    c = sim.run("dissemination", par, table=table, seed=8, P=300)
    assert a.finish_ps == b.finish_ps and a.summary["time_ps"] == b.summary["time_ps"]
    assert a.finish_ps != c.finish_ps
    quiet = sim.run("dissemination", par, P=300)
    assert min(a.finish_ps) > quiet.time_ps          # every rank waited for some delay
    assert a.summary["delays"] == a.summary["messages"] == 300 * 9


def test_rank_ordered_windows_give_the_time_ordered_output(tmp_path: Path, table: Path) -> None:
    # docs/sim.md "Scale": an eager generated schedule runs in windows of <= L, each window's events rank by
    # rank; LATSCOPE_SIM_WINDOWS=0 runs the same in the timing wheel's time order. Every row, with a table
    # (ties broken by the draws), OS noise (events past the wheel) and the critical path: byte for byte alike
    import os
    cost = ("wall_s", "events_per_s", "engine_bytes", "peak_rss_bytes")
    runs = 0
    for name in sim.algorithms():
        for P in (7, 100, 1000):
            for extra in ([], ["--table", str(table), "--seed", "5"],
                          ["--table", str(table), "--noise-period", "3e-5", "--noise-detour", "1e-5"],
                          ["--table", str(table), "--critical-path"], ["--L", "2e-8", "--g", "3e-8", "--critical-path"]):
                if name == "tree-shm" and "--critical-path" in extra:
                    continue
                out = []
                for windows in ("1", "0"):
                    f = tmp_path / f"w{windows}.jsonl"
                    cp = subprocess.run([str(program("latscope-sim")), "--algo", name, "--P", str(P), "--L", f"{L}",
                                         "--o-s", f"{OS}", "--o-r", f"{OR}", *extra, "--per-rank", str(f)],
                                        capture_output=True, text=True, timeout=TIMEOUT,
                                        env={**os.environ, "LATSCOPE_SIM_WINDOWS": windows})
                    assert cp.returncode == 0, (name, P, extra, cp.stderr)
                    d = json.loads(cp.stdout)
                    out.append(({k: v for k, v in d.items() if k not in cost}, f.read_bytes()))
                assert out[0] == out[1], (name, P, extra)
                runs += 1
    assert runs == 12 * 3 * 5 - 3 * 2


def test_windows_beyond_the_wheel_and_both_event_sizes(tmp_path: Path) -> None:
    # docs/sim.md "Scale", narrow windows: delays of up to ~40 ms put events far beyond the wheel's 65536
    # windows of 16 ns (the far heap, narrowed when their window comes near); a payload, the critical path
    # and windows wider than 2^32 ps (L = 5 ms) keep 32-byte events. Byte for byte the time order's output.
    import os
    big = write_table(tmp_path / "big.txt", [(i * 7919) % 4099 * 10000 for i in range(4096)])
    cost = ("wall_s", "events_per_s", "engine_bytes", "peak_rss_bytes")
    for extra in (["--L", "1e-8"], ["--L", "1e-8", "--size", "8"], ["--L", "1e-8", "--critical-path"],
                  ["--L", "5e-3"], ["--L", "1e-8", "--noise-period", "1e-5", "--noise-detour", "1e-6"]):
        out = []
        for windows in ("1", "0"):
            f = tmp_path / f"w{windows}.jsonl"
            cp = subprocess.run([str(program("latscope-sim")), "--algo", "binomial-bcast", "--P", "999", "--o", "1e-8",
                                 "--table", str(big), "--seed", "3", *extra, "--per-rank", str(f)],
                                capture_output=True, text=True, timeout=TIMEOUT,
                                env={**os.environ, "LATSCOPE_SIM_WINDOWS": windows})
            assert cp.returncode == 0, (extra, cp.stderr)
            d = json.loads(cp.stdout)
            out.append(({k: v for k, v in d.items() if k not in cost}, f.read_bytes()))
        assert out[0][0]["time_s"] > 1e-3, extra   # past the wheel's 1 ms
        assert out[0] == out[1], extra


def exchange_goal(path: Path, n: list[int]) -> Path:
    """A 2-rank GOAL schedule: rank r sends n[r] 8-byte messages to the other and receives n[1 - r]."""
    lines = ["num_ranks 2"]
    for r in range(2):
        lines.append(f"rank {r} {{")
        lines += [f"s{i}: send 8b to {1 - r} tag 0" for i in range(n[r])]
        lines += [f"r{i}: recv 8b from {1 - r} tag 0" for i in range(n[1 - r])]
        lines.append("}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_per_rank_draws_are_the_injectors(tmp_path: Path, table: Path) -> None:
    """The injector's own log (count and sum of requested delays per rank) equals the simulator's
    per-rank draws for the same table and seed: the same stream, drawn in the same order."""
    lib = build_dir() / "lib" / "liblatscope_inject.so"
    assert lib.exists(), f"{lib} not built (make build)"
    ln = launch(2)
    env = {k: v for k, v in ln.env.items() if not k.startswith("LATSCOPE_INJECT_") and k != "LD_PRELOAD"}
    env.update({"LD_PRELOAD": str(lib), "LATSCOPE_INJECT_TABLE": str(table), "LATSCOPE_INJECT_SEED": "4242",
                "LATSCOPE_INJECT_LOG": str(tmp_path / "log")})
    cp = subprocess.run(ln.prefix + [str(program("inject-probe")), "50", "5"], env=env, capture_output=True,
                        text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    logs = [json.loads((tmp_path / f"log.{r}.json").read_text()) for r in range(2)]
    # rank r issues exactly count_r sends: the simulator draws count_r delays on rank r
    n = [int(lg["count"]) for lg in logs]
    assert min(n) > 0
    f = exchange_goal(tmp_path / "draws.goal", n)
    out = tmp_path / "pr.jsonl"
    sim.run(f, sim.LogGOPS(L_s=1e-6, o_s_s=1e-7, o_r_s=1e-7), table=table, seed=4242, per_rank_path=out)
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [rec["delay_ps"] for rec in recs] == [int(lg["requested_ns_sum"]) * 1000 for lg in logs]


def test_a_table_shifted_by_a_cost_draws_the_same_indices(tmp_path: Path) -> None:
    """bench/sim_vs_real.py replays a table with the injector's cost per send added to every
    entry (docs/trace.md "The injector's cost"): the stream draws an index, not a value, so with
    the same seed each rank's draws are the original ones plus the cost, send for send."""
    vals = [(i * 7919) % 4099 * 7 + (i % 13) * 1000 for i in range(4096)]
    base = write_table(tmp_path / "base.txt", vals)
    cost_ns = 74
    shifted = write_table(tmp_path / "shifted.txt", [v + cost_ns for v in vals])
    n = [37, 23]   # sends per rank
    f = exchange_goal(tmp_path / "draws.goal", n)
    par = sim.LogGOPS(L_s=1e-6, o_s_s=1e-7, o_r_s=1e-7)
    drawn = []
    for t in (base, shifted):
        out = tmp_path / f"{t.stem}.jsonl"
        sim.run(f, par, table=t, seed=99, per_rank_path=out)
        drawn.append([json.loads(x)["delay_ps"] for x in out.read_text().splitlines()])
    assert drawn[0][0] > 0 and drawn[0][1] > 0
    assert drawn[1] == [d + k * cost_ns * 1000 for d, k in zip(drawn[0], n)]
    # another seed draws other indices: the equality above is not the cost alone
    other = tmp_path / "other.jsonl"
    sim.run(f, par, table=shifted, seed=100, per_rank_path=other)
    assert [json.loads(x)["delay_ps"] for x in other.read_text().splitlines()] != drawn[1]


def test_os_noise_takes_exactly_the_detours_a_computation_crosses(tmp_path: Path) -> None:
    # one rank computes 10 periods' worth: a period leaves T - d of work, so the work needs
    # 10 T / (T - d) = 11.1 periods and loses 11 detours, or 12 when it starts just before one,
    # or 11 plus what is left of one it starts in: between 11 d and 12 d
    T, d = 10_000, 1_000   # ns
    f = tmp_path / "calc.goal"
    f.write_text(f"num_ranks 3\n" + "".join(f"rank {r} {{\nl1: calc {10 * T}\n}}\n" for r in range(3)))
    par = sim.LogGOPS(L_s=1e-6, o_s_s=1e-7, o_r_s=1e-7)
    quiet = sim.run(f, par)
    assert quiet.finish_ps == [10 * T * 1000] * 3
    for seed in (1, 2):
        r = sim.run(f, par, seed=seed, noise=(T * 1e-9, d * 1e-9))
        for fin in r.finish_ps:
            lost = fin - 10 * T * 1000
            assert 11 * d * 1000 <= lost <= 12 * d * 1000, (seed, fin)
        assert len(set(r.finish_ps)) > 1 or seed == 2   # phases differ by rank
    again = sim.run(f, par, seed=1, noise=(T * 1e-9, d * 1e-9))
    assert again.finish_ps == sim.run(f, par, seed=1, noise=(T * 1e-9, d * 1e-9)).finish_ps
    # noise slows a barrier; the same seed gives the same run
    a = sim.run("dissemination", par, P=500, seed=3, noise=(10e-6, 1e-6))
    assert a.time_ps > sim.run("dissemination", par, P=500).time_ps
    assert a.finish_ps == sim.run("dissemination", par, P=500, seed=3, noise=(10e-6, 1e-6)).finish_ps


def test_noise_trace_of_one_detour_per_span_is_the_periodic_noise(tmp_path: Path) -> None:
    par = sim.LogGOPS(L_s=1e-6, o_s_s=2e-7, o_r_s=2e-7)
    T, d = 10e-6, 1e-6
    f = tmp_path / "calc.goal"   # a computation crossing hundreds of spans: the cycles skipped whole
    f.write_text("num_ranks 3\n" + "".join(f"rank {r} {{\nl1: calc {1234567 + r}\n}}\n" for r in range(3)))
    trace = tmp_path / "periodic.nz"
    trace.write_text(f"# one detour every span\nspan {T!r}\n0 {d!r}\n")
    for sched, P in (("dissemination", 500), ("binomial", 300), (str(f), None)):
        for seed in (1, 7):
            per = sim.run(sched, par, P=P, seed=seed, noise=(T, d))
            tr = sim.run(sched, par, P=P, seed=seed, noise_trace=trace)
            assert tr.finish_ps == per.finish_ps, (sched, seed)
            assert tr.summary["noise"] == {"trace": str(trace), "detours": 1, "span_s": T}
    # a trace with no detour (or only zero-length ones) is no noise at all
    for text in ("", "# nothing\n", "span 1e-3\n2e-4 0\n"):
        empty = tmp_path / "empty.nz"
        empty.write_text(text)
        assert sim.run("dissemination", par, P=500, seed=3, noise_trace=empty).finish_ps == \
            sim.run("dissemination", par, P=500, seed=3).finish_ps


def test_noise_trace_delays_work_by_exactly_the_detours_it_crosses(tmp_path: Path) -> None:
    # detours of 1, 2 and 3 us at 10, 20 and 30 us of a 40 us span: 34 us free per span, so 340 us
    # of work crosses 10 spans' detours, 60 us, give or take what the phase cuts at either end
    trace = tmp_path / "t.nz"
    trace.write_text("span 40e-6\n10e-6 1e-6   # a detour\n20e-6 2e-6\n30e-6 3e-6\n")
    f = tmp_path / "calc.goal"
    f.write_text("num_ranks 8\n" + "".join(f"rank {r} {{\nl1: calc 340000\n}}\n" for r in range(8)))
    r = sim.run(f, sim.LogGOPS(L_s=1e-6, o_s_s=1e-7, o_r_s=1e-7), seed=5, noise_trace=trace)
    lost = [fin - 340_000_000 for fin in r.finish_ps]
    assert all(54_000_000 <= x <= 66_000_000 for x in lost), lost
    assert len(set(lost)) > 1   # phases differ by rank


@pytest.mark.parametrize("text, needle", [
    ("0 1e-6\nfoo\n", "t.nz:2: expected 'START DURATION'"),
    ("span 1e-4\n1e-5 1e-5\n5e-6 1e-6\n", "t.nz:3: detour at 5e-06 s starts before the previous one ends"),
    ("span 1e-5\n0 2e-5\n", "t.nz:2: detour ends at 2e-05 s, after the span"),
    ("0 1e-6\nspan 1e-3\n", "t.nz:2: 'span' must come once, before the detours"),
    ("span -1\n", "t.nz:1: expected 'span SECONDS'"),
    ("0 1e-6\n", "the detours fill the whole span"),
])
def test_bad_noise_trace_exits_2_naming_the_line(tmp_path: Path, text: str, needle: str) -> None:
    trace = tmp_path / "t.nz"
    trace.write_text(text)
    cp = lsim("--algo", "dissemination", "--P", "4", "--L", "1e-6", "--noise-trace", str(trace))
    assert cp.returncode == 2 and needle in cp.stderr and len(cp.stderr.strip().splitlines()) == 1, cp.stderr
    cp = subprocess.run([sys.executable, "-m", "latscope.cli", "sim", "dissemination", "--P", "4", "--L", "1us",
                         "--o", "0.2us", "--noise-trace", str(trace)], capture_output=True, text=True, timeout=TIMEOUT)
    assert cp.returncode == 2 and needle in cp.stderr and "Traceback" not in cp.stderr, cp.stderr
    cp = lsim("--algo", "dissemination", "--P", "4", "--noise-trace", str(tmp_path / "none.nz"))
    assert cp.returncode == 2 and "none.nz: cannot read" in cp.stderr


# ---- sim-sweep results and the report section ------------------------------------------------

def test_sweep_writes_results_the_report_draws_alone_and_mixed(tmp_path: Path, table: Path) -> None:
    import re

    from latscope import cli
    from latscope.results import load
    goal = tmp_path / "d16.goal"
    assert lsim("--algo", "dissemination", "--P", "16", "--goal-out", str(goal)).returncode == 0
    out = tmp_path / "sim.jsonl"
    cp = subprocess.run([sys.executable, "-m", "latscope.cli", "sim-sweep", "--algos", "dissemination,tree-shm",
                         "--P", "2..2^6,100", "--L", f"{L}s", "--os", f"{OS}s", "--or", f"{OR}s", "--table", str(table),
                         "--goal", str(goal), "--critical-path", "8", "-o", str(out)], capture_output=True, text=True,
                        timeout=TIMEOUT)
    assert cp.returncode == 0, cp.stderr
    assert "no critical path for tree-shm" in cp.stderr   # a flag the path does not follow: a note, the sweep goes on
    recs = [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in JSON")) for line in out.open()]
    pts = [r for r in recs[1:] if r["type"] == "point"]
    assert recs[0]["type"] == "meta" and recs[0]["bench"] == "sim"
    # (algorithm, P) and the GOAL file, each without and with the table; P = 8 (--critical-path) is in the sweep
    assert len(pts) == 2 * 7 * 2 + 2
    with_cp = [r for r in pts if r["critical_path"] is not None and r["op"] != "d16.goal"]
    # the engine's own path of dissemination at P = 8: one send and one receive per round on it at least, and it
    # ends when the schedule does
    assert [(r["op"], r["ranks"]) for r in with_cp] == [("dissemination", 8)] * 2
    assert all(r["critical_path"]["length"] >= 6 and close(r["critical_path"]["end_s"], r["time_s"]) for r in with_cp)
    assert [r["critical_path"] for r in pts if r["op"] == "tree-shm"] == [None] * 14
    par = LogPParams(L_s=L, o_s_s=OS, o_r_s=OR, g_s=0.0)
    for r in pts:
        assert r["n"] == r["ranks"] and r["min_s"] <= r["median_s"] <= r["max_s"] == r["time_s"]
        assert sum(r["histogram"]["counts"]) == r["ranks"]
        if r["op"] == "dissemination" and not r["variation"]:
            assert close(r["time_s"], barrier_time_s(par, r["ranks"], "dissemination"))
        if r["op"] == "dissemination" and r["variation"]:   # the table only adds delay
            base = next(q for q in pts if q["op"] == "dissemination" and q["ranks"] == r["ranks"] and not q["variation"])
            assert r["time_s"] > base["time_s"] and r["delays"] == r["messages"] > 0
    cps = [r["critical_path"] for r in pts if r["op"] == "d16.goal"]
    assert all(c and c["length"] >= 4 and c["ops"][-1]["end_s"] > 0 for c in cps)
    res = load(out)
    assert (res.points["bench"] == "sim").all()
    p2p = Path(__file__).parents[1] / "golden" / "results_p2p_v3.jsonl"
    for files in ([out], [out, p2p]):
        html_out = tmp_path / "r.html"
        assert cli.main(["report", *map(str, files), "-o", str(html_out)]) == 0
        text = html_out.read_text()
        secs = re.findall(r"<h2>([^<]*)</h2>", text)
        assert "could not be drawn" not in text
        assert {"Simulation: time vs P", "Simulation: finish times and critical path", "All points"} <= set(secs)
        assert ("Point-to-point latency" in secs) == (p2p in files)
        assert "Critical paths" in text


def test_sweep_takes_a_noise_trace(tmp_path: Path) -> None:
    # --noise-trace (docs/sim.md "Variation") as latscope sim takes it: the variation of every point, in the
    # metadata; one detour at 0 every span is periodic noise exactly, so the records equal a periodic sweep's
    trace = tmp_path / "noise.txt"
    trace.write_text("# one detour a span\nspan 1e-5\n0 1e-6\n")
    recs = {}
    for name, args in (("trace", ["--noise-trace", str(trace)]),
                       ("periodic", ["--noise-period", "10us", "--noise-detour", "1us"])):
        out = tmp_path / f"{name}.jsonl"
        cp = subprocess.run([sys.executable, "-m", "latscope.cli", "sim-sweep", "--algos", "dissemination,binomial",
                             "--P", "4,100", "--L", "1us", "--o", "0.2us", *args, "-o", str(out)],
                            capture_output=True, text=True, timeout=TIMEOUT)
        assert cp.returncode == 0, cp.stderr
        recs[name] = [json.loads(line) for line in out.open()]
    assert recs["trace"][0]["sim"]["noise"] == {"trace": str(trace)}
    pts = {n: [r for r in v if r["type"] == "point"] for n, v in recs.items()}
    assert len(pts["trace"]) == 2 * 2 * 2
    for a, b in zip(pts["trace"], pts["periodic"]):
        assert (a["op"], a["ranks"], a["variation"], a["time_s"]) == (b["op"], b["ranks"], b["variation"], b["time_s"])
    noisy = [r for r in pts["trace"] if r["variation"]]
    assert noisy and all(r["noise"]["trace"] == str(trace) for r in noisy)
    quiet = {(r["op"], r["ranks"]): r["time_s"] for r in pts["trace"] if not r["variation"]}
    assert any(r["time_s"] > quiet[(r["op"], r["ranks"])] for r in noisy)   # the detours took time


def test_sweep_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    trace = tmp_path / "noise.txt"
    trace.write_text("0 1e-6\n")
    for args, needle in ((["--P", "5..3"], "empty"), (["--P", "2^31"], "1..2^30"), (["--algos", "nope"], "valid:"),
                         (["--goal", str(tmp_path / "none.goal")], "no such file"),
                         (["--o", "0.2us", "--noise-trace", str(tmp_path / "none.txt")], "no such file"),
                         (["--o", "0.2us", "--noise-trace", str(trace), "--noise-period", "1ms", "--noise-detour",
                           "1us"], "give either"),
                         (["--o", "0.2us", "--critical-path", "2000000"], "1..2^20")):
        cp = subprocess.run([sys.executable, "-m", "latscope.cli", "sim-sweep", "--L", "1us", *args, "-o",
                             str(tmp_path / "x.jsonl")], capture_output=True, text=True, timeout=TIMEOUT)
        assert cp.returncode == 2 and needle in cp.stderr and len(cp.stderr.splitlines()) == 1, (args, cp.stderr)


def test_sweep_records_have_exactly_the_golden_files_fields(tmp_path: Path) -> None:
    # tests/golden/results_sim_v3.jsonl (docs/results-schema.md "Simulation records"): a live
    # sim-sweep writes the same fields, at every level of its records
    def shape(x: object) -> object:
        if isinstance(x, dict):
            return {k: shape(v) for k, v in x.items() if k not in ("ops", "busy_s")}
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return "number"   # a JSON number: the C side prints %.17g, whole values without a point
        return type(x).__name__ if x is not None else None

    golden = [json.loads(line) for line in (Path(__file__).parents[1] / "golden" / "results_sim_v3.jsonl").open()]
    goal = tmp_path / "d64.goal"
    assert lsim("--algo", "dissemination", "--P", "64", "--goal-out", str(goal)).returncode == 0
    out = tmp_path / "s.jsonl"
    cp = subprocess.run([sys.executable, "-m", "latscope.cli", "sim-sweep", "--algos", "dissemination", "--P", "4",
                         "--L", "1us", "--o", "0.2us", "--goal", str(goal), "--bins", "4", "-o", str(out)],
                        capture_output=True, text=True, timeout=TIMEOUT)
    assert cp.returncode == 0, cp.stderr
    live = [json.loads(line) for line in out.open()]
    assert [shape(r) for r in live] == [shape(r) for r in golden]
