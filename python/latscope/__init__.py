"""latscope: MPI latency measurement (C) and analysis (Python).

`Results`, `load` and `__version__` are looked up on first use (PEP 562): importing a latscope
module, which imports this package first, loads neither pandas (latscope.results) nor pip's
metadata, so `latscope --help` starts without them (latscope/commands.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from latscope.results import Results, load

    __version__: str

__all__ = ["Results", "load", "__version__"]


def _version() -> str:
    """pip's metadata: pip took it from CMakeLists.txt's project(VERSION) (cmake/pip_metadata.py),
    the one place the version is written; the C programs' LTS_VERSION is generated from the same
    line. Read from the first latscope-*.dist-info on sys.path, where importlib.metadata would
    find it, without importing importlib.metadata (about 30 ms: `latscope --version` is timed by
    bench/cli_startup.py); importlib.metadata where there is no such directory (a zip, an egg)."""
    import sys
    from pathlib import Path
    for entry in sys.path:
        for meta in sorted(Path(entry or ".").glob("latscope-*.dist-info/METADATA")):
            for line in meta.read_text(errors="replace").splitlines():
                if not line:   # the end of the headers
                    break
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("latscope")
    except PackageNotFoundError:   # a source tree that was never installed
        return "unknown"


def __getattr__(name: str) -> Any:
    if name in ("Results", "load"):
        from latscope import results
        return getattr(results, name)
    if name == "__version__":
        v = _version()
        globals()["__version__"] = v   # looked up once
        return v
    raise AttributeError(f"module 'latscope' has no attribute {name!r}")
