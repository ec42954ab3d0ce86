"""Parts of the main job and the report, one module per capability (collectives, barriers, ...).

Every module in this package is discovered (sorted by name) and may define:
  demo_steps(quick: bool) -> list[Step]     benchmarks `latscope characterize` runs after p2p
  SECTIONS: list[(title, fn(ReportInput) -> html | None)]   report sections, before "All points"
  after_demo(out: Path, results: list[Results], params: dict) -> None   work on the demo's outputs
  ORDER: int   position among the parts (default 50; lower first): a part whose after_demo
               writes what another reads (e.g. fitted LogP parameters) comes first
A part never edits characterize.py or report.py."""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType


@dataclass
class Step:
    """One latscope-bench run of the main job: its results go to <out>/<name>.jsonl."""

    name: str
    args: list[str]          # latscope-bench arguments, the command first ("p2p", "coll", ...)
    np: int | None = None    # ranks; None: the job's default


def modules() -> list[ModuleType]:
    mods = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)]
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 50), m.__name__))
