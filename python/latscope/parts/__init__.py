"""Parts of the main job and the report, one module per capability (collectives, barriers, ...).

Every module in this package is a part, found as commands are (latscope.plugins.discover) and
read once into a `Part` (load_all()), which characterize.py and report.py use. A part module defines
any of these (what it leaves out is the default):
  demo_steps(quick: bool) -> list[Step]     benchmarks `latscope characterize` runs after p2p (none)
  SECTIONS: list[(title, fn(ReportInput) -> html | None)]   report sections, before "All points" (none)
  after_demo(out: Path, results: list[Results], params: dict) -> None   work on the demo's outputs
  ORDER: int   position among the parts (default 50; lower first): a part whose after_demo
               writes what another reads (e.g. fitted LogP parameters) comes first
A part never edits characterize.py or report.py."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from latscope.plugins import discover

DEFAULT_ORDER = 50
# a report section: its title and fn(ReportInput) -> html, or None when the files hold nothing for it
Section = tuple[str, Callable[[Any], "str | None"]]


@dataclass
class Step:
    """One latscope-bench run of the main job: its results go to <out>/<name>.jsonl."""

    name: str
    args: list[str]          # latscope-bench arguments, the command first ("p2p", "coll", ...)
    np: int | None = None    # ranks; None: the job's default


def _no_steps(quick: bool) -> list[Step]:
    return []


def _nothing_after(out: Path, results: list[Any], params: dict[str, Any]) -> None:
    return None


@dataclass(frozen=True)
class Part:
    """A part as read from its module (defaults for what the module does not define)."""

    name: str
    order: int = DEFAULT_ORDER
    demo_steps: Callable[[bool], list[Step]] = _no_steps
    sections: list[Section] = field(default_factory=list)
    after_demo: Callable[[Path, list[Any], dict[str, Any]], None] = _nothing_after


def read(mod: ModuleType) -> Part:
    """The part a module defines; a member of the wrong kind is an error naming the module."""
    order = getattr(mod, "ORDER", DEFAULT_ORDER)
    steps = getattr(mod, "demo_steps", _no_steps)
    sections = getattr(mod, "SECTIONS", [])
    after = getattr(mod, "after_demo", _nothing_after)
    if not isinstance(order, int) or not callable(steps) or not callable(after) or not isinstance(sections, list):
        raise TypeError(f"{mod.__name__}: a part defines ORDER (int), demo_steps and after_demo (functions), "
                        "SECTIONS (a list of (title, function))")
    return Part(mod.__name__, order, steps, list(sections), after)


def beside_results(inp: Any, name: str) -> list[Path]:
    """The files called `name` in the folders of the report's results files, folder by folder: a
    command's side output (budget.jsonl, load.jsonl) lies next to the results it came with."""
    dirs = sorted({Path(str(r.path)).parent for r in inp.results if r.path is not None})
    return [d / name for d in dirs if (d / name).exists()]


def load_all() -> list[Part]:
    """Every part, in ORDER (then by name)."""
    parts = [read(importlib.import_module(n)) for n in discover(__name__, Path(__file__).parent)]
    return sorted(parts, key=lambda p: (p.order, p.name))
