"""Delay tables (docs/delay-table.md): strict parser, generators, §5.3 fitted set, netem export, CLI.
Tables are deterministic data (no timing), so asserting on their means is fine here."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from latscope import cli
from latscope import tables as T
from latscope.results import load, under_load

from conftest import mpirun

GOLDEN_ARGS = ["tables", "make", "lognormal", "--mean", "10us", "--sd", "5us", "--seed", "42"]


def _good_text() -> str:
    return T.format_table(T.make("uniform", {"low": 1e-6, "high": 2e-6}, seed=3))


def _lines() -> list[str]:
    return _good_text().split("\n")[:-1]


def _replace(lineno: int, new: str | None) -> str:
    ls = _lines()
    if new is None:
        del ls[lineno - 1]
    else:
        ls[lineno - 1] = new
    return "\n".join(ls) + "\n"


HEAD = 4  # header lines the writer emits; data line k (1-based) is file line HEAD + k
ROW = "1 2 3 4 5 6 7 8"

BAD = {
    "missing_version": ("\n".join(_lines()[1:]) + "\n", 1, "version header"),
    "wrong_version": (_replace(1, "# latscope-delay-table 2"), 1, "version"),
    "empty_file": ("", 1, "empty"),
    "negative": (_replace(HEAD + 7, "1 2 -5 4 5 6 7 8"), HEAD + 7, "negative"),
    "float": (_replace(HEAD + 3, "1 2 3 4.5 5 6 7 8"), HEAD + 3, "not an integer"),
    "with_unit": (_replace(HEAD + 3, "1 2 3 4us 5 6 7 8"), HEAD + 3, "not an integer"),
    "plus_sign": (_replace(HEAD + 3, "+1 2 3 4 5 6 7 8"), HEAD + 3, "not an integer"),
    "overflow_int64": (_replace(HEAD + 9, "1 2 3 4 5 6 7 9223372036854775808"), HEAD + 9, "overflow"),
    "above_cap": (_replace(HEAD + 9, "1 2 3 4 5 6 7 10000000001"), HEAD + 9, "too large"),
    "seven_entries": (_replace(HEAD + 2, "1 2 3 4 5 6 7"), HEAD + 2, "7 entries"),
    "nine_entries": (_replace(HEAD + 2, ROW + " 9"), HEAD + 2, "9 entries"),
    "too_few_lines": (_replace(HEAD + 512, None), HEAD + 511, "too few lines"),
    "too_many_lines": (_good_text() + ROW + "\n", HEAD + 513, "too many lines"),
    "blank_line": (_replace(HEAD + 5, ""), HEAD + 5, "blank line"),
    "header_after_data": (_replace(HEAD + 5, "# late comment"), HEAD + 5, "header line after"),
    "bad_params_token": (_replace(3, "# params: mean_s"), 3, "key=value"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_parser_rejects(case: str, tmp_path: Path) -> None:
    text, lineno, what = BAD[case]
    p = tmp_path / f"{case}.tbl"
    p.write_text(text)
    with pytest.raises(T.TableError) as ei:
        T.read_table(p)
    msg = str(ei.value)
    assert f"{p}:{lineno}:" in msg, msg
    assert what in msg, msg
    assert isinstance(ei.value, ValueError)


def test_parser_accepts_variants(tmp_path: Path) -> None:
    ls = _lines()
    ls.insert(1, "# a free comment")
    ls[HEAD + 1] = "  " + ls[HEAD + 1].replace(" ", " \t ") + "  "
    ls[HEAD + 2] = "000 1 2 3 4 5 6 1000000000"
    p = tmp_path / "v.tbl"
    p.write_bytes(("\r\n".join(ls)).encode())  # CRLF, no final newline
    t = T.read_table(p)
    assert t.delays_ns[8] == 0 and t.delays_ns[15] == T.MAX_DELAY_NS
    assert t.distribution == "uniform" and t.params["low_s"] == 1e-6


def test_round_trip(tmp_path: Path) -> None:
    t = T.make("lognormal", {"mean": 1e-5, "sd": 5e-6}, seed=9)
    p = T.write_table(t, tmp_path / "t.tbl")
    u = T.read_table(p)
    assert np.array_equal(u.delays_ns, t.delays_ns) and u.delays_ns.dtype == np.int64
    assert u.distribution == "lognormal" and u.params == t.params and u.generator == t.generator
    assert T.format_table(u) == p.read_text()
    df = u.to_frame()
    assert list(df.columns) == ["index", "delay_ns", "delay_s"] and len(df) == T.TABLE_SIZE


def test_same_seed_same_file_other_seed_other_order() -> None:
    a = T.format_table(T.make("exponential", {"mean": 2e-6}, seed=5))
    b = T.format_table(T.make("exponential", {"mean": 2e-6}, seed=5))
    c = T.make("exponential", {"mean": 2e-6}, seed=6)
    assert a == b
    assert a != T.format_table(c)
    assert np.array_equal(np.sort(T.parse_table(a).delays_ns), np.sort(c.delays_ns))


@pytest.mark.parametrize("name,params,mean,sd,median", [
    ("constant", {"mean": 7e-6}, 7e-6, 0.0, 7e-6),
    ("uniform", {"low": 1e-6, "high": 3e-6}, 2e-6, 2e-6 / 12 ** 0.5, 2e-6),
    ("normal", {"mean": 20e-6, "sd": 2e-6}, 20e-6, 2e-6, 20e-6),
    ("lognormal", {"mean": 10e-6, "sd": 5e-6}, 10e-6, 5e-6, 10e-6 / (1 + 0.25) ** 0.5),
    ("exponential", {"mean": 10e-6}, 10e-6, 10e-6, 10e-6 * np.log(2)),
    ("pareto", {"alpha": 4.0, "scale": 1e-6}, 4e-6 / 3, (4 / (9 * 2)) ** 0.5 * 1e-6, 2 ** 0.25 * 1e-6),
])
def test_generator_matches_target(name: str, params: dict, mean: float, sd: float, median: float) -> None:
    t = T.make(name, params, seed=1)
    assert t.mean_s() == pytest.approx(mean, rel=0.01)
    assert t.sd_s() == pytest.approx(sd, rel=0.05, abs=1e-9)
    assert t.percentiles()["p50_s"] == pytest.approx(median, rel=0.01)


def test_normal_truncated_at_zero() -> None:
    t = T.make("normal", {"mean": 1e-6, "sd": 2e-6}, seed=1)
    assert t.delays_ns.min() >= 0
    assert t.mean_s() > 1e-6  # renormalised truncation raises the mean (documented)


def test_empirical_from_text_and_results(tmp_path: Path, golden: Path) -> None:
    s = np.random.default_rng(2).lognormal(np.log(5e-6), 0.4, 3000)
    f = tmp_path / "s.txt"
    f.write_text("# samples\n" + "\n".join(repr(float(x)) for x in s) + "\n\n")
    t = T.empirical(T.load_samples(f), seed=1)
    assert t.mean_s() == pytest.approx(s.mean(), rel=0.01)
    assert t.percentiles()["p50_s"] == pytest.approx(np.median(s), rel=0.01)
    meta = json.loads((golden / "results_p2p_v1.jsonl").read_text().splitlines()[0])
    rec = {"type": "point", "bench": "p2p", "op": "pingpong", "group": [0, 1], "size_bytes": 8,
           "samples_s": [1e-6, 2e-6, 3e-6, 4e-6]}
    j = tmp_path / "r.jsonl"
    j.write_text(json.dumps(meta) + "\n" + json.dumps(rec) + "\n")
    assert T.load_samples(j).tolist() == [1e-6, 2e-6, 3e-6, 4e-6]
    with pytest.raises(T.TableError, match="--raw"):
        T.load_samples(golden / "results_p2p_v1.jsonl")
    bad = tmp_path / "bad.txt"
    bad.write_text("1e-6\n2us\n")
    with pytest.raises(T.TableError, match=r"bad.txt:2:"):
        T.load_samples(bad)


@pytest.fixture(scope="module")
def fitset() -> T.FitSet:
    s = 1e-6 + np.random.default_rng(3).lognormal(np.log(5e-6), 0.5, 5000)
    return T.fit_tables(s, seed=1)


# n = 20000: at 5000 samples loc's own sampling error reaches 6 % (seed 4 of the first case)
@pytest.mark.parametrize("shape,loc,scale", [(0.5, 2e-6, 4e-6), (1.0, 1e-6, 2e-6)])
@pytest.mark.parametrize("seed", range(4))
def test_fit_recovers_known_parameters(shape: float, loc: float, scale: float, seed: int) -> None:
    """A clean lognormal given in seconds (scipy's own fit in seconds returns
    loc -8 s, shape 3e-7)."""
    x = stats.lognorm.rvs(shape, loc=loc, scale=scale, size=20000, random_state=seed)
    f = T.fit_lognormal(x)
    assert f.shape == pytest.approx(shape, rel=0.05)
    assert f.loc_s == pytest.approx(loc, rel=0.05)
    assert f.scale_s == pytest.approx(scale, rel=0.05)
    assert 0 < f.ks_distance < 0.02 and f.n == x.size


def test_fit_set_keeps_observed_mean(fitset: T.FitSet) -> None:
    assert list(fitset.tables) == ["lognormal.tbl", "constant.tbl", "lognormal-25.tbl",
                                   "lognormal-50.tbl", "lognormal-75.tbl"]
    m = fitset.sample_mean_s
    assert fitset.target_mean_s == m and fitset.match == "observed"
    full = fitset.tables["lognormal.tbl"]
    assert full.params["shape"] == fitset.fit.shape and full.params["scale_s"] == fitset.fit.scale_s
    for name, frac in [("constant.tbl", 0.0), ("lognormal-25.tbl", 0.25), ("lognormal-50.tbl", 0.5),
                       ("lognormal-75.tbl", 0.75), ("lognormal.tbl", 1.0)]:
        t = fitset.tables[name]
        assert abs(t.mean_s() - m) / m < 0.005, name
        assert abs(t.mean_s() - m) < 1e-9, name        # the shift makes it exact to the ns
        assert t.params["variance_fraction"] == frac
        # variance f V: the fitted lognormal's, cut to 4096 strata (a little less than V)
        assert t.sd_s() ** 2 == pytest.approx(frac * full.sd_s() ** 2, rel=0.02, abs=1e-24), name


def test_fit_vary_scale_keeps_mean() -> None:
    s = 1e-6 + np.random.default_rng(4).lognormal(np.log(5e-6), 0.5, 3000)
    fs = T.fit_tables(s, seed=1, vary="scale")
    for name, t in fs.tables.items():
        assert abs(t.mean_s() - fs.sample_mean_s) / fs.sample_mean_s < 0.005, name
    assert fs.tables["lognormal-25.tbl"].params["scale_s"] == pytest.approx(0.25 * fs.fit.scale_s)
    assert fs.tables["lognormal-25.tbl"].sd_s() > fs.tables["lognormal.tbl"].sd_s()  # the literal recipe


def test_fit_match_fitted() -> None:
    s = 1e-6 + np.random.default_rng(5).lognormal(np.log(5e-6), 0.5, 3000)
    fs = T.fit_tables(s, seed=1, match="fitted")
    assert fs.target_mean_s == pytest.approx(fs.fit.mean_s())
    for name, t in fs.tables.items():
        assert abs(t.mean_s() - fs.target_mean_s) < 1e-9, name


DEGENERATE = {
    "normal": (np.random.default_rng(1).normal(10e-6, 1e-6, 5000), "near-normal"),
    "uniform": (np.random.default_rng(1).uniform(1e-6, 2e-6, 5000), "near-normal"),
    "left_skewed": (60e-6 - stats.lognorm.rvs(0.5, scale=4e-6, size=5000, random_state=2), "loc -> -inf"),
    "heavy_tail": (5e-6 + stats.lognorm.rvs(3.0, scale=1e-6, size=100, random_state=3), "times the largest sample"),
    "unbounded": (5e-6 + stats.lognorm.rvs(3.0, scale=1e-6, size=30, random_state=0), "no maximum below"),
    "too_few": (np.array([1e-6, 2e-6, 3e-6] * 3), "at least 20 samples"),
    "two_values": (np.array([1e-6, 2e-6] * 20), "3 distinct"),
}


@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_fit_rejects_degenerate(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x, needle = DEGENERATE[case]
    with pytest.raises(T.FitError, match=needle):
        T.fit_lognormal(x)
    f = tmp_path / "s.txt"
    f.write_text("\n".join(repr(float(v)) for v in x) + "\n")
    assert cli.main(["tables", "fit", str(f), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: fit:" in err and needle in err, err
    assert not (tmp_path / "out").exists()


def test_fit_real_pingpong_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Raw samples of a real ping-pong (latscope-bench --raw): right-skewed, so the fit is interior,
    every table keeps the observed mean, and the fit.json is strict. Under load from other
    processes (the point's own record says so) `tables fit` may instead refuse, in one line, a
    table that cannot keep the mean."""
    out = tmp_path / "pp.jsonl"
    cp = mpirun(2, ["p2p", "--op", "pingpong", "--sizes", "8", "--min-reps", "5000", "--max-reps", "5000",
                    "--budget", "0", "--raw", "-o", str(out)])
    assert cp.returncode == 0, cp.stderr
    x = T.load_samples(out)
    assert x.size == 5000
    f = T.fit_lognormal(x)
    assert x.min() > f.loc_s and 0 < f.ks_distance < 1 and f.shape >= T.SHAPE_MIN
    capsys.readouterr()
    rc = cli.main(["tables", "fit", str(out), "-o", str(tmp_path / "fit")])
    if rc != 0:
        # beside a CPU-bound process (a fresh clone's make test beside a hog) the samples carry the
        # scheduler's slices: a fit of shape 2.23 whose mean is 4 times its median, so keeping the
        # observed mean (5.1 us) put the full-variance table's loc at -8.1 us, its entries clipped
        # at 0, and the table's mean could not come down to the target: tables fit refused it
        # (exit 2, the table named). Allowed only where the samples show such slices (a mean over
        # twice the median; a quiet ping-pong's is within ~20 % of it) or the point says it was
        # measured under load (a hog sharing 2 cores with 2 polling ranks got 0.29 CPU here, under
        # the 0.5 the load flag needs, so the samples' own tail is the first test).
        res = load(out)
        err = capsys.readouterr().err
        slices = float(x.mean()) > 2 * float(np.median(x))
        assert rc == 2 and (slices or under_load(res.points.iloc[0], res.meta) is True), (rc, err, x.mean(),
                                                                                           np.median(x))
        assert err.count("\n") == 1 and "cannot be brought to the target" in err, err
        return
    js = json.loads((tmp_path / "fit" / "fit.json").read_text())
    assert js["schema"] == "latscope.tables-fit/2" and js["fit"]["ks_distance"] == pytest.approx(f.ks_distance)
    for row in js["tables"]:
        assert abs(row["mean_s"] - x.mean()) / x.mean() < 0.005, row


