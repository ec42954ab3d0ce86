"""Bad input raises ModelError (a ValueError) naming the value and the constraint."""

from __future__ import annotations

import json

import pytest

from latscope.models import (
    DiamondDAG,
    HockneyParams,
    LogGPParams,
    LogPParams,
    ModelError,
    NetworkParams,
    PLogPParams,
    barrier_time_s,
    collective_time_s,
    contention_delay_s,
    dimension_avg_distance,
    from_json,
    load_params,
    message_point,
    predict_barrier,
    saturation_rate,
    select_algorithms,
    solve_injection_rate,
    upper_bound,
)

LOGP = LogPParams(L_s=1e-5, o_s_s=1e-6, o_r_s=2e-6, g_s=1e-6)
NET = NetworkParams(n=2, k_d=2.0, channel_s_per_byte=1e-9)


def test_model_error_is_value_error() -> None:
    assert issubclass(ModelError, ValueError)


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: LogPParams(L_s=-1e-6, o_s_s=0, o_r_s=0), "L_s = -1e-06: must be >= 0"),
        (lambda: LogPParams(L_s=1e-6, o_s_s=0, o_r_s=-2e-6), "o_r_s = -2e-06"),
        (lambda: LogPParams(L_s=float("nan"), o_s_s=0, o_r_s=0), "L_s = nan: must be a finite number"),
        (lambda: LogPParams(L_s=float("inf"), o_s_s=0, o_r_s=0), "finite"),
        (lambda: LogGPParams(L_s=0, o_s_s=0, o_r_s=0, g_s=0, G_s_per_byte=-1e-9), "G_s_per_byte = -1e-09"),
        (lambda: HockneyParams(alpha_s=1e-6, beta_s_per_byte=-1.0), "beta_s_per_byte = -1.0"),
        (lambda: LogPParams(L_s=0, o_s_s=0, o_r_s=0, P=0), "P (processors) = 0: must be >= 1"),
        (lambda: PLogPParams(L_s=0, sizes_bytes=(0, 8, 4), o_s_s=(0, 0, 0), o_r_s=(0, 0, 0), g_s=(0, 0, 0)), "strictly increasing"),
        (lambda: PLogPParams(L_s=0, sizes_bytes=(0, 8), o_s_s=(0,), o_r_s=(0, 0), g_s=(0, 0)), "len(o_s_s) = 1"),
        (lambda: NetworkParams(n=0, k_d=2.0, channel_s_per_byte=1e-9), "n (network dimensions) = 0"),
        (lambda: NetworkParams(n=2, k_d=0.9375, channel_s_per_byte=1e-9), "k_d = 0.9375: must be >= 1"),
        (lambda: NetworkParams(n=2, k_d=2.0, channel_s_per_byte=0.0), "channel_s_per_byte = 0.0: must be > 0"),
        (lambda: dimension_avg_distance(8, torus=False, bidirectional=False), "bidirectional = False"),
    ],
)
def test_bad_parameters(make, needle: str) -> None:
    with pytest.raises(ModelError) as ei:
        make()
    assert needle in str(ei.value)


def test_k_below_two_and_P_below_one() -> None:
    with pytest.raises(ModelError, match=r"k \(tree arity\) = 1: must be >= 2"):
        barrier_time_s(LOGP, 16, "kary-tree", 1)
    with pytest.raises(ModelError, match=r"P \(processes\) = 0: must be >= 1"):
        barrier_time_s(LOGP, 0, "dissemination")
    with pytest.raises(ModelError, match=r"np \(processes\) = -3"):
        predict_barrier(LOGP, -3)
    with pytest.raises(ModelError, match=r"k \(tree arity\) = 0"):
        predict_barrier(LOGP, 8, "all", 0)
    with pytest.raises(ModelError, match=r"P \(processes\) = 0"):
        collective_time_s(LOGP, "bcast", "binomial", 0, 8)
    with pytest.raises(ModelError, match="must be an integer"):
        barrier_time_s(LOGP, 2.5, "dissemination")  # type: ignore[arg-type]


