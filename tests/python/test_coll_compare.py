"""`latscope coll compare`: the schedules' models by hand, a real launch (logp, collectives, logp
in one mpiexec) compared, the same files compared again from fitted parameters, the identical-
schedule check, and bad input."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from latscope.coll import compare as C
from latscope.models import HockneyParams, LogGPParams, ModelError, schedule_time_s

LATSCOPE = [sys.executable, "-m", "latscope.cli"]
P = LogGPParams(L_s=2.0, o_s_s=1.0, o_r_s=3.0, g_s=1.5, G_s_per_byte=0.01)
H = HockneyParams(alpha_s=5.0, beta_s_per_byte=0.1)


def cli(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(LATSCOPE + args, capture_output=True, text=True, timeout=timeout)


def test_schedules_by_hand() -> None:
    h8 = 1.0 + 2.0 + 0.07 + 3.0   # o_s + L + (m-1) G + o_r at 8 B
    assert schedule_time_s(P, "reduce", "binomial", 4, 8) == pytest.approx(2 * h8)
    assert schedule_time_s(P, "allreduce", "reduce-bcast", 5, 8) == pytest.approx(2 * 3 * h8)
    assert schedule_time_s(P, "alltoall", "pairwise", 4, 8) == pytest.approx(3 * h8)
    assert schedule_time_s(H, "reduce", "binomial", 4, 10) == pytest.approx(2 * 6.0)
    assert schedule_time_s(H, "alltoall", "pairwise", 3, 10) == pytest.approx(2 * 6.0)
    assert schedule_time_s(H, "allgather", "gather-bcast", 4, 10) == pytest.approx(2 * 5 + 3 * 1.0 + 2 * (5 + 4.0))
    # at P = 2 linear and binomial are the same single message
    for op in ("bcast", "scatter", "gather"):
        assert schedule_time_s(P, op, "linear", 2, 8) == pytest.approx(schedule_time_s(P, op, "binomial", 2, 8))
    with pytest.raises(ModelError, match="no model of this schedule"):
        schedule_time_s(P, "bcast", "native", 2, 8)


def _row(alg: str, med: float, lo: float, hi: float) -> dict[str, Any]:
    return {"file": "f", "op": "bcast", "alg": alg, "P": 2, "size_bytes": 8, "measured_s": med, "ci_lo_s": lo,
            "ci_hi_s": hi, "noise": ""}


def test_identical_schedules_flagged_when_cis_apart() -> None:
    df = pd.DataFrame([_row("linear", 1.0, 0.9, 1.1), _row("binomial", 1.5, 1.4, 1.6)])
    (c,) = C.consistency(df)
    assert c["agree"] is False and c["ratio"] == pytest.approx(1.5)
    df = pd.DataFrame([_row("linear", 1.0, 0.9, 1.1), _row("binomial", 1.05, 0.95, 1.15)])
    (c,) = C.consistency(df)
    assert c["agree"] is True


def test_summary_says_none_when_every_point_flagged() -> None:
    df = pd.DataFrame([dict(_row("linear", 1.0, 0.9, 1.1), noise="under load")])
    df = C.predict(df, {"loggp": P})
    line = C.summary_line(df, "loggp")
    assert line == "loggp: none (all 1 modelled points were measured under load or oversubscribed)"
    assert "nan" not in (C.noisy_line(df, "loggp") or "")


@pytest.fixture(scope="module")
def launch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    d = tmp_path_factory.mktemp("coll")
    r = cli(["coll", "compare", "--np", "2", "--ops", "bcast,scatter,reduce", "--sizes", "8,1K", "--budget", "0.05",
             "--keep", str(d), "--json"])
    assert r.returncode == 0, r.stderr
    return d, json.loads(r.stdout)


def test_live_launch_compares_every_registry_algorithm(launch: tuple[Path, dict[str, Any]]) -> None:
    _, js = launch
    pts = pd.DataFrame(js["points"])
    algs = {(o, a) for o, a in zip(pts["op"], pts["alg"])}
    assert {("bcast", "linear"), ("bcast", "binomial"), ("bcast", "native"), ("scatter", "linear"),
            ("scatter", "binomial"), ("reduce", "binomial"), ("reduce", "native")} <= algs
    for _, r in pts.iterrows():
        assert r["measured_s"] > 0
        if not (pd.isna(r["ci_lo_s"]) or pd.isna(r["ci_hi_s"])):   # a point stopped by its budget may have none
            assert r["ci_lo_s"] <= r["measured_s"] <= r["ci_hi_s"]
        if r["alg"] == "native":
            assert r["loggp_s"] is None or math.isnan(r["loggp_s"])
        else:
            assert r["loggp_s"] > 0 and r["loggp_err"] == pytest.approx((r["loggp_s"] - r["measured_s"]) / r["measured_s"])
    # two identical-schedule pairs (bcast, scatter) at each of 2 sizes, each with a verdict
    assert len(js["consistency"]) == 4 and all(c["agree"] in (True, False, None) for c in js["consistency"])
    assert js["drift"] and "RTT/2" in js["drift"]


def test_files_against_fitted_params_predict_the_same(launch: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    d, js = launch
    params = tmp_path / "p.json"
    r = cli(["fit", "logp", str(d / "logp_before.jsonl"), str(d / "logp_after.jsonl"), "--json", str(params)])
    assert r.returncode == 0, r.stderr
    r = cli(["coll", "compare", "--params", str(params), str(d / "coll_bcast.jsonl"), "--json"])
    assert r.returncode == 0, r.stderr
    again = {(p["alg"], p["size_bytes"]): p["loggp_s"] for p in json.loads(r.stdout)["points"]}
    live = {(p["alg"], p["size_bytes"]): p["loggp_s"] for p in js["points"] if p["op"] == "bcast"}
    for k, v in live.items():
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            assert again[k] == pytest.approx(v, rel=1e-9)
    r = cli(["coll", "compare", "--params", str(params), str(d / "coll_bcast.jsonl")])
    assert r.returncode == 0 and "nan" not in r.stdout.lower() and "same schedule at P=2: bcast" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["--ops", "bcast,nosuch"], "--ops 'bcast,nosuch'"),
    (["--np", "1"], "--np 1"),
    (["--sizes", "8,abc"], "--sizes '8,abc'"),
    (["--budget", "0"], "--budget '0'"),
    (["NOFILE.jsonl"], "--params"),
])
def test_bad_input_exit_2(args: list[str], needle: str) -> None:
    r = cli(["coll", "compare"] + args, timeout=60)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
