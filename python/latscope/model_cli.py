"""``latscope model``: evaluate the analytic models from a params file or explicit values.

Wiring (top-level CLI)::

    sub = parser.add_subparsers(dest="command")
    model_cli.add_parser(sub)          # registers "model" with set_defaults(func=model_cli.main)
    args = parser.parse_args(); sys.exit(args.func(args))

``main`` also takes an argv list (``main(["barrier", "--np", "32", ...])``) for in-process use.
Values take units: times ``10us``, ``1.5ms``, ``3ns``, ``2e-6s``; sizes ``64``, ``1KiB``, ``2MB``;
per-byte times ``0.5ns`` (seconds per byte, optionally written ``0.5ns/B``).  A
:class:`~latscope.models.ModelError` (bad value) prints ``latscope model: error: ...`` on stderr
and returns 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from latscope import jsonio
from latscope.models import ModelError
from latscope.model_options import (add_model_value_args, arg_type, command_main, format_time, network_from_args,
                                    params_from_args, parse_per_byte, parse_size, parse_time, run_guarded)

# the option helpers are latscope.model_options'; listed here too, for callers of this module
__all__ = [
    "add_parser",
    "main",
    "parse_time",
    "parse_size",
    "parse_per_byte",
    "add_model_value_args",
    "params_from_args",
    "network_from_args",
    "format_time",
    "run_guarded",
]

PROG = "latscope model"

# ---------------------------------------------------------------------------------------------
# Output


def _print_table(rows: Sequence[Sequence[Any]], header: Sequence[str], out: TextIO) -> None:
    cells = [[str(h) for h in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for j, r in enumerate(cells):
        out.write("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip() + "\n")
        if j == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")


def _emit(args: argparse.Namespace, data: dict[str, Any], rows: Sequence[Sequence[Any]], header: Sequence[str]) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(jsonio.dumps(data, indent=2) + "\n")
    else:
        _print_table(rows, header, sys.stdout)


def _figure() -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _save(fig: Any, ax: Any, path: str, x: str, y: str, title: str) -> None:
    """Every --plot is framed alike: axis labels, title, legend; then written."""
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title)
    ax.legend()
    try:
        fig.tight_layout()
        fig.savefig(path)
    except OSError as e:
        raise ModelError(f"--plot {path!r}: cannot write ({e.strerror})") from None


# ---------------------------------------------------------------------------------------------
# Subcommands


def _cmd_p2p(args: argparse.Namespace) -> int:
    from latscope.models import LogGPParams, logpc_end_to_end_s, p2p_time_s
    params, _ = params_from_args(args)
    sizes = args.size or [0.0]
    rows, out = [], []
    for B in sizes:
        t = p2p_time_s(params, B)
        rec: dict[str, Any] = {"size_bytes": B, "time_s": t}
        row = [f"{B:g}", format_time(t)]
        if isinstance(params, LogGPParams):
            tp = logpc_end_to_end_s(params, B) if B >= 1 else None
            rec["pipelined_time_s"] = tp
            row.append("" if tp is None else format_time(tp))
        rows.append(row)
        out.append(rec)
    header = ["size_bytes", f"{params.kind} time"] + (["LoGPC eq.(2)"] if isinstance(params, LogGPParams) else [])
    _emit(args, {"model": params.kind, "p2p": out}, rows, header)
    return 0


def _cmd_contention(args: argparse.Namespace) -> int:
    from latscope.models import LogGPParams, LogPParams, contention_delay_s, saturation_rate, solve_injection_rate
    params, ps = params_from_args(args)
    net = network_from_args(args, ps)
    B = args.size
    if args.T is not None:
        T = args.T
    elif isinstance(params, (LogPParams, LogGPParams)):
        T = params.o_s_s + params.o_r_s  # asynchronous remap rate, LoGPC §5.1.2
    else:
        raise ModelError("--T: give the contention-free inter-message time (e.g. --T 10us)")
    cc = solve_injection_rate(T, B, net)
    data: dict[str, Any] = {
        "size_bytes": B,
        "T_s": T,
        "n": net.n,
        "k_d": net.kd,
        "m_per_s": 1.0 / T if T > 0 else None,
        "m_c_per_s": cc.m_c_per_s,
        "rho": cc.rho,
        "C_n_s": cc.C_n_s,
        "T_c_s": cc.T_c_s,
        "m_sat_per_s": saturation_rate(B, net),
    }
    rows = [
        ["T (no contention)", format_time(T)],
        ["m_c (eq. 7)", f"{cc.m_c_per_s:.6g} /s"],
        ["rho (eq. 4)", f"{cc.rho:.6g}"],
        ["C_n (eq. 6)", format_time(cc.C_n_s)],
        ["T_c = T + C_n", format_time(cc.T_c_s)],
    ]
    if isinstance(params, (LogPParams, LogGPParams)):
        short = params.o_s_s + params.L_s + cc.C_n_s + params.o_r_s
        data["short_time_s"] = short
        rows.append(["T_s-r short (eq. 8)", format_time(short)])
    if isinstance(params, LogGPParams) and B >= 1:
        long_ = params.o_sl + (B - 1) * params.G_s_per_byte + params.L_long + cc.C_n_s
        data["long_time_s"] = long_
        rows.append(["T_s-r long (eq. 10)", format_time(long_)])
    _emit(args, data, rows, ["quantity", "value"])
    if args.plot:
        import numpy as np

        m_sat = saturation_rate(B, net)
        ms = np.linspace(0.0, 0.95 * m_sat, 200) if math.isfinite(m_sat) else np.linspace(0, 2 * cc.m_c_per_s, 200)
        cn = [contention_delay_s(float(m), B, net) for m in ms]
        fig, ax = _figure()
        ax.plot(ms, np.asarray(cn) * 1e6, label=f"open model, B = {B:g} bytes (eq. 6)")
        ax.plot([cc.m_c_per_s], [cc.C_n_s * 1e6], "o", label="closed solution (eq. 7)")
        _save(fig, ax, args.plot, "injection rate m (messages/s)", "contention delay C_n (us)",
              f"LoGPC contention, n = {net.n}, k_d = {net.kd:g}")
    return 0


def _cmd_barrier(args: argparse.Namespace, time_header: str = "time") -> int:
    """Barrier times for every selected algorithm (also `latscope predict barrier`)."""
    from latscope.models import predict_barrier
    params, _ = params_from_args(args)
    pred = predict_barrier(params, args.np, args.alg, args.k, size_bytes=args.size)
    rows = [[n, format_time(t), "*" if n == pred.best else ""] for n, t in pred.rows()]
    _emit(args, pred.to_dict(), rows, ["algorithm", time_header, "best"])
    return 0


def _cmd_collective(args: argparse.Namespace) -> int:
    from latscope.models import COLLECTIVE_ALGORITHMS, COLLECTIVE_OPS, collective_time_s
    params, _ = params_from_args(args)
    ops = COLLECTIVE_OPS if args.op == "all" else (args.op,)
    algs = COLLECTIVE_ALGORITHMS if args.alg == "all" else (args.alg,)
    rows, out = [], []
    for op in ops:
        for alg in algs:
            t = collective_time_s(params, op, alg, args.np, args.size)
            rows.append([op, alg, format_time(t)])
            out.append({"op": op, "alg": alg, "time_s": t})
    _emit(args, {"P": args.np, "size_bytes": args.size, "collectives": out}, rows, ["op", "alg", "time"])
    return 0


def _cmd_remap(args: argparse.Namespace) -> int:
    from latscope.models import (LogGPParams, LogPParams, remap_async_injection_rate, remap_async_s, remap_long,
                                 remap_sync, solve_injection_rate)
    params, ps = params_from_args(args)
    if not isinstance(params, (LogPParams, LogGPParams)):
        raise ModelError(f"model {params.kind!r}: the remap models need LogP or LogGP parameters")
    Cn = args.Cn
    net = None
    if Cn is None and (args.n is not None or args.dims or (ps is not None and ps.network is not None)):
        net = network_from_args(args, ps)
        # Synchronous remap: one message each way per round trip (LoGPC §5.1.1).
        rt = remap_sync(params, 0.0, args.Cr)
        Cn = solve_injection_rate(rt.lopc_s / 2.0, args.short_size, net).C_n_s
    sync = remap_sync(params, Cn or 0.0, args.Cr)
    asyn = remap_async_s(params)
    data: dict[str, Any] = {
        "sync": dataclasses.asdict(sync),
        "async_per_message_s": asyn,
        "async_injection_rate_per_s": remap_async_injection_rate(params),
    }
    rows = [
        ["sync LogP 2(o_s+L+o_r)", format_time(sync.logp_s)],
        ["sync LoPC +C_r", format_time(sync.lopc_s)],
        ["sync LoGPC +2C_n", format_time(sync.logpc_s)],
        ["  C_n", format_time(sync.C_n_s)],
        ["  C_r", format_time(sync.C_r_s)],
        ["async o_s+o_r", format_time(asyn)],
    ]
    if args.size is not None:
        if not isinstance(params, LogGPParams):
            raise ModelError("--size: long-message remap needs LogGP parameters (G)")
        if net is None and (args.n is not None or args.dims or (ps is not None and ps.network is not None)):
            net = network_from_args(args, ps)
        lr = remap_long(params, args.size, net)
        data["long"] = dataclasses.asdict(lr)
        rows += [
            [f"long B={args.size:g} exact", format_time(lr.exact_s)],
            ["long ~2BG", format_time(lr.approx_s)],
            ["long bound F*B (eq. 13-14)", format_time(lr.bound_s)],
        ]
    _emit(args, data, rows, ["quantity", "value"])
    return 0


def _cmd_dag(args: argparse.Namespace) -> int:
    from latscope.models import DiamondDAG, LogGPParams, LogPParams
    params, ps = params_from_args(args)
    if isinstance(params, LogPParams):
        params = LogGPParams(L_s=params.L_s, o_s_s=params.o_s_s, o_r_s=params.o_r_s, g_s=params.g_s, G_s_per_byte=0.0)
    if not isinstance(params, LogGPParams):
        raise ModelError(f"model {params.kind!r}: the Diamond DAG model needs LogGP parameters")
    dag = DiamondDAG(
        n=args.n_dag,
        P=args.np,
        task_s=args.task,
        params=params,
        aggregation_s_per_value=args.agg,
        bytes_per_value=args.bytes_per_value,
    )
    b_star, b_best = dag.optimal_b()
    bs = [args.b] if args.b is not None else []
    bs.append(b_best)
    net = network_from_args(args, ps) if (args.n is not None or args.dims or (ps and ps.network)) else None
    rows, out = [], []
    for b in dict.fromkeys(bs):
        t = dag.terms(b)
        rec: dict[str, Any] = {"b": b, "B_bytes": t.B_bytes, "makespan_s": t.makespan_s}
        row = [str(b), f"{t.B_bytes:g}", format_time(t.makespan_s)]
        if net is not None:
            Cn, Mc = dag.contention(b, net)
            rec.update({"C_n_s": Cn, "makespan_contention_bound_s": Mc})
            row += [format_time(Cn), format_time(Mc)]
        rows.append(row)
        out.append(rec)
    header = ["b", "B_bytes", "M (eq. 15)"] + (["C_n", "M with contention"] if net is not None else [])
    _emit(args, {"n": args.n_dag, "P": args.np, "b_star": b_star, "b_best": b_best, "rows": out}, rows, header)
    if args.plot:
        import numpy as np

        grid = np.unique(np.round(np.geomspace(1, max(1.0, dag.b_max()), 120)))
        fig, ax = _figure()
        ax.plot(grid, [dag.makespan_s(float(b)) for b in grid], label="eq. (15), no contention")
        if net is not None:
            ax.plot(grid, [dag.contention(float(b), net)[1] for b in grid], label="with contention (bound)")
        ax.axvline(b_star, ls=":", color="gray", label=f"b* = {b_star:.3g}")
        ax.set_xscale("log")
        _save(fig, ax, args.plot, "blocks per stripe b", "makespan M (s)",
              f"Diamond DAG, n = {dag.n}, P = {dag.P}")
    return 0


def _sweep(text: str, flag: str, conv: Any) -> list[Any]:
    try:
        vals = [conv(x) for x in text.split(",") if x.strip()]
    except ValueError:
        vals = []
    if not vals:
        raise ModelError(f"{flag} {text!r}: a comma-separated list of numbers")
    return vals


def _cmd_em3d(args: argparse.Namespace) -> int:
    from latscope.models import LogGPParams, LogPParams, em3d_iteration
    params, _ = params_from_args(args)
    if not isinstance(params, (LogPParams, LogGPParams)):
        raise ModelError(f"model {params.kind!r}: the EM3D model (o_s + o_r per message) needs LogP or LogGP parameters")
    degrees = _sweep(args.degree, "--degree", int)
    fracs = _sweep(args.remote, "--remote", float)
    rows, out = [], []
    for d in degrees:
        for f in fracs:
            it = em3d_iteration(params, args.nodes, d, f, edge_s=args.edge, values_per_message=args.values_per_message)
            share = it.communication_s / it.total_s if it.total_s > 0 else None
            rows.append([str(d), f"{f:g}", str(it.messages), format_time(it.compute_s), format_time(it.communication_s),
                         format_time(it.total_s), "-" if share is None else f"{100 * share:.0f}%"])
            out.append({"degree": d, "remote_fraction": f, "messages": it.messages, "compute_s": it.compute_s,
                        "communication_s": it.communication_s, "total_s": it.total_s, "communication_share": share})
    _emit(args, {"nodes_per_proc": args.nodes, "edge_s": args.edge, "values_per_message": args.values_per_message,
                 "iterations": out}, rows, ["degree", "remote", "messages", "compute", "communication", "total", "comm"])
    return 0


def _cmd_upper_bound(args: argparse.Namespace) -> int:
    # LoGPC eqs. (13)-(14): F = f(network) and T_c/T <= F/2G use only G and the network, so L and o
    # are neither required nor read; G comes from --G, else from the parameters file.
    from latscope.models import LogGPParams, load_params, solve_injection_rate, upper_bound
    ps = load_params(args.params) if getattr(args, "params", None) else None
    G = args.G_s_per_byte
    if G is None and ps is not None:
        if not isinstance(ps.model, LogGPParams):
            raise ModelError(f"{args.params}: model {ps.model.kind!r} has no G; the upper bound (eqs. 13-14) "
                             "needs LogGP's G: give --G (e.g. --G 0.5ns) or a loggp parameters file")
        G = ps.model.G_s_per_byte
    if G is None:
        raise ModelError("the upper bound (eqs. 13-14) needs G: give --G (e.g. --G 0.5ns) or --params with LogGP's G")
    if not G > 0:
        if args.G_s_per_byte is None:
            # a fit writes 0 where its G came out negative (g(m) did not grow with the size)
            raise ModelError(f"{args.params}: G = {G:g} s/byte, and the bound F/2G needs G > 0 (a fit writes 0 "
                             "where g(m) did not grow with the message size: measure larger sizes, or give --G)")
        raise ModelError(f"--G {G:g} s/byte: must be > 0 (the bound is F/2G)")
    net = network_from_args(args, ps)
    ub = upper_bound(G, net)
    data = dataclasses.asdict(ub)
    rows = [
        ["F (eq. 13)", f"{ub.F_s_per_byte:.6g} s/byte"],
        ["T_c/T (eq. 14)", f"{ub.ratio:.6g}"],
    ]
    _emit(args, data, rows, ["quantity", "value"])
    if args.plot:
        import numpy as np

        Bs = np.geomspace(8, 1 << 20, 120)
        ratios = []
        for B in Bs:
            T = args.work + 2.0 * G * float(B)
            ratios.append(solve_injection_rate(T, float(B), net).T_c_s / T)
        fig, ax = _figure()
        ax.plot(Bs, ratios, label=f"closed model, T = {format_time(args.work)} + 2GB")
        ax.axhline(ub.ratio, ls="--", color="gray", label=f"upper bound F/2G = {ub.ratio:.4g}")
        ax.set_xscale("log")
        _save(fig, ax, args.plot, "message size B (bytes)", "T_c / T",
              "LoGPC contention inflation")
    return 0


# ---------------------------------------------------------------------------------------------
# Parser


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``model`` (with its sub-subcommands) on an argparse subparsers object."""
    from latscope.models.collectives import COLLECTIVE_ALGORITHMS, COLLECTIVE_OPS   # the choices; cheap (no barrier models)
    mp: argparse.ArgumentParser = subparsers.add_parser(
        "model",
        help="evaluate analytic cost models (LogP, LogGP, PLogP, Hockney, LoGPC)",
        description="Evaluate analytic communication cost models from a params file or explicit values.",
    )
    sub = mp.add_subparsers(dest="model_cmd", metavar="MODEL")
    sub.required = True

    p = sub.add_parser("p2p", help="point-to-point time per message size (LoGPC eqs. 1-2)")
    add_model_value_args(p)
    p.add_argument("--size", type=arg_type(parse_size), action="append", help="message size (repeatable), e.g. 1KiB")
    _common(p)
    p.set_defaults(model_func=_cmd_p2p)

    p = sub.add_parser("contention", help="network contention C_n, closed injection rate (eqs. 3-10)")
    add_model_value_args(p, network=True)
    p.add_argument("--size", type=arg_type(parse_size), required=True, help="message size B")
    p.add_argument("--T", type=arg_type(parse_time), help="contention-free inter-message time (default o_s + o_r)")
    p.add_argument("--plot", metavar="OUT.png", help="plot C_n vs injection rate")
    _common(p)
    p.set_defaults(model_func=_cmd_contention)

    p = sub.add_parser("barrier", help="predicted time of every barrier algorithm")
    add_model_value_args(p)
    p.add_argument("--np", type=int, required=True, help="number of processes P")
    p.add_argument("--k", type=int, default=4, help="tree arity k (default 4)")
    p.add_argument("--alg", default="all", help="algorithms: all, or a,b,-c")
    p.add_argument("--size", type=arg_type(parse_size), default=0.0, help="barrier message size (default 0)")
    _common(p)
    p.set_defaults(model_func=_cmd_barrier)

    p = sub.add_parser("collective", help="linear/binomial bcast, scatter, gather")
    add_model_value_args(p)
    p.add_argument("--np", type=int, required=True, help="number of processes P")
    p.add_argument("--op", default="all", choices=("all",) + COLLECTIVE_OPS)
    p.add_argument("--alg", default="all", choices=("all",) + COLLECTIVE_ALGORITHMS)
    p.add_argument("--size", type=arg_type(parse_size), default=0.0, help="bytes per process block")
    _common(p)
    p.set_defaults(model_func=_cmd_collective)

    p = sub.add_parser("remap", help="all-to-all remap, synchronous/asynchronous/long (LoGPC §5.1)")
    add_model_value_args(p, network=True)
    p.add_argument("--Cn", type=arg_type(parse_time), help="network contention per message (else from the network)")
    p.add_argument("--Cr", type=arg_type(parse_time), help="resource contention per round trip (default o_s + o_r)")
    p.add_argument("--short-size", type=arg_type(parse_size), default=16.0, help="short message size for C_n (default 16)")
    p.add_argument("--size", type=arg_type(parse_size), help="long-message size B")
    _common(p)
    p.set_defaults(model_func=_cmd_remap)

    p = sub.add_parser("dag", help="Diamond DAG makespan (LoGPC eq. 15) and optimal b")
    add_model_value_args(p, network=True)
    p.add_argument("--n", dest="n_dag", type=int, required=True, help="DAG side n (n x n tasks)")
    p.add_argument("--np", type=int, required=True, help="processors P (>= 2)")
    p.add_argument("--task", type=arg_type(parse_time), required=True, help="time of one task")
    p.add_argument("--b", type=int, help="blocks per stripe to evaluate (the optimum is always shown)")
    p.add_argument("--agg", type=arg_type(parse_time), default=0.0, help="aggregation cost per value sent (alpha)")
    p.add_argument("--bytes-per-value", type=arg_type(parse_size), default=8.0, help="bytes per boundary value")
    p.add_argument("--plot", metavar="OUT.png", help="plot makespan vs b")
    _common(p)
    p.set_defaults(model_func=_cmd_dag)

    p = sub.add_parser("em3d", help="EM3D core phase per iteration (LoGPC §5.3): a sweep over remote fraction "
                                    "and degree")
    add_model_value_args(p, network=False)
    p.add_argument("--nodes", type=int, required=True, help="graph nodes per processor (E and H each)")
    p.add_argument("--degree", default="32", help="edges per node, a list to sweep (default 32)")
    p.add_argument("--remote", default="0,0.25,0.5,0.75,1",
                   help="fraction of edges ending on another processor, a list to sweep (default 0,0.25,0.5,0.75,1)")
    p.add_argument("--edge", type=arg_type(parse_time), required=True, help="time of one edge update")
    p.add_argument("--values-per-message", type=int, default=10, help="values per short message (default 10, the seed's)")
    _common(p)
    p.set_defaults(model_func=_cmd_em3d)

    p = sub.add_parser("upper-bound", help="upper bound on contention inflation T_c/T (eqs. 13-14)")
    add_model_value_args(p, network=True)
    p.add_argument("--work", type=arg_type(parse_time), default=0.0, help="work between messages for the plot (default 0)")
    p.add_argument("--plot", metavar="OUT.png", help="plot T_c/T vs B")
    _common(p)
    p.set_defaults(model_func=_cmd_upper_bound)

    mp.set_defaults(func=main)
    return mp


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``latscope model``; ``args`` is a parsed namespace or an argv list (after ``model``)."""
    return command_main(args, "model", add_parser, "model_func", PROG)
