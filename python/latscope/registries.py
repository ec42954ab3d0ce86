"""The C registries as Python sees them (docs/architecture.md, "One source of truth").

``latscope-bench list --json`` (apps/cmd_list.c, schema ``latscope.registries/1``) writes every
registry from its rows: timers, p2p operations, sync and timing methods, clock synchronisations,
each collective operation with its algorithms and a parametrised row's grammar (``tree:k=3``),
and the decision tables' constants. :func:`load` reads it. Model-only commands (``latscope
predict``, the barrier models) must work without the C build and start fast, so the few facts
they need are kept here once, in :data:`BARRIER_ROWS` and :data:`TUNE`;
tests/python/test_one_source.py checks they equal what the built latscope-bench says, so a row
added in C fails that test until it is added here. Nothing else in Python lists them."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

SCHEMA = "latscope.registries/1"


@dataclass(frozen=True)
class Param:
    """An integer parameter of a row, ``name=V`` after a colon (C: lts_coll_select)."""

    default: int
    min: int
    max: int


@dataclass(frozen=True)
class Row:
    """An algorithm row: its name, whether ``--alg all`` selects it, its parameters."""

    name: str
    all: bool = True
    params: tuple[tuple[str, Param], ...] = ()


_K = (2, 4096)   # C: 2..LTS_BARRIER_K_MAX (algos.h), the tree arity

# the barrier rows in registry order (src/algos/native.c)
BARRIER_ROWS: tuple[Row, ...] = (
    Row("native"), Row("null", all=False), Row("dissemination"), Row("pairwise"),
    Row("tree", params=(("k", Param(4, *_K)),)), Row("tree-bcast", params=(("k", Param(4, *_K)),)),
    Row("tree-shm", params=(("k", Param(4, *_K)),)), Row("tree-2net", params=(("k", Param(3, *_K)),)),
    Row("binomial"), Row("linear"), Row("linear-bcast"), Row("linear-2net"), Row("tournament"), Row("shm"),
)

# the decision tables' constants (include/latscope/tune.h, docs/tune-format.md)
TUNE: dict[str, Any] = {"schema": "latscope.tune/1", "statistic": "median", "boundary_rule": "geometric-midpoint",
                        "max_candidates": 32}


def rows_of(doc: dict[str, Any], op: str) -> tuple[Row, ...]:
    """The algorithm rows of collective ``op`` in a ``latscope.registries/1`` document."""
    for c in doc["collectives"]:
        if c["op"] == op:
            return tuple(Row(a["name"], bool(a["all"]),
                             tuple((k, Param(int(p["default"]), int(p["min"]), int(p["max"])))
                                   for k, p in a["params"].items()))
                         for a in c["algorithms"])
    raise KeyError(f"no collective operation {op!r} in the registries")


@functools.cache
def load() -> dict[str, Any]:
    """``latscope-bench list --json`` of the built programs (one process, no launcher: the list
    needs no communication). Raises latscope.run.LaunchError when latscope-bench is not built,
    RuntimeError when it fails or writes another schema."""
    import json
    import subprocess

    from latscope.run import launch, program

    cp = subprocess.run([str(program("latscope-bench")), "list", "--json"], env=launch(1).env, capture_output=True,
                        text=True, timeout=60)
    if cp.returncode != 0:
        raise RuntimeError(f"latscope-bench list --json failed ({cp.returncode}): {cp.stderr.strip()}")
    doc: dict[str, Any] = json.loads(cp.stdout)
    if doc.get("schema") != SCHEMA:
        raise RuntimeError(f"latscope-bench list --json: schema {doc.get('schema')!r}; this reader knows {SCHEMA!r}")
    return doc