def test_unknown_algorithm_lists_valid_names() -> None:
    with pytest.raises(ModelError) as ei:
        select_algorithms("dissemination,foo")
    assert "'foo'" in str(ei.value) and "kary-tree" in str(ei.value)
    with pytest.raises(ModelError, match="excludes every"):
        select_algorithms("dissemination,-dissemination")
    assert select_algorithms("all,-linear,-linear-bcast")[:2] == ["dissemination", "shuffle-exchange"]
    assert "null" in select_algorithms("null")


def test_saturated_network() -> None:
    m = 1.01 * saturation_rate(1024, NET)
    with pytest.raises(ModelError, match=r"rho = B\*m\*k_d/2 = 1.01 must be < 1"):
        contention_delay_s(m, 1024, NET)
    with pytest.raises(ModelError, match="network saturates at m = "):
        contention_delay_s(2 * saturation_rate(1024, NET), 1024, NET)
    # k_d = 1 has no contention term, but the rate 1/T can still exceed the channel capacity
    with pytest.raises(ModelError, match="must be < 1"):
        solve_injection_rate(1e-9, 1024, NetworkParams(n=2, k_d=1.0, channel_s_per_byte=1e-9))
    with pytest.raises(ModelError, match="T_s = 0"):
        solve_injection_rate(0.0, 0, NET)
    with pytest.raises(ModelError, match="T_s \\(inter-message time\\) = -1"):
        solve_injection_rate(-1.0, 64, NET)


def test_closed_model_never_saturates_but_stays_finite() -> None:
    cc = solve_injection_rate(1e-12, 1e6, NET)  # asks for far more than the network carries
    assert 0 < cc.rho < 1 and cc.C_n_s > 0 and abs(cc.residual) < 1e-12


def test_upper_bound_bad_G() -> None:
    with pytest.raises(ModelError, match="G_s_per_byte = 0.0: must be > 0"):
        upper_bound(0.0, NET)


def test_hockney_cannot_feed_logp_models() -> None:
    with pytest.raises(ModelError, match="hockney"):
        message_point(HockneyParams(alpha_s=1e-6, beta_s_per_byte=1e-9))


def test_plogp_negative_split() -> None:
    p = PLogPParams(L_s=0.0, sizes_bytes=(0,), o_s_s=(2e-6,), o_r_s=(2e-6,), g_s=(1e-6,))
    with pytest.raises(ModelError, match="must be >= 0"):
        message_point(p, 0)


def test_dag_constraints() -> None:
    p = LogGPParams(L_s=1e-6, o_s_s=1e-6, o_r_s=1e-6, g_s=0, G_s_per_byte=1e-9, a_bytes=8)
    with pytest.raises(ModelError, match=r"P \(processors\) = 1: must be >= 2"):
        DiamondDAG(n=64, P=1, task_s=1e-6, params=p)
    dag = DiamondDAG(n=64, P=4, task_s=1e-6, params=p)
    with pytest.raises(ModelError, match="b = 0.5: must be >= 1"):
        dag.makespan_s(0.5)
    with pytest.raises(ModelError, match="must be >= a \\+ 1 = 9"):
        dag.makespan_s(64)  # B = 8 bytes < a + 1


def test_json_errors(tmp_path) -> None:
    good = {"schema": "latscope.params/1", "model": "logp", "params": {"L_s": 1e-6, "o_s_s": 0, "o_r_s": 0}}
    assert from_json(json.dumps(good)).model.L_s == 1e-6
    cases = [
        ({**good, "schema": "latscope.params/2"}, "reads 'latscope.params/1' only"),
        ({**good, "schema": None}, "schema = None"),
        ({**good, "model": "logq"}, "model = 'logq': must be one of"),
        ({**good, "params": {"L_s": 1e-6, "o_s_s": 0, "o_r_s": 0, "Ls": 3}}, "unknown field(s) ['Ls']"),
        ({**good, "params": {"L_s": 1e-6}}, "missing"),
        ({**good, "params": {"L_s": -1.0, "o_s_s": 0, "o_r_s": 0}}, "L_s = -1.0"),
        ({**good, "extra": 1}, "unknown top-level key"),
    ]
    for doc, needle in cases:
        with pytest.raises(ModelError) as ei:
            from_json(json.dumps(doc))
        assert needle in str(ei.value)
    with pytest.raises(ModelError, match="not valid JSON"):
        from_json("{")
    with pytest.raises(ModelError, match="cannot read"):
        load_params(tmp_path / "missing.json")
