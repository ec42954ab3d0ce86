"""The C registry's barrier rows as the models see them: their names, `--alg all`'s selection,
and the row grammar (``tree:k=3``), as the C selection parses it (lts_coll_select). A leaf of the
models: barrier.py (closed forms) and barrier_sim.py (the loop simulation) both read rows here,
so neither imports the other for them; the options parser (latscope.loop_options) reads the
broadcast releases here without loading the simulation."""
from __future__ import annotations

from latscope.registries import BARRIER_ROWS

from .errors import ModelError

__all__ = ["ROW_NAMES", "ROW_DEFAULT_K", "BCAST_MODELS", "BCAST_CHOICES", "parse_row", "canonical_row", "default_rows"]

# The rows `--alg all` selects, from latscope.registries (the C registry's rows, checked equal to
# `latscope-bench list --json` by tests/python/test_one_source.py), the library's own last: it has
# no model. Parametrised rows take k=K in the range the C selection accepts.
ROW_NAMES: tuple[str, ...] = tuple([r.name for r in BARRIER_ROWS if r.all and r.name != "native"] + ["native"])
_ROW_K = {r.name: p for r in BARRIER_ROWS for name, p in r.params if name == "k"}
ROW_DEFAULT_K = {name: p.default for name, p in _ROW_K.items()}

# How MPI_Bcast releases the *-bcast/*-2net rows: "p2p" = MPICH's binomial tree of messages
# (MPIR_Bcast_intra_binomial; the closed form's assumption); "flag" = a shared-memory release, one
# store seen by every rank after flag_s (MPICH's ch4 POSIX "release_gather" broadcast, its default
# within one node: measured here, the release costs what a message costs only with
# MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM=mpir; see docs/barriers.md); "mcast" = the seed's
# multicast exit (seed 002 §3): one release seen by every rank mcast_s after the root's call, with
# mcast_s the library's own broadcast measured one way on a pair (latscope-bench logp's mcast).
# "auto" (resolve_bcast) picks mcast where that is what the library does, else p2p.
BCAST_MODELS = ("p2p", "flag", "mcast")
BCAST_CHOICES = BCAST_MODELS + ("auto",)


def parse_row(spec: str) -> tuple[str, int | None]:
    """``"tree:k=3"`` -> ``("tree", 3)``; ``"tree"`` -> ``("tree", 4)`` (its default); ``"linear"`` ->
    ``("linear", None)``. Raises :class:`ModelError` for an unknown row or a bad ``k``, as the C
    selection does (k an integer in the row's range, 2 to 4096)."""
    base, _, rest = spec.strip().partition(":")
    if base not in ROW_NAMES:
        raise ModelError(f"barrier row {spec!r}: unknown; valid: {', '.join(ROW_NAMES)} (tree rows take :k=K)")
    if base not in ROW_DEFAULT_K:
        if rest:
            raise ModelError(f"barrier row {spec!r}: {base} takes no parameters")
        return base, None
    k = ROW_DEFAULT_K[base]
    if rest:
        key, _, val = rest.partition("=")
        if key != "k":
            raise ModelError(f"barrier row {spec!r}: unknown parameter {rest!r}; {base} takes k=K")
        lo, hi = _ROW_K[base].min, _ROW_K[base].max
        if not val.isdigit() or not lo <= int(val) <= hi:
            raise ModelError(f"barrier row {spec!r}: k must be an integer from {lo} to {hi} (the tree arity)")
        k = int(val)
    return base, k


def canonical_row(spec: str) -> str:
    """The name the C registry writes in records: ``tree`` -> ``tree:k=4``."""
    base, k = parse_row(spec)
    return base if k is None else f"{base}:k={k}"


def default_rows(k: int | None = None) -> list[str]:
    """Every registry row (tree rows at ``k``, or at their defaults), as `--alg all` selects them."""
    out = []
    for base in ROW_NAMES:
        if base in ROW_DEFAULT_K:
            out.append(f"{base}:k={k if k is not None else ROW_DEFAULT_K[base]}")
        else:
            out.append(base)
    return out
