"""latscope: MPI latency measurement (C) and analysis (Python)."""
from importlib.metadata import PackageNotFoundError, version

from latscope.results import Results, load

try:
    # pip took it from CMakeLists.txt's project(VERSION) (cmake/pip_metadata.py), the one place
    # the version is written; the C programs' LTS_VERSION is generated from the same line
    __version__ = version("latscope")
except PackageNotFoundError:   # a source tree that was never installed
    __version__ = "unknown"
__all__ = ["Results", "load", "__version__"]
