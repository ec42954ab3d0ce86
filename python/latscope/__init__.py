"""latscope: MPI latency measurement (C) and analysis (Python)."""
from latscope.results import Results, load

__version__ = "0.1.0"
__all__ = ["Results", "load", "__version__"]
