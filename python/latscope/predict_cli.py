"""``latscope predict``: model predictions meant to sit next to measurements.

``latscope predict barrier --params P.json --np 32 --alg all [--k 4]`` prints the predicted time
of every barrier algorithm (:func:`latscope.models.predict_barrier`) and marks the best. For the
registry rows a second column gives the seed benchmark loop's steady-state value
(:func:`latscope.models.barrier.row_loop_time_s`: LogP simulation of the row's schedule through
``{t0; barrier; t1; dummy work}``), which is what `latscope barrier bench` measures; the closed
form (one barrier entered by every rank at once, seed 002 §5.1.2) stays the first column and
decides the best row.
Wiring is the same as :mod:`latscope.model_cli`: ``add_parser(subparsers)`` registers
``predict`` with ``set_defaults(func=main)``; ``main`` also takes an argv list.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from latscope import jsonio
from latscope import model_cli
from latscope.model_options import add_model_value_args, arg_type, format_time, params_from_args, parse_size, command_main
from latscope.loop_options import add_loop_options, loop_options, seconds_option

if TYPE_CHECKING:   # the models are imported by the command that evaluates them, not to build the parser
    from latscope.models import BarrierPrediction, ModelParams

__all__ = ["add_parser", "main", "predict_barrier"]

PROG = "latscope predict"


def predict_barrier(
    params: ModelParams, np: int, algs: str | Sequence[str] | None = "all", k: int = 4, *, size_bytes: float = 0
) -> BarrierPrediction:
    """Predicted time of each barrier algorithm in ``algs`` on ``np`` processes, and the best.

    Same as :func:`latscope.models.predict_barrier` (one implementation, re-exported here for the
    ``predict`` command and for callers comparing predictions with measurements).
    """
    from latscope.models import predict_barrier as _predict
    return _predict(params, np, algs, k, size_bytes=size_bytes)


def split_alg_spec(spec: str, k: int) -> tuple[str | None, list[str]]:
    """``--alg`` may name the seed-model algorithms (``binary-tree``, ``kary-tree`` ...) and the C
    registry's rows (``tree:k=3``, ``pairwise`` ...): returns (the seed-model spec or None, the
    canonical registry rows). ``all`` selects both, the tree rows at ``k``."""
    from latscope.models import ModelError
    from latscope.models.barrier import ROW_NAMES, barrier_names, canonical_row, default_rows
    items = [x.strip() for x in spec.split(",") if x.strip()]
    model_items: list[str] = []
    rows: list[str] = []
    dropped: set[str] = set()
    models = set(barrier_names(True))
    for it in items:
        neg = it.startswith("-")
        name = it[1:] if neg else it
        base = name.partition(":")[0]
        if name == "all" or name in models:
            model_items.append(it)
            if name in ROW_NAMES:   # dissemination, binomial, linear ...: a row of the same name too
                if neg:
                    dropped.add(name)
                elif name not in rows:
                    rows.append(name)
            if name == "all":
                if neg:
                    rows.clear()
                else:
                    rows += [r for r in default_rows(k) if r not in rows]
        elif base in ROW_NAMES:
            if neg:
                dropped.add(canonical_row(name) if ":" in name else base)
            else:
                c = canonical_row(name)
                if c not in rows:
                    rows.append(c)
        else:
            raise ModelError(f"barrier algorithm {name!r}: unknown; valid: all, {', '.join(barrier_names(True))}, "
                             f"and the registry rows {', '.join(ROW_NAMES)} (tree rows take :k=K)")
    rows = [r for r in rows if r not in dropped and r.partition(":")[0] not in dropped]
    pos = [m for m in model_items if not m.startswith("-")]
    return (",".join(model_items) if pos else None), rows


def _cmd_barrier(args: argparse.Namespace) -> int:
    """Predicted times of the registry rows (what latscope-bench measures) and of the seed's
    model algorithms, the best of each, and the seed-002 crossover condition (§5.1.2)."""
    from latscope.models import ModelError
    from latscope.models.barrier import kary_vs_dissemination, row_loop_time_s, row_time_s
    from latscope.models.barrier_sim import loop_latency_s
    params, ps = params_from_args(args)
    model_spec, rows = split_alg_spec(args.alg, args.k)
    pred = predict_barrier(params, args.np, model_spec, args.k, size_bytes=args.size) if model_spec else None
    row_t = {r: row_time_s(params, args.np, r, size_bytes=args.size) for r in rows}
    # the loop simulation takes the fit's raw L (source.L_raw_s) unless --L was given explicitly
    L_raw = loop_latency_s(ps.source) if ps is not None and getattr(args, "L_s", None) is None else None
    dummy = _dummy_work(args)
    lo = loop_options(args, ps.source if ps is not None else None)   # --post/--flag, else the file's
    post, flag = lo.post_s, lo.flag_s
    row_loop = {r: row_loop_time_s(params, args.np, r, dummy_s=dummy, L_raw_s=L_raw, post_s=post, flag_s=flag,
                                   bcast=lo.bcast, mcast_s=lo.mcast_s, size_bytes=args.size, poll_s=lo.poll_s,
                                   L_poll_s=lo.L_poll_s, wait_s=lo.wait_s, irecv_wait_s=lo.irecv_wait_s,
                                   L_poll_any_s=lo.L_poll_any_s, catch_s=lo.catch_s)
                for r in rows}
    if pred is None and not row_t:
        raise ModelError(f"algs = {args.alg!r}: excludes every algorithm")
    known = {r: t for r, t in row_t.items() if t is not None}
    best_row = min(known, key=lambda r: (known[r], rows.index(r))) if known else None
    cx = kary_vs_dissemination(params, args.np, args.k)
    cross = {"P": cx.P, "k": cx.k, "condition": cx.condition, "holds": cx.holds, "kary_time_s": cx.kary_time_s,
             "dissemination_time_s": cx.dissemination_time_s}
    if args.json:
        data: dict[str, Any] = pred.to_dict() if pred else {"P": args.np, "k": args.k}
        data["rows"] = [{"alg": r, "time_s": t, "loop_time_s": row_loop[r]} for r, t in row_t.items()]
        data["loop"] = {"dummy_work_s": dummy, "post_s": post, "flag_s": flag, "mcast_s": lo.mcast_s,
                        "poll_s": lo.poll_s, "L_poll_s": lo.L_poll_s, "wait_s": lo.wait_s,
                        "irecv_wait_s": lo.irecv_wait_s, "L_poll_any_s": lo.L_poll_any_s, "catch_s": lo.catch_s,
                        "L_raw_s": L_raw,
                        "bcast": lo.bcast}
        data["best_row"] = best_row
        data["crossover"] = cross
        sys.stdout.write(jsonio.dumps(data, indent=2) + "\n")
        return 0
    pt = pred.point if pred else None
    print(f"P = {args.np}, k = {args.k}" + (f", o_s = {format_time(pt.o_s_s)}, L = {format_time(pt.L_s)}, "
                                             f"o_r = {format_time(pt.o_r_s)}" if pt else ""))
    if row_t:
        print(f"\nregistry rows (latscope-bench coll --op barrier --alg ROW; MPI_Bcast release: {lo.bcast}):")
        print(f"  closed form = one barrier, simultaneous entry (seed 002 §5.1.2; * = best); loop = steady state of "
              f"{{t0; barrier; t1; {format_time(dummy)} work}} (LogP simulation: what the benchmark measures)")
        w = max(len(r) for r in row_t)
        for r, t in sorted(row_t.items(), key=lambda kv: (kv[1] is None, kv[1] or 0.0)):
            lt = row_loop[r]
            print(f"  {r:<{w}}  {'(no model)' if t is None else format_time(t):>10}  "
                  f"{'' if lt is None else 'loop ' + format_time(lt):>15}  {'*' if r == best_row else ''}")
    if pred:
        print("\nseed 002 model (release by multicast = one hop):")
        w = max(len(n) for n in pred.times_s)
        for n, t in pred.rows():
            print(f"  {n:<{w}}  {format_time(t):>10}  {'*' if n == pred.best else ''}")
    print(f"\ncrossover (seed 002 §5.1.2): a {args.k}-ary tree with a one-hop release beats dissemination at "
          f"P = {args.np} iff {cx.condition} -> {'true' if cx.holds else 'false'} "
          f"({format_time(cx.kary_time_s)} vs {format_time(cx.dissemination_time_s)})")
    return 0


def _dummy_work(args: argparse.Namespace) -> float:
    """The loop simulation's dummy work, in seconds."""
    return seconds_option("--dummy-work", getattr(args, "dummy_work", "30us")) or 0.0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``predict`` (sub-subcommand ``barrier``) on an argparse subparsers object."""
    pp: argparse.ArgumentParser = subparsers.add_parser("predict", help="predict operation times from model parameters")
    sub = pp.add_subparsers(dest="predict_cmd", metavar="WHAT")
    sub.required = True
    p = sub.add_parser("barrier", help="predicted time of each barrier algorithm, and the best")
    add_model_value_args(p)
    p.add_argument("--np", type=int, required=True, help="number of processes P")
    p.add_argument("--alg", default="all", help="algorithms: all, or a,b,-c; the registry rows (tree:k=3, "
                   "pairwise, ...) and the seed-model names (binary-tree, kary-tree, ...)")
    p.add_argument("--k", type=int, default=4, help="tree arity k (default 4)")
    p.add_argument("--size", type=arg_type(parse_size), default=0.0, help="barrier message size (default 0)")
    p.add_argument("--dummy-work", default="30us", help="the benchmark loop's dummy work, for the loop column "
                   "(default 30us, seed 002 §4.3)")
    # the hosts are unknown here: the default stays the closed form's broadcast of messages
    add_loop_options(p, "the loop column", "p2p")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(predict_func=_cmd_barrier)
    pp.set_defaults(func=main)
    return pp


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``latscope predict``; ``args`` is a parsed namespace or an argv list (after ``predict``)."""
    return command_main(args, "predict", add_parser, "predict_func", PROG)
