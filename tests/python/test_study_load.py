"""`latscope study load` (seed 004 §5, Figs 2-3; docs/study.md): the load list grammar, bad input
(exit 2, one line naming the value), and a short real sweep (latscope-congest + ping-pong under
mpiexec) whose outputs are complete, strict and consistent with the raw samples they keep."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from latscope import cli, jsonio, results
from latscope.study.load import COLUMNS, SCHEMA, parse_loads


@pytest.mark.parametrize("text,expected", [
    ("0,10,...,90", [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]),
    ("0,50", [0, 50]),
    ("5", [5]),
    ("0,25,...,100", [0, 25, 50, 75, 100]),
    ("0,5,10,20,...,40", [0, 5, 10, 20, 30, 40]),
    ("0,2.5,...,10", [0, 2.5, 5, 7.5, 10]),
])
def test_parse_loads(text: str, expected: list[float]) -> None:
    assert parse_loads(text) == expected


@pytest.mark.parametrize("argv,needle", [
    (["--loads", ""], "--loads ''"),
    (["--loads", "abc"], "'abc' is not a percentage"),
    (["--loads", "-10"], "'-10' is not a percentage"),
    (["--loads", "0,120"], "at most 100"),
    (["--loads", "50,10"], "must increase"),
    (["--loads", "0,0"], "must increase"),
    (["--loads", "0,,50"], "comma-separated"),
    (["--loads", "0,10,..."], "'...' needs"),
    (["--loads", "0,...,90"], "'...' needs"),
    (["--loads", "0,7,...,90"], "whole number of steps"),
    (["--loads", "10,0,...,90"], "a < b <= c"),
    (["--loads", "1e1"], "'1e1' is not a percentage"),
    (["--duration", "5"], "give a unit"),
    (["--duration", "0s"], "above 0"),
    (["--samples", "5"], "--samples 5: must be >= 20"),
    (["--size", "2G"], "--size 2G"),
])
def test_bad_input_exits_2(argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert cli.main(["study", "load", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err and needle in err, err
    assert "Traceback" not in err and not out.exists()


def test_short_sweep(tmp_path: Path) -> None:
    d = tmp_path / "sweep"
    assert cli.main(["study", "load", "--loads", "0,50", "--duration", "0.3s", "--samples", "3000",
                     "-o", str(d)]) == 0
    recs = [jsonio.loads_strict(ln) for ln in (d / "load.jsonl").read_text().splitlines()]
    meta, levels = recs[0], recs[1:]
    assert meta["type"] == "meta" and meta["schema"] == SCHEMA and meta["loads_pct"] == [0, 50]
    assert [lv["load_pct"] for lv in levels] == [0, 50] and all(lv["type"] == "level" for lv in levels)
    assert levels[0]["load_achieved"] is None and levels[0]["congest_file"] is None
    assert 0 < levels[1]["load_achieved"] <= 1.5            # the generator ran (how much it achieved: docs)
    congest = json.loads((d / levels[1]["congest_file"]).read_text())
    assert congest["load_requested"] == 0.5 and congest["stopped_by_signal"] is True
    for lv in levels:
        res = results.load(d / lv["raw_file"])               # the raw samples are kept
        x = np.array(res.samples(0))
        assert 20 <= x.size == lv["n"] <= 3000
        assert lv["mean_s"] == pytest.approx(x.mean()) and lv["sd_s"] == pytest.approx(x.std(ddof=1))
        assert lv["median_s"] == pytest.approx(np.median(x)) and lv["p99_s"] == pytest.approx(np.percentile(x, 99))
        assert 0 < lv["min_s"] <= lv["median_s"] <= lv["p99_s"] <= lv["max_s"]
        # a fit with its KS distance, or the reason there is none: one or the other
        assert (lv["fit"] is None) != (lv["fit_error"] is None), lv
        if lv["fit"] is not None:
            assert 0 < lv["fit"]["ks_distance"] < 1 and lv["fit"]["shape"] > 0 and lv["fit"]["loc_s"] < lv["min_s"]
    with (d / "load.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == COLUMNS and [float(r["load_pct"]) for r in rows] == [0, 50]
    assert float(rows[1]["mean_s"]) == pytest.approx(levels[1]["mean_s"])
    assert (d / "load.txt").read_text().count("\n") == 3
    assert (d / "load.png").read_bytes()[:4] == b"\x89PNG"
    report = tmp_path / "r.html"
    assert cli.main(["report", *(str(d / lv["raw_file"]) for lv in levels), "-o", str(report)]) == 0
    assert "Load characterisation" in report.read_text()
