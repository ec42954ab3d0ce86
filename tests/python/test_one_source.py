"""Facts that exist in both languages come from one place (docs/architecture.md, "One source of
truth"): the version (CMakeLists.txt's project(VERSION) -> the C LTS_VERSION, pip's metadata ->
latscope.__version__)."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from conftest import mpirun

import latscope
from latscope.run import build_dir

ROOT = Path(__file__).resolve().parents[2]


def cmake_version() -> str:
    m = re.search(r"^project\(latscope\s+VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text(), re.MULTILINE)
    assert m, "CMakeLists.txt has no project(latscope VERSION ...)"
    return m.group(1)


def test_version_one_place() -> None:
    want = cmake_version()
    # pip's metadata provider reads that line (the installed distribution says the same)
    spec = importlib.util.spec_from_file_location("pip_metadata", ROOT / "cmake" / "pip_metadata.py")
    assert spec and spec.loader
    pm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pm)
    assert pm.dynamic_metadata({}, {})["version"] == want
    assert version("latscope") == want == latscope.__version__
    cli = subprocess.run([str(Path(sys.executable).parent / "latscope"), "--version"],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0 and cli.stdout.strip() == f"latscope {want}", cli.stdout + cli.stderr
    cp = mpirun(1, ["--version"])
    assert cp.returncode == 0 and cp.stdout.strip() == f"latscope-bench {want}", cp.stdout + cp.stderr
    # the C header is generated, nowhere written by hand
    assert f'#define LTS_VERSION "{want}"' in (build_dir() / "include" / "latscope" / "version.h").read_text()
    hand = [p for p in (ROOT / "include").rglob("*.h") if "#define LTS_VERSION" in p.read_text()]
    assert hand == []
    assert not re.search(r"^version\s*=", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)


def test_one_time_formatter() -> None:
    """units.fmt_time is the one formatter: the model tables use it with 4 digits."""
    from latscope.model_cli import format_time
    from latscope.units import fmt_time

    assert [fmt_time(x) for x in (0.0, 2.0, 1.5e-3, 1.5e-6, 2.5e-9, 5e-10, None)] == \
        ["0 s", "2 s", "1.5 ms", "1.5 us", "2.5 ns", "500 ps", "-"]
    for x in (0.0, 1.23456e-6, 3e-13, 7.0):
        assert format_time(x) == fmt_time(x, 4)


def test_registries_from_c_equal_python_fallback() -> None:
    """latscope-bench list --json is the registries' one source; the copies Python keeps for
    model-only commands (latscope.registries) must equal it, and models/barrier.py derives its
    rows from them."""
    from latscope import registries
    from latscope.models.barrier import ROW_DEFAULT_K, ROW_NAMES, parse_row

    cp = mpirun(1, ["list", "--json"])
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert doc["schema"] == registries.SCHEMA and doc["version"] == cmake_version()
    for key in ("timers", "p2p_ops", "sync", "timing", "clock_sync"):
        assert doc[key] and all(r["name"] and r["help"] for r in doc[key]), key
    assert [c["op"] for c in doc["collectives"]] == ["barrier", "bcast", "reduce", "allreduce", "scatter", "gather",
                                                     "allgather", "alltoall"]
    assert registries.rows_of(doc, "barrier") == registries.BARRIER_ROWS
    assert {k: doc["tune"][k] for k in registries.TUNE} == registries.TUNE
    assert registries.load() == doc
    # the models' rows are the registry's: every row `all` selects, each tree row at its default k
    assert set(ROW_NAMES) == {r.name for r in registries.BARRIER_ROWS if r.all}
    assert ROW_DEFAULT_K == {a["name"]: a["params"]["k"]["default"] for c in doc["collectives"] if c["op"] == "barrier"
                             for a in c["algorithms"] if "k" in a["params"]}
    assert parse_row("tree:k=4096") == ("tree", 4096)
    # the text listing names every row too
    text = mpirun(1, ["list"]).stdout
    assert all(a["name"] in text for c in doc["collectives"] for a in c["algorithms"])


def test_list_bad_argument() -> None:
    cp = mpirun(1, ["list", "--jsn"])
    assert cp.returncode == 2 and cp.stdout == ""
    assert cp.stderr.strip() == "latscope-bench: error: list: unexpected argument '--jsn'; allowed: --json"


def test_usage_lists_the_rows() -> None:
    """latscope-bench --help takes its option values from the registries' rows (a row added in C
    appears there without editing the text)."""
    doc = json.loads(mpirun(1, ["list", "--json"]).stdout)
    cp = mpirun(1, ["--help"])
    assert cp.returncode == 0
    lines = {ln.split()[0] + " " + ln.split()[1]: ln for ln in cp.stdout.splitlines() if ln.startswith("  --")}

    def names(rows: list[dict[str, str]]) -> list[str]:
        return [r["name"] for r in rows if not r["name"].startswith("null")]

    want = {"--timer NAME": names(doc["timers"]), "--op NAME[,NAME]": names(doc["p2p_ops"]),
            "--sync NAME": names(doc["sync"]), "--timing LIST": names(doc["timing"]),
            "--clock-sync NAME": names(doc["clock_sync"]), "--op NAME": [c["op"] for c in doc["collectives"]]}
    for opt, rows in want.items():
        listed = [w.replace(" (default)", "").strip() for w in lines[opt].split(None, 2)[2].split(":")[-1].split(";")[0]
                  .split(",")]
        assert listed[:len(rows)] == rows, (opt, listed)
