"""LoGPC §5 application models and eqs. (8)-(10), checked against hand-evaluated formulas."""

from __future__ import annotations

import pytest

from latscope.models import (
    DiamondDAG,
    LogGPParams,
    LogPParams,
    ModelError,
    NetworkParams,
    em3d_iteration,
    long_message_time_s,
    remap_async_injection_rate,
    short_message_time_s,
    solve_injection_rate,
)

P = LogGPParams(L_s=21.0, o_s_s=15.0, o_r_s=122.0, g_s=15.0, G_s_per_byte=0.5, o_sl_s=25.0, L_long_s=8.0, a_bytes=8)
NET = NetworkParams(n=2, channel_s_per_byte=1.0, dims=(8, 4))  # unit-free "cycles" here


def test_eq8_eq10_add_closed_contention() -> None:
    cc = solve_injection_rate(137.0, 64, NET)
    assert short_message_time_s(P, NET, 64, 137.0) == pytest.approx(15 + 21 + 122 + cc.C_n_s)
    assert long_message_time_s(P, NET, 64, 137.0) == pytest.approx(25 + 63 * 0.5 + 8 + cc.C_n_s)
    assert remap_async_injection_rate(P) == pytest.approx(1 / 137)


def test_eq15_by_hand() -> None:
    dag = DiamondDAG(n=64, P=4, task_s=2.0, params=P, aggregation_s_per_value=0.5, bytes_per_value=8)
    b = 4
    B = 8 * 64 / b  # 128 bytes
    W = 64 * 64 / (4 * b) * 2.0 + 0.5 * 64 / b
    d = 8 + 8 * 0.5
    O_s = 15 + (B - 1) * 0.5
    O_r = (B - 1 - 8) * 0.5
    u, v = O_r + W + d, O_s + W + O_r
    M = (W + d) + 2 * u + (b - 1) * v + O_r + W
    t = dag.terms(b)
    assert (t.B_bytes, t.W_s, t.d_s, t.O_s_s, t.O_r_s) == pytest.approx((B, W, d, O_s, O_r))
    assert dag.makespan_s(b) == pytest.approx(M)
    Cn, Mc = dag.contention(b, NET)
    cc = solve_injection_rate(v, B, NET, contention_factor=2.0)
    assert cc.m_c_per_s == pytest.approx(1 / (v + 2 * Cn))
    assert Mc == pytest.approx(M + (4 - 1 + 2 * (b - 1)) * Cn)


