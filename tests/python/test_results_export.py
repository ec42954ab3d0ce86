"""`latscope results export FILE --csv|--parquet` (docs/results-schema.md "Exporting"): what goes
out reads back as the same table, every value exact (floats included), and a Parquet file carries
the metadata."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import mpirun
from latscope import cli
from latscope.results import load
from latscope.export import LIST_COLUMNS, export_frame
from test_noise_launches import _launch_file


def cells(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain Python values, every missing value (None, NaN, pd.NA) as None."""
    def plain(v: Any) -> Any:
        if isinstance(v, (list, tuple, np.ndarray)):
            return [plain(x) for x in v]
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            return None
        return v.item() if isinstance(v, np.generic) else v
    return [{k: plain(v) for k, v in row.items()} for row in df.to_dict("records")]


def read_csv(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path)
    for col in LIST_COLUMNS:
        if col in df:
            df[col] = [json.loads(v) if isinstance(v, str) else None for v in df[col]]
    return df


def export(capsys: pytest.CaptureFixture[str], src: Path, fmt: str, out: Path) -> None:
    assert cli.main(["results", "export", str(src), f"--{fmt}", "-o", str(out)]) == 0
    assert f"{out}: " in capsys.readouterr().out


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run with raw samples (a list column) and both kinds of nulls (load_others, sd)."""
    out = tmp_path_factory.mktemp("export") / "pp.jsonl"
    cp = mpirun(2, ["p2p", "--sizes", "0,8,1K", "--min-reps", "20", "--max-reps", "20", "--raw", "-o", str(out)])
    assert cp.returncode == 0, cp.stderr
    return out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("which", ["live", "golden_v3", "golden_v1", "launches"])
def test_round_trip(fmt: str, which: str, live: Path, golden: Path, tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:
    src = {"live": lambda: live, "golden_v3": lambda: golden / "results_p2p_v3.jsonl",
           "golden_v1": lambda: golden / "results_p2p_v1.jsonl",
           "launches": lambda: _launch_file(tmp_path / "l.jsonl", [[1.19, 2.0], [1.47, 2.01]], 0.02)}[which]()
    res = load(src)
    out = tmp_path / f"x.{fmt}"
    export(capsys, src, fmt, out)
    back = read_csv(out) if fmt == "csv" else pd.read_parquet(out)
    want = export_frame(res)
    assert list(back.columns) == list(want.columns)
    assert cells(back) == cells(want)
    assert len(back) == len(res.points) > 0
    if which == "live":
        assert back["samples_s"].map(len).tolist() == [20, 20, 20]
        assert cells(back)[0]["samples_s"] == res.samples(0)
    if fmt == "parquet":
        kv = pq.read_schema(out).metadata
        assert json.loads(kv[b"latscope.meta"]) == res.meta
        assert json.loads(kv.get(b"latscope.launches", b"[]")) == res.launches
        if which == "launches":
            assert len(res.launches) == 2 and back["launch"].tolist() == [0, 0, 1, 1]


def test_a_collective_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No group column (all ranks take part): alg and root instead."""
    src = tmp_path / "c.jsonl"
    cp = mpirun(2, ["coll", "--op", "bcast", "--alg", "native,binomial", "--sizes", "8", "--min-reps", "5",
                    "--max-reps", "5", "-o", str(src)])
    assert cp.returncode == 0, cp.stderr
    for fmt in ("csv", "parquet"):
        out = tmp_path / f"c.{fmt}"
        export(capsys, src, fmt, out)
        back = read_csv(out) if fmt == "csv" else pd.read_parquet(out)
        assert "group" not in back and sorted(back["alg"]) == ["binomial", "native"]
        assert cells(back) == cells(export_frame(load(src)))


def test_default_name_and_errors(golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "run.jsonl"
    src.write_text((golden / "results_p2p_v3.jsonl").read_text())
    assert cli.main(["results", "export", str(src), "--parquet"]) == 0
    assert (tmp_path / "run.parquet").exists()
    capsys.readouterr()
    for argv, says in ((["results", "export", str(src), "--csv", "-o", str(src)], "that is the input file"),
                       (["results", "export", str(tmp_path / "none.jsonl"), "--csv"], "no such file")):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err
    with pytest.raises(SystemExit) as e:   # neither format: argparse names both
        cli.main(["results", "export", str(src)])
    assert e.value.code == 2 and "--csv --parquet" in capsys.readouterr().err
