"""What the terminal shows: progress lines (aligned, auto-scaled, an ETA, never nan, a total that
the run reaches), progress by default only on a terminal, and the summary's header (the MPI
version normalised, QUICK RUN), n/a for undefined values, flagged invalid medians, --json and
--percentiles; a quick run stays visible in the export."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mpirun
from latscope import cli
from latscope.bench_cli import progress_args
from latscope.export import export_frame
from latscope.results import load
from latscope.text import fmt_median, fmt_rel_err, mpi_version

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
EXE = Path(sys.executable).parent / "latscope"
LINE = re.compile(r"^\[\s*(\d+)/(\d+)\] .* median +(-?[\d.]+|n/a) (ns|us|ms|s )")


def test_text_helpers():
    assert mpi_version("MPICH Version:      5.0.2") == "MPICH 5.0.2"
    assert mpi_version("Open MPI v5.0.3, package:  Open MPI  x\n") == "Open MPI v5.0.3, package: Open MPI x"
    assert mpi_version(None) == "n/a"
    assert fmt_median(-2.17e-7) == "-217 ns (invalid: negative)"
    assert fmt_median(float("nan")) == "n/a" and fmt_median(None) == "n/a"
    assert fmt_median(0.0666129) == "66.6 ms"
    assert fmt_rel_err(float("nan")) == "n/a" and fmt_rel_err(21.112).startswith(">±100%")
    assert fmt_rel_err(0.025) == "±2.5%"


def test_progress_lines(tmp_path):
    """Aligned (the median's column is the same on every line), auto-scaled (1 MiB's round trip
    is not written as thousands of us), n/a instead of nan, an ETA, and the total reached."""
    cp = mpirun(2, ["p2p", "--op", "pingpong", "--sizes", "0,64K,1M", "--progress", "--min-reps", "20",
                    "--max-reps", "20", "-o", str(tmp_path / "p.jsonl")])
    assert cp.returncode == 0, cp.stderr
    lines = [ln for ln in cp.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == 3 and "nan" not in cp.stderr.lower()
    assert len({ln.index(" median ") for ln in lines}) == 1 and len({ln.index(" n=") for ln in lines}) == 1
    for ln in lines:
        m = LINE.match(ln)
        assert m, ln
        assert m.group(3) == "n/a" or abs(float(m.group(3))) < 1000, ln   # auto-scaled
    assert "ETA" in lines[0] and "done" in lines[-1] and lines[-1].startswith("[3/3]")


def test_progress_total_with_timing_all(tmp_path, monkeypatch):
    """--timing all measures a method only where it applies: the progress total says so (it
    counted every method for every algorithm and ended short, e.g. at [70/75])."""
    monkeypatch.setenv("LATSCOPE_QUICK", "1")
    cp = mpirun(2, ["coll", "--op", "scatter", "--alg", "all", "--timing", "all", "--sizes", "8", "--progress",
                    "-o", str(tmp_path / "s.jsonl")])
    assert cp.returncode == 0, cp.stderr
    counts = [LINE.match(ln) for ln in cp.stderr.splitlines() if ln.startswith("[")]
    assert counts and all(counts)
    done, total = int(counts[-1].group(1)), int(counts[-1].group(2))
    assert done == total == len(load(tmp_path / "s.jsonl").points)


def test_progress_default_tty_only(tmp_path):
    assert progress_args(["--sizes", "8"], tty=True) == ["--sizes", "8", "--progress"]
    assert progress_args(["--sizes", "8"], tty=False) == ["--sizes", "8"]
    assert progress_args(["--progress"], tty=False) == ["--progress"]
    assert progress_args(["--progress", "--no-progress"], tty=True) == []
    # piped: quiet
    cp = subprocess.run([str(EXE), "bench", "p2p", "--np", "2", "--sizes", "8", "--min-reps", "20", "--max-reps", "20",
                         "-o", str(tmp_path / "q.jsonl")], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0 and " median " not in cp.stderr, cp.stderr


def _negative_copy(tmp_path: Path) -> Path:
    lines = (GOLDEN / "results_p2p_v3.jsonl").read_text().splitlines()
    recs = [json.loads(ln) for ln in lines]
    recs[1]["median_s"] = -2.17e-7
    recs[2]["rel_err"] = None
    recs[0]["rep_policy"]["quick"] = True
    p = tmp_path / "neg.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return p


def test_summary_flags_and_header(tmp_path, capsys):
    assert cli.main(["results", "summary", str(GOLDEN / "results_p2p_v3.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("MPICH 5.0.2") and "QUICK" not in out
    p = _negative_copy(tmp_path)
    assert cli.main(["results", "summary", str(p)]) == 0
    out = capsys.readouterr().out
    assert "QUICK RUN" in out.splitlines()[0]
    assert "-217 ns (invalid: negative)" in out and "nan" not in out and "n/a" in out
    assert cli.main(["results", "summary", str(p), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["quick"] is True and doc["mpi"] == "MPICH 5.0.2"
    assert [r["median_valid"] for r in doc["points"]] == [False, True, True, True]
    assert doc["points"][1]["rel_err"] is None


def test_summary_percentiles(tmp_path, capsys):
    f = tmp_path / "raw.jsonl"
    cp = mpirun(2, ["p2p", "--op", "pingpong", "--sizes", "8,1K", "--raw", "--min-reps", "50", "--max-reps", "50",
                    "-o", str(f)])
    assert cp.returncode == 0, cp.stderr
    assert cli.main(["results", "summary", str(f), "--percentiles", "50,99.9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["percentiles"] == [50, 99.9]
    res = load(f)
    for row, (_, pt) in zip(doc["points"], res.points.iterrows()):
        assert row["percentiles_s"]["p50"] == pytest.approx(pt["median_s"], rel=1e-6)
        assert row["percentiles_s"]["p99.9"] <= pt["max_s"] and row["percentiles_s"]["p99.9"] >= pt["p99_s"]
    for bad, needle in (("50,abc", "'abc'"), ("101", "101")):
        cp = subprocess.run([str(EXE), "results", "summary", str(f), "--percentiles", bad], capture_output=True,
                            text=True)
        assert cp.returncode == 2 and needle in cp.stderr and "Traceback" not in cp.stderr
    cp = subprocess.run([str(EXE), "results", "summary", str(GOLDEN / "results_p2p_v3.jsonl"), "--percentiles", "99"],
                        capture_output=True, text=True)
    assert cp.returncode == 2 and "--raw" in cp.stderr


def test_export_quick_column(tmp_path):
    assert not export_frame(load(GOLDEN / "results_p2p_v3.jsonl"))["quick"].any()
    assert export_frame(load(_negative_copy(tmp_path)))["quick"].all()


def test_shell_completion(tmp_path):
    """argcomplete's hook (README.md, "Shell completion") answers from the parser: commands and options."""
    import os
    out = tmp_path / "comp.txt"
    for line, want in (("latscope comp", "compare"), ("latscope compare --co", "--confidence"),
                       ("latscope results summary --per", "--percentiles")):
        env = dict(os.environ, _ARGCOMPLETE="1", COMP_LINE=line, COMP_POINT=str(len(line)),
                   _ARGCOMPLETE_STDOUT_FILENAME=str(out))
        cp = subprocess.run([str(EXE)], env=env, capture_output=True, text=True, timeout=60)
        assert cp.returncode == 0, cp.stderr
        assert want in out.read_text().split(), (line, out.read_text())


