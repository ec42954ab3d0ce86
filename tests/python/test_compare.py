"""`latscope compare` and `latscope report --baseline` on real runs: a run against itself is no
difference, against the same run made twice as slow (its samples doubled) is slower by 2 with
a CI around 2, the other way faster; launches, raw samples and points' own CIs each give the
interval; an invalid median is n/a, never a ratio; the metadata differences are named."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mpirun
from latscope import cli, compare
from latscope.results import load

SIZES = "0,1K,64K"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("compare")
    out = {}
    for name, extra in (("raw", ["--raw"]), ("plain", [])):
        p = d / f"{name}.jsonl"
        cp = mpirun(2, ["p2p", "--op", "pingpong", "--sizes", SIZES, "--min-reps", "300", "--max-reps", "300",
                        *extra, "-o", str(p)])
        assert cp.returncode == 0, cp.stderr
        out[name] = p
    return out


def scaled(src: Path, dst: Path, factor: float, meta: dict | None = None, median_of: dict | None = None) -> Path:
    """The same run with every time multiplied by `factor` (what a machine `factor` times slower
    would have measured), the metadata's fields in `meta` replaced, and medians in `median_of`
    ({point index: value}) set."""
    lines = []
    k = 0
    for ln in src.read_text().splitlines():
        rec = json.loads(ln)
        if rec["type"] == "meta":
            rec.update(meta or {})
        elif rec["type"] == "point":
            for f, v in list(rec.items()):
                if f.endswith("_s") and isinstance(v, float):
                    rec[f] = v * factor
                if f == "samples_s":
                    rec[f] = [x * factor for x in v]
            if median_of and k in median_of:
                rec["median_s"] = median_of[k]
            k += 1
        lines.append(json.dumps(rec))
    dst.write_text("\n".join(lines) + "\n")
    return dst


def test_against_itself_no_difference(runs):
    for f in runs.values():
        c = compare.compare(load(f), load(f))
        assert len(c.points) == 3 and c.unmatched == (0, 0) and not c.meta_diffs
        for p in c.points:
            assert p.ratio == 1.0 and p.ratio_ci[0] <= 1.0 <= p.ratio_ci[1], p
            assert p.verdict == "no difference"


def _consistent(p) -> None:
    lo, hi = p.ratio_ci
    assert p.verdict == ("slower" if lo > 1 else "faster" if hi < 1 else "no difference"), p


def test_three_times_as_slow_bootstrap(runs, tmp_path):
    """The interval holds the true ratio, 3; the verdict follows the interval; and where the
    samples are tight enough to tell (a shared machine can make a small size's samples bimodal,
    its median's interval wide) it says slower: at least one point."""
    slow = scaled(runs["raw"], tmp_path / "slow.jsonl", 3.0)
    c = compare.compare(load(runs["raw"]), load(slow))
    for p in c.points:
        assert p.method == "bootstrap" and math.isclose(p.ratio, 3.0, rel_tol=1e-9)
        assert p.ratio_ci[0] <= 3.0 <= p.ratio_ci[1], p
        _consistent(p)
    assert "slower" in {p.verdict for p in c.points} and "faster" not in {p.verdict for p in c.points}
    back = compare.compare(load(slow), load(runs["raw"]))
    assert "faster" in {p.verdict for p in back.points} and "slower" not in {p.verdict for p in back.points}


def test_point_cis_without_raw(runs, tmp_path):
    slow = scaled(runs["plain"], tmp_path / "slow.jsonl", 3.0)
    c = compare.compare(load(runs["plain"]), load(slow))
    for p in c.points:
        assert p.method == "point CIs" and math.isclose(p.ratio, 3.0, rel_tol=1e-9)
        assert p.ratio_ci[0] < 3.0 < p.ratio_ci[1], p
        _consistent(p)


def test_launches_welch(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert cli.main(["bench", "p2p", "--np", "2", "--launches", "3", "--sizes", "8", "--min-reps", "200",
                     "--max-reps", "200", "-o", str(a)]) == 0
    scaled(a, b, 1.5)
    c = compare.compare(load(a), load(b))
    (p,) = c.points
    assert p.method == "launches" and math.isclose(p.ratio, 1.5, rel_tol=1e-9)
    # Welch on logs of 3 + 3 launch medians, all scaled alike: the CI is exactly around log 1.5
    assert p.ratio_ci[0] < 1.5 < p.ratio_ci[1] or p.ratio_ci[0] == p.ratio_ci[1]
    assert math.isclose(math.sqrt(p.ratio_ci[0] * p.ratio_ci[1]), 1.5, rel_tol=1e-9)


def test_invalid_median_is_na_and_meta_diffs(runs, tmp_path):
    other = scaled(runs["plain"], tmp_path / "o.jsonl", 1.0,
                   meta={"mpi_library": "Open MPI v5.0.3,   package: x", "sync": "psychic"},
                   median_of={0: -2.17e-7})
    c = compare.compare(load(runs["plain"]), load(other))
    p0 = c.points[0]
    assert p0.ratio is None and p0.verdict == "n/a" and "invalid median" in p0.reason
    what = {w: (a, b) for w, a, b in c.meta_diffs}
    assert what["MPI"][1] == "Open MPI v5.0.3, package: x"   # white space folded
    assert what["sync"][1] == "psychic" and "timer" not in what


def test_cli_table_json_plot_and_errors(runs, tmp_path, capsys):
    slow = scaled(runs["raw"], tmp_path / "slow.jsonl", 3.0)
    png = tmp_path / "ratio.png"
    assert cli.main(["compare", str(runs["raw"]), str(slow), str(runs["raw"]), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "3 point(s): 0 faster," in out and "3 point(s): 0 faster, 0 slower, 3 no difference" in out
    assert "nan" not in out and png.stat().st_size > 5000
    assert cli.main(["compare", str(runs["raw"]), str(slow), "--json", "--confidence", "0.99"]) == 0
    (doc,) = json.loads(capsys.readouterr().out)
    assert doc["confidence"] == 0.99 and doc["counts"]["slower"] >= 1 and doc["counts"]["faster"] == 0
    assert all(p["ratio_ci"][0] <= 3 <= p["ratio_ci"][1] for p in doc["points"])
    exe = Path(sys.executable).parent / "latscope"
    for bad, needle in ((["--confidence", "1.5"], "--confidence 1.5"), (["--plot", "x.pdf"], "--plot x.pdf")):
        cp = subprocess.run([str(exe), "compare", str(runs["raw"]), str(slow), *bad], capture_output=True, text=True)
        assert cp.returncode == 2 and needle in cp.stderr and "Traceback" not in cp.stderr


def test_report_baseline_section(runs, tmp_path):
    slow = scaled(runs["raw"], tmp_path / "slow.jsonl", 3.0)
    out = tmp_path / "r.html"
    assert cli.main(["report", str(slow), "--baseline", str(runs["raw"]), "-o", str(out)]) == 0
    text = out.read_text()
    sec = text.split("<h2>Comparison with the baseline</h2>")[1].split("<h2>")[0]
    n = compare.compare(load(runs["raw"]), load(slow)).counts()["slower"]
    assert n >= 1 and f"{n} slower" in sec and "data:image/png" in sec and sec.count(">3.000<") == 3
