"""The application twins (latscope-bench app, docs/apps.md) at np = 1..4 and the prediction table.

MPI runs use fixed, tiny repetition counts (3 and 4 ranks share 2 cores); no wall-clock
assertions. Correctness is the programs' own check (every remap message and reply compared with
what its sender wrote; every DAG cell with rank 0's serial computation), and the tests show the
check is live by damaging one value (--corrupt-rank) and expecting the named failure."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import NPS, mpirun
from latscope import apps_twins
from latscope.models import LogGPParams
from latscope.results import load

FAST = ["--min-reps", "3", "--max-reps", "3", "--warmup", "1"]


def records(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert lines and lines[0]["type"] == "meta"
    return lines[0], lines[1:]


# ---- remap -------------------------------------------------------------------------------------

@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("style", ["sync", "async"])
@pytest.mark.parametrize("dest", ["random", "shift"])
def test_remap_delivers_every_message(np_, style, dest, tmp_path):
    """Short and long messages (0 B to 100 KB) arrive intact, each once; the records carry the
    pattern. At np 1 every message goes to the rank itself (defined behaviour, checked alike)."""
    out = tmp_path / "r.jsonl"
    sizes = [0, 1, 8, 1000, 100000]
    cp = mpirun(np_, ["app", "--pattern", "remap", "--style", style, "--dest", dest, "--messages", "7", "--seed", "5",
                      "--sizes", ",".join(map(str, sizes)), "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    meta, pts = records(out)
    assert meta["bench"] == "app" and meta["op"] == "remap" and meta["mode"] == style and meta["seed"] == 5
    assert meta["timing_method"] == "max"
    assert meta["app"]["pattern"] == "remap" and meta["app"]["dest"] == dest and meta["app"]["messages"] == 7
    assert [p["size_bytes"] for p in pts] == sizes
    for p in pts:
        assert p["bench"] == "app" and p["op"] == "remap" and p["alg"] == style and p["pattern"] == "remap"
        assert p["ranks"] == np_ and p["messages"] == 7 and p["style"] == style and p["dest"] == dest
        assert p["n"] == 3 and p["stop_reason"] == "fixed" and 0 < p["min_s"] <= p["median_s"]
        # sync, P > 1: the round trip and the handler cost measured with the twin's calls (LoGPC
        # §5.1.1's 2 (o_s + L + o_r) and LoPC's C_r); none otherwise
        if style == "sync" and np_ > 1:
            assert 0 < p["rr_rtt_s"] < 1 and 0 < p["rr_handler_s"] < 1
        else:
            assert p["rr_rtt_s"] is None and p["rr_handler_s"] is None
        # every rank sends 7; shift (and np <= 2) spreads them evenly; random on average
        if dest == "shift" or np_ <= 2:
            assert p["recv_min_messages"] == p["recv_max_messages"] == 7
        else:
            assert p["recv_min_messages"] <= 7 <= p["recv_max_messages"]
            assert p["recv_max_messages"] <= 7 * (np_ - 1)


def test_sync_remap_model_matches_twin_np2(tmp_path):
    """The sync remap was predicted +117 % to +384 % above its twin, because the model's
    round trip came from `latscope-bench logp`, whose MPI_Recv/MPI_Wait yield the processor in
    MPICH while they wait, and the twin waits in MPI_Waitany, which does not. With the round trip
    and the handler cost measured by the twin with its own calls, the paper's model (C_r = a
    handler, LoPC) and the refined one (C_r = 0 at P = 2) bracket the measurement: each within a
    factor 1.5 on its side, and their geometric mean within a factor 1.5 of it. Ratios of medians
    within one launch (the machine is shared), and the median of those ratios over three launches:
    the twin measures its round trip once, before its repetitions, and beside a CPU-bound process
    one launch in a few dozen changed state in between (geometric mean 1.78 once; 0.78-1.13 in 34
    other launches, quiet or loaded). The old models were 2.2x to 4.8x."""
    ratios: dict[str, list[tuple[float, float]]] = {}
    for launch in range(3):
        out = tmp_path / f"s{launch}.jsonl"
        cp = mpirun(2, ["app", "--pattern", "remap", "--style", "sync", "--dest", "shift", "--messages", "64",
                        "--sizes", "8,1024", "--min-reps", "15", "--max-reps", "15", "--warmup", "5", "-o", str(out)])
        assert cp.returncode == 0, cp.stderr
        t = apps_twins.prediction_table(apps_twins.app_points([load(out)]), LogGPParams(**PARAMS["params"]))
        assert t["formula"].str.contains("rr_rtt").all() and t["refined_formula"].str.contains("rr_rtt").all()
        assert len(t) == 2, t
        for _, r in t.iterrows():
            ratios.setdefault(r["config"], []).append((r["predicted_s"] / r["measured_s"],
                                                       r["refined_s"] / r["measured_s"]))
    assert len(ratios) == 2, ratios
    for config, rs in ratios.items():
        paper = float(np.median([a for a, _ in rs]))
        refined = float(np.median([b for _, b in rs]))
        gm = float(np.median([(a * b) ** 0.5 for a, b in rs]))
        assert refined <= 1.5 and paper >= 1 / 1.5, (config, rs)
        assert 1 / 1.5 <= gm <= 1.5, (config, rs)


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("style", ["sync", "async"])
def test_remap_damaged_message_fails_named(np_, style, tmp_path):
    rank = np_ - 1
    cp = mpirun(np_, ["app", "--pattern", "remap", "--style", style, "--dest", "shift", "--messages", "3",
                      "--sizes", "64", "--corrupt-rank", str(rank), "-o", str(tmp_path / "r.jsonl")] + FAST)
    assert cp.returncode == 3, (cp.returncode, cp.stderr)
    assert "failed its check" in cp.stderr and f"rank {rank}: remap message 0" in cp.stderr, cp.stderr
    assert "byte 32" in cp.stderr


@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("style", ["sync", "async"])
def test_remap_repetitions_back_to_back(np_, style, tmp_path):
    """Warm-up repetitions (and --sync none) are not separated by a barrier: a fast rank's next
    repetition must never be taken for the current one of a slower rank (a regression: sync
    requests received from any source were)."""
    cp = mpirun(np_, ["app", "--pattern", "remap", "--style", style, "--dest", "random", "--messages", "40",
                      "--sizes", "8,3000", "--sync", "none", "--warmup", "20", "--min-reps", "20", "--max-reps", "20",
                      "-o", str(tmp_path / "r.jsonl")])
    assert cp.returncode == 0, cp.stderr


@pytest.mark.parametrize("np_", [3, 4])
def test_remap_random_table_follows_seed(np_, tmp_path):
    """The random destinations are drawn from --seed: the same seed gives the same receive
    counts, and over a few seeds the counts differ (a table that ignored the seed would not)."""
    def counts(seed: int) -> tuple[int, int]:
        out = tmp_path / f"s{seed}.jsonl"
        cp = mpirun(np_, ["app", "--pattern", "remap", "--dest", "random", "--messages", "40", "--seed", str(seed),
                          "--sizes", "8", "-o", str(out)] + FAST)
        assert cp.returncode == 0, cp.stderr
        p = records(out)[1][0]
        return p["recv_min_messages"], p["recv_max_messages"]

    assert counts(11) == counts(11)
    assert len({counts(s) for s in (1, 2, 3, 4)}) > 1


# ---- Diamond DAG -------------------------------------------------------------------------------

@pytest.mark.parametrize("np_", NPS)
@pytest.mark.parametrize("grid,work", [(37, "0"), (64, "200ns")])
def test_dag_matches_serial(np_, grid, work, tmp_path):
    """Divisible and non-divisible n, b = 1, 2, n/P, an odd b, and n; padding per value (24 B).
    The program compares every cell with rank 0's serial computation: exit 0 means equal."""
    blocks = sorted({1, 2, max(1, grid // np_), 5, grid})
    out = tmp_path / "d.jsonl"
    cp = mpirun(np_, ["app", "--pattern", "dag", "--grid", str(grid), "--task-work", work, "--sizes", "8,24",
                      "--blocks", ",".join(map(str, blocks)), "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    meta, pts = records(out)
    assert meta["op"] == "dag" and meta["app"]["grid"] == grid and meta["app"]["blocks"] == blocks
    assert [(p["value_bytes"], p["blocks"]) for p in pts] == [(v, b) for v in (8, 24) for b in blocks]
    for p in pts:
        assert p["alg"] == "stripe" and p["ranks"] == np_ and p["grid"] == grid
        assert p["block_bytes_max"] == p["value_bytes"] * -(-grid // p["blocks"])
        assert p["task_s"] > 0 and p["task_rounds"] >= 0 and p["n"] == 3
        # W measured for the refined eq. (15): the stripe's computation alone, slowest rank's
        assert 0 < p["stripe_compute_last_s"] <= p["stripe_compute_s"]
        if work == "0":
            assert p["task_rounds"] == 0


@pytest.mark.parametrize("np_", NPS)
def test_dag_damaged_input_fails_named(np_, tmp_path):
    rank = np_ // 2
    cp = mpirun(np_, ["app", "--pattern", "dag", "--grid", "21", "--blocks", "4", "--task-work", "0",
                      "--corrupt-rank", str(rank), "-o", str(tmp_path / "d.jsonl")] + FAST)
    assert cp.returncode == 3, (cp.returncode, cp.stderr)
    assert f"rank {rank}: dag cell" in cp.stderr and "serial computation on rank 0" in cp.stderr, cp.stderr


def test_null_pattern_runs(tmp_path):
    out = tmp_path / "n.jsonl"
    cp = mpirun(2, ["app", "--pattern", "null", "-o", str(out)] + FAST)
    assert cp.returncode == 0, cp.stderr
    assert [p["alg"] for p in records(out)[1]] == ["none"]


# ---- bad input ---------------------------------------------------------------------------------

BAD = [
    (["--pattern", "foo"], "--pattern 'foo': unknown application pattern; valid: remap, dag, null"),
    (["--pattern", "dag", "--blocks", "0"], "--blocks 0: must be in [1, n = 256]"),
    (["--pattern", "dag", "--grid", "10", "--blocks", "11"], "--blocks 11: must be in [1, n = 10]"),
    (["--pattern", "dag", "--blocks", "2,x"], "--blocks '2,x': 'x' is not an integer"),
    (["--pattern", "dag", "--task-work", "-1us"], "--task-work '-1us': must be a non-negative duration"),
    (["--pattern", "dag", "--task-work", "2s"], "--task-work 2 s: must be in [0, 1 s]"),
    (["--pattern", "dag", "--grid", "0"], "--grid '0': must be an integer in [1, 4096]"),
    (["--pattern", "dag", "--sizes", "4"], "--sizes 4 B: the bytes sent per boundary value must be in [8,"),
    (["--pattern", "remap", "--sizes", "1G"], "--sizes 1073741824 B x --messages 64"),
    (["--pattern", "remap", "--messages", "0"], "--messages '0': must be an integer in [1, 1000000]"),
    (["--pattern", "remap", "--style", "later"], "--style 'later': valid: sync, async"),
    (["--pattern", "remap", "--dest", "near"], "--dest 'near': valid: random, shift"),
    (["--pattern", "remap", "--blocks", "2"], "--grid, --blocks and --task-work apply to --pattern dag, not remap"),
    (["--pattern", "dag", "--style", "sync"], "--messages, --dest and --style apply to --pattern remap, not dag"),
    (["--corrupt-rank", "7"], "--corrupt-rank '7': must be an integer in [0,"),
    (["--window", "3"], "option '--window' does not apply to app"),
]


@pytest.mark.parametrize("np_", NPS)
def test_bad_input_exits_2_named(np_, tmp_path):
    for args, msg in BAD:
        cp = mpirun(np_, ["app"] + args + ["-o", str(tmp_path / "x.jsonl")], timeout=60)
        assert cp.returncode == 2, (args, cp.returncode, cp.stderr)
        assert msg in cp.stderr, (args, cp.stderr)
        assert cp.stderr.count("latscope-bench: error:") == 1, cp.stderr   # rank 0 speaks, once
    # more ranks than rows: every rank needs a stripe
    if np_ > 1:
        cp = mpirun(np_, ["app", "--pattern", "dag", "--grid", str(np_ - 1), "--blocks", "1"], timeout=60)
        assert cp.returncode == 2 and f"--grid {np_ - 1}: must be at least the number of ranks ({np_})" in cp.stderr


# ---- predictions (no MPI): exact numbers from the LoGPC formulas, evaluated by hand -------------

PARAMS = {"schema": "latscope.params/1", "model": "loggp",
          "params": {"L_s": 1e-6, "o_s_s": 2e-6, "o_r_s": 3e-6, "g_s": 2.5e-6, "G_s_per_byte": 1e-9}}


def _point(**kw) -> dict:
    base = {"type": "point", "bench": "app", "alg": "x", "root": 0, "n": 5, "min_s": 1e-6, "ci_lo_s": 1e-6,
            "ci_hi_s": 1e-6, "rel_err": 0.01, "reps_valid": 5, "reps_total": 5, "stop_reason": "fixed",
            "cpus_available": 2, "ranks_per_node": kw["ranks"]}
    base.update(kw)
    return base


def _synthetic(tmp_path: Path) -> Path:
    meta = {"type": "meta", "schema": "latscope.results/1", "bench": "app", "op": "mixed", "ranks": 2}
    pts = [
        _point(op="remap", pattern="remap", style="async", dest="shift", messages=10, ranks=2, size_bytes=101,
               recv_min_messages=10, recv_max_messages=10, median_s=50e-6),
        _point(op="remap", pattern="remap", style="async", dest="random", messages=10, ranks=2, size_bytes=1,
               recv_min_messages=6, recv_max_messages=14, median_s=80e-6),
        _point(op="remap", pattern="remap", style="sync", dest="shift", messages=5, ranks=2, size_bytes=8,
               recv_min_messages=5, recv_max_messages=5, median_s=100e-6),
        _point(op="remap", pattern="remap", style="sync", dest="shift", messages=5, ranks=1, size_bytes=8,
               recv_min_messages=5, recv_max_messages=5, median_s=9e-6),
        _point(op="dag", pattern="dag", grid=64, blocks=4, value_bytes=16, size_bytes=16, task_s=2e-6, ranks=2,
               median_s=4000e-6),
        _point(op="dag", pattern="dag", grid=64, blocks=1, value_bytes=8, size_bytes=8, task_s=2e-6, ranks=1,
               median_s=8000e-6),
        _point(op="dag", pattern="dag", grid=64, blocks=4, value_bytes=16, size_bytes=16, task_s=2e-6, ranks=4,
               median_s=7191.18e-6),
    ]
    path = tmp_path / "synthetic.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [meta] + pts) + "\n")
    return path


def test_prediction_table_exact(tmp_path):
    (tmp_path / "params_logp.json").write_text(json.dumps(PARAMS))
    (tmp_path / "params.json").write_text(json.dumps(
        {"schema": "latscope.params/1", "model": "hockney", "params": {"alpha_s": 9e-6, "beta_s_per_byte": 1e-9}}))
    tp = apps_twins.twin_params(tmp_path)
    assert not tp.fallback and tp.params == LogGPParams(L_s=1e-6, o_s_s=2e-6, o_r_s=3e-6, g_s=2.5e-6,
                                                        G_s_per_byte=1e-9)
    t = apps_twins.prediction_table(apps_twins.app_points([load(_synthetic(tmp_path))]), tp)
    pred = t["predicted_s"].tolist()
    # async, B = 101: sends max(g, o_s) + 100 G = 2.6 us, receives max(g, o_r) + 100 G = 3.1 us, 10 each
    assert pred[0] == pytest.approx(10 * 2.6e-6 + 10 * 3.1e-6, rel=1e-12)
    assert t["rel_err"][0] == pytest.approx((57e-6 - 50e-6) / 50e-6, rel=1e-9)
    # async random, B = 1: the busiest rank receives 14
    assert pred[1] == pytest.approx(10 * 2.5e-6 + 14 * 3e-6, rel=1e-12)
    # sync, B = 8: n [2 (o_s + L + 7 G + o_r) + (o_s + o_r)]; LogP column without C_r
    rt = 2 * (2e-6 + 1e-6 + 7e-9 + 3e-6)
    assert pred[2] == pytest.approx(5 * (rt + 5e-6), rel=1e-12)
    assert t["logp_s"][2] == pytest.approx(5 * rt, rel=1e-12)
    # one rank: messages to self, no model
    assert pred[3] is None or pred[3] != pred[3]
    # eq. (15), P = 2, n = 64, b = 4, t = 2 us, B = 16 * 64 / 4 = 256 B, a = 0
    W, d, Os, Or = 64 * 64 / 8 * 2e-6, 1e-6, 2e-6 + 255e-9, 255e-9
    v = Os + W + Or
    assert pred[4] == pytest.approx((W + d) + 3 * v + Or + W, rel=1e-12)
    # serial: n^2 t
    assert pred[5] == pytest.approx(64 * 64 * 2e-6, rel=1e-12)
    # P = 4 on 2 CPUs: predicted (eq. 15 with (P - 2) u), marked oversubscribed
    W4 = 64 * 64 / 16 * 2e-6
    u4, v4 = Or + W4 + d, Os + W4 + Or
    assert pred[6] == pytest.approx((W4 + d) + 2 * u4 + 3 * v4 + Or + W4, rel=1e-12)
    assert t["oversubscribed"].tolist() == [False] * 6 + [True]
    # the headline median leaves out P = 1 (no prediction) and the oversubscribed row
    errs = [abs(p - m) / m for p, m in zip([pred[0], pred[1], pred[2], pred[4], pred[5]],
                                            [50e-6, 80e-6, 100e-6, 4000e-6, 8000e-6])]
    assert apps_twins.median_abs_rel_err(t) == pytest.approx(sorted(errs)[2], rel=1e-9)
    errs.append(abs(pred[6] - 7191.18e-6) / 7191.18e-6)
    assert apps_twins.median_abs_rel_err(t, include_oversubscribed=True) == pytest.approx(
        sorted(errs)[2] / 2 + sorted(errs)[3] / 2, rel=1e-9)
    shown = apps_twins.format_table(t)
    assert shown["note"].tolist()[-1] == "oversubscribed: 4 ranks on 2 CPUs"


STREAM_PARAMS = dict(PARAMS, source={"per_size": [
    {"size_bytes": sz, "o_s": {"value_s": os_}, "o_r": {"value_s": or_}, "rtt": {"value_s": rtt},
     "g": {"value_s": 1e-6}, "g_nb": {"value_s": gnb}, "g_r": {"value_s": gr}}
    for sz, os_, or_, rtt, gnb, gr in [(0, 2e-6, 3e-6, 12e-6, 1e-6, 2e-6), (100, 2e-6, 3e-6, 12e-6, 1.5e-6, 2.5e-6)]]})


def test_refined_predictions_exact(tmp_path):
    """The refined models (beside the paper's): PLogP stream costs interpolated at B, L(B) from the
    per-size table, C_r = 0; eq. (15) with W = stripe_compute_s / b."""
    (tmp_path / "params_logp.json").write_text(json.dumps(STREAM_PARAMS))
    tp = apps_twins.twin_params(tmp_path)
    assert tp.table is not None and tp.table.has("g_nb", "g_r")
    path = _synthetic(tmp_path)
    lines = path.read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    recs[5]["stripe_compute_s"] = 6000e-6     # the dag P = 2 point: W = 6000 / 4 us
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    t = apps_twins.prediction_table(apps_twins.app_points([load(path)]), tp)
    ref = t["refined_s"].tolist()
    # async B = 101 (beyond the table: the last segment extended): g_nb = 1.505 us, g_r = 2.505 us
    assert ref[0] == pytest.approx(10 * 1.505e-6 + 10 * 2.505e-6, rel=1e-9)
    # async random B = 1, busiest rank receives 14: g_nb = 1.005, g_r = 2.005 us
    assert ref[1] == pytest.approx(10 * 1.005e-6 + 14 * 2.005e-6, rel=1e-9)
    # sync B = 8: L = 12/2 - 2 - 3 = 1 us; n 2 (g_nb + L + g_r)
    assert ref[2] == pytest.approx(5 * 2 * (1.04e-6 + 1e-6 + 2.04e-6), rel=1e-9)
    assert ref[3] is None or ref[3] != ref[3]          # P = 1
    # eq. (15) with W = 1500 us, the rest as the paper's (B = 256 B)
    W, d, Os, Or = 1500e-6, 1e-6, 2e-6 + 255e-9, 255e-9
    assert ref[4] == pytest.approx((W + d) + 3 * (Os + W + Or) + Or + W, rel=1e-12)
    assert ref[5] is None or ref[5] != ref[5]          # P = 1: no refined model
    assert ref[6] is None or ref[6] != ref[6]          # no stripe_compute_s in the record
    # the paper's columns are unchanged by the table
    assert t["predicted_s"][0] == pytest.approx(10 * 2.6e-6 + 10 * 3.1e-6, rel=1e-12)
    rel = [(r - m) / m for r, m in zip([ref[0], ref[1], ref[2], ref[4]], [50e-6, 80e-6, 100e-6, 4000e-6])]
    assert t["refined_rel_err"].dropna().tolist() == pytest.approx(rel, rel=1e-9)
    assert apps_twins.median_abs_rel_err(t, column="refined_rel_err") == pytest.approx(
        float(np.median(np.abs(rel))), rel=1e-9)
    shown = apps_twins.format_table(t)
    assert {"paper model (µs)", "paper error", "refined model (µs)", "refined error"} <= set(shown.columns)


def test_sync_remap_uses_the_twins_round_trip():
    """LoGPC §5.1.1 evaluated with the twin's measured round trip and handler cost: paper
    n [rr_rtt + C_r] with C_r = rr_handler, LogP n rr_rtt, refined n rr_rtt at P = 2 and
    n [rr_rtt + rr_handler] beyond (no stream table needed); without them the fit's values."""
    p = LogGPParams(**PARAMS["params"])
    row = {"pattern": "remap", "style": "sync", "ranks": 2, "size_bytes": 8, "messages": 5,
           "rr_rtt_s": 0.7e-6, "rr_handler_s": 0.4e-6}
    pr = apps_twins.predict_point(row, p)
    assert pr.predicted_s == pytest.approx(5 * (0.7e-6 + 0.4e-6), rel=1e-12)
    assert pr.logp_s == pytest.approx(5 * 0.7e-6, rel=1e-12)
    assert pr.refined_s == pytest.approx(5 * 0.7e-6, rel=1e-12) and "C_r = 0" in pr.refined_formula
    pr4 = apps_twins.predict_point(dict(row, ranks=4), p)
    assert pr4.refined_s == pytest.approx(5 * 1.1e-6, rel=1e-12) and pr4.predicted_s == pr.predicted_s
    old = apps_twins.predict_point(dict(row, rr_rtt_s=None, rr_handler_s=None), p)
    assert old.predicted_s == pytest.approx(5 * (2 * (2e-6 + 1e-6 + 7e-9 + 3e-6) + 5e-6), rel=1e-12)
    assert old.formula.startswith("no rr_rtt_s")


def test_per_pattern_worst_case_headline(tmp_path):
    """One summary per pattern (remap async, remap sync, dag) with its worst |error| and where, its
    median, the oversubscribed points apart; the headline is the worst pattern, not a median over
    all points (a median over mostly DAG points hid a sync remap 3-5x off; docs/apps.md "The sync
    remap: twin and model reconciled")."""
    (tmp_path / "params_logp.json").write_text(json.dumps(PARAMS))
    t = apps_twins.prediction_table(apps_twins.app_points([load(_synthetic(tmp_path))]),
                                    apps_twins.twin_params(tmp_path))
    assert t["pattern_key"].tolist() == ["remap async"] * 2 + ["remap sync"] * 2 + ["dag"] * 3
    summ = {e.pattern: e for e in apps_twins.pattern_summary(t)}
    assert list(summ) == ["remap async", "remap sync", "dag"]
    err = (t["predicted_s"] - t["measured_s"]) / t["measured_s"]
    a = summ["remap async"]
    assert a.points == 2 and a.worst == pytest.approx(max(abs(err[0]), abs(err[1])), rel=1e-9)
    assert a.median == pytest.approx((abs(err[0]) + abs(err[1])) / 2, rel=1e-9)
    i = int(np.argmax([abs(err[0]), abs(err[1])]))
    assert a.worst_signed == pytest.approx(err[i], rel=1e-9) and a.worst_config == t["config"][i]
    s = summ["remap sync"]     # P = 1 has no model: one point counts
    assert s.points == 1 and s.worst == pytest.approx(abs(err[2]), rel=1e-9) and s.set_apart == 0
    d = summ["dag"]            # P = 4 on 2 CPUs is set apart, with its own worst
    assert d.points == 2 and d.set_apart == 1 and d.set_apart_worst == pytest.approx(abs(err[6]), rel=1e-9)
    assert d.worst == pytest.approx(max(abs(err[4]), abs(err[5])), rel=1e-9)
    w = apps_twins.worst_pattern(t)
    assert w.worst == max(a.worst, s.worst, d.worst) and w.pattern == max(summ.values(), key=lambda e: e.worst).pattern
    m = apps_twins.worst_pattern(t, by="median")
    assert m.median == max(a.median, s.median, d.median)
    lines = apps_twins.headline(t)
    assert lines[0].startswith(f"worst pattern, paper models: {w.pattern}: worst |error| {100 * w.worst:.1f}%")
    assert ("; largest median: " + m.describe() in lines[0]) == (m.pattern != w.pattern)
    assert lines[1] == "worst pattern, refined models: none predicted"   # no stream table, no rr fields
    shown = apps_twins.format_summary(t)
    assert shown["pattern"].tolist() == ["remap async", "remap sync", "dag"]
    assert shown["set apart (oversubscribed / under load)"].tolist()[-1].startswith("1: worst paper")


def test_after_demo_writes_per_pattern_errors(tmp_path, capsys):
    """The main job's files: every point (with its pattern's table) and the per-pattern errors;
    the printed headline is the worst pattern."""
    import pandas as pd
    from latscope.parts import apps as part

    (tmp_path / "params_logp.json").write_text(json.dumps(PARAMS))
    res = load(_synthetic(tmp_path))
    part.after_demo(tmp_path, [res], {})
    pts = pd.read_csv(tmp_path / "apps_predictions.csv")
    assert pts["pattern_key"].tolist() == ["remap async"] * 2 + ["remap sync"] * 2 + ["dag"] * 3
    errs = pd.read_csv(tmp_path / "apps_pattern_errors.csv")
    paper = errs[errs["column"] == "rel_err"].set_index("pattern")
    assert paper.index.tolist() == ["remap async", "remap sync", "dag"]
    assert paper.at["dag", "set_apart"] == 1 and paper.at["dag", "points"] == 2
    t = apps_twins.prediction_table(apps_twins.app_points([res]), apps_twins.twin_params(tmp_path))
    w = apps_twins.worst_pattern(t)
    assert paper.at[w.pattern, "worst"] == pytest.approx(w.worst, rel=1e-9)
    assert f"worst pattern, paper models: {w.pattern}: worst |error|" in capsys.readouterr().err


def test_refined_needs_the_stream_table(tmp_path):
    (tmp_path / "params_logp.json").write_text(json.dumps(PARAMS))
    t = apps_twins.prediction_table(apps_twins.app_points([load(_synthetic(tmp_path))]), apps_twins.twin_params(tmp_path))
    assert t["refined_s"][0] is None and "stream table" in t["refined_formula"][0]
    assert apps_twins.median_abs_rel_err(t, column="refined_rel_err") is None


def test_hockney_fallback_is_marked(tmp_path):
    (tmp_path / "params.json").write_text(json.dumps(
        {"schema": "latscope.params/1", "model": "hockney", "params": {"alpha_s": 9e-6, "beta_s_per_byte": 1e-9}}))
    tp = apps_twins.twin_params(tmp_path)
    assert tp.fallback and "FALLBACK" in tp.note
    assert (tp.params.L_s, tp.params.o_s_s, tp.params.o_r_s, tp.params.G_s_per_byte) == (9e-6, 0.0, 0.0, 1e-9)
    t = apps_twins.prediction_table(apps_twins.app_points([load(_synthetic(tmp_path))]), tp)
    assert t["predicted_s"][0] == pytest.approx(20 * 100e-9, rel=1e-12)   # only the (B-1) G terms are left


def test_report_section_renders(tmp_path):
    from latscope.parts import apps as part
    from latscope.report import ReportInput

    (tmp_path / "params_logp.json").write_text(json.dumps(PARAMS))
    inp = ReportInput([load(_synthetic(tmp_path))], {}, tmp_path)
    html = part.section_apps(inp)
    assert html and "worst pattern, paper models:" in html and "eq. (15)" in html and "<img" in html
    assert html.count("<h4>") == 3     # one table per pattern
    assert "oversubscribed: 4 ranks on 2 CPUs" in html
    assert part.ORDER == 60
    names = [s.name for s in part.demo_steps(True)]
    assert names and all(s.args[0] == "app" for s in part.demo_steps(False))


def test_refined_sync_queueing_beyond_two_ranks():
    """C_r = 0 only at P = 2 (the partner is the only client); with more ranks LoPC's C_r comes back
    as a reply handler's stream cost g_nb + g_r."""
    tab = apps_twins.SizeTable((0, 100), {"o_s": (2e-6, 2e-6), "o_r": (3e-6, 3e-6), "rtt": (12e-6, 12e-6),
                                          "g_nb": (1e-6, 1e-6), "g_r": (2e-6, 2e-6)})
    p = LogGPParams(L_s=1e-6, o_s_s=2e-6, o_r_s=3e-6, g_s=2.5e-6, G_s_per_byte=1e-9)
    row = {"pattern": "remap", "style": "sync", "ranks": 2, "size_bytes": 8, "messages": 5}
    assert apps_twins.refine_point(row, p, tab)[0] == pytest.approx(5 * 2 * (1e-6 + 1e-6 + 2e-6))
    row["ranks"] = 4
    v, f = apps_twins.refine_point(row, p, tab)
    assert v == pytest.approx(5 * (2 * (1e-6 + 1e-6 + 2e-6) + 3e-6)) and "C_r = g_nb + g_r" in f