def test_fit_writes_directory(fitset: T.FitSet, tmp_path: Path) -> None:
    paths = fitset.write(tmp_path / "out")
    assert {p.name for p in paths} == set(fitset.tables) | {"fit.json"}
    js = json.loads((tmp_path / "out" / "fit.json").read_text())
    assert js["schema"] == "latscope.tables-fit/2" and len(js["tables"]) == 5
    for p in paths[:-1]:
        T.read_table(p)


def test_netem_export() -> None:
    t = T.make("normal", {"mean": 50e-6, "sd": 5e-6}, seed=1)
    nt = T.to_netem(t)
    assert nt.values.size == 4096 and nt.values.dtype == np.int16
    assert abs(float(nt.values.mean())) < 50 and nt.values.std() == pytest.approx(8192, rel=0.01)
    assert nt.clipped == 0
    lines = nt.text().splitlines()
    assert lines[0].startswith("# ") and sum(not ln.startswith("#") for ln in lines) == 512
    assert T.to_netem(T.make("pareto", {"alpha": 1.5, "scale": 1e-6}, seed=1)).clipped > 0
    with pytest.raises(T.TableError, match="constant"):
        T.to_netem(T.make("constant", {"mean": 1e-6}, seed=1))


def test_golden_byte_for_byte(golden: Path, tmp_path: Path) -> None:
    out = tmp_path / "g.tbl"
    assert cli.main(GOLDEN_ARGS + ["-o", str(out)]) == 0
    assert out.read_bytes() == (golden / "delay_table_lognormal_v1.tbl").read_bytes()
    T.read_table(golden / "delay_table_lognormal_v1.tbl")


