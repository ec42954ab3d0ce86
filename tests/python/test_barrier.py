"""Barrier algorithms (docs/barriers.md): semantics of every registry row under staggered entry
(barrier-check, tests/c/barrier_check.c) at np = 1..4, and at np = 5..8 in the slower set below;
the latscope-bench selection of parametrised rows and its bad input (exit 2, the value named, on
every np). 3 and more ranks share 2 cores here: iterations are few; no wall-clock assertions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import NPS, mpirun, write_barrier_results, write_params

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
                 "tournament", "shm") + tuple(f"{t}:k={k}" for t in ("tree", "tree-bcast", "tree-shm") for k in (2, 3, 4)) + (
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


# --- predictions: the seed's closed forms vs the LogP simulation of the benchmark loop (no MPI) ------
# models.barrier_sim runs each row's exact message schedule (src/algos/barrier.c) under LogP.

from latscope.models.barrier import (  # noqa: E402
    ROW_DEFAULT_K, ROW_NAMES, SimParams, barrier_time_s, loop_time_s, row_loop_time_s, row_program, row_time_s,
    single_shot_s)
from latscope.models.barrier_sim import SIM_MODELS, model_program, simulate  # noqa: E402
from latscope.models.params import LogPParams  # noqa: E402

US = 1e-6
# seed 002 §5.1.1 (o_s = 3, L = 17.5, o_r = 9.5 us) and a set with o_s > o_r, each with g below and
# above the overheads (g only matters when it exceeds them)
PARAM_SETS = [(os_, L, or_, g) for os_, L, or_ in ((3 * US, 17.5 * US, 9.5 * US), (9.5 * US, 1 * US, 3 * US))
              for g in (0.0, 12 * US)]


def _is_power(P: int, k: int) -> bool:
    while P % k == 0:
        P //= k
    return P == 1


def _binomial_fanout_extra(P: int, s: float) -> float:
    """binomial's fan-out sends to the smallest subtree first (MPI_Isend in order of d = 1, 2, 4 ...):
    the last rank is reached through the last child at every level, (m-1) + (m-2) + ... + 0
    sends of s = max(o_s, g) later than the closed form's 2 h m assumes."""
    m = (P - 1).bit_length()
    return s * m * (m - 1) / 2


@pytest.mark.parametrize("os_, L, or_, g", PARAM_SETS)
def test_single_shot_simulation_equals_the_closed_forms_where_exact(os_, L, or_, g):
    """Simultaneous single entry, P = 2..64, k = 2..5: the simulated critical path equals the seed's
    closed form (models.barrier.barrier_time_s) for every seed-model algorithm at P a power of 2
    (of k for the k-ary trees), where the formulas are exact; elsewhere the closed form counts full
    rounds and is an upper bound. binomial's closed form is an approximation: its fan-out order
    adds _binomial_fanout_extra (checked exactly at powers of two)."""
    sp = SimParams(o_s_s=os_, o_r_s=or_, L_s=L, g_s=g)
    lp = LogPParams(L_s=L, o_s_s=os_, o_r_s=or_, g_s=g)
    s = max(os_, g)
    for alg in SIM_MODELS:
        for P in range(2, 65):
            for k in range(2, 6):
                sim = single_shot_s(model_program(alg), P, k, sp)
                closed = barrier_time_s(lp, P, alg, k)
                exact = _is_power(P, k if alg.startswith("kary") else 2)
                if alg == "binomial":
                    if exact:
                        assert sim == pytest.approx(closed + _binomial_fanout_extra(P, s), rel=1e-12), (P, k)
                elif exact:
                    assert sim == pytest.approx(closed, rel=1e-12), (alg, P, k, sim, closed)
                else:
                    assert sim <= closed * (1 + 1e-12), (alg, P, k, sim, closed)
    # the seed's own numbers come out of the simulation too (32 nodes: SE 150 us, binary tree 180 us)
    if g == 0.0 and os_ == 3 * US:
        assert single_shot_s(model_program("shuffle-exchange"), 32, 2, sp) == pytest.approx(150 * US)
        assert single_shot_s(model_program("binary-tree"), 32, 2, sp) == pytest.approx(180 * US)


