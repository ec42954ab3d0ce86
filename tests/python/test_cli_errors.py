"""Bad input gets a clear message naming the value and what is allowed, exit 2; an unexpected
exception is one line plus the LATSCOPE_DEBUG hint, exit 1."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from latscope import cli
from latscope.models import NetworkParams
from latscope.models.contention import upper_bound
from latscope.results import ResultsError, load


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    rc = cli.main(argv)
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return rc, cap.out, cap.err


# ---- results files that are not what they should be --------------------------------------------

def test_truncated_last_record_warned_and_dropped(golden, tmp_path, capsys):
    text = (golden / "results_p2p_v1.jsonl").read_text()
    p = tmp_path / "cut.jsonl"
    p.write_text(text[: len(text) - 40])   # a run killed while writing its last point
    n_lines = len(p.read_text().splitlines())
    res = load(p)
    err = capsys.readouterr().err
    assert len(res.points) == 3
    assert f"{p}:{n_lines}" in err and "truncated" in err and "dropped" in err
    rc, out, err = run(capsys, ["results", "summary", str(p)])
    assert rc == 0 and "truncated" in err and "empty" not in err


def test_truncated_metadata_names_file_and_line(golden, tmp_path, capsys):
    p = tmp_path / "cut.jsonl"
    p.write_text((golden / "results_p2p_v1.jsonl").read_text()[:300])
    rc, _, err = run(capsys, ["results", "summary", str(p)])
    assert rc == 2
    assert f"{p}:1" in err and "truncated" in err and "empty results file" not in err


def test_bad_line_in_the_middle_is_an_error(golden, tmp_path, capsys):
    lines = (golden / "results_p2p_v1.jsonl").read_text().splitlines(keepends=True)
    p = tmp_path / "mid.jsonl"
    p.write_text(lines[0] + lines[1][:50] + "\n" + "".join(lines[2:]))
    with pytest.raises(ResultsError, match=r"mid.jsonl:2: not JSON"):
        load(p)


@pytest.mark.parametrize("blob", [b"\xe4\xe4\xe4 not text", b"\x7fELF\x02\x01\x01\x00\x00\x00\x00"])
@pytest.mark.parametrize("cmd", [["results", "summary"], ["report"], ["fit", "hockney"], ["fit", "logp"]])
def test_binary_file_named(blob, cmd, tmp_path, capsys):
    p = tmp_path / "blob.jsonl"
    p.write_bytes(blob)
    rc, _, err = run(capsys, cmd + [str(p)])
    assert rc == 2
    assert str(p) in err and "binary data" in err
    assert "codec" not in err


def test_zero_byte_file(tmp_path, capsys):
    p = tmp_path / "zero.jsonl"
    p.write_bytes(b"")
    rc, _, err = run(capsys, ["results", "summary", str(p)])
    assert rc == 2 and str(p) in err and "0 bytes" in err


def test_directory_given_as_results(tmp_path, capsys):
    rc, _, err = run(capsys, ["results", "summary", str(tmp_path)])
    assert rc == 2 and "directory" in err


# ---- values that look like options --------------------------------------------------------------

@pytest.mark.parametrize("argv, needle", [
    (["tables", "make", "lognormal", "--mean", "-5us", "--sd", "1us"], "--mean -5us: negative delay"),
    (["tables", "make", "exponential", "--mean", "-3us"], "--mean -3us: negative delay"),
    (["tables", "make", "uniform", "--low", "-1us", "--high", "2us"], "--low -1us: negative delay"),
    (["tables", "make", "constant", "--mean", "-0.5ms"], "negative delay"),
    (["model", "p2p", "--L", "-5us", "--o", "1us", "--size", "8"], "L_s = -5e-06: must be >= 0"),
    (["model", "p2p", "--L", "5us", "--o", "-1us", "--size", "8"], "must be >= 0"),
    (["model", "barrier", "--L", "1us", "--o", "1us", "--np", "-4"], "np (processes) = -4: must be >= 1"),
    (["model", "upper-bound", "--dims", "8x4", "--G", "-1ns", "--channel", "1ns"], "must be > 0"),
    (["fit", "hockney", "GOLDEN", "--confidence", "-0.5"], "--confidence -0.5: must be in the open interval"),
    (["model", "barrier", "--L", "1us", "--o", "1us", "--np", "4", "--alg", "-bogus"], "'bogus': unknown; valid:"),
])
def test_negative_looking_values_reach_the_check(argv, needle, golden, capsys):
    argv = [str(golden / "results_p2p_v1.jsonl") if a == "GOLDEN" else a for a in argv]
    rc, _, err = run(capsys, argv)
    assert rc == 2, err
    assert needle in err, err
    assert "expected one argument" not in err


def test_alg_exclusion_as_value(capsys):
    """`--alg -linear`: the include/exclude grammar's exclusion, not an unknown option."""
    rc, out, err = run(capsys, ["model", "barrier", "--L", "1us", "--o", "1us", "--np", "4", "--alg", "-linear"])
    assert rc == 0, err
    algs = {ln.split()[0] for ln in out.splitlines()[2:] if ln.strip()}
    assert "linear" not in algs and "dissemination" in algs