def test_cli_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tbl = tmp_path / "a.tbl"
    assert cli.main(["tables", "make", "exponential", "--mean", "3us", "-o", str(tbl)]) == 0
    assert cli.main(["tables", "show", str(tbl), "--plot", str(tmp_path / "a.png")]) == 0
    out = capsys.readouterr().out
    assert "mean 3 us" in out and "p99" in out and (tmp_path / "a.png").stat().st_size > 0
    assert cli.main(["tables", "export", "--netem", str(tbl), "-o", str(tmp_path / "a.dist")]) == 0
    s = tmp_path / "s.txt"
    s.write_text("\n".join(str(x) for x in 1e-6 + np.random.default_rng(1).lognormal(-12, 0.3, 500)))
    assert cli.main(["tables", "fit", str(s), "-o", str(tmp_path / "fit")]) == 0
    assert cli.main(["tables", "make", "empirical", "--samples", str(s), "-o", str(tmp_path / "e.tbl")]) == 0


@pytest.mark.parametrize("argv,needle", [
    (["make", "lognormal", "--mean", "10", "--sd", "5us"], "give a unit"),
    (["make", "weibull", "--mean", "1us"], "constant, uniform"),
    (["make", "uniform", "--mean", "1us"], "takes no --mean"),
    (["make", "uniform", "--low", "3us", "--high", "1us"], "--high"),
    (["make", "lognormal", "--mean", "1us"], "--sd"),
    (["make", "constant", "--mean", "2s"], "1 s cap"),
    (["make", "constant", "--mean", "1us", "--seed", "x"], "--seed 'x'"),
    (["make", "empirical"], "--samples"),
    (["show", "/nonexistent/t.tbl"], "no such file"),
    (["export", "/nonexistent/t.tbl"], "--netem"),
])
def test_cli_bad_input_exits_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tables"] + argv) == 2
    err = capsys.readouterr().err
    assert "error" in err and needle in err, err


def test_cli_bad_table_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "bad.tbl"
    p.write_text(BAD["negative"][0])
    assert cli.main(["tables", "show", str(p)]) == 2
    assert f"{p}:{HEAD + 7}:" in capsys.readouterr().err
