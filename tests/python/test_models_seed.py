"""The seed papers' numbers (LoGPC = seed 003; fast barriers = seed 002 §5.1.2)."""

from __future__ import annotations

import itertools

import pytest

from latscope.models import (
    LogGPParams,
    LogPParams,
    NetworkParams,
    alewife_2kd,
    barrier_time_s,
    hops,
    kary_vs_dissemination,
    mapping_avg_distance,
    mesh_avg_distance,
    neighbour_ring_avg_distance,
    predict_barrier,
    rank_coords,
    remap_async_s,
    remap_long,
    remap_sync,
    solve_injection_rate,
    upper_bound,
)

CYCLE = 50e-9  # Alewife at 20 MHz; every result below is divided back into cycles
US = 1e-6


def alewife_short(args: int = 2) -> LogPParams:
    """LoGPC Table 1 (cycles -> seconds)."""
    L, os_, or_ = {0: (21, 9, 117), 1: (21, 12, 119), 2: (21, 15, 122)}[args]
    return LogPParams(L_s=L * CYCLE, o_s_s=os_ * CYCLE, o_r_s=or_ * CYCLE, g_s=os_ * CYCLE)


ALEWIFE_LONG = LogGPParams(  # LoGPC Table 2
    L_s=21 * CYCLE, o_s_s=15 * CYCLE, o_r_s=122 * CYCLE, g_s=15 * CYCLE, G_s_per_byte=0.5 * CYCLE,
    o_sl_s=25 * CYCLE, o_rl_s=129 * CYCLE, L_long_s=8 * CYCLE, a_bytes=8,
)


def cyc(t: float) -> float:
    return t / CYCLE


# --- Table 4 -----------------------------------------------------------------------------------


def test_table4_synchronous_logp_lopc_logpc() -> None:
    r = remap_sync(alewife_short(2), C_n_s=23 * CYCLE)
    assert cyc(r.logp_s) == pytest.approx(316, abs=1e-9)
    assert cyc(r.C_r_s) == pytest.approx(137, abs=1e-9)  # LoPC: C_r = o_r + o_s
    assert cyc(r.lopc_s) == pytest.approx(453, abs=1e-9)
    assert cyc(r.logpc_s) == pytest.approx(499, abs=1e-9)  # 453 + 2*23
    assert cyc(r.logpc_s) == pytest.approx(cyc(r.lopc_s) + 2 * 23, abs=1e-9)


def test_table4_asynchronous() -> None:
    p = alewife_short(2)
    assert cyc(remap_async_s(p)) == pytest.approx(137, abs=1e-9)  # LogP = LoPC = LoGPC
    assert cyc(remap_async_s(p, messages=10)) == pytest.approx(1370, abs=1e-9)


# --- eqs. (1)-(2) -------------------------------------------------------------------------------


def test_eq2_reduces_to_eq1_for_long_messages() -> None:
    from latscope.models import logpc_end_to_end_s, logpc_long_time_s

    # G_m < G so beyond ~1000 bytes the network term dominates (LoGPC §2.2)
    p = LogGPParams(**{**ALEWIFE_LONG.__dict__, "G_m_s_per_byte": 0.25 * CYCLE})
    B = 4096
    assert logpc_end_to_end_s(p, B) == pytest.approx(logpc_long_time_s(p, B), rel=1e-15)
    assert cyc(logpc_long_time_s(p, B)) == pytest.approx(25 + 8 + 4095 * 0.5)
    small = 16  # interrupt-bound: o_sl + L + o_rl + aG + B G_m
    assert cyc(logpc_end_to_end_s(p, small)) == pytest.approx(25 + 8 + 129 + 8 * 0.5 + 16 * 0.25)


# --- eq. (11), eq. (12) -------------------------------------------------------------------------


def test_eq11_alewife_mesh() -> None:
    assert alewife_2kd(8, 4) == pytest.approx(3.875, abs=1e-15)
    total, kd = mesh_avg_distance((8, 4))
    assert total == pytest.approx(3.875, abs=1e-15)
    assert kd == pytest.approx(1.9375, abs=1e-15)


def test_eq12_row_major_gives_1_9375() -> None:
    # row-major (x = 8 is the lower dimension), neighbours p +- 1 mod P, plain mesh hop counting
    assert neighbour_ring_avg_distance((8, 4), "row-major") == pytest.approx(62 / 32, abs=1e-15)
    assert neighbour_ring_avg_distance((4, 8), "row-major") == pytest.approx(62 / 32, abs=1e-15)


def test_eq12_paper_value_1_875_needs_y_wraparound() -> None:
    # The paper's 1.875 = 60/32 is what row-major hop counting gives if the 31 -> 0 step is
    # charged one row (as if y had end-around links): x part 56/32 = 1.75, y part 4/32 = 0.125.
    assert neighbour_ring_avg_distance((8, 4), "row-major", torus=(False, True)) == pytest.approx(1.875, abs=1e-15)


def _row_by_row(order: tuple[int, ...], dirs: tuple[bool, ...]) -> list[tuple[int, int]]:
    out = []
    for y, rev in zip(order, dirs):
        xs = range(7, -1, -1) if rev else range(8)
        out += [(x, y) for x in xs]
    return out


