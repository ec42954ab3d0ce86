"""A responsive `latscope`: building the parser of every command, `--help`,
`--version` and `latscope bench` up to its launch import none of pandas, numpy, scipy or
matplotlib (commands import them inside `main`; latscope/commands.py). What is asserted is the
set of imported modules, not a time (bench/cli_startup.py times it)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from latscope import cli

HEAVY = ("numpy", "pandas", "scipy", "matplotlib")

# in a fresh interpreter: run the command as `latscope` would, then print the heavy top-level
# packages that were imported (atexit: after argparse's SystemExit of --help/--version)
PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.__stderr__.write("HEAVY=" + json.dumps(sorted(
    {m.split(".")[0] for m in sys.modules} & set(%r))) + "\\n"))
from latscope import cli
sys.argv = ["latscope"] + %r
sys.exit(cli.main())
"""


def heavy_imports(argv: list[str]) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    cp = subprocess.run([sys.executable, "-c", PROBE % (HEAVY, argv)], capture_output=True, text=True, timeout=120)
    line = [x for x in cp.stderr.splitlines() if x.startswith("HEAVY=")]
    assert line, f"latscope {argv}: no report ({cp.returncode}): {cp.stderr[-2000:]}"
    return json.loads(line[-1][len("HEAVY="):]), cp


def subcommands() -> list[str]:
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(sub.choices)  # type: ignore[attr-defined]


@pytest.mark.parametrize("argv", [["--version"], ["--help"]] + [[c, "--help"] for c in subcommands()],
                         ids=lambda a: " ".join(a))
def test_help_and_version_import_no_heavy_library(argv: list[str]) -> None:
    heavy, cp = heavy_imports(argv)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.strip(), "nothing printed"
    assert heavy == [], f"latscope {' '.join(argv)} imported {heavy}: import them inside the command"


def test_bench_up_to_the_launch_imports_no_heavy_library() -> None:
    # the user's launcher line is `true`: latscope builds the line and starts it, which exits at once
    heavy, cp = heavy_imports(["bench", "p2p", "--launcher", "true"])
    assert cp.returncode == 0, cp.stderr
    assert heavy == []


def test_a_command_that_needs_pandas_still_gets_it() -> None:
    # the probe can see an import: `results summary` reads a file with pandas (here: a missing
    # one, exit 2 after the import), so an empty set above is not an artefact of the probe
    heavy, cp = heavy_imports(["results", "summary", "/nonexistent.jsonl"])
    assert cp.returncode == 2
    assert "pandas" in heavy
