"""``latscope tables``: make, fit, show and export delay tables (docs/delay-table.md).

Times take units (``10us``, ``1.5ms``, ``3ns``, ``2e-6s``). Bad input prints
``latscope tables: error: ...`` naming the value and what is allowed, and returns 2."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from latscope import distributions as D
from latscope.commands import parse_alone
from latscope.units import fmt_time, parse_duration

if TYPE_CHECKING:   # numpy, pandas, scipy: imported where a table is made or read, not to build the parser
    from latscope import tables as T

EXIT_USAGE = 2
PROG = "latscope tables"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser("tables", help="delay tables for the injector and simulator: make, fit, show, export",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="tcmd", required=True)

    dists = ", ".join(list(D.GENERATORS) + ["empirical"])
    m = sub.add_parser("make", help="a table from a distribution",
                       description=f"Distributions: {dists}. " + "; ".join(
                           f"{g.name}: {' '.join('--' + s.name for s in g.params)}" for g in D.GENERATORS.values())
                       + "; empirical: --samples FILE [--point N].")
    m.add_argument("distribution", help=dists)
    names: dict[str, D.ParamSpec] = {}
    for g in D.GENERATORS.values():
        for spec in g.params:
            names.setdefault(spec.name, spec)
    for name, spec in names.items():
        m.add_argument(f"--{name}", metavar="TIME" if spec.kind == "time" else "X",
                       help=f"{spec.help} ({'with a unit' if spec.kind == 'time' else 'a number'})")
    _samples_args(m)
    m.add_argument("--seed", default="1", help="seed of the entry order (default 1)")
    m.add_argument("-o", "--out", default="-", help="output file (default: stdout)")

    f = sub.add_parser("fit", help="seed 004 §5.3: fitted lognormal, mean-matched constant, intermediates")
    f.add_argument("samples", help="samples in seconds, one per line, or a results JSONL written with --raw")
    f.add_argument("--point", help="only this point's samples (results JSONL)")
    f.add_argument("-o", "--out", default="tables", help="output directory (default: tables)")
    f.add_argument("--seed", default="1", help="seed of the entry order (default 1)")
    f.add_argument("--match", default="observed",
                   help="the mean every table keeps: observed (the sample mean, default) or fitted (the fit's)")
    f.add_argument("--form", default="auto",
                   help="the tables' family: auto (lognormal unless it loses more than 20 %% of the sample's "
                        "variance, then empirical; default), lognormal (refuse such a fit, exit 2) or empirical "
                        "(the samples' strata with their tail: the sample's mean and sd)")
    f.add_argument("--vary", default="variance",
                   help="intermediates have 25/50/75 %% of the fitted 'variance' (default) or of its 'scale' "
                        "(the paper's literal wording; sd above the fit's)")

    s = sub.add_parser("show", help="mean, sd and percentiles of a table")
    s.add_argument("table")
    s.add_argument("--plot", help="write a histogram + CDF to this PNG")
    s.add_argument("--json", action="store_true", help="print the statistics as one JSON object (seconds)")

    e = sub.add_parser("export", help="convert to another tool's format")
    e.add_argument("table")
    e.add_argument("--netem", action="store_true", help="netem distribution table (iproute2 maketable format)")
    e.add_argument("--name", default="latscope", help="distribution name shown in the usage comment")
    e.add_argument("-o", "--out", default="-", help="output file (default: stdout)")
    return p


def _samples_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", help="empirical: samples in seconds, one per line, or a results JSONL with --raw")
    p.add_argument("--point", help="empirical: only this point's samples (results JSONL)")


def _int(text: str | None, flag: str, lo: int = 0) -> int | None:
    if text is None:
        return None
    return _int_given(text, flag, lo)


def _int_given(text: str, flag: str, lo: int = 0) -> int:
    try:
        v = int(text)
    except ValueError:
        raise D.TableError(f"{flag} {text!r}: not an integer") from None
    if v < lo:
        raise D.TableError(f"{flag} {v}: must be >= {lo}")
    return v


def _emit(text: str, out: str) -> None:
    if out == "-":
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)


def _make(args: argparse.Namespace) -> int:
    from latscope import tables as T
    seed = _int_given(args.seed, "--seed")
    name = args.distribution
    if name == "empirical":
        if not args.samples:
            raise D.TableError("empirical: give --samples FILE")
        given = [n for n in _param_names() if getattr(args, n) is not None]
        if given:
            raise D.TableError(f"empirical takes no --{given[0]}; it uses --samples")
        table = T.empirical(T.load_samples(args.samples, _int(args.point, "--point")), seed, args.samples)
    else:
        if name not in D.GENERATORS:
            raise D.TableError(f"distribution {name!r}: use one of {', '.join(list(D.GENERATORS) + ['empirical'])}")
        if args.samples or args.point:
            raise D.TableError(f"--samples is for empirical, not {name}")
        gen = D.GENERATORS[name]
        allowed = {s.name: s for s in gen.params}
        params: dict[str, float | None] = {}
        for n in _param_names():
            text = getattr(args, n)
            if text is None:
                params[n] = allowed[n].default if n in allowed else None
                continue
            if n not in allowed:
                raise D.TableError(f"{name} takes no --{n}; it takes {', '.join('--' + s for s in allowed)}")
            params[n] = _value(text, allowed[n], n)
        table = T.make(name, params, seed)
    _emit(T.format_table(table), args.out)
    return 0


def _param_names() -> list[str]:
    return list(dict.fromkeys(s.name for g in D.GENERATORS.values() for s in g.params))


def _value(text: str, spec: D.ParamSpec, flag: str) -> float:
    if spec.kind == "time":
        try:
            v = parse_duration(text)
        except ValueError as e:
            raise D.TableError(f"--{flag}: {e}") from None
        # a delay table holds delays: a negative one cannot be waited (loc is a shift, checked by make)
        if v < 0 and flag != "loc":
            raise D.TableError(f"--{flag} {text}: negative delay; give a time >= 0 with a unit, e.g. {text.lstrip('-')}")
        return v
    try:
        return float(text)
    except ValueError:
        raise D.TableError(f"--{flag} {text!r}: not a number") from None


def _fit(args: argparse.Namespace) -> int:
    from latscope import tables as T
    seed = _int_given(args.seed, "--seed")
    fs = T.fit_tables(T.load_samples(args.samples, _int(args.point, "--point")), seed, args.match, args.vary,
                      form=args.form)
    paths = fs.write(args.out)
    f = fs.fit
    if f is not None:
        kept = "" if fs.variance_lost is None else f", {100 * (1 - fs.variance_lost):.0f} % of the variance"
        print(f"lognormal fit: shape {f.shape:.4g}, loc {fmt_time(f.loc_s)}, scale {fmt_time(f.scale_s)} "
              f"(KS distance {f.ks_distance:.3g}); sd {fmt_time(f.sd_s())} against the sample's "
              f"{fmt_time(fs.sample_sd_s)}{kept}")
    if fs.switched:
        print(f"empirical tables instead: {fs.switched}")
    top = fs.tables["empirical.tbl" if fs.form == "empirical" else "lognormal.tbl"]
    print(f"{fs.n_samples or (f.n if f else 0)} samples, mean {fmt_time(fs.sample_mean_s)}, sd {fmt_time(fs.sample_sd_s)}; "
          f"every table's mean {fmt_time(fs.target_mean_s)} ({fs.match}); {fs.form} tables, the full one's sd "
          f"{fmt_time(top.sd_s())}")
    for p in paths:
        print(p)
    return 0


def _show(args: argparse.Namespace) -> int:
    from latscope import tables as T
    t = T.read_table(args.table)
    if args.json:
        from latscope import jsonio
        print(jsonio.dumps({"table": args.table, "distribution": t.distribution, "params": t.params,
                            "generator": t.generator or None, "mean_s": t.mean_s(), "sd_s": t.sd_s(),
                            "min_s": float(t.delays_ns.min()) * 1e-9} | dict(t.percentiles())))
        if args.plot:
            _plot(t, Path(args.plot), Path(args.table).name)
        return 0
    print(f"{args.table}: {t.distribution} " + " ".join(f"{k}={v}" for k, v in t.params.items()))
    if t.generator:
        print(f"  generator: {t.generator}")
    pc = t.percentiles()
    print(f"  mean {fmt_time(t.mean_s())}  sd {fmt_time(t.sd_s())}  min {fmt_time(t.delays_ns.min() * 1e-9)}  "
          + "  ".join(f"{k[:-2]} {fmt_time(v)}" for k, v in pc.items()))
    if args.plot:
        _plot(t, Path(args.plot), Path(args.table).name)
        print(args.plot)
    return 0


def _plot(t: T.DelayTable, out: Path, title: str) -> None:
    from latscope import tables as T
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    us = np.sort(t.delays_ns) * 1e-3
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    a.hist(us, bins=64)
    a.axvline(t.mean_s() * 1e6, color="k", ls="--", label="mean")
    a.set_xlabel("delay (µs)")
    a.set_ylabel("entries")
    a.legend()
    b.plot(us, T.QUANTILES)
    b.set_xlabel("delay (µs)")
    b.set_ylabel("CDF")
    fig.suptitle(f"{title}: {t.distribution}")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _export(args: argparse.Namespace) -> int:
    from latscope import tables as T
    if not args.netem:
        raise D.TableError("export: choose a format; allowed: --netem")
    if not args.name or any(c.isspace() or c == "/" for c in args.name):
        raise D.TableError(f"--name {args.name!r}: one word without '/', e.g. latscope")
    nt = T.to_netem(T.read_table(args.table))
    _emit(nt.text(args.name), args.out)
    if nt.clipped:
        print(f"latscope tables: note: {nt.clipped} of {T.TABLE_SIZE} entries lie beyond +-4 sd and were "
              f"clipped to netem's 16-bit range", file=sys.stderr)
    return 0


_COMMANDS = {"make": _make, "fit": _fit, "show": _show, "export": _export}


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    ns = parse_alone(args, "tables", add_parser)
    if isinstance(ns, int):
        return ns
    try:
        return _COMMANDS[ns.tcmd](ns)
    except D.TableError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
    except FileNotFoundError as e:
        from latscope.cli import no_such
        print(f"{PROG}: error: {no_such(e)}", file=sys.stderr)
    except ValueError as e:  # e.g. a results file that breaks its schema (ResultsError)
        print(f"{PROG}: error: {e}", file=sys.stderr)
    return EXIT_USAGE
