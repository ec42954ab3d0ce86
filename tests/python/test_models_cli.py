"""`latscope model` / `latscope predict` called in-process: exit codes 0 and 2, tables, plots."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from latscope import model_cli, predict_cli

CYCLE = 50e-9
ALEWIFE = {
    "schema": "latscope.params/1",
    "model": "loggp",
    "params": {
        "L_s": 21 * CYCLE, "o_s_s": 15 * CYCLE, "o_r_s": 122 * CYCLE, "g_s": 15 * CYCLE,
        "G_s_per_byte": 0.5 * CYCLE, "o_sl_s": 25 * CYCLE, "o_rl_s": 129 * CYCLE, "L_long_s": 8 * CYCLE, "a_bytes": 8,
    },
    "network": {"n": 2, "channel_s_per_byte": CYCLE, "dims": [8, 4]},
}
SEED002 = ["--os", "3us", "--L", "17.5us", "--or", "9.5us"]


@pytest.fixture()
def pfile(tmp_path: Path) -> str:
    f = tmp_path / "alewife.json"
    f.write_text(json.dumps(ALEWIFE))
    return str(f)


def run(fn, argv, capsys):
    rc = fn(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_barrier_table_and_json(capsys) -> None:
    rc, out, err = run(model_cli.main, ["barrier", *SEED002, "--np", "32"], capsys)
    assert rc == 0 and err == ""
    first = out.splitlines()[2].split()
    assert first[:3] == ["dissemination", "150", "us"] and first[-1] == "*"
    rc, out, _ = run(predict_cli.main, ["barrier", *SEED002, "--np", "32", "--alg", "all", "--json"], capsys)
    assert rc == 0
    d = json.loads(out)
    times = {a["name"]: a["time_s"] for a in d["algorithms"]}
    assert d["best"] == "dissemination"
    assert times["binary-tree"] == pytest.approx(180e-6)
    assert times["shuffle-exchange"] == pytest.approx(150e-6)


def test_upper_bound_both_readings(pfile, capsys) -> None:
    rc, out, _ = run(model_cli.main, ["upper-bound", "--params", pfile, "--json"], capsys)
    assert rc == 0 and json.loads(out)["ratio"] == pytest.approx(2.17033, abs=1e-5)
    rc, out, _ = run(model_cli.main, ["model", "upper-bound", "--params", pfile, "--kd", "2", "--json"], capsys)
    assert rc == 0 and json.loads(out)["ratio"] == pytest.approx(2.22474, abs=1e-5)


def test_upper_bound_with_a_fit_of_zero_G_names_the_file(tmp_path, capsys) -> None:
    """A fit writes G = 0 where g(m) did not grow with the size (a loaded machine, small sizes):
    the bound F/2G cannot be computed, and the message names the file and the way out, not an
    --G the user never gave; --G still overrides."""
    zero = json.loads(json.dumps(ALEWIFE))
    zero["params"]["G_s_per_byte"] = 0.0
    f = tmp_path / "g0.json"
    f.write_text(json.dumps(zero))
    rc, out, err = run(model_cli.main, ["upper-bound", "--params", str(f)], capsys)
    assert rc == 2 and out == ""
    assert str(f) in err and "G = 0 s/byte" in err and "give --G" in err and "--G 0" not in err
    rc, out, _ = run(model_cli.main, ["upper-bound", "--params", str(f), "--G", "25ns", "--json"], capsys)
    assert rc == 0 and json.loads(out)["ratio"] == pytest.approx(2.17033, abs=1e-5)


def test_every_subcommand_runs_and_plots(pfile, tmp_path, capsys) -> None:
    cmds = [
        ["p2p", "--params", pfile, "--size", "0", "--size", "1KiB"],
        ["contention", "--params", pfile, "--size", "64", "--plot", str(tmp_path / "c.png")],
        ["remap", "--params", pfile, "--Cn", "1.15us", "--size", "4KiB"],
        ["remap", "--params", pfile],
        ["dag", "--params", pfile, "--n", "1024", "--np", "32", "--task", "5us", "--b", "64", "--plot", str(tmp_path / "d.png")],
        ["upper-bound", "--params", pfile, "--work", "10us", "--plot", str(tmp_path / "u.png")],
        ["collective", "--params", pfile, "--np", "13", "--size", "1KiB"],
        ["barrier", "--params", pfile, "--np", "7", "--k", "3"],
        ["p2p", "--alpha", "2us", "--beta", "1ns", "--size", "1MB"],
    ]
    for argv in cmds:
        rc, out, err = run(model_cli.main, argv, capsys)
        assert rc == 0, (argv, err)
        assert out.strip()
    for name in ("c.png", "d.png", "u.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_remap_json_values(pfile, capsys) -> None:
    rc, out, _ = run(model_cli.main, ["remap", "--params", pfile, "--Cn", "1150ns", "--json"], capsys)
    d = json.loads(out)
    assert rc == 0
    assert d["sync"]["logp_s"] / CYCLE == pytest.approx(316)
    assert d["sync"]["lopc_s"] / CYCLE == pytest.approx(453)
    assert d["sync"]["logpc_s"] / CYCLE == pytest.approx(499)
    assert d["async_per_message_s"] / CYCLE == pytest.approx(137)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["barrier", *SEED002, "--np", "0"], "np (processes) = 0"),
        (["barrier", *SEED002, "--np", "16", "--k", "1"], "k (tree arity) = 1"),
        (["barrier", *SEED002, "--np", "16", "--alg", "nope"], "'nope': unknown; valid:"),
        (["barrier", "--os=-3us", "--L", "17.5us", "--or", "9.5us", "--np", "4"], "o_s_s = -3e-06: must be >= 0"),
        (["barrier", "--np", "4"], "no model parameters"),
        (["barrier", "--alpha", "1us", "--beta", "1ns", "--np", "4"], "hockney"),
        (["contention", "--L", "1us", "--o", "1us", "--ndim", "2", "--kd", "2", "--channel", "1ns", "--size", "1KiB", "--T", "1ns"], None),
        (["contention", "--L", "1us", "--o", "1us", "--ndim", "2", "--kd", "0.9", "--channel", "1ns", "--size", "64"], "k_d = 0.9: must be >= 1"),
        (["contention", "--L", "1us", "--o", "1us", "--ndim", "2", "--kd", "2", "--size", "64"], "missing channel_s_per_byte"),
        (["p2p", "--params", "/nonexistent/p.json"], "cannot read"),
    ],
)
def test_bad_input_exit_2(argv, needle, capsys) -> None:
    rc, out, err = run(model_cli.main, argv, capsys)
    if needle is None:  # a closed model at an absurd rate is still well defined
        assert rc == 0
        return
    assert rc == 2
    assert err.startswith("latscope model: error: ")
    assert needle in err


def test_bad_units_and_usage_exit_2(capsys) -> None:
    rc, _, err = run(model_cli.main, ["barrier", "--L", "17.5", "--o", "1us", "--np", "4"], capsys)
    assert rc == 2 and "give a unit" in err
    rc, _, err = run(model_cli.main, ["frobnicate"], capsys)
    assert rc == 2
    rc, _, err = run(predict_cli.main, ["barrier", *SEED002, "--np", "4", "--alg", "all,-all"], capsys)
    assert rc == 2 and "excludes every" in err


def test_bad_params_file_exit_2(capsys, tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**ALEWIFE, "params": {**ALEWIFE["params"], "o_r_s": -1.0}}))
    rc, _, err = run(model_cli.main, ["p2p", "--params", str(bad)], capsys)
    assert rc == 2 and "o_r_s = -1.0: must be >= 0" in err


def test_add_parser_wiring() -> None:
    top = argparse.ArgumentParser(prog="latscope")
    sub = top.add_subparsers(dest="command")
    model_cli.add_parser(sub)
    predict_cli.add_parser(sub)
    args = top.parse_args(["predict", "barrier", *SEED002, "--np", "32", "--json"])
    assert args.func is predict_cli.main
    args = top.parse_args(["model", "barrier", *SEED002, "--np", "32"])
    assert args.func is model_cli.main


def test_unit_parsers() -> None:
    assert model_cli.parse_time("9.5us") == 9.5e-6
    assert model_cli.parse_time("2ms") == 2e-3
    assert model_cli.parse_time("0") == 0.0
    assert model_cli.parse_size("1KiB") == 1024
    assert model_cli.parse_size("2MB") == 2 * 1024**2   # binary, as the C size grammar
    assert model_cli.parse_per_byte("0.5ns/B") == 0.5e-9
    for bad in ("abc", "1 parsec", "1e-6"):
        with pytest.raises(ValueError):
            model_cli.parse_time(bad)