@pytest.mark.parametrize("os_, L, or_, g", PARAM_SETS)
def test_single_shot_simulation_of_registry_rows_equals_row_time_s_where_exact(os_, L, or_, g):
    sp = SimParams(o_s_s=os_, o_r_s=or_, L_s=L, g_s=g)
    lp = LogPParams(L_s=L, o_s_s=os_, o_r_s=or_, g_s=g)
    for base in ROW_NAMES:
        if base in ("native", "shm"):   # no message schedule: no LogP prediction
            assert row_program(base)[0] is None and row_loop_time_s(sp, 4, base) is None
            assert row_time_s(lp, 4, base) is None
            continue
        for k in (range(2, 6) if base in ROW_DEFAULT_K else [2]):
            row = f"{base}:k={k}" if base in ROW_DEFAULT_K else base
            prog, kk = row_program(row)
            for P in range(2, 65):
                sim, closed = single_shot_s(prog, P, kk, sp), row_time_s(lp, P, row)
                # the MPI_Bcast release is a binomial tree: exact at powers of 2 (and of k for the gather)
                exact = _is_power(P, k if base in ROW_DEFAULT_K else 2) and (
                    base not in ("tree-bcast", "tree-2net") or _is_power(P, 2))
                if base == "binomial":
                    if exact:
                        assert sim == pytest.approx(closed + _binomial_fanout_extra(P, max(os_, g)), rel=1e-12)
                elif exact:
                    assert sim == pytest.approx(closed, rel=1e-12), (row, P, sim, closed)
                else:
                    assert sim <= closed * (1 + 1e-12), (row, P, sim, closed)


def test_simulation_reproduces_its_calibration_benchmarks_with_a_negative_raw_L():
    """The simulation's receive rule is calibrated by latscope-bench logp itself: a receive already
    waiting finishes L + o_r = RTT/2 - o_s after the send (the ping-pong), one that finds the message
    queued costs o_r (the o_r benchmark), even with the raw L < 0 the fit may report."""
    sp = SimParams(o_s_s=259e-9, o_r_s=708e-9, L_s=-301e-9)
    pingpong = lambda me, P, k: ([("send", 1, "a"), ("irecv", 1, "b"), ("wait", 1)] if me == 0 else   # noqa: E731
                                 [("irecv", 0, "a"), ("wait", 1), ("send", 0, "b")])
    rtt = simulate(pingpong, 2, 2, sp, iterations=4, dummy_s=0.0)[0][3]   # receives posted long before
    assert rtt / 2 == pytest.approx(259e-9 - 301e-9 + 708e-9)
    late = lambda me, P, k: ([("send", 1, "a")] if me == 0 else   # noqa: E731
                             [("work", 5 * US), ("irecv", 0, "a"), ("wait", 1)])
    assert simulate(late, 2, 2, sp)[1][0] == pytest.approx(5 * US + 708e-9)   # message queued: o_r
    with pytest.raises(Exception, match="L \\+ o_r"):
        SimParams(o_s_s=1e-9, o_r_s=100e-9, L_s=-200e-9)