def test_words_after_double_dash_untouched():
    ap = cli.build_parser()
    argv = ["inject", "run", "--table", "t.tbl", "--", "prog", "--mean", "-5us"]
    assert cli._join_dash_values(ap, argv) == argv
    assert cli._join_dash_values(ap, ["tables", "make", "x", "--mean", "-5us"])[-1] == "--mean=-5us"
    assert cli._join_dash_values(ap, ["fit", "hockney", "f", "-o", "-"]) == ["fit", "hockney", "f", "-o", "-"]


# ---- model upper-bound: G and the network only -------------------------------------------------

def test_upper_bound_needs_only_G_and_network(capsys):
    rc, out, err = run(capsys, ["model", "upper-bound", "--dims", "8x4", "--G", "0.5s", "--channel", "1s", "--json"])
    assert rc == 0, err
    from latscope.jsonio import loads_strict
    got = loads_strict(out)
    net = NetworkParams(n=2, channel_s_per_byte=1.0, dims=(8, 4))
    want = upper_bound(0.5, net)
    assert got["ratio"] == pytest.approx(want.ratio, rel=1e-12)
    assert got["F_s_per_byte"] == pytest.approx(want.F_s_per_byte, rel=1e-12)
    assert got["G_s_per_byte"] == 0.5


def test_upper_bound_without_G(capsys):
    rc, _, err = run(capsys, ["model", "upper-bound", "--dims", "8x4", "--channel", "1s"])
    assert rc == 2 and "needs G" in err and "--G" in err


# ---- no traceback reaches a user ---------------------------------------------------------------

def test_unexpected_exception_is_one_line(golden, capsys, monkeypatch):
    from latscope import results

    def boom(self):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(results.Results, "summary", boom)
    monkeypatch.delenv("LATSCOPE_DEBUG", raising=False)
    rc, out, err = run(capsys, ["results", "summary", str(golden / "results_p2p_v1.jsonl")])
    assert rc == 1
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "RuntimeError: boom" in lines[0] and "LATSCOPE_DEBUG=1" in lines[0]
    monkeypatch.setenv("LATSCOPE_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["results", "summary", str(golden / "results_p2p_v1.jsonl")])


def test_console_script_broken_pipe_is_quiet(golden):
    """`latscope results summary F | head -1`: no BrokenPipeError traceback on the terminal."""
    exe = os.path.join(os.path.dirname(sys.executable), "latscope")
    cp = subprocess.run(f"'{exe}' results summary '{golden / 'results_p2p_v1.jsonl'}' "
                        f"'{golden / 'results_p2p_v1.jsonl'}' '{golden / 'results_p2p_v1.jsonl'}' | head -c 1",
                        shell=True, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in cp.stderr and "BrokenPipe" not in cp.stderr
