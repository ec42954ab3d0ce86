"""Loader, golden results file, schema conformance of a live run, Hockney fits, CLI."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import mpirun
from latscope import cli, fit
from latscope.results import Results, ResultsError, load
from latscope.units import fmt_time, parse_duration, parse_size


def test_golden_loads(golden):
    res = load(golden / "results_p2p_v1.jsonl")
    assert res.meta["schema"] == "latscope.results/1"
    assert res.meta["git_sha"] == "0123456789ab" and res.meta["ranks"] == 2
    assert list(res.points["size_bytes"]) == [0, 8, 1024, 65536]
    assert res.points["median_s"].iloc[0] == pytest.approx(1e-6)
    assert list(res.summary()["size"]) == ["0 B", "8 B", "1 KiB", "64 KiB"]


def _keys(path):
    recs = [json.loads(line) for line in open(path)]
    return set(recs[0]), set().union(*(set(r) for r in recs[1:])), set(recs[0]["timer"]), set(recs[0]["rep_policy"])


def test_live_run_matches_golden_schema(golden, tmp_path):
    """A run today writes exactly the fields the versioned golden file has (schema drift = bump)."""
    out = tmp_path / "live.jsonl"
    cp = mpirun(2, ["p2p", "--sizes", "0,8", "--min-reps", "5", "--max-reps", "5", "-o", str(out)])
    assert cp.returncode == 0, cp.stderr
    assert _keys(out) == _keys(golden / "results_p2p_v3.jsonl")


def test_loader_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"point"}\n')
    with pytest.raises(ResultsError, match="first record must be the metadata"):
        load(bad)
    bad.write_text('{"type":"meta","schema":"latscope.results/99"}\n')
    with pytest.raises(ResultsError, match="latscope.results/99"):
        load(bad)
    bad.write_text('{"type":"meta","schema":"latscope.results/1"}\nnot json\n{"type":"point"}\n')
    with pytest.raises(ResultsError, match=":2: not JSON"):
        load(bad)


def test_truncated_last_line_is_tolerated(golden, tmp_path):
    text = (golden / "results_p2p_v1.jsonl").read_text()
    p = tmp_path / "cut.jsonl"
    p.write_text(text[: len(text) - 40])   # a run killed while writing its last point
    assert len(load(p).points) == 3


def synthetic(alpha=2e-6, beta=1e-10, sizes=(0, 8, 64, 512, 4096, 32768, 262144), noise=0.0, seed=3) -> Results:
    rng = np.random.default_rng(seed)
    rows = []
    for s in sizes:
        t = alpha + beta * s
        t *= 1 + noise * rng.standard_normal()
        rows.append({"op": "pingpong", "group": [0, 1], "size_bytes": s, "reply_bytes": s, "median_s": t,
                     "ci_half_s": t * 0.01, "bench": "p2p"})
    for s in (0, 65536):
        rtt = 2 * alpha + beta * s
        rows.append({"op": "roundtrip", "group": [0, 1], "size_bytes": s, "reply_bytes": 0, "median_s": rtt,
                     "ci_half_s": rtt * 0.01, "bench": "p2p"})
    df = pd.DataFrame(rows)
    df["pair"] = df["group"].map(tuple)
    return Results({"schema": "latscope.results/1"}, df)


def test_hockney_regression_recovers_known_parameters():
    f = fit.hockney_regression(synthetic())
    assert f.alpha_s == pytest.approx(2e-6, rel=1e-9)
    assert f.beta_s_per_byte == pytest.approx(1e-10, rel=1e-9)
    assert f.bandwidth_bytes_per_s == pytest.approx(1e10)
    # with noise: the truth lies inside the 95 % CIs
    f = fit.hockney_regression(synthetic(noise=0.02, sizes=tuple(range(0, 1 << 20, 1 << 16))))
    assert f.alpha_ci_s[0] <= 2e-6 <= f.alpha_ci_s[1]
    assert f.beta_ci_s_per_byte[0] <= 1e-10 <= f.beta_ci_s_per_byte[1]


def test_hockney_two_roundtrip_recovers_known_parameters():
    f = fit.hockney_two_roundtrip(synthetic())
    assert f.method == "two-roundtrip"
    assert f.alpha_s == pytest.approx(2e-6, rel=1e-9)
    assert f.beta_s_per_byte == pytest.approx(1e-10, rel=1e-9)
    assert f.alpha_ci_s[0] < 2e-6 < f.alpha_ci_s[1]


def test_fit_errors():
    r = synthetic(sizes=(0, 8))
    with pytest.raises(fit.FitError, match="at least 3 distinct sizes"):
        fit.hockney_regression(r)
    with pytest.raises(fit.FitError, match="pair 5:6"):
        fit.hockney_regression(synthetic(), pair=(5, 6))


def test_cli_fit_and_summary(golden, capsys, tmp_path):
    assert cli.main(["fit", "hockney", str(golden / "results_p2p_v1.jsonl"), "--json", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    assert "regression" in out and "alpha = 1.0000 us" in out and "beta = 0.10000 ns/B" in out
    params = json.loads((tmp_path / "p.json").read_text())
    assert params["schema"] == "latscope.params/1" and params["model"] == "hockney"
    # the file is what the models read: one source of truth for the format
    from latscope.models import load_params
    ps = load_params(tmp_path / "p.json")
    assert ps.model.alpha_s == pytest.approx(1e-6) and ps.model.beta_s_per_byte == pytest.approx(1e-10)
    assert cli.main(["results", "summary", str(golden / "results_p2p_v1.jsonl")]) == 0
    assert "64 KiB" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["fit", "hockney", "/nonexistent.jsonl"], "/nonexistent.jsonl"),
    (["fit", "hockney", "GOLDEN", "--confidence", "2"], "--confidence 2"),
    (["bench", "p2p", "--np", "0"], "--np 0"),
    (["characterize", "--np", "-1"], "--np -1"),
])
def test_cli_bad_input(argv, needle, golden, capsys):
    argv = [str(golden / "results_p2p_v1.jsonl") if a == "GOLDEN" else a for a in argv]
    assert cli.main(argv) == 2
    assert needle in capsys.readouterr().err


def test_cli_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["fit", "hockney", "x", "--method", "magic"])
    assert e.value.code == 2 and "magic" in capsys.readouterr().err


def test_cli_bench_passes_through_and_propagates_exit(tmp_path):
    out = tmp_path / "b.jsonl"
    assert cli.main(["bench", "p2p", "--np", "2", "--sizes", "8", "--min-reps", "5", "--max-reps", "5", "-o", str(out)]) == 0
    assert len(load(out).points) == 1
    assert cli.main(["bench", "p2p", "--np", "2", "--sizes", "-1"]) == 2


def test_units():
    assert parse_duration("10us") == pytest.approx(1e-5)
    assert parse_size("64K") == 65536
    assert fmt_time(1.5e-6) == "1.5 us" and fmt_time(float("nan")) == "-"
    assert parse_size("1KB") == parse_size("1KiB") == 1024
    with pytest.raises(ValueError, match="'ten'"):
        parse_duration("ten")


def test_loader_reads_collective_records(tmp_path):
    out = tmp_path / "c.jsonl"
    cp = mpirun(2, ["coll", "--op", "bcast", "--alg", "native,linear", "--sizes", "0,1K", "--min-reps", "5",
                    "--max-reps", "5", "-o", str(out)])
    assert cp.returncode == 0, cp.stderr
    res = load(out)
    assert list(res.points["alg"]) == ["native", "native", "linear", "linear"] or len(res.points) == 4
    s = res.summary()
    assert set(s["op"]) == {"bcast:native", "bcast:linear"} and (s["group"] == "all (root 0)").all()
