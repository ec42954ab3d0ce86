"""Randomised property tests (fixed numpy seed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from latscope.models import (
    BARRIER_ALGORITHMS,
    DiamondDAG,
    LogGPParams,
    LogPParams,
    NetworkParams,
    barrier_time_s,
    contention_delay_s,
    saturation_rate,
    solve_injection_rate,
    upper_bound,
)

RNG_SEED = 20240611
N_CASES = 200


def random_net(rng: np.random.Generator) -> NetworkParams:
    return NetworkParams(
        n=int(rng.integers(1, 5)), k_d=float(rng.uniform(1.0001, 8.0)), channel_s_per_byte=float(10 ** rng.uniform(-10, -8))
    )


def test_contention_grows_with_rate_and_size() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(N_CASES):
        net = random_net(rng)
        B = float(rng.uniform(1, 1e5))
        m_sat = saturation_rate(B, net)
        m1, m2 = sorted(rng.uniform(0, 0.99 * m_sat, 2))
        assert contention_delay_s(m1, B, net) <= contention_delay_s(m2, B, net)
        B2 = B * float(rng.uniform(1.0, 1.5))
        m = float(m1)  # same rate, bigger message
        if m < saturation_rate(B2, net):
            assert contention_delay_s(m, B, net) <= contention_delay_s(m, B2, net)


def test_closed_contention_grows_with_size_and_falls_with_T() -> None:
    rng = np.random.default_rng(RNG_SEED + 1)
    for _ in range(N_CASES):
        net = random_net(rng)
        T = float(10 ** rng.uniform(-7, -3))
        B1, B2 = sorted(rng.uniform(1, 1e5, 2))
        assert solve_injection_rate(T, B1, net).C_n_s <= solve_injection_rate(T, B2, net).C_n_s * (1 + 1e-12)
        T2 = T * float(rng.uniform(1.0, 3.0))
        assert solve_injection_rate(T2, B1, net).C_n_s <= solve_injection_rate(T, B1, net).C_n_s * (1 + 1e-12)


def test_cn_vanishes_as_rate_goes_to_zero() -> None:
    rng = np.random.default_rng(RNG_SEED + 2)
    for _ in range(N_CASES // 4):
        net = random_net(rng)
        B = float(rng.uniform(1, 1e4))
        m0 = 0.5 * saturation_rate(B, net)
        prev = math.inf
        for s in (1e-1, 1e-3, 1e-6, 1e-9, 0.0):
            c = contention_delay_s(m0 * s, B, net)
            assert 0.0 <= c <= prev
            prev = c
        assert prev == 0.0
        assert contention_delay_s(m0 * 1e-9, B, net) <= 1e-8 * contention_delay_s(m0, B, net)


def test_closed_solution_satisfies_eq7() -> None:
    rng = np.random.default_rng(RNG_SEED + 3)
    for _ in range(N_CASES):
        net = random_net(rng)
        B = float(rng.uniform(1, 1e5))
        T = float(10 ** rng.uniform(-8, -2))
        cc = solve_injection_rate(T, B, net)
        # eq. (7): m_c = 1 / (T + C_n(m_c)), C_n recomputed from the open model at m_c
        lhs = cc.m_c_per_s * (T + contention_delay_s(cc.m_c_per_s, B, net))
        assert abs(lhs - 1.0) <= 1e-12
        assert abs(cc.residual) <= 1e-12
        assert 0.0 <= cc.rho < 1.0
        assert cc.m_c_per_s <= 1.0 / T
        # the quadratic of LoGPC §3: (A - T beta) m^2 + (T + beta) m - 1 = 0
        occ = B * net.channel_s_per_byte
        A = (net.n + 1) * (net.kd - 1) * occ * occ / 2
        beta = occ * net.kd / 2
        a, b = A - T * beta, T + beta
        root = 1 / b if a == 0 else 2 / (b + math.sqrt(b * b + 4 * a))  # stable form of the + root
        assert cc.m_c_per_s == pytest.approx(root, rel=1e-11)


def test_upper_bound_is_above_one_and_grows_with_kd() -> None:
    rng = np.random.default_rng(RNG_SEED + 4)
    for _ in range(N_CASES // 2):
        c = float(10 ** rng.uniform(-10, -8))
        G = c * float(rng.uniform(0.1, 4))
        kd1, kd2 = sorted(rng.uniform(1.0, 6.0, 2))
        n = int(rng.integers(1, 4))
        r1 = upper_bound(G, NetworkParams(n=n, k_d=float(kd1), channel_s_per_byte=c)).ratio
        r2 = upper_bound(G, NetworkParams(n=n, k_d=float(kd2), channel_s_per_byte=c)).ratio
        assert 1.0 <= r1 <= r2 * (1 + 1e-12)


def test_barrier_costs_monotone_in_P_and_seed_orderings() -> None:
    rng = np.random.default_rng(RNG_SEED + 5)
    for _ in range(N_CASES // 4):
        p = LogPParams(L_s=float(rng.uniform(0, 5e-5)), o_s_s=float(rng.uniform(0, 1e-5)), o_r_s=float(rng.uniform(0, 1e-5)), g_s=float(rng.uniform(0, 1e-5)))
        k = int(rng.integers(2, 9))
        for alg in (a.name for a in BARRIER_ALGORITHMS if a.name != "shuffle-exchange"):
            ts = [barrier_time_s(p, P, alg, k) for P in range(1, 70)]
            assert all(x <= y + 1e-18 for x, y in zip(ts, ts[1:])), alg
            assert ts[0] == 0.0
        for P in (2, 7, 32, 100):
            # seed 002: the binary tree is never faster than shuffle exchange / dissemination
            assert barrier_time_s(p, P, "binary-tree") >= barrier_time_s(p, P, "dissemination")
            assert barrier_time_s(p, P, "kary-tree", 2) == pytest.approx(barrier_time_s(p, P, "binary-tree"))


def test_dag_optimal_b_is_a_minimum() -> None:
    rng = np.random.default_rng(RNG_SEED + 6)
    for _ in range(40):
        p = LogGPParams(
            L_s=float(rng.uniform(1e-7, 1e-5)), o_s_s=float(rng.uniform(1e-6, 2e-5)), o_r_s=1e-6, g_s=0.0,
            G_s_per_byte=float(rng.uniform(1e-10, 1e-8)), a_bytes=int(rng.integers(0, 9)),
        )
        dag = DiamondDAG(n=int(rng.integers(64, 2048)), P=int(rng.integers(2, 64)), task_s=float(rng.uniform(1e-7, 1e-5)), params=p,
                         aggregation_s_per_value=float(rng.uniform(0, 1e-7)))
        b_star, b_best = dag.optimal_b()
        grid = [b for b in range(1, dag.n + 1) if dag.n % b == 0 and b <= dag.b_max()]
        assert b_best in grid and 1 <= b_star <= dag.n
        m_best = dag.makespan_s(b_best)
        assert m_best <= min(dag.makespan_s(b) for b in grid) * (1 + 1e-12)