def test_tune_show_json(capsys):
    """--json on a table-printing command: the decision table as its file's document."""
    from latscope.tune import load_table
    golden = GOLDEN / "tune_scatter_v1.json"
    assert cli.main(["tune", "--show", str(golden), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(json.dumps(load_table(golden).to_doc()))
    assert cli.main(["tune", "--show", str(golden)]) == 0
    assert "{" not in capsys.readouterr().out.splitlines()[0]


def _keys(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    return [(r["type"], tuple(sorted(r))) for r in map(json.loads, path.read_text().splitlines())]


def test_bench_percentiles_recorded(tmp_path, capsys):
    """`latscope bench --percentiles`: the choice and each point's percentiles in the results file,
    exactly the fields of the golden file; the percentiles agree with the record's own median and
    p99 (same samples, same interpolation); no samples kept without --raw."""
    out = tmp_path / "t.jsonl"
    assert cli.main(["bench", "p2p", "--np", "2", "--sizes", "0,8", "--min-reps", "5", "--max-reps", "5",
                     "--percentiles", "50,90,99,99.9", "-o", str(out)]) == 0
    golden = GOLDEN / "results_p2p_v3_percentiles.jsonl"
    live = _keys(out)
    assert [k for k in live if k[0] == "meta"] == [k for k in _keys(golden) if k[0] == "meta"]
    assert {k for k in live if k[0] == "point"} == {k for k in _keys(golden) if k[0] == "point"}
    res = load(out)
    assert res.meta["percentiles"] == [50, 90, 99, 99.9] and not res.raw
    for _, p in res.points.iterrows():
        d = p["percentiles_s"]
        assert d["p50"] == pytest.approx(p["median_s"], rel=1e-6) and d["p99"] == pytest.approx(p["p99_s"], rel=1e-6)
        assert d["p50"] <= d["p90"] <= d["p99"] <= d["p99.9"] <= p["max_s"] * (1 + 1e-9)
    assert cli.main(["results", "summary", str(out)]) == 0
    assert "p99.9" in capsys.readouterr().out
    df = export_frame(res)
    assert list(df["percentile_99.9_s"]) == [p["p99.9"] for p in res.points["percentiles_s"]]
    html = tmp_path / "r.html"
    assert cli.main(["report", str(out), "-o", str(html)]) == 0
    sec = html.read_text().split("<h2>Distributions</h2>")[1].split("<h2>")[0]
    assert "Tail percentiles recorded" in sec and "<th>p99.9</th>" in sec
    # with --raw the samples stay
    out2 = tmp_path / "r.jsonl"
    assert cli.main(["bench", "p2p", "--np", "2", "--sizes", "8", "--min-reps", "5", "--max-reps", "5", "--raw",
                     "--percentiles", "99", "-o", str(out2)]) == 0
    assert len(load(out2).raw[0]) == 5


def test_tables_and_budget_show_json(capsys):
    assert cli.main(["tables", "show", str(GOLDEN / "delay_table_lognormal_v1.tbl"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["distribution"] == "lognormal" and doc["min_s"] <= doc["p50_s"] <= doc["p99_s"] <= doc["max_s"]
    assert cli.main(["budget", "show", str(GOLDEN / "budget_v1.jsonl"), "--json"]) == 0
    recs = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert recs[0]["type"] == "budget_meta" and len(recs) == len((GOLDEN / "budget_v1.jsonl").read_text().splitlines())