def test_loop_steady_state_is_not_the_single_shot_critical_path():
    """In the seed's loop every rank's t1 - t0 settles to the loop period minus the dummy work: equal
    on all ranks. A P = 2 chain (tree) costs 2h per rank in the loop although one rank leaves the
    single barrier after h + o_s; the P = 32 central counter overlaps its release with the next
    gather (ranks released first enter first) and the loop is shorter than the critical path."""
    sp = SimParams(o_s_s=3 * US, o_r_s=9.5 * US, L_s=17.5 * US)
    h = sp.hop_s
    prog, k = row_program("tree:k=4")
    r = loop_time_s(prog, 2, k, sp)
    assert r.per_rank_median_s == pytest.approx([2 * h, 2 * h])
    first = simulate(prog, 2, k, sp, iterations=1)
    assert sum(t[0] for t in first) / 2 == pytest.approx((3 * h + 3 * US) / 2)
    for row in ("linear", "tree:k=4", "tree-bcast:k=4", "dissemination", "binomial", "pairwise"):
        prog, k = row_program(row)
        for P in (3, 5, 8):
            r = loop_time_s(prog, P, k, sp)
            assert max(r.per_rank_median_s) == pytest.approx(min(r.per_rank_median_s), rel=1e-9), (row, P)
    prog, k = row_program("linear")
    assert loop_time_s(prog, 32, k, sp).mean_of_medians_s < 0.95 * single_shot_s(prog, 32, k, sp)
    # dummy work longer than any barrier: the steady state does not depend on it
    assert row_loop_time_s(sp, 8, "linear", dummy_s=300 * US) == pytest.approx(row_loop_time_s(sp, 8, "linear"))


def test_loop_parameters_not_measured_by_logp_enter_where_they_should():
    """post_s (posting a receive) lies on the path of exchange rounds (MPI_Sendrecv posts, then
    sends), not on a P = 2 chain whose receives are posted while waiting; flag_s is tree-shm's
    release."""
    sp = SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=0.0)
    assert row_loop_time_s(sp, 2, "dissemination", post_s=50e-9) == pytest.approx(650e-9)
    assert row_loop_time_s(sp, 2, "tree:k=4", post_s=50e-9) == pytest.approx(1200e-9)
    assert row_loop_time_s(sp, 2, "tree-shm:k=4", flag_s=140e-9) == pytest.approx(740e-9)
    assert row_loop_time_s(sp, 2, "tree-shm:k=4") == pytest.approx(600e-9)   # default flag: max(L, 0)
    # MPI_Bcast release: a message by default (binomial), or MPICH's shared-memory release
    assert row_loop_time_s(sp, 2, "tree-bcast:k=4") == pytest.approx(1200e-9)
    assert row_loop_time_s(sp, 2, "linear-bcast", bcast="flag", flag_s=140e-9) == pytest.approx(740e-9)
    with pytest.raises(Exception, match="bcast = 'multicast': unknown"):
        row_loop_time_s(sp, 2, "tree-bcast:k=4", bcast="multicast")
    # the seed's multicast exit at the library's measured broadcast latency (logp's mcast): one
    # release for all, after the gather (P = 4: the root takes three arrivals, hop + 2 o_r)
    assert row_loop_time_s(sp, 2, "linear-bcast", bcast="mcast", mcast_s=300e-9) == pytest.approx(900e-9)
    assert row_loop_time_s(sp, 4, "linear-bcast", bcast="mcast", mcast_s=300e-9) == pytest.approx(1700e-9)
    assert row_loop_time_s(sp, 4, "tree-bcast:k=4", bcast="mcast", mcast_s=300e-9) == pytest.approx(1700e-9)
    with pytest.raises(Exception, match="needs the broadcast's one-way latency"):
        row_loop_time_s(sp, 2, "tree-bcast:k=4", bcast="mcast")
    # poll_s (logp's poll: MPI_Iprobe until seen, then MPI_Recv) replaces o_r in linear-2net's
    # gather only: P = 2 is poll + hop's send and latency, then the release (a message by default)
    assert row_loop_time_s(sp, 2, "linear-2net") == pytest.approx(1200e-9)
    assert row_loop_time_s(sp, 2, "linear-2net", poll_s=100e-9) == pytest.approx(900e-9)
    assert row_loop_time_s(sp, 2, "linear-2net", poll_s=100e-9, bcast="mcast", mcast_s=300e-9) == pytest.approx(600e-9)
    assert row_loop_time_s(sp, 2, "linear-bcast", poll_s=100e-9) == pytest.approx(1200e-9)
    assert row_loop_time_s(sp, 2, "linear", poll_s=100e-9) == pytest.approx(1200e-9)


