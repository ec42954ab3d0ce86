"""`latscope fit logp RESULTS... [--json P.json] [--plogp-json Q.json]`: LogP/LogGP/PLogP (and
Hockney) parameters from `latscope-bench logp` records (latscope.logp). Bad input: exit 2 with a
message naming the value."""
from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from latscope.units import fmt_size, fmt_time, parse_size

if TYPE_CHECKING:   # numpy, pandas, scipy: imported when a fit is made, not to build the parser
    from latscope import logp


GROUP = "fit"   # `latscope fit logp` (latscope/commands.py)


def add_parser(fsub: Any) -> None:
    p = fsub.add_parser("logp", help="LogP/LogGP/PLogP parameters from latscope-bench logp records (+ Hockney)")
    p.add_argument("files", nargs="+", help="results files of latscope-bench logp")
    p.add_argument("--json", help="write the LogGP parameters (latscope.params/1, model loggp; tables in source)")
    p.add_argument("--plogp-json", help="also write the PLogP table (latscope.params/1, model plogp)")
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--large-from", help="G from sizes >= this (default: the upper half of the sizes)")


def _ci(e: logp.Estimate) -> str:
    if not (math.isfinite(e.ci_lo_s) and math.isfinite(e.ci_hi_s)):
        return fmt_time(e.value_s)
    return f"{fmt_time(e.value_s)} [{fmt_time(e.ci_lo_s)}, {fmt_time(e.ci_hi_s)}]"


def _latency(L_s: float) -> str:
    """A row's L = RTT/2 - o_s - o_r: below zero the overheads measured alone exceed the half
    round trip (they overlap in it, e.g. a large send's copy), so L is not resolved at that size."""
    return fmt_time(L_s) if L_s >= 0 else "none (< 0)"


def print_fit(f: logp.LogPFit, out: Any = None) -> None:
    from latscope import logp
    out = out if out is not None else sys.stdout   # looked up at call time (redirected streams)
    print(f"PLogP per size (medians, {100 * f.confidence:g}% CI):", file=out)
    print(f"{'size':>9}  {'o_s':>28}  {'o_r':>28}  {'g':>28}  {'RTT/2':>10}  {'L=RTT/2-o_s-o_r':>16}", file=out)
    for r in f.rows:
        print(f"{fmt_size(r.size_bytes):>9}  {_ci(r.o_s):>28}  {_ci(r.o_r):>28}  {_ci(r.g):>28}  "
              f"{fmt_time(r.rtt.value_s / 2):>10}  {_latency(r.L_s):>16}", file=out)
    if any(r.stream for r in f.rows):
        print(f"streams (per message, back to back): {'size':>9}  {'g_nb (Isend train)':>20}  "
              f"{'g_r (receive train)':>20}  {'RTT (ping-pong train)':>22}", file=out)
        for r in f.rows:
            cell = [fmt_time(r.stream[op].value_s) if op in r.stream else "-" for op in logp.STREAM_OPS]
            print(f"{'':36}{fmt_size(r.size_bytes):>9}  {cell[0]:>20}  {cell[1]:>20}  {cell[2]:>22}", file=out)
    print(file=out)
    print(f"LogGP: L = {fmt_time(f.L_s)}  o_s = {fmt_time(f.o_s_s)}  o_r = {fmt_time(f.o_r_s)}  "
          f"g = {fmt_time(f.g_s)}  G = {f.G_s_per_byte * 1e9:.4g} ns/B "
          f"[{f.G_ci_s_per_byte[0] * 1e9:.4g}, {f.G_ci_s_per_byte[1] * 1e9:.4g}] "
          f"(Theil-Sen over {', '.join(fmt_size(s) for s in f.G_sizes_bytes)}"
          + (f"; rejected {', '.join(fmt_size(s) for s in f.G_rejected_bytes)}" if f.G_rejected_bytes else "") + ")",
          file=out)
    print(f"PLogP: L = RTT(0)/2 - g(0) = {fmt_time(f.plogp_L_s)}", file=out)
    if f.aux:   # beyond LogP, for the barrier loop simulation (source.post_s / source.flag_s)
        what = {"post": "post (MPI_Irecv, nothing to match)", "poll": "poll (MPI_Iprobe + MPI_Recv, arrived)",
                "flag": "flag (shared memory, one way)",
                "mcast": "mcast (MPI_Bcast, one way)", "rtt_loop": "rtt_loop (round trip in the barrier loop)",
                "irecv_wait": "irecv_wait (MPI_Wait, receive posted ahead, arrived)",
                "rtt_poll_any": "rtt_poll_any (round trip, one way polled MPI_ANY_SOURCE on 2 comms)",
                "catch": "catch (send start before a posted receive's wait call, caught half the time)"}
        print("not in LogP: " + "  ".join(f"{what.get(op, op)} = {_ci(e)}" for op, e in f.aux.items()), file=out)
        if f.L_loop_s is not None:
            print(f"in the barrier loop: L = rtt_loop/2 - o_s - o_r = {fmt_time(f.L_loop_s)} (the loop simulation's)",
                  file=out)
    if f.hockney:
        h = f.hockney
        print(f"Hockney (RTT/2 = alpha + beta m): alpha = {fmt_time(h.alpha_s)}  beta = {h.beta_s_per_byte * 1e9:.4g} ns/B",
              file=out)
    for n in f.notes:
        print(f"note: {n}", file=out)


def main(args: argparse.Namespace) -> int:
    from latscope import logp
    from latscope.results import ResultsError
    try:
        large = None
        if args.large_from is not None:
            try:
                large = int(parse_size(args.large_from))
            except ValueError as e:
                raise logp.LogPFitError(f"--large-from {args.large_from!r}: {e}") from None
        if not 0 < args.confidence < 1:
            raise logp.LogPFitError(f"--confidence {args.confidence}: must be in the open interval (0, 1)")
        f, meta = logp.fit_files(args.files, args.confidence, large)
    except (logp.LogPFitError, ResultsError) as e:
        print(f"latscope: error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        from latscope.cli import no_such
        print(f"latscope: error: {no_such(e)}", file=sys.stderr)
        return 2
    print_fit(f)
    if args.json:
        f.write(args.json, meta)
    if args.plogp_json:
        f.write_plogp(args.plogp_json, meta)
    return 0
