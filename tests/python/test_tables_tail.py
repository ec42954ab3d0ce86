"""`tables fit` keeps the tail: a lognormal that loses more than VARIANCE_LOSS_MAX of the sample's
variance is refused (--form lognormal) or replaced by tail-kept empirical tables (--form auto),
whose full table has the sample's mean and sd and whose intermediates span 0-100 % of that
variance at that mean. Synthetic samples with known moments, and a real `study load` level."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from latscope import cli
from latscope import tables as T

LATSCOPE = [sys.executable, "-m", "latscope.cli"]


def _heavy(seed: int, n: int, rate: float, alpha: float) -> np.ndarray:
    """A lognormal body (median 8 us) with rare Pareto outliers of about a millisecond."""
    rng = np.random.default_rng(seed)
    x = rng.lognormal(np.log(8e-6), 0.3, n)
    tail = rng.random(n) < rate
    x[tail] += (rng.pareto(alpha, int(tail.sum())) + 1) * 1e-3
    return x


def _check_set(fs: T.FitSet, x: np.ndarray, full: str) -> None:
    m, v = float(x.mean()), float(x.var(ddof=0))
    fracs = {"constant.tbl": 0.0, full: 1.0}
    stem = full[:-4]
    fracs.update({f"{stem}-{p}.tbl": p / 100 for p in (25, 50, 75)})
    assert set(fs.tables) == set(fracs)
    for name, f in fracs.items():
        t = fs.tables[name]
        assert abs(t.mean_s() - m) <= max(0.005 * m, 1e-9), name
        assert t.sd_s() ** 2 == pytest.approx(f * v, rel=0.10, abs=1e-18), name
    assert fs.tables[full].sd_s() == pytest.approx(np.sqrt(v), rel=0.05)


@pytest.mark.parametrize("seed,n,rate,alpha", [(1, 50000, 0.003, 1.8), (2, 20000, 0.0005, 2.5), (3, 3000, 0.01, 2.2),
                                               (4, 100000, 0.0001, 3.0)])
def test_heavy_tail_switches_to_empirical_keeping_mean_and_sd(seed: int, n: int, rate: float, alpha: float) -> None:
    x = _heavy(seed, n, rate, alpha)
    fs = T.fit_tables(x)
    assert fs.form == "empirical" and fs.variance_lost is not None and fs.variance_lost > T.VARIANCE_LOSS_MAX
    assert fs.switched and "sd" in fs.switched
    _check_set(fs, x, "empirical.tbl")


def test_tail_kept_where_the_strata_lose_it() -> None:
    # 4 outliers of 50 ms in 40000 samples: rarer than one stratum (1/4096), so the stratum means
    # alone lose most of their variance; the spread top strata bring it back
    x = _heavy(5, 40000, 0.0, 2.0)
    x[:4] = 50e-3
    sm = T.stratum_means(x)
    assert sm.mean() == pytest.approx(x.mean(), rel=1e-9) and sm.var() < 0.5 * x.var()
    vals = T.tail_kept(x)
    assert vals.mean() == pytest.approx(x.mean(), rel=1e-9) and vals.std() == pytest.approx(x.std(), rel=0.05)
    assert vals.min() >= 0


def test_a_lognormal_sample_keeps_the_lognormal() -> None:
    x = stats.lognorm.rvs(0.5, loc=2e-6, scale=4e-6, size=5000, random_state=1)
    fs = T.fit_tables(x)
    assert fs.form == "lognormal" and fs.variance_lost is not None and abs(fs.variance_lost) < T.VARIANCE_LOSS_MAX
    _check_set(fs, x, "lognormal.tbl")


def test_form_lognormal_refuses_naming_both_sds(tmp_path: Path) -> None:
    f = tmp_path / "heavy.txt"
    f.write_text("\n".join(repr(float(v)) for v in _heavy(1, 20000, 0.003, 1.8)) + "\n")
    r = subprocess.run(LATSCOPE + ["tables", "fit", str(f), "--form", "lognormal", "-o", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "the lognormal fit's sd" in r.stderr and "against the sample's" in r.stderr
    assert not (tmp_path / "o").exists()
    r = subprocess.run(LATSCOPE + ["tables", "fit", str(f), "--form", "sideways"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "--form 'sideways'" in r.stderr


def test_form_empirical_cli_writes_readable_tables(tmp_path: Path) -> None:
    x = _heavy(2, 20000, 0.003, 2.0)
    f = tmp_path / "s.txt"
    f.write_text("\n".join(repr(float(v)) for v in x) + "\n")
    assert cli.main(["tables", "fit", str(f), "--form", "empirical", "-o", str(tmp_path / "o")]) == 0
    js = json.loads((tmp_path / "o" / "fit.json").read_text())
    assert js["form"] == "empirical" and js["fit"] is None and js["n"] == x.size
    t = T.read_table(tmp_path / "o" / "empirical.tbl")   # the format the injector reads, unchanged
    assert t.sd_s() == pytest.approx(x.std(), rel=0.05) and t.mean_s() == pytest.approx(x.mean(), rel=0.005)


def test_study_load_level(tmp_path: Path) -> None:
    """A real `study load` level: whatever form auto picks, the full table keeps the level's sd
    (to 5 % when empirical; within the allowed variance loss when lognormal) at its mean."""
    out = tmp_path / "sl"
    r = subprocess.run(LATSCOPE + ["study", "load", "--loads", "0,50", "--duration", "0.3s", "--samples", "5000",
                                   "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    x = T.load_samples(out / "pingpong-050.jsonl")
    try:
        fs = T.fit_tables(x)
    except T.FitError:
        fs = T.fit_tables(x, form="empirical")
    full = fs.tables["empirical.tbl" if fs.form == "empirical" else "lognormal.tbl"]
    if fs.form == "empirical":
        _check_set(fs, x, "empirical.tbl")
    else:
        assert full.sd_s() ** 2 >= (1 - T.VARIANCE_LOSS_MAX) * x.var(ddof=1)
    assert abs(full.mean_s() - x.mean()) <= 0.005 * x.mean()