def test_blocking_wait_floor_and_polled_latency():
    """wait_s (logp's rwait - o_s): a blocking wait whose message was not there at its first look
    (post_s after the call) returns no sooner than call + wait_s; L_poll_s (rtt_poll/2 - o_s -
    poll) is the latency of linear-2net's polled gather only (docs/barriers.md "Blocking waits")."""
    sp = SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=0.0)
    # tree-shm at P = 2: the root waits from its entry, the child sends 140 ns later (its release
    # came by the flag): 740 ns without the floor, the floor with it
    assert row_loop_time_s(sp, 2, "tree-shm:k=4", flag_s=140e-9, wait_s=1000e-9) == pytest.approx(1000e-9)
    assert row_loop_time_s(sp, 2, "tree-shm:k=4", flag_s=140e-9, wait_s=500e-9) == pytest.approx(740e-9)
    # a chain whose receiver waits longer than the floor anyway is unchanged
    assert row_loop_time_s(sp, 2, "tree:k=4", wait_s=1000e-9) == pytest.approx(1200e-9)
    # an exchange round (MPI_Sendrecv: both messages sent before either wait). Entered together,
    # each rank finds the other's message at its first look (post 50, send to 250, call at 250,
    # the message seen at 250 + L_poll <= 300, received at 250 + L + o_r = 750): no floor.
    # Entered apart, the rank first in misses its look and pays the floor (250 + 1000 = 1250),
    # the other receives at 250 + o_r = 650 (the message long there), so the first leaves 600
    # later and is second next time: a 2-cycle (each rank alternates 650 / 1250). The loop
    # prediction is the window's (ranks entering together: the quiet machine's state)
    sp_l = SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=100e-9, post_s=50e-9, wait_s=1000e-9, L_poll_s=0.0)
    prog, k = row_program("pairwise")
    assert [round(x * 1e9) for x in simulate(prog, 2, k, sp_l, iterations=30)[0][-4:]] == [750] * 4
    t = simulate(prog, 2, k, sp_l, iterations=30, stagger_s=300e-9)
    assert [round(x * 1e9) for x in t[0][-4:]] == [1250, 650, 1250, 650]
    assert [round(x * 1e9) for x in t[1][-4:]] == [650, 1250, 650, 1250]
    for row in ("dissemination", "pairwise"):
        assert row_loop_time_s(sp_l, 2, row) == pytest.approx(750e-9)
        # without the floor the stagger only moves time between the ranks (850 + 650): mean 750
        nof = SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=100e-9, post_s=50e-9)
        t = simulate(prog, 2, k, nof, iterations=30, stagger_s=300e-9)
        assert (t[0][-1] + t[1][-1]) / 2 == pytest.approx(750e-9)
    # judged by the loop's L (100 ns > post 50) instead of L_poll, ranks entered together would
    # both miss their look: 1250 on each
    sp_n = SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=100e-9, post_s=50e-9, wait_s=1000e-9)
    assert [round(x * 1e9) for x in simulate(prog, 2, k, sp_n, iterations=30)[0][-2:]] == [1250] * 2
    # tree-shm's root still misses its look (the child sends after the root's call): the floor
    assert row_loop_time_s(sp_l, 2, "tree-shm:k=4", flag_s=140e-9) == pytest.approx(1050e-9)
    # linear-2net: o_s + L_poll + poll + mcast; the floor never applies to a polled receive
    kw = dict(poll_s=100e-9, bcast="mcast", mcast_s=300e-9)
    assert row_loop_time_s(sp, 2, "linear-2net", L_poll_s=-50e-9, **kw) == pytest.approx(550e-9)
    assert row_loop_time_s(sp, 2, "linear-2net", L_poll_s=-50e-9, wait_s=1000e-9, **kw) == pytest.approx(550e-9)
    # L_poll_any (logp's rtt_poll_any: MPI_ANY_SOURCE over two communicators) replaces L_poll there
    assert row_loop_time_s(sp, 2, "linear-2net", L_poll_s=-50e-9, L_poll_any_s=40e-9, **kw) == pytest.approx(640e-9)
    # L_poll leaves the blocking rows alone
    assert row_loop_time_s(sp, 2, "linear-bcast", L_poll_s=-50e-9, **kw) == pytest.approx(900e-9)
    with pytest.raises(Exception, match="wait_s = -1e-07"):
        SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=0.0, wait_s=-100e-9)
    with pytest.raises(Exception, match="L_poll_s"):
        SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=0.0, poll_s=100e-9, L_poll_s=-200e-9)


