"""How latscope finds its extensions, the one way for both kinds: the modules of a package
directory whose names end in a suffix, sorted by name, imported by name. A command is a module
python/latscope/<name>_cli.py (latscope.commands: the Command protocol); a report part is a
module in python/latscope/parts/ (latscope.parts: the Part record). Adding either is adding one
file (docs/architecture.md, "Python: CLI, analysis, report"). Leaf module."""
from __future__ import annotations

import pkgutil
from pathlib import Path


def discover(package: str, path: str | Path, suffix: str = "") -> list[str]:
    """The modules of the package at `path` whose names end in `suffix`, as dotted names, sorted."""
    return sorted(f"{package}.{m.name}" for m in pkgutil.iter_modules([str(path)])
                  if m.name.endswith(suffix) and not m.name.startswith("_"))
