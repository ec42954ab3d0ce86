"""Budget components that the ladder cannot resolve, scaled what-ifs and the repeat-window
verdict, on real budget records (the golden file and records built as a launch writes them)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from latscope import budget

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "budget_v1.jsonl"
LATSCOPE = [sys.executable, "-m", "latscope.cli"]


def _run(rungs: dict[str, tuple[float, float]]) -> budget.Measured:
    """One run: rung -> (median, CI half-width), as _read_points stores them."""
    m = budget.Measured()
    for name, (med, half) in rungs.items():
        m.rungs[name] = {"op": name, "median_s": med, "min_s": med - half, "ci_lo_s": med - half, "ci_hi_s": med + half}
    return m


WIRE = {"name": "virtual-wire", "of": "tcp-veth-poll", "minus": ["tcp-poll"]}


def test_component_whose_ci_reaches_zero_is_not_resolved() -> None:
    # a measured case: -120 ns +- 112 (difference of two rungs of ~5 us)
    runs = [_run({"tcp-veth-poll": (4.88e-6, 80e-9), "tcp-poll": (5.0e-6, 80e-9)})]
    (c,) = budget.components(runs, [WIRE])
    assert c["value_s"] == pytest.approx(-120e-9) and c["resolved"] is False
    shown = budget.shown_value(c)
    assert shown.startswith("not resolved") and "-" not in shown
    runs = [_run({"tcp-veth-poll": (5.05e-6, 80e-9), "tcp-poll": (5.0e-6, 80e-9)})]
    (c,) = budget.components(runs, [WIRE])
    assert c["resolved"] is False and budget.shown_value(c) == f"not resolved (< {budget.fmt_time(c['upper_s'])})"
    runs = [_run({"tcp-veth-poll": (5.6e-6, 10e-9), "tcp-poll": (5.0e-6, 10e-9)})]
    (c,) = budget.components(runs, [WIRE])
    assert c["resolved"] is True and "±" in budget.shown_value(c)


def test_repeat_window_decides_stability() -> None:
    a = {"tcp-veth-poll": (5.6e-6, 10e-9), "tcp-poll": (5.0e-6, 10e-9)}
    b = {"tcp-veth-poll": (5.9e-6, 10e-9), "tcp-poll": (5.0e-6, 10e-9)}   # 300 ns off: beyond the CIs
    (c,) = budget.components([_run(a), _run(b)], [WIRE], window=2)
    assert c["stable"] is False and budget.unstable_rungs([c]) == {"tcp-veth-poll", "tcp-poll"}
    # a repeat round measuring only those rungs agrees with the second run: the newest two decide
    (c,) = budget.components([_run(a), _run(b), _run(b)], [WIRE], window=2)
    assert c["stable"] is True and c["repeats"] == 1 and len(c["runs_s"]) == 2
    assert c["superseded_s"] == [pytest.approx(0.6e-6)]
    assert c["value_s"] == pytest.approx(0.9e-6)
    # a repeat that still disagrees: unstable after the repeat
    (c,) = budget.components([_run(a), _run(b), _run(a)], [WIRE], window=2)
    assert c["stable"] is False and c["repeats"] == 1


@pytest.fixture()
def ladder_file(tmp_path: Path) -> Path:
    """A budget file derived as run_budget derives it, from two runs of four rungs."""
    rr = {"flag": (100e-9, 1e-9), "unix-poll": (2.1e-6, 5e-9), "tcp-poll": (4.6e-6, 10e-9),
          "tcp-veth-poll": (5.0e-6, 12e-9)}
    runs = [_run(rr), _run(rr)]
    comps, clos = budget.load_table(None)
    meta, _ = budget.read(GOLDEN)
    recs = (budget.rung_records(runs, budget.rungs()) + budget.components(runs, comps, window=2)
            + budget.closures(runs, comps, clos))
    out = tmp_path / "budget.jsonl"
    budget.write(out, meta, recs)
    return out


def test_whatif_scale_halves_and_removes(ladder_file: Path) -> None:
    meta, recs = budget.read(ladder_file)
    comps = {c["name"]: c for c in recs if c["type"] == "component"}
    (half,) = budget.whatif(meta, recs, [], "unix-poll", {"socket-layer": 0.5})
    (gone,) = budget.whatif(meta, recs, ["socket-layer"], "unix-poll")
    (zero,) = budget.whatif(meta, recs, [], "unix-poll", {"socket-layer": 0.0})
    v = comps["socket-layer"]["value_s"]
    assert half["saving_s"] == pytest.approx(0.5 * v, rel=1e-9)
    assert gone["saving_s"] == pytest.approx(v, rel=1e-9) and zero["projected_s"] == pytest.approx(gone["projected_s"])
    # unix-poll - 0.5 (unix-poll - flag) = 0.5 unix-poll + 0.5 flag: the CIs in quadrature
    assert half["projected_ci_half_s"] == pytest.approx((0.25 * 5e-9 ** 2 + 0.25 * 1e-9 ** 2) ** 0.5, rel=1e-6)
    assert gone["projected_ci_half_s"] == pytest.approx(1e-9, rel=1e-6)   # = flag's CI: unix-poll cancels
    assert half["scaled"] == {"socket-layer": 0.5} and half["removed"] == [] and gone["removed"] == ["socket-layer"]


def _cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(LATSCOPE + args, capture_output=True, text=True, timeout=60)


def test_whatif_scale_cli(ladder_file: Path) -> None:
    r = _cli(["budget", "whatif", str(ladder_file), "--scale", "socket-layer=0.5", "--total", "unix-poll"])
    assert r.returncode == 0, r.stderr
    assert "socket-layer x 0.5" in r.stdout and "nan" not in r.stdout
    r = _cli(["budget", "whatif", str(ladder_file), "--scale", "socket-layer=0.5", "--total", "unix-poll", "--json"])
    (rec,) = [json.loads(x) for x in r.stdout.splitlines()]
    assert rec["scaled"] == {"socket-layer": 0.5}


@pytest.mark.parametrize("args,needle", [
    (["--scale", "socket-layer=-1"], "--scale 'socket-layer=-1'"),
    (["--scale", "socket-layer"], "--scale 'socket-layer'"),
    (["--scale", "nosuch=0.5"], "unknown component 'nosuch'"),
    ([], "give --remove COMPONENTS or --scale"),
])
def test_whatif_scale_bad_input(args: list[str], needle: str, ladder_file: Path) -> None:
    r = _cli(["budget", "whatif", str(ladder_file), "--total", "unix-poll"] + args)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_repeat_unstable_bad_input() -> None:
    r = _cli(["budget", "--repeat-unstable", "11"])
    assert r.returncode == 2 and "--repeat-unstable 11" in r.stderr


def test_text_never_prints_a_negative_component() -> None:
    meta, recs = budget.read(GOLDEN)
    out: list[dict[str, Any]] = []
    for r in recs:
        if r["type"] == "component" and r["name"] == "socket-layer":
            r = dict(r, value_s=-120e-9, ci_half_s=112e-9, resolved=False, upper_s=-8e-9)
        out.append(r)
    t = budget.text(meta, out)
    line = next(x for x in t.splitlines() if x.startswith("socket-layer"))
    assert "not resolved (<= 0)" in line and "-120" not in line
    assert "not resolved (the CI reaches zero" in t
