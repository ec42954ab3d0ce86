"""Summary lines never print ``nan``: an undefined figure says "none" and why."""

from __future__ import annotations

import io

import pandas as pd

from latscope.barrier_cli import print_table


def _rows(noise: str) -> pd.DataFrame:
    return pd.DataFrame([
        {"alg": a, "P": 2, "closed_form_s": 1e-6, "predicted_s": 1.1e-6, "measured_s": 1.0e-6,
         "rel_err": 0.1, "closed_form_rel_err": 0.0, "seed_mean_of_means_s": None, "noise": noise}
        for a in ("linear", "dissemination")
    ])


def test_barrier_table_every_point_flagged_says_none() -> None:
    out = io.StringIO()
    print_table(_rows("load 1.2 CPUs"), out)
    text = out.getvalue()
    assert "nan" not in text.lower()
    assert "none (all 2 modelled points were measured under load or oversubscribed)" in text


def test_barrier_table_clean_points_give_the_figure() -> None:
    out = io.StringIO()
    print_table(_rows(""), out)
    assert "over 2 modelled points: loop simulation (the prediction compared) 10%" in out.getvalue()


def test_inject_validation_without_requested_delay_says_none() -> None:
    from latscope.inject import rel_error_text
    assert rel_error_text(float("nan")) == "relative error none (the table adds no delay at the median)"
    assert rel_error_text(0.0123) == "+1.23 %"
