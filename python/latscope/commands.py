"""The `latscope` command's table: one row per command (ROWS), naming the module that implements
it; only the module of the command being run is imported (`latscope --help` imports none).

A command module implements `Command`:

  add_parser(subparsers) -> object    adds its parser(s) to `subparsers`
  main(args) -> int                   runs what was parsed; returns the exit status

A new command is a new module and one row here (tests/python/test_plugins.py checks that every
row's module implements it, that the row's help is the module's own, and that no command module
lacks a row). A row with a `group` is a member of a group command (`latscope fit logp`). The
modules' top level stays light all the same: pandas, numpy, scipy, matplotlib and the modules
that need them are imported inside `main` (tests/python/test_cli_startup.py checks;
bench/cli_startup.py times it). It imports nothing of latscope (docs/architecture.md,
"Python: CLI, analysis, report")."""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Row:
    """One command: its word, the module that implements it, the line `latscope --help` shows
    (top-level rows), and the group command it belongs to ("" for `latscope NAME`)."""

    name: str
    module: str
    help: str = ""
    group: str = ""


ROWS: tuple[Row, ...] = (
    Row("barrier", "latscope.barrier_cli", "the seed's barrier benchmark; measured vs predicted barrier times"),
    Row("bench", "latscope.bench_cli", "run a benchmark under MPI (options after the kind go to latscope-bench)"),
    Row("budget", "latscope.budget_cli",
        "latency budget: same-clock ping-pong ladder, components by difference, what-if"),
    Row("characterize", "latscope.characterize_cli", "the main job: p2p sweep, Hockney fit, report.html"),
    Row("clean", "latscope.clean_cli", "list and remove what dead MPI launches left (processes, /dev/shm segments)"),
    Row("cluster", "latscope.cluster_cli",
        "make, remove or show the emulated Ethernet cluster (network namespaces and bridges)"),
    Row("coll", "latscope.coll_cli", "collectives measured against their LogGP/PLogP predictions"),
    Row("compare", "latscope.compare_cli", "compare runs point by point (ratio of medians with a CI, a verdict)"),
    Row("fit", "latscope.fit_cli", "fit models to results"),
    Row("logp", "latscope.logp_cli", group="fit"),
    Row("inject", "latscope.inject_cli", "run an MPI command under the latency injector; validate it"),
    Row("apps", "latscope.miniapps_cli", "the mini-app suite (CG, IS, EP, ...): list, run"),
    Row("model", "latscope.model_cli", "evaluate analytic cost models (LogP, LogGP, PLogP, Hockney, LoGPC)"),
    Row("net", "latscope.net_cli",
        "barriers on a UDP messaging layer across an emulated Ethernet cluster (seed 002)"),
    Row("predict", "latscope.predict_cli", "predict operation times from model parameters"),
    Row("report", "latscope.report_cli", "build report.html from results files"),
    Row("results", "latscope.results_cli", "inspect results files"),
    Row("export", "latscope.results_export_cli", group="results"),
    Row("sim", "latscope.sim_cli",
        "LogGOPS simulation of a schedule (generated algorithm or GOAL file), delay tables, any P"),
    Row("sim-sweep", "latscope.sim_sweep_cli",
        "LogGOPS simulation of algorithms over P, with and without a delay table: results for latscope report"),
    Row("study", "latscope.study_cli", "the latency-variation study (seed 004): load characterisation, ..."),
    Row("tables", "latscope.tables_cli", "delay tables for the injector and simulator: make, fit, show, export"),
    Row("trace", "latscope.trace_cli",
        "record an MPI run's calls (PMPI) and convert them to a GOAL schedule for latscope sim"),
    Row("tune", "latscope.tune_cli", "size -> algorithm decision table for a collective (latscope.tune/1)"),
)
EVERY = "*"   # add_all(sub, EVERY): every module loaded (shell completion, tests)


@runtime_checkable
class Command(Protocol):
    """What a command module provides (checked when it is loaded)."""

    def add_parser(self, subparsers: Any) -> object: ...

    def main(self, args: argparse.Namespace) -> int: ...


def check(mod: ModuleType) -> Command:
    """The module as a Command; one without add_parser and main is an error naming it."""
    if not isinstance(mod, Command):
        raise TypeError(f"{mod.__name__}: a command module needs add_parser(subparsers) and main(args) -> int")
    return mod


def load(name: str) -> Command:
    return check(importlib.import_module(name))


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


def add_all(sub: argparse._SubParsersAction[argparse.ArgumentParser], wanted: str | None = EVERY) -> Registry:
    """Add the top-level commands: `wanted`'s module loaded and its parser (and its group's
    members) added, every other command as its name and help line only; EVERY: all loaded."""
    reg = Registry()
    for row in (r for r in ROWS if not r.group):
        if wanted not in (EVERY, row.name):
            sub.add_parser(row.name, help=row.help)
            continue
        cmd = load(row.module)
        for name in _added(sub, cmd):
            reg.owners[(name,)] = cmd
        members = [r for r in ROWS if r.group == row.name]
        if members:
            gsub = _subparsers(sub.choices[row.name])
            reg.group_dest[row.name] = gsub.dest
            for m in members:
                mcmd = load(m.module)
                for name in _added(gsub, mcmd):
                    reg.owners[(row.name, name)] = mcmd
    return reg


def wanted_command(argv: Sequence[str]) -> str | None:
    """The command argv runs (its first word that is not an option), None for `--help`/`--version`."""
    names = {r.name for r in ROWS if not r.group}
    for w in argv:
        if w == "--":
            return None
        if not w.startswith("-"):
            return w if w in names else None
    return None