def test_exchange_receive_costs_irecv_wait():
    """irecv_wait_s (logp's irecv_wait: MPI_Wait of a receive posted before its message, the
    message there): a receive posted ahead whose message is there at the wait's first look (an
    exchange round's crossing messages, judged by L_poll as the wait floor) finishes irecv_wait
    after max(free, seen) instead of LogP's max(ready, free) + o_r; a receiver that waits keeps the
    hop, blocking MPI_Recv rows keep o_r (docs/barriers.md "The exchange receive")."""
    # the loop's L above L_poll (it folds a waiting receiver's grid into the hop); o_r 1.3 us
    sp = SimParams(o_s_s=200e-9, o_r_s=1300e-9, L_s=100e-9, post_s=50e-9, L_poll_s=0.0)
    for row in ("dissemination", "pairwise"):
        # post 50, send to 250; LogP: the partner's message ready at 350, + o_r = 1650
        assert row_loop_time_s(sp, 2, row) == pytest.approx(1650e-9)
        # seen at 250 + L_poll = 250 <= call 250 + post 50: found at the first look, 250 + 900
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9) == pytest.approx(1150e-9)
        # L_poll 30 ns: still at the first look, from when it is seen (280 + 900)
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, L_poll_s=30e-9) == pytest.approx(1180e-9)
        # L_poll 60 ns, after the look (post 50): missed, LogP's hop
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, L_poll_s=60e-9) == pytest.approx(1650e-9)
    for P in (2, 3, 4, 5):
        for row in ("tree:k=2", "tree:k=3", "binomial", "linear", "tournament", "tree-shm:k=4"):
            # chains: every receiver waits for its message (not there at the first look), or
            # receives by MPI_Recv: unchanged
            base = row_loop_time_s(sp, P, row, flag_s=100e-9)
            assert row_loop_time_s(sp, P, row, flag_s=100e-9, irecv_wait_s=900e-9) == pytest.approx(base), (P, row)
    with pytest.raises(Exception, match="irecv_wait_s = -1e-07"):
        SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=0.0, irecv_wait_s=-100e-9)


def test_posted_receive_catch_decided_by_the_measured_boundary():
    """catch_s (logp's catch: a posted receive's wait finds its message at the first look iff the
    send started at least catch_s before the wait's call) replaces the L_poll-based window for
    receives posted ahead (exchange rounds, gathers), both for irecv_wait and for the wait floor;
    blocking MPI_Recv rows keep the window (docs/barriers.md "The catch boundary, measured")."""
    sp = SimParams(o_s_s=200e-9, o_r_s=1300e-9, L_s=100e-9, post_s=50e-9, L_poll_s=0.0)
    for row in ("dissemination", "pairwise"):
        # P 2: both post (to 50), send 50..250, wait from 250: the partner's send started 200 ns
        # before the call. Boundary 150 ns: found (seen at 250 + L_poll 0), 250 + irecv_wait 900
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, catch_s=150e-9) == pytest.approx(1150e-9)
        # boundary 250 ns: missed, LogP's hop (350 + o_r)
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, catch_s=250e-9) == pytest.approx(1650e-9)
        # the window would say missed (L_poll 60 > post 50); the measured boundary says found,
        # from when a look sees it (310 + 900)
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, L_poll_s=60e-9) == pytest.approx(1650e-9)
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, L_poll_s=60e-9,
                               catch_s=150e-9) == pytest.approx(1210e-9)
        # a miss pays the wait floor (250 + 1500), a catch does not
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, wait_s=1500e-9, catch_s=250e-9) == pytest.approx(1750e-9)
        assert row_loop_time_s(sp, 2, row, irecv_wait_s=900e-9, wait_s=1500e-9, catch_s=150e-9) == pytest.approx(1150e-9)
    # a later boundary can only turn catches into misses: never a shorter loop
    grid = [-1000e-9, -100e-9, 0.0, 100e-9, 200e-9, 300e-9, 1000e-9]
    for P in (2, 3, 4):
        for row in ("dissemination", "pairwise", "tree-shm:k=4", "binomial"):
            t = [row_loop_time_s(sp, P, row, flag_s=100e-9, irecv_wait_s=900e-9, wait_s=1500e-9, catch_s=c)
                 for c in grid]
            assert all(a <= b * (1 + 1e-12) for a, b in zip(t, t[1:])), (P, row, t)   # type: ignore[operator]
        # linear gathers by blocking MPI_Recv: the window as before, catch_s not used
        base = row_loop_time_s(sp, P, "linear", wait_s=1500e-9)
        assert row_loop_time_s(sp, P, "linear", wait_s=1500e-9, catch_s=1000e-9) == pytest.approx(base)
    with pytest.raises(Exception, match="catch_s = nan"):
        SimParams(o_s_s=200e-9, o_r_s=400e-9, L_s=0.0, catch_s=float("nan"))


