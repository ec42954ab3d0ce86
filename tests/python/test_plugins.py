"""The extension mechanisms: commands are the rows of latscope/commands.py's table, each naming a
module that is a Command, a group's members under their group, and only the command being run
imported; report parts are the latscope/parts modules, each read into a Part, in ORDER."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from latscope import cli, commands, parts


def test_every_row_is_a_command_and_groups_hold_their_members() -> None:
    mods = {r.module for r in commands.ROWS}
    assert "latscope.bench_cli" in mods and "latscope.logp_cli" in mods
    for m in mods:
        assert isinstance(commands.load(m), commands.Command), m
    ap = cli.build_parser()
    reg = ap.get_default("_commands")
    assert reg.owners[("fit", "logp")].__name__ == "latscope.logp_cli"
    assert reg.owners[("fit",)].__name__ == "latscope.fit_cli"   # the group and its own hockney
    assert reg.owners[("results", "export")].__name__ == "latscope.results_export_cli"
    assert reg.find(ap.parse_args(["fit", "hockney", "x.jsonl"])).__name__ == "latscope.fit_cli"
    assert reg.find(ap.parse_args(["fit", "logp", "x.jsonl"])).__name__ == "latscope.logp_cli"
    assert reg.find(ap.parse_args(["results", "summary", "x"])).__name__ == "latscope.results_cli"


def test_the_table_is_true_to_its_modules() -> None:
    """Each top-level row's help line is the one its module gives its parser (what `latscope
    --help` shows without importing it), each row's name is what its module adds, and every
    command module of the package has a row."""
    for row in commands.ROWS:
        sub = argparse.ArgumentParser().add_subparsers()
        if row.group:
            group = next(r for r in commands.ROWS if r.name == row.group and not r.group)
            commands.load(group.module).add_parser(sub)
            sub = commands._subparsers(sub.choices[row.group])
        before = set(sub.choices)
        commands.load(row.module).add_parser(sub)
        added = set(sub.choices) - before
        assert row.name in added, (row, added)
        if not row.group:
            shown = {a.dest: a.help for a in sub._choices_actions}
            assert shown[row.name] == row.help, row
    pkg = Path(commands.__file__).parent
    modules = {f"latscope.{p.stem}" for p in pkg.glob("*_cli.py")}
    assert modules == {r.module for r in commands.ROWS}


def test_only_the_command_run_is_imported() -> None:
    probe = ("import sys; from latscope import cli, commands; sys.argv = ['latscope'] + sys.argv[1:]\n"
             "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(r.name for r in commands.ROWS if r.module in sys.modules), file=sys.stderr)")
    for argv, want in ((["--help"], "[]"), (["fit", "--help"], "['fit', 'logp']"), (["tables", "--help"], "['tables']")):
        cp = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=60)
        assert cp.stderr.strip().splitlines()[-1] == want, (argv, cp.stderr)


def test_parts_are_read_in_order_with_defaults_for_what_a_module_leaves_out() -> None:
    got = parts.load_all()
    names = [p.name for p in got]
    assert "latscope.parts.barrier" in names and "latscope.parts.tune" in names
    assert [p.order for p in got] == sorted(p.order for p in got)
    # the barrier part writes params_logp.json, which the apps part reads after the demo
    assert names.index("latscope.parts.barrier") < names.index("latscope.parts.apps")
    assert all(callable(p.demo_steps) and callable(p.after_demo) for p in got)
    bare = parts.read(types.ModuleType("latscope.parts.example"))
    assert (bare.order, bare.demo_steps(True), bare.sections) == (parts.DEFAULT_ORDER, [], [])


def test_a_module_of_the_wrong_shape_is_named() -> None:
    bad = types.ModuleType("latscope.parts.bad")
    bad.ORDER = "first"  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="latscope.parts.bad"):
        parts.read(bad)
    with pytest.raises(TypeError, match="latscope.nothing_cli: .*add_parser"):
        commands.check(types.ModuleType("latscope.nothing_cli"))


def test_a_commands_own_words_after_dashes_reach_it(tmp_path) -> None:
    # `latscope barrier bench ... -- OPTIONS`: its positional `extra` goes to latscope-bench; what
    # cli.py itself leaves over (only `latscope bench` takes that) must not replace it
    out = tmp_path / "b.jsonl"
    rc = cli.main(["barrier", "bench", "--np", "1", "--reps", "1", "--alg", "linear", "-o", str(out), "--", "--seed", "7"])
    assert rc == 0
    meta = json.loads(out.read_text().splitlines()[0])
    assert meta["seed"] == 7 and meta["command_line"][-2:] == ["--seed", "7"]