def test_eq12_no_row_by_row_numbering_of_the_plain_mesh_gives_1_875() -> None:
    # Every numbering that fills the 4x8 mesh row by row (any row order, any direction per
    # row: 4! * 2**4 = 384 numberings) misses 1.875 on a mesh without end-around links.
    seen = set()
    for order in itertools.permutations(range(4)):
        for dirs in itertools.product((False, True), repeat=4):
            v = mapping_avg_distance(_row_by_row(order, dirs), (8, 4))
            seen.add(round(v * 32))
    assert 60 not in seen
    assert 62 in seen and 34 in seen  # row-major, snake


def test_eq12_standard_numberings() -> None:
    assert neighbour_ring_avg_distance((8, 4), "snake") == pytest.approx(34 / 32)
    assert neighbour_ring_avg_distance((8, 4), "column-major") == pytest.approx(62 / 32)
    assert neighbour_ring_avg_distance((8, 4), "morton") == pytest.approx(62 / 32)
    assert rank_coords(9, (8, 4)) == (1, 1)
    assert hops((7, 3), (0, 0), (8, 4)) == 10


# --- eqs. (13)-(14) -----------------------------------------------------------------------------


def test_upper_bound_literal_kd() -> None:
    net = NetworkParams(n=2, channel_s_per_byte=CYCLE, dims=(8, 4))  # k_d = 3.875 / 2
    ub = upper_bound(ALEWIFE_LONG.G_s_per_byte, net)
    assert net.kd == 1.9375
    assert ub.ratio == pytest.approx(2.1703, abs=5e-5)
    assert ub.ratio == pytest.approx((3.9375 + (3.9375**2 + 7) ** 0.5) / 4, rel=1e-13)  # closed form


def test_upper_bound_kd_2() -> None:
    net = NetworkParams(n=2, channel_s_per_byte=CYCLE, k_d=2.0)
    ub = upper_bound(ALEWIFE_LONG.G_s_per_byte, net)
    assert ub.ratio == pytest.approx(2.2247, abs=5e-5)
    assert ub.ratio == pytest.approx(1 + 1.5**0.5, rel=1e-13)
    assert round(ub.ratio, 2) == 2.22  # the paper's "2.22 B cycles"


def test_upper_bound_is_the_closed_model_at_maximal_injection() -> None:
    net = NetworkParams(n=2, channel_s_per_byte=CYCLE, k_d=2.0)
    G = ALEWIFE_LONG.G_s_per_byte
    ub = upper_bound(G, net)
    for B in (64, 1024, 32768):
        cc = solve_injection_rate(2 * G * B, B, net)
        assert cc.T_c_s / (2 * G * B) == pytest.approx(ub.ratio, rel=1e-12)
    lr = remap_long(ALEWIFE_LONG, 4096, net)
    assert cyc(lr.approx_s) == pytest.approx(4096)  # 2BG with G = 0.5: one message per B cycles
    assert cyc(lr.bound_s) == pytest.approx(ub.ratio * 4096)


# --- seed 002 §5.1.2 barrier test vectors ---------------------------------------------------------

SEED002 = LogPParams(o_s_s=3 * US, L_s=17.5 * US, o_r_s=9.5 * US, g_s=9 * US)


def test_barrier_shuffle_exchange_32_nodes_150us() -> None:
    assert barrier_time_s(SEED002, 32, "shuffle-exchange") / US == pytest.approx(150)
    assert barrier_time_s(SEED002, 32, "dissemination") / US == pytest.approx(150)


def test_barrier_binary_tree_32_nodes_180us() -> None:
    assert barrier_time_s(SEED002, 32, "binary-tree") / US == pytest.approx(180)


def test_barrier_kary_formula_of_the_seed_at_powers_of_k() -> None:
    h = 3 + 17.5 + 9.5
    for k, P in ((3, 27), (4, 16), (4, 64), (2, 32)):
        d = {27: 3, 16: 2, 64: 3, 32: 5}[P]
        seed = (3 + 17.5 + (k - 1) * 9.5) * d + h  # (o_s + L + (k-1) o_r) log_k n + (o_s + L + o_r)
        assert barrier_time_s(SEED002, P, "kary-tree", k) / US == pytest.approx(seed)


def test_four_ary_condition_false_for_seed_values() -> None:
    c = kary_vs_dissemination(SEED002, 16, 4)
    assert (c.coeff_o_r, c.coeff_os_plus_L) == (3, 1)  # "3 o_r < o_s + L"
    assert c.holds is False  # 28.5 < 20.5 is false
    assert 3 * 9.5 >= 3 + 17.5
    # 16 nodes: SE = 4h = 120 us, 4-ary = 3h + 4 o_r = 128 us
    assert c.dissemination_time_s / US == pytest.approx(120)
    assert c.kary_time_s / US == pytest.approx(128)
    fast_recv = LogPParams(o_s_s=3 * US, L_s=17.5 * US, o_r_s=2 * US)
    assert kary_vs_dissemination(fast_recv, 16, 4).holds is True


def test_predict_barrier_best_for_seed_values() -> None:
    pred = predict_barrier(SEED002, 32, "all", 4)
    assert pred.best == "dissemination"
    assert pred.best_time_s / US == pytest.approx(150)
    assert pred.times_s["binary-tree"] / US == pytest.approx(180)
    assert "null" not in pred.times_s
