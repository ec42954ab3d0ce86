"""`latscope report` on every kind of results file alone and mixed: each shows the
sections it has data for, and a section that fails is a note, never a traceback."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import mpirun
from latscope import cli, report

# LATSCOPE_QUICK caps every point (warm-up 10, 30 repetitions, 0.05 s): these tests need records,
# not precise numbers
KINDS = {
    "p2p": ["p2p", "--op", "pingpong", "--sizes", "0,8,1K"],
    "bandwidth": ["p2p", "--op", "bandwidth", "--sizes", "8,64K"],
    "coll": ["coll", "--op", "bcast", "--alg", "native,linear", "--sizes", "0,1K"],
    "barrier": ["coll", "--op", "barrier"],
    "logp": ["logp", "--sizes", "0,1K"],
    "one": ["p2p", "--op", "pingpong", "--sizes", "8"],
}
# the sections a kind must show (beyond "Provenance", which every file has)
EXPECT = {
    "p2p": ["Point-to-point latency", "Per-pair small-message latency", "All points"],
    "bandwidth": ["Bandwidth", "All points"],
    "coll": ["Collectives: timing methods", "Collectives: algorithms", "All points"],
    "barrier": ["Collectives: algorithms", "All points"],
    "logp": ["LogP / LogGP / PLogP parameters", "All points"],
    "one": ["Point-to-point latency", "All points"],
    "empty": ["All points"],
    "sim": ["Simulation: time vs P", "Simulation: finish times and critical path", "All points"],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory, monkeypatch_module) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("kinds")
    out: dict[str, Path] = {}
    for kind, args in KINDS.items():
        p = d / f"{kind}.jsonl"
        cp = mpirun(2, args + ["-o", str(p)])
        assert cp.returncode == 0, cp.stderr
        out[kind] = p
    # metadata and no point: what a run stopped before its first point leaves
    out["empty"] = d / "empty.jsonl"
    out["empty"].write_text(out["one"].read_text().splitlines()[0] + "\n")
    # LogGOPS simulations (docs/sim.md): a results file of "sim" records, no MPI
    out["sim"] = d / "sim.jsonl"
    assert cli.main(["sim-sweep", "--algos", "dissemination,binomial", "--P", "2..2^8", "--L", "1us", "--o", "0.2us",
                     "-o", str(out["sim"])]) == 0
    return out


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    mp.setenv("LATSCOPE_QUICK", "1")
    yield mp
    mp.undo()


def _sections(html_text: str) -> list[str]:
    return re.findall(r"<h2>([^<]*)</h2>", html_text)


def _report(capsys, tmp_path, paths: list[Path]) -> str:
    out = tmp_path / "r.html"
    rc = cli.main(["report", *map(str, paths), "-o", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "Traceback" not in cap.err
    text = out.read_text()
    assert "could not be drawn" not in text, re.findall(r"could not be drawn[^<]*", text)
    return text


@pytest.mark.parametrize("kind", list(EXPECT))
def test_report_each_kind_alone(kind, files, capsys, tmp_path):
    text = _report(capsys, tmp_path, [files[kind]])
    secs = _sections(text)
    assert "Provenance" in secs
    for s in EXPECT[kind]:
        assert s in secs, (kind, secs)
    if kind == "empty":
        assert "No measured points" in text
    if kind not in ("p2p", "one"):
        assert "Point-to-point latency" not in secs
    if kind not in ("coll",):
        assert "Collectives: timing methods" not in secs


def test_report_readme_example(files, capsys, tmp_path):
    """The README's own pair of commands: a p2p-only file (was KeyError: 'sync' in collectives)."""
    text = _report(capsys, tmp_path, [files["p2p"]])
    assert "Point-to-point latency" in _sections(text)


def test_report_all_kinds_mixed(files, capsys, tmp_path):
    text = _report(capsys, tmp_path, list(files.values()))
    secs = _sections(text)
    for kind in EXPECT:
        for s in EXPECT[kind]:
            assert s in secs, (kind, s, secs)


def test_failing_section_is_a_note(files, capsys, tmp_path, monkeypatch):
    def broken(inp):
        raise KeyError("sync")

    monkeypatch.setattr(report, "SECTIONS", [("Broken", broken)] + report.SECTIONS)
    monkeypatch.delenv("LATSCOPE_DEBUG", raising=False)
    out = tmp_path / "r.html"
    assert cli.main(["report", str(files["p2p"]), "-o", str(out)]) == 0
    text = out.read_text()
    assert "<h2>Broken</h2>" in text and "could not be drawn" in text and "KeyError" in text
    assert "Point-to-point latency" in _sections(text)   # the other sections are still there
    # LATSCOPE_DEBUG=1: the exception propagates (for the developer's traceback)
    monkeypatch.setenv("LATSCOPE_DEBUG", "1")
    with pytest.raises(KeyError):
        report.build([], out)


def test_quick_is_recorded(files):
    from latscope.results import load
    res = load(files["p2p"])
    assert res.meta["rep_policy"]["quick"] is True
    assert res.meta["rep_policy"]["max_reps"] <= 30 and res.meta["rep_policy"]["warmup"] <= 10
    assert (res.points["reps_total"] <= 30).all()
