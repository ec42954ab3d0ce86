"""Average message distances on meshes and tori (LoGPC §3.3 and §4).

All distances are in hops.  ``k_d`` in the paper is the average distance *per dimension*;
the functions here return per-dimension values and totals (``n * k_d`` when all dimensions
have the same radix).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from .errors import ModelError, require_int_at_least

__all__ = [
    "dimension_avg_distance",
    "mesh_avg_distance",
    "alewife_2kd",
    "rank_coords",
    "hops",
    "mapping_avg_distance",
    "neighbour_ring_avg_distance",
    "NUMBERINGS",
]

Numbering = Literal["row-major", "column-major", "snake", "morton"]


def dimension_avg_distance(k: int, *, torus: bool = False, bidirectional: bool = True) -> float:
    """Average hop distance along one dimension of radix ``k``, random destinations (self included).

    * mesh (no end-around), bidirectional: ``(k**2 - 1) / (3k)`` — LoGPC §3.3, the per-term form
      of eq. (11);
    * torus, unidirectional: ``(k - 1) / 2`` — LoGPC §4;
    * torus, bidirectional: ``k / 4`` for even ``k``, ``(k**2 - 1) / (4k)`` for odd ``k`` (Agarwal [1]).

    A mesh with unidirectional channels cannot reach nodes "behind" a node, so it raises
    :class:`ModelError`.
    """
    k = require_int_at_least("k (radix of a dimension)", k, 1)
    if not torus:
        if not bidirectional:
            raise ModelError(
                "bidirectional = False with torus = False: a mesh without end-around links needs "
                "bidirectional channels to connect all nodes"
            )
        return (k * k - 1) / (3.0 * k)
    if not bidirectional:
        return (k - 1) / 2.0
    return k / 4.0 if k % 2 == 0 else (k * k - 1) / (4.0 * k)


def mesh_avg_distance(
    dims: Sequence[int], *, torus: bool = False, bidirectional: bool = True
) -> tuple[float, float]:
    """Total average distance ``sum_i k_{d,i}`` and the per-dimension mean ``k_d``.

    For a 2-D mesh this is LoGPC eq. (11): ``2 k_d = ((k_x + k_y) - (1/k_x + 1/k_y)) / 3``.
    Returns ``(total_hops, k_d)`` with ``k_d = total_hops / n``.
    """
    if len(dims) < 1:
        raise ModelError(f"dims = {list(dims)!r}: need at least one dimension")
    total = sum(dimension_avg_distance(k, torus=torus, bidirectional=bidirectional) for k in dims)
    return total, total / len(dims)


def alewife_2kd(k_x: int = 8, k_y: int = 4) -> float:
    """LoGPC eq. (11) literally: ``((k_x + k_y) - (1/k_x + 1/k_y)) / 3`` (3.875 for Alewife's 4x8 mesh)."""
    k_x = require_int_at_least("k_x", k_x, 1)
    k_y = require_int_at_least("k_y", k_y, 1)
    return ((k_x + k_y) - (1.0 / k_x + 1.0 / k_y)) / 3.0


def _morton(p: int, dims: Sequence[int]) -> tuple[int, ...]:
    bits = [int(k - 1).bit_length() for k in dims]
    for k in dims:
        if k & (k - 1):
            raise ModelError(f"dims = {list(dims)!r}: morton numbering needs power-of-two radices")
    coords = [0] * len(dims)
    used = [0] * len(dims)
    bit = 0
    while any(u < b for u, b in zip(used, bits)):
        for i, b in enumerate(bits):  # dimension 0 is the lowest (fastest varying)
            if used[i] < b:
                coords[i] |= ((p >> bit) & 1) << used[i]
                used[i] += 1
                bit += 1
    return tuple(coords)


def rank_coords(p: int, dims: Sequence[int], numbering: Numbering = "row-major") -> tuple[int, ...]:
    """Mesh coordinates of node ``p`` under a named numbering; ``dims[0]`` is the lowest
    (fastest-varying) dimension for row-major, as on Alewife (``dims = (8, 4)``: x = 8 varies first).

    ``column-major`` lets the last dimension vary fastest; ``snake`` is row-major with every odd
    row reversed (boustrophedon, 2-D only); ``morton`` interleaves coordinate bits.
    """
    size = int(math.prod(dims))
    if not 0 <= p < size:
        raise ModelError(f"p = {p}: must be in [0, {size})")
    if numbering == "row-major":
        out = []
        for k in dims:
            out.append(p % k)
            p //= k
        return tuple(out)
    if numbering == "column-major":
        out = []
        for k in reversed(dims):
            out.append(p % k)
            p //= k
        return tuple(reversed(out))
    if numbering == "snake":
        if len(dims) != 2:
            raise ModelError(f"dims = {list(dims)!r}: snake numbering is defined for 2-D meshes only")
        x, y = p % dims[0], p // dims[0]
        return ((dims[0] - 1 - x) if y % 2 else x, y)
    if numbering == "morton":
        return _morton(p, dims)
    raise ModelError(f"numbering = {numbering!r}: must be one of {', '.join(NUMBERINGS)}")


NUMBERINGS: tuple[str, ...] = ("row-major", "column-major", "snake", "morton")


def hops(
    a: Sequence[int], b: Sequence[int], dims: Sequence[int], *, torus: bool | Sequence[bool] = False
) -> int:
    """Minimal-routing hop count between two coordinates (Manhattan; per-dimension wrap if torus)."""
    wrap = [torus] * len(dims) if isinstance(torus, bool) else list(torus)
    total = 0
    for ai, bi, k, w in zip(a, b, dims, wrap):
        d = abs(ai - bi)
        total += min(d, k - d) if w else d
    return total


def mapping_avg_distance(
    mapping: Sequence[Sequence[int]] | Callable[[int], Sequence[int]],
    dims: Sequence[int],
    *,
    torus: bool | Sequence[bool] = False,
    offsets: Sequence[int] = (-1, 1),
    wrap_ranks: bool = True,
) -> float:
    """Average hops of a rank-offset pattern under an explicit rank -> node mapping (LoGPC eq. (12)).

    ``mapping[p]`` (or ``mapping(p)``) gives the mesh coordinates of rank ``p``.  Rank ``p`` sends
    to each ``p + off`` for ``off`` in ``offsets`` with equal probability; with ``wrap_ranks``
    the partner is taken modulo ``P`` (eq. (12)'s ``p - 1``/``p + 1`` for ``p = 0`` and ``P - 1``),
    otherwise partners outside ``[0, P)`` are dropped and the rank averages over the rest.
    Returns ``2 k_dl`` for a 2-D mesh, i.e. the *total* average distance (sum over dimensions).
    """
    P = int(math.prod(dims))
    get = mapping if callable(mapping) else (lambda p: mapping[p])
    if not callable(mapping) and len(mapping) != P:
        raise ModelError(f"len(mapping) = {len(mapping)}: must equal the node count {P}")
    coords = [tuple(get(p)) for p in range(P)]
    if len(set(coords)) != P:
        raise ModelError("mapping: two ranks map to the same node; need a one-to-one mapping")
    total = 0.0
    for p in range(P):
        partners = [(p + o) % P if wrap_ranks else p + o for o in offsets]
        partners = [q for q in partners if 0 <= q < P]
        if not partners:
            continue
        total += sum(hops(coords[p], coords[q], dims, torus=torus) for q in partners) / len(partners)
    return total / P


def neighbour_ring_avg_distance(
    dims: Sequence[int], numbering: Numbering = "row-major", **kw: object
) -> float:
    """``2 k_dl`` of LoGPC eq. (12) (rank ``p`` talks to ``p +- 1``) for a named numbering."""
    return mapping_avg_distance(lambda p: rank_coords(p, dims, numbering), dims, **kw)  # type: ignore[arg-type]
