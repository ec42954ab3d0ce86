"""How latscope finds its report parts: the modules of a package directory whose names end in a
suffix, sorted by name, imported by name (python/latscope/parts/: the Part record). Commands are
not found this way: they are rows of latscope/commands.py's table. Leaf module."""
from __future__ import annotations

import pkgutil
from pathlib import Path


def discover(package: str, path: str | Path, suffix: str = "") -> list[str]:
    """The modules of the package at `path` whose names end in `suffix`, as dotted names, sorted."""
    return sorted(f"{package}.{m.name}" for m in pkgutil.iter_modules([str(path)])
                  if m.name.endswith(suffix) and not m.name.startswith("_"))