def test_loop_under_measured_noise_settles_in_the_mix_of_states_the_noise_produces():
    """SimParams.jitter (docs/barriers.md "The loop under measured noise"): every cost drawn from its
    op's measured spread. A zero spread is the deterministic loop; an exchange round whose catch
    window (post_s - L_poll = 50 ns here) is wider than the send's spread stays with the ranks
    together; a spread wider than the window kicks it out, into barriers where the first rank in
    pays the wait floor, so its median rises toward the 2-cycle's. Deterministic given the seed."""
    from latscope.models.barrier_sim import quantile_deviation

    tab = ((0.0, -100e-9), (0.5, 0.0), (0.9, 40e-9), (0.99, 300e-9), (1.0, 300e-9))
    assert quantile_deviation(tab, 0.0) == pytest.approx(-100e-9)
    assert quantile_deviation(tab, 0.25) == pytest.approx(-50e-9)
    assert quantile_deviation(tab, 0.5) == 0.0
    assert quantile_deviation(tab, 0.7) == pytest.approx(20e-9)
    assert quantile_deviation(tab, 0.995) == pytest.approx(300e-9)
    sp = SimParams(o_s_s=200e-9, o_r_s=1300e-9, L_s=100e-9, post_s=50e-9, L_poll_s=0.0, irecv_wait_s=900e-9,
                   wait_s=1500e-9)
    kw = dict(flag_s=100e-9, mcast_s=300e-9, bcast="mcast", poll_s=300e-9)
    zero = {op: ((0.0, 0.0), (0.5, 0.0), (1.0, 0.0)) for op in ("o_s", "o_r", "post", "poll", "irecv_wait", "rwait",
                                                                 "flag", "mcast")}
    for P in (2, 3, 4):
        for row in ("pairwise", "dissemination", "tree:k=4", "binomial", "linear", "linear-2net", "tree-shm:k=4",
                    "tree-bcast:k=4", "tournament"):
            assert row_loop_time_s(sp, P, row, jitter=zero, **kw) == pytest.approx(row_loop_time_s(sp, P, row, **kw),
                                                                                 rel=1e-12), (P, row)

    def send_spread(w: float) -> dict[str, tuple[tuple[float, float], ...]]:
        return {"o_s": ((0.0, -w), (0.5, 0.0), (1.0, w))}

    together = row_loop_time_s(sp, 2, "pairwise")     # post 50 + send 200 + irecv_wait 900
    assert together == pytest.approx(1150e-9)
    narrow = row_loop_time_s(sp, 2, "pairwise", jitter=send_spread(10e-9))
    wide = row_loop_time_s(sp, 2, "pairwise", jitter=send_spread(100e-9))
    assert narrow is not None and wide is not None
    assert narrow < together + 30e-9            # +-10 ns inside the 50 ns window: still together
    # +-100 ns: out of the window in many barriers, each rank paying the floor in some
    assert together + 200e-9 < wide < 2150e-9   # 2150: the floor-paying barrier of the 2-cycle
    assert row_loop_time_s(sp, 2, "pairwise", jitter=send_spread(100e-9)) == wide   # seeded: reproducible


