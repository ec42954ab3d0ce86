"""`latscope compare BASELINE RUN [RUN ...]`: each run against the baseline, point by point: both
medians, the ratio run/baseline with a two-sample CI, a verdict, and what differs in the metadata
(latscope.compare; docs/compare.md)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(subparsers: Any) -> None:
    c = subparsers.add_parser(
        "compare", help="compare runs point by point (ratio of medians with a CI, a verdict)",
        description="Each RUN against BASELINE, for every point both files hold: the two medians, the ratio "
                    "run/baseline with a confidence interval (Welch's t on log launch medians when both files "
                    "have several launches; else a bootstrap of the ratio of medians from raw samples (--raw); "
                    "else the points' own CIs combined), the verdict (faster / slower / no difference at "
                    "--confidence) and what differs in the metadata (MPI, hosts, timer, sync, load).")
    c.add_argument("baseline", help="the baseline results file")
    c.add_argument("runs", nargs="+", help="results files compared with the baseline")
    c.add_argument("--confidence", type=float, default=0.95, help="confidence level of the ratio's CI (default 0.95)")
    c.add_argument("--json", action="store_true", help="print the comparisons as JSON instead of tables")
    c.add_argument("--plot", metavar="FILE.png", help="draw the ratio against message size into this PNG")


def print_comparison(cmp: Any, out: Any = None) -> None:
    """The table of one comparison, its metadata differences and its counts."""
    import pandas as pd

    from latscope.compare import point_name
    from latscope.text import fmt_median
    from latscope.units import fmt_size
    out = out or sys.stdout
    print(f"# {cmp.run} against baseline {cmp.baseline} (ratio = run / baseline; "
          f"{cmp.confidence:.0%} CI)", file=out)
    for what, a, b in cmp.meta_diffs:
        print(f"#   differs: {what}: {a} (baseline) vs {b}", file=out)
    if not cmp.meta_diffs:
        print("#   metadata: same MPI, hosts, timer, sync and load", file=out)
    rows = []
    for p in cmp.points:
        rows.append({
            "point": point_name(p.key), "size": fmt_size(p.size_bytes),
            "baseline": fmt_median(p.baseline_median_s), "run": fmt_median(p.median_s),
            "ratio": "n/a" if p.ratio is None else f"{p.ratio:.3f}",
            "CI": "n/a" if p.ratio_ci is None else f"[{p.ratio_ci[0]:.3f}, {p.ratio_ci[1]:.3f}]",
            "verdict": p.verdict + (" (noise)" if p.noisy else ""),
            "method": p.method + (f": {p.reason}" if p.reason else ""),
        })
    if rows:
        print(pd.DataFrame(rows).to_string(index=False), file=out)
    else:
        print("(no point in both files)", file=out)
    c = cmp.counts()
    tail = f"; {cmp.unmatched[0]} point(s) only in the baseline, {cmp.unmatched[1]} only in the run" \
        if any(cmp.unmatched) else ""
    print(f"# {len(cmp.points)} point(s): {c['faster']} faster, {c['slower']} slower, "
          f"{c['no difference']} no difference, {c['n/a']} n/a{tail}", file=out)


def main(args: argparse.Namespace) -> int:
    from latscope import compare
    from latscope.results import load
    if not 0 < args.confidence < 1:
        print(f"latscope compare: error: --confidence {args.confidence}: must be between 0 and 1 (e.g. 0.95)",
              file=sys.stderr)
        return 2
    if args.plot and not args.plot.lower().endswith(".png"):
        print(f"latscope compare: error: --plot {args.plot}: give a .png file name", file=sys.stderr)
        return 2
    base = load(args.baseline)
    cmps = [compare.compare(base, load(f), args.confidence) for f in args.runs]
    if args.json:
        json.dump([c.to_dict() for c in cmps], sys.stdout, indent=1, allow_nan=False)
        print()
    else:
        for i, c in enumerate(cmps):
            if i:
                print()
            print_comparison(c)
    if args.plot:
        from latscope.compare.plot import ratio_figure
        from latscope.figures import plt
        fig = ratio_figure(cmps)
        fig.savefig(args.plot, dpi=100, bbox_inches="tight")
        plt.close(fig)
        print(f"{args.plot}: ratio against message size", file=sys.stderr)
    return 0
