"""Golden file for model outputs: tests/golden/models_logpc_alewife.json.

Regenerate (after an intended change, reviewing the diff) with
``LATSCOPE_REGEN_GOLDEN=1 pytest tests/python/test_models_golden.py``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from latscope.models import (
    DiamondDAG,
    LogPParams,
    from_dict,
    predict_barrier,
    remap_long,
    remap_sync,
    solve_injection_rate,
    upper_bound,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models_logpc_alewife.json"
REL = 1e-9

CYCLE = 50e-9
PARAMS = {
    "schema": "latscope.params/1",
    "model": "loggp",
    "name": "alewife-20MHz",
    "params": {
        "L_s": 21 * CYCLE, "o_s_s": 15 * CYCLE, "o_r_s": 122 * CYCLE, "g_s": 15 * CYCLE,
        "G_s_per_byte": 0.5 * CYCLE, "P": 32, "o_sl_s": 25 * CYCLE, "o_rl_s": 129 * CYCLE,
        "L_long_s": 8 * CYCLE, "G_m_s_per_byte": None, "a_bytes": 8,
    },
    "network": {"n": 2, "channel_s_per_byte": CYCLE, "k_d": None, "dims": [8, 4], "torus": False, "bidirectional": True},
    "source": {"paper": "LoGPC (Moritz & Frank) Tables 1-2; 1 cycle = 50 ns"},
}


def compute() -> dict[str, Any]:
    ps = from_dict(PARAMS)
    p, net = ps.model, ps.network
    assert net is not None
    out: dict[str, Any] = {"params": ps.to_dict()}
    out["remap_sync"] = remap_sync(p, C_n_s=23 * CYCLE).__dict__
    cc = solve_injection_rate(p.o_s_s + p.o_r_s, 64, net)
    out["contention_async_B64"] = {"m_c_per_s": cc.m_c_per_s, "C_n_s": cc.C_n_s, "rho": cc.rho}
    out["upper_bound_kd_literal"] = upper_bound(p.G_s_per_byte, net).__dict__
    out["remap_long_B4096"] = remap_long(p, 4096, net).__dict__
    dag = DiamondDAG(n=1024, P=32, task_s=100 * CYCLE, params=p, aggregation_s_per_value=20 * CYCLE)
    b_star, b_best = dag.optimal_b()
    out["dag"] = {"b_star": b_star, "b_best": b_best, "makespan_b64_s": dag.makespan_s(64),
                  "contention_b64": list(dag.contention(64, net))}
    seed002 = LogPParams(o_s_s=3e-6, L_s=17.5e-6, o_r_s=9.5e-6, g_s=9e-6)
    out["barrier_seed002_P32_k4"] = predict_barrier(seed002, 32, "all", 4).to_dict()
    return out


def _close(a: Any, b: Any, path: str) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, str):
        assert math.isclose(a, b, rel_tol=REL, abs_tol=1e-300), f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def test_golden_models_output() -> None:
    got = json.loads(json.dumps(compute()))
    if os.environ.get("LATSCOPE_REGEN_GOLDEN"):
        # regenerate on request, then compare as always
        GOLDEN.write_text(json.dumps(got, indent=2) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    _close(got, want, "golden")
