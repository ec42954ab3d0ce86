"""The `latscope` command's extension: a command module.

Every python/latscope/<name>_cli.py is a command module, found by its file name
(latscope.plugins.discover, as report parts are) and imported when the parser is built; it
implements `Command`:

  add_parser(subparsers) -> object    adds its parser(s) to `subparsers`
  main(args) -> int                   runs what was parsed; returns the exit status
  GROUP: str                          optional: "" (the default) for `latscope NAME`; the name of
                                      a group command ("fit", "results") for `latscope GROUP NAME`

A new command is a new module; nothing else is edited. The modules are imported for every
`latscope` run, `--help` and `--version` included, so their top level stays light: pandas,
numpy, scipy, matplotlib and the modules that need them are imported inside `main`
(tests/python/test_cli_startup.py checks; bench/cli_startup.py times it). It imports nothing of
latscope but latscope.plugins (docs/architecture.md, "Python: CLI, analysis, report")."""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from latscope.plugins import discover

SUFFIX = "_cli"


@runtime_checkable
class Command(Protocol):
    """What a command module provides (checked when it is loaded)."""

    def add_parser(self, subparsers: Any) -> object: ...

    def main(self, args: argparse.Namespace) -> int: ...


def module_names() -> list[str]:
    """Every command module, by name, sorted: latscope/*_cli.py."""
    return discover(str(__package__), Path(__file__).parent, SUFFIX)


def check(mod: ModuleType) -> Command:
    """The module as a Command; one without add_parser and main is an error naming it."""
    if not isinstance(mod, Command):
        raise TypeError(f"{mod.__name__}: a command module needs add_parser(subparsers) and main(args) -> int")
    return mod


def load(name: str) -> Command:
    return check(importlib.import_module(name))


def group_of(cmd: Command) -> str:
    group = getattr(cmd, "GROUP", "")
    if not isinstance(group, str):
        raise TypeError(f"{cmd}: GROUP must be a command name (a str), not {group!r}")
    return group


def parse_alone(args: argparse.Namespace | Sequence[str] | None, name: str,
                add_parser: Callable[[Any], object]) -> argparse.Namespace | int:
    """For a module's main(args) called directly (tests, `python -m latscope.NAME_cli`) as well as
    by `latscope`: a namespace is returned as it is; an argv list (None: sys.argv[1:]; it may start
    with the command's name) is parsed by a `latscope` parser holding only this command. A usage
    error or --help gives argparse's exit status (2 or 0) instead."""
    if isinstance(args, argparse.Namespace):
        return args
    argv = list(sys.argv[1:] if args is None else args)
    if argv[:1] == [name]:
        argv = argv[1:]
    top = argparse.ArgumentParser(prog="latscope")
    add_parser(top.add_subparsers(dest="cmd", required=True))
    try:
        return top.parse_args([name, *argv])
    except SystemExit as e:   # argparse: usage errors exit 2, --help exits 0
        return int(e.code or 0)


def _subparsers(p: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            return act
    raise TypeError(f"{p.prog}: not a group command (it has no subcommands)")


@dataclass
class Registry:
    """Which module runs which command: (NAME,) or (GROUP, NAME) -> module; and the `dest` under
    which each group's parser stores its subcommand's name."""

    owners: dict[tuple[str, ...], Command] = field(default_factory=dict)
    group_dest: dict[str, str] = field(default_factory=dict)

    def find(self, args: argparse.Namespace, dest: str = "cmd") -> Command:
        """The module that runs the parsed command (a group's member before the group's own)."""
        name = str(getattr(args, dest))
        if name in self.group_dest:
            sub = (name, str(getattr(args, self.group_dest[name])))
            if sub in self.owners:
                return self.owners[sub]
        return self.owners[(name,)]


def _added(sub: argparse._SubParsersAction[argparse.ArgumentParser], cmd: Command) -> list[str]:
    before = set(sub.choices)
    cmd.add_parser(sub)
    return sorted(set(sub.choices) - before)


def add_all(sub: argparse._SubParsersAction[argparse.ArgumentParser], names: list[str] | None = None) -> Registry:
    """Load every command module and add its parsers: top-level commands first (a group is one of
    them), then the members of groups."""
    cmds = [load(n) for n in (module_names() if names is None else names)]
    reg = Registry()
    for cmd in (c for c in cmds if not group_of(c)):
        for name in _added(sub, cmd):
            reg.owners[(name,)] = cmd
    for cmd in (c for c in cmds if group_of(c)):
        group = group_of(cmd)
        if group not in sub.choices:
            raise TypeError(f"{cmd}: GROUP {group!r} is not a command")
        gsub = _subparsers(sub.choices[group])
        reg.group_dest[group] = gsub.dest
        for name in _added(gsub, cmd):
            reg.owners[(group, name)] = cmd
    return reg