def test_dag_optimal_b_closed_form_interior() -> None:
    p = LogGPParams(L_s=10.0, o_s_s=200.0, o_r_s=100.0, g_s=0.0, G_s_per_byte=0.5, a_bytes=0)
    dag = DiamondDAG(n=1024, P=8, task_s=1.0, params=p, bytes_per_value=8)
    b_star, b_best = dag.optimal_b()
    c = 8 * 1024
    X = 7 * (1024 * 1024 / 8) + 5 * c * 0.5
    Y = 200 - 2 * 0.5
    assert b_star == pytest.approx((X / Y) ** 0.5)
    assert 1 < b_star < 1024
    assert 1024 % b_best == 0
    assert dag.makespan_s(b_best) <= min(dag.makespan_s(b) for b in (b_best // 2, b_best * 2))


def _dag_brute(dag: DiamondDAG) -> int:
    """Exhaustive optimum over every integer b with equal blocks of whole values."""
    feas = [b for b in range(1, dag.n + 1) if dag.n % b == 0 and dag.bytes_per_value * dag.n / b >= dag.params.a_bytes + 1]
    return min(feas, key=dag.makespan_s)


def test_dag_optimum_within_constraints_small_overhead() -> None:
    # o_s small against the per-task work: the unconstrained sqrt(X/Y) lies far above n, where a
    # block would carry a fraction of one value; the optimum must stop at b = n.
    p = LogGPParams(L_s=1e-6, o_s_s=0.5e-6, o_r_s=0.5e-6, g_s=0.0, G_s_per_byte=1e-10, a_bytes=0)
    dag = DiamondDAG(n=1024, P=32, task_s=5e-6, params=p)
    b_star, b_best = dag.optimal_b()
    assert 1 <= b_star <= 1024 and 1 <= b_best <= 1024 and 1024 % b_best == 0
    assert b_best == _dag_brute(dag)
    with pytest.raises(ModelError, match="at most n = 1024"):
        dag.makespan_s(1025)


def test_dag_optimum_seed_vectors() -> None:
    # LoGPC §5.2.2: n = 1024, P = 2..32, 100-cycle tasks, Alewife's parameters (Tables 1-2, in cycles: P above)
    for Pn in (2, 4, 8, 16, 32):
        for agg in (0.0, 20.0):
            dag = DiamondDAG(n=1024, P=Pn, task_s=100.0, params=P, aggregation_s_per_value=agg)
            b_star, b_best = dag.optimal_b()
            assert 1 <= b_star <= dag.b_max() <= 1024
            assert 1024 % b_best == 0 and b_best == _dag_brute(dag)
            assert dag.terms(b_best).B_bytes >= P.a_bytes + 1


def test_em3d_iteration() -> None:
    p = LogPParams(L_s=21.0, o_s_s=15.0, o_r_s=122.0)
    it = em3d_iteration(p, nodes_per_proc=100, degree=32, nonlocal_fraction=1.0, edge_s=3.0)
    msgs = 2 * 320  # 3200 remote values per phase in blocks of 10
    assert it.messages == msgs
    assert it.communication_s == pytest.approx(msgs * 137)
    assert it.compute_s == pytest.approx(2 * 3200 * 3.0)
    assert it.total_s == pytest.approx(it.compute_s + it.communication_s)
    assert em3d_iteration(p, 100, 32, 0.0, edge_s=3.0).messages == 0


def test_remap_sync_with_a_measured_round_trip() -> None:
    """LoGPC §5.1.1 with 2 (o_s + L + o_r) given as one measured round trip (L may be negative on
    shared memory, so the sum is not rebuilt from L): rtt + C_r, C_r = o_s + o_r by default."""
    from latscope.models import ModelError
    from latscope.models.apps import remap_sync_rtt

    r = remap_sync_rtt(100.0, 15.0, 122.0)
    assert (r.logp_s, r.lopc_s, r.logpc_s, r.C_r_s) == pytest.approx((100.0, 237.0, 237.0, 137.0))
    r = remap_sync_rtt(100.0, 15.0, 122.0, C_n_s=23.0, C_r_s=40.0)
    assert (r.logp_s, r.lopc_s, r.logpc_s) == pytest.approx((100.0, 140.0, 186.0))
    with pytest.raises(ModelError, match="rtt_s"):
        remap_sync_rtt(0.0, 1.0, 1.0)


def test_refined_remap_and_dag_by_hand() -> None:
    """The refinements beside the paper's formulas (latscope.apps_twins uses them)."""
    from latscope.models import ModelError
    from latscope.models.apps import remap_async_stream_s, remap_sync_stream_s

    assert remap_async_stream_s(1.0, 2.5, 10, 14) == pytest.approx(10 * 1.0 + 14 * 2.5)
    assert remap_sync_stream_s(1.0, 0.5, 2.5) == pytest.approx(2 * (1.0 + 0.5 + 2.5))
    assert remap_sync_stream_s(1.0, 0.5, 2.5, C_r_s=3.5) == pytest.approx(8.0 + 3.5)
    with pytest.raises(ModelError, match="send_gap_s"):
        remap_async_stream_s(-1.0, 1.0, 1, 1)
    with pytest.raises(ModelError, match="L_s"):
        remap_sync_stream_s(1.0, -0.1, 1.0)
    # eq. (15) with W given: with W = n^2 t / (P b) + alpha n / b it is the paper's makespan
    dag = DiamondDAG(n=64, P=4, task_s=2.0, params=P, aggregation_s_per_value=0.5, bytes_per_value=8)
    for b in (1, 4, 16):
        W = 64 * 64 / (4 * b) * 2.0 + 0.5 * 64 / b
        assert dag.makespan_measured_W_s(b, W) == pytest.approx(dag.makespan_s(b))
    t = dag.terms(4)
    assert dag.makespan_measured_W_s(4, 100.0) == pytest.approx(
        (100 + t.d_s) + 2 * (t.O_r_s + 100 + t.d_s) + 3 * (t.O_s_s + 100 + t.O_r_s) + t.O_r_s + 100)
    with pytest.raises(ModelError, match="W_s"):
        dag.makespan_measured_W_s(4, -1.0)


def test_em3d_sweep_command_shape() -> None:
    """`latscope model em3d`: communication grows linearly with the remote fraction and the degree
    (LoGPC §5.3: ceil(n d f / 10) messages of o_s + o_r per phase), compute only with the degree."""
    import json
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "latscope.cli", "model", "em3d", "--L", "1us", "--o", "1us", "--nodes",
                        "100", "--degree", "8,32", "--remote", "0,0.5,1", "--edge", "50ns", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    its = {(x["degree"], x["remote_fraction"]): x for x in json.loads(r.stdout)["iterations"]}
    assert its[(8, 0.0)]["communication_s"] == 0 and its[(8, 0.0)]["communication_share"] == 0
    assert its[(8, 1.0)]["messages"] == 2 * 80 and its[(8, 1.0)]["communication_s"] == pytest.approx(160 * 2e-6)
    assert its[(32, 0.5)]["communication_s"] == pytest.approx(4 * its[(8, 0.5)]["communication_s"])
    assert its[(32, 1.0)]["compute_s"] == pytest.approx(4 * its[(8, 1.0)]["compute_s"]) == pytest.approx(2 * 100 * 32 * 50e-9)
    r = subprocess.run([sys.executable, "-m", "latscope.cli", "model", "em3d", "--L", "1us", "--o", "1us", "--nodes",
                        "100", "--remote", "0.5,x", "--edge", "50ns"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--remote '0.5,x'" in r.stderr
