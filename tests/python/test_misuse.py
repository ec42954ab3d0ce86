"""Misuse refused before anything starts: each case is one line naming the value and what is
allowed, exit 2, and no process of the attempt is left running (every process the attempt
started carries a marker in its environment; none may survive it)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from latscope.jobs import status

LATSCOPE = str(Path(sys.executable).with_name("latscope"))
BIN = Path(__file__).resolve().parents[2] / "build" / "bin"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("misuse")
    results = d / "pp.jsonl"
    results.write_text('{"type": "meta", "schema": "latscope.results/3", "ranks": 2, "bench": "p2p"}\n'
                       '{"type": "point", "bench": "p2p", "op": "pingpong", "size_bytes": 8, "n": 10, '
                       '"median_s": 1e-6, "min_s": 1e-6, "mean_s": 1e-6, "max_s": 1e-6}\n')
    binary = d / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    goal = d / "blob.goal"
    goal.write_bytes(bytes(range(256)) * 8)
    text = d / "notjson.txt"
    text.write_text("L = 5us\n")
    table = d / "ln.tbl"
    cp = subprocess.run([LATSCOPE, "tables", "make", "lognormal", "--mean", "10us", "--sd", "5us", "-o", str(table)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    return {"results": results, "binary": binary, "goal": goal, "text": text, "table": table, "dir": d}


def _inject(f: dict[str, Path], *extra: str) -> list[str]:
    return ["inject", "run", "--table", str(f["table"]), "--seed", "1", *extra]


# (id, argv builder, what the line names)
CASES = [
    ("np-beyond-cores", lambda f: ["bench", "p2p", "--np", "1000"], r"--np 1000: more than 4 x the \d+ cores"),
    ("np-beyond-cores-launches", lambda f: ["bench", "p2p", "--np", "1000", "--launches", "2", "-o",
                                            str(f["dir"] / "l.jsonl")], r"add --oversubscribe"),
    ("np-beyond-cores-inject", lambda f: _inject(f, "--np", "1000", "--", str(BIN / "example-ring")),
     r"--np 1000: more than 4 x"),
    ("np-vs-launcher", lambda f: ["bench", "p2p", "--np", "4", "--launcher", "mpiexec -n 2"],
     r"--np 4 and --launcher 'mpiexec -n 2' \(which starts 2 ranks\) disagree"),
    ("timeout-zero", lambda f: ["bench", "p2p", "--timeout", "0"], r"--timeout: '0': must be a positive number"),
    ("timeout-negative", lambda f: ["bench", "p2p", "--timeout=-1"], r"--timeout: '-1': must be a positive number"),
    ("timeout-inject", lambda f: _inject(f, "--np", "2", "--timeout", "0", "--", str(BIN / "example-ring")),
     r"--timeout: '0'"),
    ("timeout-apps", lambda f: ["apps", "run", "cg", "--timeout", "-5"], r"--timeout: '-5'"),
    ("hostfile", lambda f: ["bench", "p2p", "--np", "2", "--hostfile", "/nonexistent"],
     r"--hostfile '/nonexistent': cannot be read \(No such file or directory\)"),
    ("calls", lambda f: _inject(f, "--np", "2", "--calls", "p2p,bogus", "--", str(BIN / "example-ring")),
     r"--calls 'p2p,bogus': unknown call 'bogus' \(valid: p2p, coll, all, send"),
    ("ranks-grammar", lambda f: _inject(f, "--np", "2", "--ranks", "0,x", "--", str(BIN / "example-ring")),
     r"--ranks '0,x': 'x' is not a rank or a range lo-hi"),
    ("ranks-beyond-job", lambda f: _inject(f, "--np", "2", "--ranks", "0-5", "--", str(BIN / "example-ring")),
     r"--ranks '0-5': '0-5' names a rank >= 2"),
    ("no-command", lambda f: _inject(f, "--np", "2", "--"), r"no command: latscope inject run"),
    ("missing-program", lambda f: _inject(f, "--np", "2", "--", "build/bin/no-such-program"),
     r"command 'build/bin/no-such-program': no such program \(from "),
    ("report-output", lambda f: ["report", str(f["results"]), "-o", "/proc/r.html"],
     r"-o '/proc/r.html': cannot be written"),
    ("export-output", lambda f: ["results", "export", str(f["results"]), "--csv", "-o", "/proc/x.csv"],
     r"-o '/proc/x.csv': cannot be written"),
    ("characterize-output", lambda f: ["characterize", "--np", "2", "--out", "/proc/cz"],
     r"--out '/proc/cz': cannot be written"),
    ("report-params-binary", lambda f: ["report", str(f["results"]), "--params", str(f["binary"]), "-o",
                                        str(f["dir"] / "r.html")], r"--params '.*blob.bin': a binary file"),
    ("report-params-text", lambda f: ["report", str(f["results"]), "--params", str(f["text"]), "-o",
                                      str(f["dir"] / "r.html")], r"--params .*notjson.txt: not a JSON parameters file"),
    ("model-params-binary", lambda f: ["model", "p2p", "--params", str(f["binary"])],
     r"params file '.*blob.bin': a binary file"),
    ("goal-binary", lambda f: ["sim", str(f["goal"]), "--L", "1us", "--o", "1us", "--g", "1us", "--G", "0"],
     r"GOAL file '.*blob.goal': a binary file, not a GOAL text schedule"),
]


def _marked() -> list[int]:
    """Processes whose environment carries this module's marker."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if MARK.encode() in (d / "environ").read_bytes():
                    found.append(int(d.name))
            except OSError:
                continue
    return found


MARK = f"LATSCOPE_MISUSE_MARK={uuid.uuid4().hex}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_misuse_refused(case: tuple, files: dict[str, Path]) -> None:
    _, argv, needle = case
    k, v = MARK.split("=", 1)
    env = dict(os.environ, **{k: v})
    env.pop("LATSCOPE_DEBUG", None)
    cp = subprocess.run([LATSCOPE, *argv(files)], env=env, capture_output=True, text=True, timeout=120,
                        cwd=files["dir"])
    assert cp.returncode == status.USAGE, (cp.returncode, cp.stderr)
    err = cp.stderr.strip().splitlines()
    assert err and re.search(needle, err[-1]), cp.stderr
    assert cp.stderr.count("error:") == 1, cp.stderr   # argparse's own usage lines may come before it
    assert "Traceback" not in cp.stderr and "execvp" not in cp.stderr and "MPI_Abort" not in cp.stderr
    assert _marked() == [], "a process of the refused attempt is still running"


def test_exit_table_in_help_and_readme() -> None:
    cp = subprocess.run([LATSCOPE, "--help"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for code, _ in status.TABLE:
        assert re.search(rf"^  {re.escape(code)}\s", cp.stdout, re.M), (code, cp.stdout[-800:])
        assert re.search(rf"^\| {re.escape(code)} \|", readme, re.M), code
