"""Every JSON and JSON Lines file the CLI (and the C programs behind it) writes is strict JSON: no NaN,
Infinity or -Infinity, which jq and most parsers reject. Each output is parsed
with json.loads(..., parse_constant=<raise>)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from latscope import jsonio
from latscope.run import build_dir, launch

from conftest import run_cli

NET = ["--dims", "8x4", "--channel", "1ns"]


def strict(text: str):
    def bad(name: str):
        raise AssertionError(f"{name} in JSON output")
    return json.loads(text, parse_constant=bad)


def strict_file(p: Path) -> None:
    text = p.read_text()
    assert text.strip(), f"{p}: empty"
    if p.suffix == ".jsonl":
        for i, ln in enumerate(text.splitlines(), 1):
            if ln.strip():
                try:
                    strict(ln)
                except (AssertionError, ValueError) as e:
                    raise AssertionError(f"{p}:{i}: {e}") from None
    else:
        try:
            strict(text)
        except (AssertionError, ValueError) as e:
            raise AssertionError(f"{p}: {e}") from None


class Runner:
    def __init__(self, d: Path):
        self.d = d
        self.env = dict(launch(2).env)
        self.env.update({"LATSCOPE_QUICK": "1", "LATSCOPE_BUILD_DIR": str(build_dir()), "MPLBACKEND": "Agg",
                         "PATH": f"{Path(sys.prefix) / 'bin'}:{os.environ.get('PATH', '')}"})
        self.stdout: dict[str, str] = {}

    def __call__(self, *argv: str, name: str | None = None, ok: tuple[int, ...] = (0,)) -> str:
        """In process (conftest.run_cli: latscope.cli.main, in the directory and environment a
        subprocess had): the same code path without an interpreter and its imports per command
        (about 1 s each, 27 commands)."""
        cp = run_cli(argv, env=self.env, cwd=self.d)
        assert cp.returncode in ok, f"latscope {' '.join(argv)}: exit {cp.returncode}\n{cp.stderr[-3000:]}"
        assert "Traceback" not in cp.stderr
        if name:
            self.stdout[name] = cp.stdout
        return cp.stdout

    def mpi(self, np_: int, prog: str, *argv: str, name: str | None = None) -> None:
        ln = launch(np_)
        cp = subprocess.run(ln.prefix + [str(build_dir() / "bin" / prog), *argv], cwd=self.d, env=self.env,
                            capture_output=True, text=True, timeout=300)
        assert cp.returncode == 0, cp.stderr[-3000:]
        if name:
            (self.d / name).write_text(cp.stdout)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Runner:
    d = tmp_path_factory.mktemp("json")
    r = Runner(d)
    # measurements (C writers)
    r("bench", "p2p", "--np", "2", "--sizes", "0,8,1K,64K", "-o", "pp.jsonl", "--raw")
    r("bench", "p2p", "--np", "2", "--op", "bandwidth", "--sizes", "1K,64K", "-o", "bw.jsonl")
    r("bench", "p2p", "--np", "2", "--sizes", "8", "--launches", "2", "-o", "launches.jsonl")   # rewritten by Python
    r("bench", "coll", "--np", "2", "--op", "scatter", "--alg", "native,linear", "--timing", "all",
      "--sizes", "0,1K", "-o", "coll.jsonl")
    r("bench", "coll", "--np", "2", "--op", "barrier", "-o", "barrier.jsonl")
    # 64K too: G is the slope of g(m) from 1 KiB up, and over 1-8 KiB alone a fresh clone beside a
    # CPU hog fitted it negative (the file then holds 0, and model upper-bound rightly refuses F/2G)
    r("bench", "logp", "--np", "2", "--sizes", "0,64,1K,8K,64K", "-o", "logp.jsonl")
    r("bench", "app", "--np", "2", "--pattern", "remap", "--style", "sync", "--dest", "shift", "--messages", "8",
      "--sizes", "8", "-o", "app.jsonl")
    # tune under --timing max: root timing subtracts a measured confirmation time, which under load
    # (a fresh clone beside other work) made every candidate's 8 B median negative, and the tools
    # rightly refused to write a table (exit 2); the JSON written is the subject here, not the method
    r("bench", "tune", "--np", "2", "--op", "scatter", "--sizes", "0,1K", "--timing", "max", "-o", "bench_tune.jsonl",
      "--table", "bench_tune.json")
    r.mpi(2, "latscope-congest", "--load", "0.1", "--size", "1K", "--duration", "0.2s", "--json", "congest.json")
    r.mpi(2, "latscope-congest", "--print-gaps", "50", "--bandwidth", "1G", "--size", "1K", name="gaps.jsonl")
    # analysis (Python writers)
    r("fit", "hockney", "pp.jsonl", "--json", "params.json")
    r("fit", "logp", "logp.jsonl", "--json", "loggp.json", "--plogp-json", "plogp.json")
    r("barrier", "compare", "barrier.jsonl", "--params", "loggp.json", "--json", name="barrier_compare")
    r("tune", "--op", "scatter", "--alg", "native,linear,binomial", "--sizes", "0,8,1K", "--np", "2", "--timing", "max",
      "-o", "tune.json")
    for model, extra in (("p2p", ["--size", "64", "--size", "1KiB"]), ("contention", ["--size", "64"] + NET),
                         ("barrier", ["--np", "8"]), ("collective", ["--np", "8", "--size", "1KiB"]),
                         ("remap", NET), ("dag", ["--n", "64", "--np", "4", "--task", "5us"] + NET),
                         ("upper-bound", NET)):
        r("model", model, "--params", "loggp.json", *extra, "--json", name=f"model_{model}")
    r("model", "upper-bound", "--G", "0.5ns", *NET, "--json", name="model_upper_bound_G_only")
    r("predict", "barrier", "--params", "loggp.json", "--np", "8", "--alg", "all", "--json", name="predict_barrier")
    r("tables", "make", "lognormal", "--mean", "10us", "--sd", "5us", "-o", "ln.tbl")
    samples = d / "samples.txt"   # test_tables.py's sample (a 30-sample ping-pong can fit to a heavy tail)
    x = 1e-6 + np.random.default_rng(3).lognormal(np.log(5e-6), 0.5, 5000)
    samples.write_text("\n".join(f"{v:.9g}" for v in x) + "\n")
    r("tables", "fit", str(samples), "-o", "fit_tables")
    r("inject", "validate", "--table", "ln.tbl", "--np", "2", "--json", "validate.json")
    r("inject", "run", "--table", "ln.tbl", "--seed", "3", "--np", "2", "--log", "inj/", "--",
      str(build_dir() / "bin" / "example-ring"), "--rounds", "50")
    for name, text in r.stdout.items():
        (d / f"{name}.stdout.json").write_text(text)
    return r


EXPECTED = ["pp.jsonl", "bw.jsonl", "launches.jsonl", "coll.jsonl", "barrier.jsonl", "logp.jsonl", "app.jsonl", "bench_tune.jsonl",
            "bench_tune.json",
            "congest.json", "gaps.jsonl", "params.json", "loggp.json", "plogp.json", "tune.json", "fit_tables/fit.json",
            "validate.json", "barrier_compare.stdout.json", "predict_barrier.stdout.json",
            "model_upper_bound_G_only.stdout.json"] + \
    [f"model_{m}.stdout.json" for m in ("p2p", "contention", "barrier", "collective", "remap", "dag", "upper-bound")]


@pytest.mark.parametrize("name", EXPECTED)
def test_output_is_strict_json(outputs, name):
    strict_file(outputs.d / name)


def test_every_json_file_written_is_strict(outputs, characterized):
    """Whatever else the commands wrote (the injector's per-rank logs; characterize's outputs:
    conftest.py's run, shared with test_characterize.py)."""
    found = sorted(p for p in outputs.d.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
    names = {str(p.relative_to(outputs.d)) for p in found}
    assert set(EXPECTED) <= names
    assert any(n.startswith("inj/") for n in names), names
    char = sorted(p for p in characterized[0].rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
    assert any(p.suffix == ".jsonl" for p in char) and any(p.name == "params.json" for p in char), char
    for p in found + char:
        strict_file(p)


def test_sanitize_and_strict_dump():
    doc = {"a": float("nan"), "b": [np.float64("inf"), -math.inf, 1.5], "c": np.int64(3), "d": pd.NA,
           "e": np.array([1.0, np.nan]), "f": (np.bool_(True), None)}
    text = jsonio.dumps(doc)
    assert strict(text) == {"a": None, "b": [None, None, 1.5], "c": 3, "d": None, "e": [1.0, None],
                            "f": [True, None]}
    with pytest.raises(ValueError):
        jsonio.loads_strict('{"x": NaN}')
    # the plain module would have written the invalid tokens
    assert "NaN" in json.dumps({"a": float("nan")})
