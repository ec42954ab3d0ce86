"""`latscope fit`: the group of model fits, and its `hockney` (alpha, beta with CIs); other
modules add theirs with GROUP = "fit", e.g. logp_cli."""
from __future__ import annotations

import argparse
import sys
from typing import Any


def _pair(text: str) -> tuple[int, int]:
    try:
        i, j = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a pair: use I:J, e.g. 0:1") from None
    return (i, j)


def add_parser(subparsers: Any) -> None:
    f = subparsers.add_parser("fit", help="fit models to results")
    fsub = f.add_subparsers(dest="model", required=True)
    fh = fsub.add_parser("hockney", help="alpha, beta with CIs (regression over sizes and two-roundtrip)")
    fh.add_argument("file")
    fh.add_argument("--method", choices=["regression", "two-roundtrip", "both"], default="both")
    fh.add_argument("--pair", type=_pair, help="only this pair I:J")
    fh.add_argument("--confidence", type=float, default=0.95)
    fh.add_argument("--json", help="write the fits as a parameters file")


def main(args: argparse.Namespace) -> int:
    from latscope import fit
    from latscope.results import load
    if not 0 < args.confidence < 1:
        print(f"latscope: error: --confidence {args.confidence}: must be in the open interval (0, 1)", file=sys.stderr)
        return 2
    res = load(args.file)
    fits = []
    skipped: list[tuple[str, fit.FitError]] = []
    # with --method both, a file that serves one method only (characterize's p2p_roundtrip0.jsonl:
    # RTTs with empty replies, two sizes) gets that fit and a note; an error only when neither fits
    for method, how in (("regression", fit.hockney_regression), ("two-roundtrip", fit.hockney_two_roundtrip)):
        if args.method not in (method, "both"):
            continue
        try:
            fits.append(how(res, args.pair, args.confidence))
        except fit.FitError as e:
            if args.method != "both":
                raise
            skipped.append((method, e))
    if not fits:
        raise skipped[0][1]
    for method, why in skipped:
        print(f"latscope: note: {method} skipped: {why}", file=sys.stderr)
    for f in fits:
        print(f"{f.method:14s} alpha = {f.alpha_s * 1e6:.4f} us  [{f.alpha_ci_s[0] * 1e6:.4f}, "
              f"{f.alpha_ci_s[1] * 1e6:.4f}]  beta = {f.beta_s_per_byte * 1e9:.5f} ns/B  "
              f"[{f.beta_ci_s_per_byte[0] * 1e9:.5f}, {f.beta_ci_s_per_byte[1] * 1e9:.5f}]  "
              f"({100 * f.confidence:g}% CI, {f.n_points} points)")
    if args.json:
        fit.write_params(fits, args.json, res.meta)
    return 0
