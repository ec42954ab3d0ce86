"""The one extension mechanism (latscope/plugins.py): commands are the
latscope/*_cli.py modules, each a Command, a group's members under their group; report parts are
the latscope/parts modules, each read into a Part, in ORDER."""
from __future__ import annotations

import json
import types

import pytest

from latscope import cli, commands, parts


def test_every_command_module_is_a_command_and_groups_hold_their_members() -> None:
    names = commands.module_names()
    assert "latscope.bench_cli" in names and "latscope.logp_cli" in names
    for n in names:
        assert isinstance(commands.load(n), commands.Command), n
    ap = cli.build_parser()
    reg = ap.get_default("_commands")
    assert reg.owners[("fit", "logp")].__name__ == "latscope.logp_cli"
    assert reg.owners[("fit",)].__name__ == "latscope.fit_cli"   # the group and its own hockney
    assert reg.owners[("results", "export")].__name__ == "latscope.results_export_cli"
    assert reg.find(ap.parse_args(["fit", "hockney", "x.jsonl"])).__name__ == "latscope.fit_cli"
    assert reg.find(ap.parse_args(["fit", "logp", "x.jsonl"])).__name__ == "latscope.logp_cli"
    assert reg.find(ap.parse_args(["results", "summary", "x"])).__name__ == "latscope.results_cli"


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