def test_auto_broadcast_model_follows_what_the_library_does():
    """auto: the multicast exit where the measured broadcast beats a message on one host (MPICH's
    shared-memory release), else a binomial tree of messages (Open MPI on one node: its measured
    broadcast costs a message; any library across hosts; nothing measured)."""
    from latscope.models.barrier_sim import resolve_bcast

    assert resolve_bcast("auto", mcast_s=400e-9, hop_s=650e-9, one_host=True) == "mcast"
    assert resolve_bcast(None, mcast_s=400e-9, hop_s=650e-9, one_host=True) == "mcast"
    assert resolve_bcast("auto", mcast_s=640e-9, hop_s=650e-9, one_host=True) == "p2p"
    assert resolve_bcast("auto", mcast_s=400e-9, hop_s=650e-9, one_host=False) == "p2p"
    assert resolve_bcast("auto", mcast_s=None, hop_s=650e-9, one_host=True) == "p2p"
    assert resolve_bcast("flag", mcast_s=None, hop_s=650e-9, one_host=False) == "flag"


def _synthetic_results(tmp_path: Path, P: int, meds: dict[str, float]) -> Path:
    return write_barrier_results(tmp_path / f"b{P}.jsonl", P, meds, {"schema": "latscope.results/1"})


def test_barrier_compare_shows_both_predictions_and_the_error_of_the_loop(tmp_path, capsys):
    import pandas as pd

    from latscope import barrier, cli
    from latscope.models import load_params

    params = write_params(tmp_path / "p.json")
    res = _synthetic_results(tmp_path, 2, {"dissemination": 0.7e-6, "tree:k=4": 1.4e-6, "native": 0.5e-6})
    df = barrier.compare(load_params(params).model, [str(res)], L_raw_s=-301e-9)
    d = df.set_index("alg")
    hop = 259e-9 - 301e-9 + 708e-9                    # RTT/2: the raw L, as measured
    # an exchange round: the partner's message arrives while this rank is in its own send (L < 0),
    # so it is received at the already-arrived cost o_r: o_s + o_r, not RTT/2
    assert d.loc["dissemination", "predicted_s"] == pytest.approx(259e-9 + 708e-9)
    assert d.loc["dissemination", "closed_form_s"] == pytest.approx(259e-9 + 708e-9)   # clamped L = 0
    # a P = 2 chain: every receive is posted long before its message: two ping-pong hops
    assert d.loc["tree:k=4", "predicted_s"] == pytest.approx(2 * hop)
    assert d.loc["tree:k=4", "rel_err"] == pytest.approx((2 * hop - 1.4e-6) / 1.4e-6)
    assert d.loc["tree:k=4", "closed_form_rel_err"] == pytest.approx((2 * (259e-9 + 708e-9) - 1.4e-6) / 1.4e-6)
    assert d.loc["native", "predicted_s"] is None or pd.isna(d.loc["native", "predicted_s"])
    rc = cli.main(["barrier", "compare", "--params", str(params), str(res)])
    out, err = capsys.readouterr()
    assert rc == 0, err   # the message says why (once seen: 2 after other tests, cause not captured)
    assert "closed form" in out and "loop" in out and "err(loop)" in out
    assert "loop simulation (the prediction compared)" in out
    rc = cli.main(["barrier", "compare", "--params", str(params), str(res), "--post=-5ns"])
    err = capsys.readouterr().err
    assert rc == 2 and "--post -5ns" in err   # the bad value named, exit 2
    # a parameter file that carries a posting cost (source.post_s) feeds it to the loop simulation:
    # an exchange round then costs post + o_s + o_r (MPI_Sendrecv posts before it sends)
    doc = json.loads(params.read_text())
    doc["source"]["post_s"] = 50e-9
    params.write_text(json.dumps(doc))
    rc = cli.main(["barrier", "compare", "--params", str(params), str(res), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    pts = {p["alg"]: p for p in json.loads(out)["points"]}
    assert pts["dissemination"]["predicted_s"] == pytest.approx((50 + 259 + 708) * 1e-9)
    assert pts["tree:k=4"]["predicted_s"] == pytest.approx(2 * hop)   # posted while waiting: off the path
    # the measured catch boundary (source.catch_s, logp's catch) decides whether the exchange's
    # posted receive finds its message at the first look: a send that must start 1 us before the
    # wait's call misses it and pays the wait floor (source.wait_s) from the call (50 + 259)
    for catch, want in ((1e-6, (50 + 259 + 1500) * 1e-9), (-1e-6, (50 + 259 + 708) * 1e-9)):
        doc["source"].update(wait_s=1500e-9, catch_s=catch)
        params.write_text(json.dumps(doc))
        rc = cli.main(["barrier", "compare", "--params", str(params), str(res), "--json"])
        out, err = capsys.readouterr()
        assert rc == 0, err
        pts = {p["alg"]: p for p in json.loads(out)["points"]}
        assert pts["dissemination"]["predicted_s"] == pytest.approx(want), catch
    del doc["source"]["wait_s"], doc["source"]["catch_s"]
    # the broadcast release: --bcast mcast needs the measured broadcast; with it (source.mcast_s)
    # the default (auto) takes it on one host, and a broadcast of messages across hosts
    rc = cli.main(["barrier", "compare", "--params", str(params), str(res), "--bcast", "mcast"])
    assert rc == 2 and "--bcast mcast: the parameter file has no source.mcast_s" in capsys.readouterr().err
    doc["source"]["mcast_s"] = 300e-9
    params.write_text(json.dumps(doc))
    res2 = _synthetic_results(tmp_path, 2, {"tree-bcast:k=4": 1.0e-6})
    rc = cli.main(["barrier", "compare", "--params", str(params), str(res2), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    pt = json.loads(out)["points"][0]
    assert pt["bcast"] == "mcast" and pt["predicted_s"] == pytest.approx(hop + 300e-9)
    meta_two_hosts = json.loads(res2.read_text().splitlines()[0]) | {"rank_hosts": ["a", "b"]}
    res2.write_text("\n".join([json.dumps(meta_two_hosts)] + res2.read_text().splitlines()[1:]) + "\n")
    rc = cli.main(["barrier", "compare", "--params", str(params), str(res2), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    pt = json.loads(out)["points"][0]
    assert pt["bcast"] == "p2p" and pt["predicted_s"] == pytest.approx(2 * hop)


def test_predict_barrier_prints_the_loop_column_beside_the_closed_form(capsys):
    from latscope import predict_cli

    rc = predict_cli.main(["barrier", "--os", "3us", "--L", "17.5us", "--or", "9.5us", "--np", "32", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0
    rows = {r["alg"]: r for r in d["rows"]}
    assert rows["dissemination"]["time_s"] == pytest.approx(150 * US)
    assert rows["dissemination"]["loop_time_s"] == pytest.approx(150 * US)
    assert rows["linear"]["loop_time_s"] < rows["linear"]["time_s"]
    assert rows["native"]["loop_time_s"] is None
    rc = predict_cli.main(["barrier", "--os", "3us", "--L", "17.5us", "--or", "9.5us", "--np", "4", "--flag", "x"])
    assert rc == 2 and "--flag x" in capsys.readouterr().err
    rc = predict_cli.main(["barrier", "--os", "3us", "--L", "17.5us", "--or", "9.5us", "--np", "4", "--bcast", "mcast"])
    assert rc == 2 and "--bcast mcast: the parameter file has no source.mcast_s" in capsys.readouterr().err
