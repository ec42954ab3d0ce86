"""Parameter sets, JSON round trips, point-to-point and collective formulas."""

from __future__ import annotations

import json

import pytest

from latscope.models import (
    SCHEMA,
    HockneyParams,
    LogGPParams,
    LogPParams,
    NetworkParams,
    ParamSet,
    PLogPParams,
    binomial_blocks,
    collective_time_s,
    from_json,
    load_params,
    message_point,
    p2p_time_s,
    save_params,
    to_json,
)

ALL = [
    HockneyParams(alpha_s=2e-6, beta_s_per_byte=1e-9, P=8),
    LogPParams(L_s=5e-6, o_s_s=1e-6, o_r_s=1.5e-6, g_s=2e-6),
    LogGPParams(L_s=5e-6, o_s_s=1e-6, o_r_s=1.5e-6, g_s=2e-6, G_s_per_byte=1e-9, o_sl_s=2e-6, a_bytes=8),
    PLogPParams(L_s=3e-6, sizes_bytes=(0, 1024, 4096), o_s_s=(1e-6, 2e-6, 4e-6), o_r_s=(1e-6, 2e-6, 5e-6), g_s=(2e-6, 3e-6, 6e-6)),
]


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.kind)
def test_json_round_trip(p, tmp_path) -> None:
    net = NetworkParams(n=2, channel_s_per_byte=5e-8, dims=(8, 4))
    text = to_json(p, net, name="x")
    d = json.loads(text)
    assert d["schema"] == SCHEMA == "latscope.params/1"
    assert d["model"] == p.kind
    back = from_json(text)
    assert back.model == p and back.network == net and back.name == "x"
    save_params(tmp_path / "p.json", ParamSet(model=p, network=net, source={"fit": "test"}))
    ps = load_params(tmp_path / "p.json")
    assert ps.model == p and ps.source == {"fit": "test"}
    assert net.kd == pytest.approx(1.9375)


def test_network_k_d_from_dims_and_explicit() -> None:
    assert NetworkParams(n=2, channel_s_per_byte=1.0, dims=(8, 4)).kd == pytest.approx(1.9375)
    assert NetworkParams(n=2, channel_s_per_byte=1.0, dims=(8, 8), torus=True).kd == pytest.approx(2.0)
    assert NetworkParams(n=1, channel_s_per_byte=1.0, dims=(9,), torus=True, bidirectional=False).kd == pytest.approx(4.0)
    assert NetworkParams(n=2, channel_s_per_byte=1.0, k_d=3.0, dims=(8, 4)).kd == 3.0


def test_p2p_formulas() -> None:
    h, lp, lgp, pl = ALL
    assert p2p_time_s(h, 1000) == pytest.approx(2e-6 + 1e-6)
    assert p2p_time_s(lp, 1000) == pytest.approx(7.5e-6)
    assert p2p_time_s(lgp, 1001) == pytest.approx(1e-6 + 1000e-9 + 5e-6 + 1.5e-6)
    assert p2p_time_s(lgp, 0) == pytest.approx(7.5e-6)
    # eq. (2), interrupt-bound: o_sl + L + o_rl + aG + B G_m (G_m defaults to G)
    assert p2p_time_s(lgp, 16, pipelined=True) == pytest.approx(2e-6 + 5e-6 + 1.5e-6 + 8e-9 + 16e-9)
    assert p2p_time_s(pl, 512) == pytest.approx(3e-6 + 2.5e-6)  # L + g(m), interpolated


def test_plogp_interpolation_and_extrapolation() -> None:
    pl = ALL[3]
    assert pl.g_at(0) == 2e-6 and pl.g_at(1024) == 3e-6
    assert pl.g_at(2560) == pytest.approx(4.5e-6)
    assert pl.g_at(8192) == pytest.approx(6e-6 + 4096 * 3e-6 / 3072)  # last segment's slope
    assert pl.o_r_at(4096 + 3072) == pytest.approx(8e-6)
    pt = message_point(pl, 1024)
    assert pt.hop_s == pytest.approx(3e-6 + 3e-6)  # o_s + L' + o_r = L + g(m)


def test_message_point_views() -> None:
    lgp = ALL[2]
    pt = message_point(lgp, 101)
    assert pt.L_s == pytest.approx(5e-6 + 100e-9)
    assert pt.send_gap_s == pytest.approx(2e-6 + 100e-9)


def test_collectives_hockney() -> None:
    h = ALL[0]
    t = 2e-6 + 1e-9 * 100
    assert collective_time_s(h, "bcast", "linear", 8, 100) == pytest.approx(7 * t)
    assert collective_time_s(h, "bcast", "binomial", 8, 100) == pytest.approx(3 * t)
    assert collective_time_s(h, "bcast", "binomial", 9, 100) == pytest.approx(4 * t)
    assert collective_time_s(h, "scatter", "binomial", 8, 100) == pytest.approx(3 * 2e-6 + 7 * 100e-9)
    assert collective_time_s(h, "gather", "linear", 1, 100) == 0.0


def test_collectives_loggp() -> None:
    p = LogGPParams(L_s=5e-6, o_s_s=1e-6, o_r_s=2e-6, g_s=3e-6, G_s_per_byte=1e-9)
    h = lambda m: 1e-6 + 5e-6 + max(0, m - 1) * 1e-9 + 2e-6  # noqa: E731
    assert collective_time_s(p, "bcast", "binomial", 16, 1) == pytest.approx(4 * h(1))
    assert collective_time_s(p, "bcast", "linear", 4, 1) == pytest.approx(h(1) + 2 * 3e-6)
    assert collective_time_s(p, "gather", "linear", 4, 101) == pytest.approx(h(101) + 2 * (3e-6 + 100e-9))
    assert binomial_blocks(8) == [4, 2, 1] and sum(binomial_blocks(13)) == 12
    assert collective_time_s(p, "scatter", "binomial", 8, 10) == pytest.approx(h(40) + h(20) + h(10))
