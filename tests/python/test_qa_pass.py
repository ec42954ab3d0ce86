"""A new user's pass over latscope: what the commands do with files they were not made for, and the
report's figures when a section gets only part of what it draws (no MPI: results files written here)."""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest

from latscope import cli
from latscope.results import load


def _write(path: Path, golden: Path, points: list[dict[str, Any]], **meta: Any) -> Path:
    """A results file: the golden file's metadata (with `meta` over it), then these points."""
    m = json.loads((golden / "results_p2p_v3.jsonl").read_text().splitlines()[0]) | meta
    path.write_text("\n".join(json.dumps(r) for r in [m] + [{"type": "point", **p} for p in points]) + "\n")
    return path


def _point(**kw: Any) -> dict[str, Any]:
    t = float(kw.pop("median_s", 1e-6))
    return {"n": 5, "min_s": t, "mean_s": t, "median_s": t, "max_s": t, "sd_s": 0.0, "p90_s": t, "p99_s": t,
            "ci_of": "median", "ci_level": 0.95, "ci_lo_s": t, "ci_hi_s": t, "ci_half_s": 0.0, "rel_err": 0.0,
            "reps_valid": 5, "reps_total": 5, "stop_reason": "fixed", **kw}


def test_fit_hockney_on_a_barrier_file_names_what_the_file_has(tmp_path: Path, golden: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # was: "latscope: internal error: KeyError: 'reply_bytes'", exit 1
    f = _write(tmp_path / "barrier.jsonl", golden,
               [_point(bench="coll", op="barrier", alg="native", root=0, size_bytes=0, timing="local")])
    assert cli.main(["fit", "hockney", str(f)]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and "op barrier" in err and "pingpong" in err
    assert cli.main(["fit", "hockney", str(f), "--pair", "0:1"]) == 2
    assert "op barrier" in capsys.readouterr().err


def test_fit_hockney_both_fits_what_the_file_serves(tmp_path: Path, golden: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # characterize's p2p_roundtrip0.jsonl: RTTs with empty replies at two sizes serve the
    # two-roundtrip method only; the default --method both used to fail on the regression
    pts = [_point(bench="p2p", op="roundtrip", mode="seq", group=[0, 1], size_bytes=m, reply_bytes=0,
                  median_s=2e-6 + 1e-10 * m) for m in (0, 65536)]
    f = _write(tmp_path / "rt0.jsonl", golden, pts)
    assert cli.main(["fit", "hockney", str(f)]) == 0
    cap = capsys.readouterr()
    assert "two-roundtrip  alpha = 1.0000 us" in cap.out and "regression" not in cap.out
    assert "regression skipped" in cap.err
    # one method asked for, and it cannot be fitted: the error, exit 2
    assert cli.main(["fit", "hockney", str(f), "--method", "regression"]) == 2
    assert "at least 3 distinct sizes" in capsys.readouterr().err


def _png_width(html: str) -> int:
    from PIL import Image   # matplotlib's own dependency
    png = base64.b64decode(html.split("base64,", 1)[1].split('"', 1)[0])
    return int(Image.open(io.BytesIO(png)).size[0])


def test_pipeline_section_draws_only_ops_measured_both_ways(tmp_path: Path, golden: Path) -> None:
    # characterize's barrier files are local-timed, native and unsynchronised: they used to get a
    # panel of their own in "isolated vs pipelined", one size on an empty axis with no isolated curve
    from latscope.parts.collectives import section_pipeline
    from latscope.report import ReportInput

    def coll(op: str, sizes: tuple[int, ...]) -> list[dict[str, Any]]:
        return [_point(bench="coll", op=op, alg="native", root=0, size_bytes=m, timing="local",
                       local={"imb_t_min_s": 1e-6, "imb_t_max_s": 2e-6}) for m in sizes]
    iso = _write(tmp_path / "iso.jsonl", golden, coll("scatter", (0, 1024)), sync="barrier")
    pipe = _write(tmp_path / "pipe.jsonl", golden, coll("scatter", (0, 1024)), sync="none")
    bar = _write(tmp_path / "barrier.jsonl", golden, coll("barrier", (0,)), sync="none")
    one = section_pipeline(ReportInput([load(iso), load(pipe)]))
    both = section_pipeline(ReportInput([load(iso), load(pipe), load(bar)]))
    assert one is not None and both is not None
    assert _png_width(both) == _png_width(one)          # one panel: scatter; the barrier adds none
    assert section_pipeline(ReportInput([load(iso), load(bar)])) is None   # nothing measured both ways


def test_apps_headline_says_points_were_set_apart_not_unpredicted() -> None:
    # characterize on a busy machine: every application point measured under load. The headline
    # said "none predicted" and each pattern "no prediction over 0 points" beside a table of predictions
    import pandas as pd

    from latscope import apps_twins
    t = pd.DataFrame({"pattern_key": ["dag", "dag", "remap sync"], "config": ["b=1", "b=2", "n=64"],
                      "ranks": [2, 2, 2], "rel_err": [-0.5, 0.25, 0.1], "refined_rel_err": [0.1, 0.2, None],
                      "oversubscribed": [False, False, False], "under_load": [True, True, True]})
    lines = apps_twins.headline(t)
    assert lines[0].startswith("worst pattern, paper models: no point counted: all 3 predicted points")
    assert "all 2 predicted points" in lines[1]
    dag = {e.pattern: e for e in apps_twins.pattern_summary(t, "rel_err")}["dag"]
    assert dag.describe() == "dag: no point counted: all 2 set apart (oversubscribed or under load), their worst |error| 50.0%"
    # nothing predicted at all: still "none predicted"
    assert apps_twins.headline(t.assign(rel_err=None, refined_rel_err=None))[0].endswith("none predicted")
    # one point counted: the usual headline
    counted = apps_twins.headline(t.assign(under_load=[False, True, True]))[0]
    assert counted.startswith("worst pattern, paper models: dag: worst |error| 50.0% (-50.0% at b=1, P = 2)")


@pytest.mark.parametrize("argv, who", [
    (["budget", "--bogus"], "latscope budget: error: unrecognized arguments: --bogus"),
    (["fit", "hockney", "f.jsonl", "--zz", "1"], "latscope fit hockney: error: unrecognized arguments: --zz 1"),
])
def test_unrecognized_argument_names_the_command(argv: list[str], who: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # was the top-level usage (every command listed) and "latscope: error: ..."
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert who in err and err.startswith(f"usage: latscope {' '.join(argv[:2 if argv[0] == 'fit' else 1])}")


def test_a_json_document_given_as_results_says_what_it_is(tmp_path: Path, golden: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # `latscope results summary params.json` said "params.json:1: not JSON": it is JSON, one document
    assert cli.main(["results", "summary", str(golden / "tune_scatter_v1.json")]) == 2
    err = capsys.readouterr().err
    assert "tune_scatter_v1.json: one JSON document, not a results file" in err and "not JSON" not in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a":\n 1\n')   # what is not JSON at all still names the line
    assert cli.main(["results", "summary", str(bad)]) == 2
    assert "bad.jsonl:1: not JSON" in capsys.readouterr().err


def test_an_output_into_a_missing_folder_names_the_folder(tmp_path: Path, golden: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # was "x.tbl: no such file", as if the file to be written had to exist
    out = tmp_path / "nodir" / "x.tbl"
    assert cli.main(["tables", "make", "constant", "--mean", "20us", "-o", str(out)]) == 2
    assert f"{out}: no such file or directory ({out.parent} does not exist)" in capsys.readouterr().err
    assert cli.main(["report", str(golden / "results_p2p_v3.jsonl"), "-o", str(out.with_suffix(".html"))]) == 2
    assert f"({out.parent} does not exist)" in capsys.readouterr().err
    assert cli.main(["results", "summary", str(tmp_path / "none.jsonl")]) == 2   # a missing input: as before
    assert f"{tmp_path / 'none.jsonl'}: no such file" in capsys.readouterr().err


def test_bench_kind_help_shows_latscope_bench_options(capfd: pytest.CaptureFixture[str]) -> None:
    # was the wrapper's launching options only: nothing about --sizes, --op, ...
    assert cli.main(["bench", "p2p", "--help"]) == 0
    out = capfd.readouterr().out
    assert out.startswith("usage: latscope bench") and "latscope-bench p2p --help:" in out and "--sizes" in out
    assert cli.main(["bench", "--help"]) == 0
    out = capfd.readouterr().out   # no kind: the wrapper's help alone
    assert out.startswith("usage: latscope bench") and "--help:" not in out and "--sizes" not in out
    with pytest.raises(SystemExit) as e:
        cli.main(["bench"])
    assert e.value.code == 2 and "required: kind" in capfd.readouterr().err


def test_a_budget_file_given_as_results_points_to_budget_show(golden: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # was "the first record must be the metadata (type 'meta'), not 'budget_meta'"
    assert cli.main(["results", "summary", str(golden / "budget_v1.jsonl")]) == 2
    assert "a latscope budget file, not a results file: `latscope budget show" in capsys.readouterr().err


def test_report_passes_over_a_budget_file(tmp_path: Path, golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `latscope report results/demo/*.jsonl` includes characterize's budget.jsonl: it was an error
    out = tmp_path / "r.html"
    assert cli.main(["report", str(golden / "results_p2p_v3.jsonl"), str(golden / "budget_v1.jsonl"),
                     "-o", str(out)]) == 0
    assert out.stat().st_size > 0 and "budget_v1.jsonl is a budget file, not results" in capsys.readouterr().err
    assert cli.main(["report", str(golden / "budget_v1.jsonl"), "-o", str(out)]) == 2   # nothing else: an error
    assert "no results files among the files given" in capsys.readouterr().err


def test_report_params_that_are_not_a_params_file(tmp_path: Path, golden: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # was "latscope: error: Expecting value: line 1 column 1 (char 0)": no file named
    res = str(golden / "results_p2p_v3.jsonl")
    out = str(tmp_path / "r.html")
    assert cli.main(["report", res, "--params", res, "-o", out]) == 2
    assert f"--params {res}: not a JSON parameters file (Extra data at line 2)" in capsys.readouterr().err
    (tmp_path / "list.json").write_text("[1]\n")
    assert cli.main(["report", res, "--params", str(tmp_path / "list.json"), "-o", out]) == 2
    assert "a parameters file is a JSON object, not list" in capsys.readouterr().err


def test_bad_params_and_tune_inputs_name_the_file_once(tmp_path: Path, golden: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    res = str(golden / "results_p2p_v3.jsonl")
    # was "params file: not valid JSON (...)": which file?
    assert cli.main(["model", "p2p", "--params", res]) == 2
    assert f"{res}: params file: not valid JSON" in capsys.readouterr().err
    # was "FILE: FILE: no collective points"
    assert cli.main(["tune", "--decide", res]) == 2
    err = capsys.readouterr().err
    assert err.count(res) == 1 and "no collective points (latscope-bench tune or coll results)" in err
    # pyarrow's FileNotFoundError has no filename: was "None: no such file"
    assert cli.main(["results", "export", res, "--parquet", "-o", str(tmp_path / "no" / "x.parquet")]) == 2
    err = capsys.readouterr().err
    assert "None" not in err and str(tmp_path / "no" / "x.parquet") in err


def test_app_predictions_find_the_parameters_beside_the_results(tmp_path: Path) -> None:
    # `latscope report results/demo/*.jsonl -o elsewhere.html` lost the application models: the
    # section looked for params_logp.json in the report's folder only
    from test_mpi_apps import PARAMS, _synthetic   # the app records that file's tests build

    from latscope.parts.apps import section_apps
    from latscope.report import ReportInput
    res = tmp_path / "res"
    res.mkdir()
    (res / "params_logp.json").write_text(json.dumps(PARAMS))
    html = section_apps(ReportInput([load(_synthetic(res))], outdir=tmp_path / "elsewhere"))
    assert html is not None and "No fitted parameters" not in html and "L = 1 µs" in html


@pytest.mark.parametrize("argv, named", [
    (["sim", "nosuch", "--P", "4"], "schedule 'nosuch': neither a generated algorithm"),
    (["sim", "dissemination", "--P", "0"], "--P 0: must be >= 1"),
])
def test_sim_names_the_bad_schedule_before_the_parameters(argv: list[str], named: str,
                                                          capfd: pytest.CaptureFixture[str]) -> None:
    # no --L/--params either: the misspelt schedule or the bad P is the error reported, not
    # "no model parameters"
    assert cli.main(argv) == 2
    err = capfd.readouterr().err
    assert named in err and "no model parameters" not in err, err


def test_budget_errors_read_like_every_other_command(capfd: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["budget", "--rungs", "nosuch"]) == 2
    err = capfd.readouterr().err
    assert err.startswith("latscope budget: error: --rungs 'nosuch'"), err


def test_characterize_checks_the_timer_before_launching(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ch"
    assert cli.main(["characterize", "--np", "2", "--quick", "--timer", "foo", "--out", str(out)]) == 2
    err = capfd.readouterr().err
    assert "--timer 'foo': unknown timer; valid: wtime, monotonic" in err and "p2p_pingpong" not in err, err
    assert not out.exists()   # nothing launched, nothing written
