"""`latscope study sensitivity -- COMMAND`: a program's latency-sensitivity profile
(docs/your-application.md, "How sensitive is it to latency").

The program runs under constant delay tables at several levels d (µs), per call class (all
calls, point-to-point only, collectives only), the launches of every (class, level) interleaved
in an order shuffled per repetition (a drift of the machine falls on every level alike). Per
class, an ordinary least-squares line runtime = a + b·d over every run gives the slope b
(seconds of runtime per µs of added latency), as the Theil-Sen median of pairwise slopes with
its confidence interval (robust to the launches a shared machine slows down). A constant delay d
on every delayed call adds d to the run each time a delayed call lies on the critical path, so
b·1e6 (s per s) counts the latency-critical delayed calls per run; beside it the injector's own
count of delayed calls per rank (its log), so their ratio is the share of delayed calls on the
critical path. Linearity: the p-value of a quadratic term fitted to the levels' medians (4 levels or more),
and the slope between consecutive levels' medians. The delay at which runtime grows by 1 % and 10 % is (p·a)/b, undefined when the slope's
CI does not exclude 0."""
from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from latscope.study import StudyError

HELP = "a program's runtime against constant injected delays (0-20 us, per call class): slope, CI, linearity"
SCHEMA = "latscope.study-sensitivity/1"
CLASSES = {"all": None, "p2p": "p2p", "coll": "coll"}
CONFIDENCE = 0.95
GROWTH = (0.01, 0.10)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    p.add_argument("--levels", default="0,1,2,5,10,20", help="constant delays in us (default 0,1,2,5,10,20)")
    p.add_argument("--classes", default="all", help="call classes delayed, a list of all, p2p, coll (default all)")
    p.add_argument("--repetitions", type=int, default=3, help="launches of every (class, level) (default 3)")
    p.add_argument("--runtime", help="how the runtime is read: a preset (npb, lulesh, hpcg, latscope, wall); "
                                     "default wall, or the pattern of --runtime-regex")
    p.add_argument("--runtime-regex", help="a regular expression whose first group is the runtime")
    p.add_argument("--runtime-unit", help="unit of --runtime-regex's number: s, ms, us, ns (default s)")
    p.add_argument("--verify", choices=["exit", "none"], help="verification by exit status only, or none")
    p.add_argument("--verify-match", help="a regular expression the output must match")
    p.add_argument("--verify-reject", help="a regular expression the output must not match")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds a launch may take (default 300)")
    p.add_argument("--seed", type=int, default=1, help="seed of the launch order (default 1)")
    p.add_argument("-o", "--out", default="sensitivity", help="output directory (default sensitivity)")
    p.add_argument("--json", action="store_true",
                   help="print sensitivity.json's document on standard output instead of the lines")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")


@dataclass
class ClassProfile:
    calls: str                         # all | p2p | coll
    n: int                             # runs that passed
    levels_us: list[float]
    median_runtime_s: list[float | None]   # per level
    intercept_s: float | None
    slope_s_per_us: float | None
    slope_ci_s_per_us: tuple[float, float] | None
    critical_calls_per_run: float | None    # slope * 1e6: delayed calls on the critical path per run
    delayed_calls_per_rank: float | None    # the injector's count per run and rank, median over runs
    critical_share: float | None            # critical / delayed per rank
    quadratic_p: float | None               # p of a quadratic term (small: not linear)
    segment_slopes_s_per_us: list[float | None]
    linear: bool | None
    delay_for_growth_us: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _levels(text: str) -> list[float]:
    try:
        v = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise StudyError(f"--levels {text!r}: a list of delays in us, e.g. 0,1,2,5,10,20") from None
    if len(v) < 2 or any(not (x >= 0 and math.isfinite(x)) for x in v) or len(set(v)) != len(v):
        raise StudyError(f"--levels {text!r}: at least two different delays >= 0 in us, e.g. 0,1,2,5,10,20")
    return sorted(v)


def profile(calls: str, runs: list[dict[str, Any]], levels: list[float]) -> ClassProfile:
    import numpy as np
    from scipy import stats

    ok = [r for r in runs if r["calls"] == calls and r["status"] == "ok" and r["runtime_s"] is not None]
    x = np.array([float(r["delay_us"]) for r in ok])
    y = np.array([float(r["runtime_s"]) for r in ok])
    med: list[float | None] = []
    for lv in levels:
        ys = y[x == lv]
        med.append(float(np.median(ys)) if len(ys) else None)
    segs: list[float | None] = []
    for i in range(1, len(levels)):
        a, b = med[i - 1], med[i]
        segs.append(None if a is None or b is None else (b - a) / (levels[i] - levels[i - 1]))
    counts = [r["delayed_per_rank"] for r in ok if r.get("delayed_per_rank") is not None and r["delay_us"] > 0]
    per_rank = float(np.median(counts)) if counts else None
    p = ClassProfile(calls, len(ok), levels, med, None, None, None, None, per_rank, None, None, segs, None)
    if len(set(x.tolist())) < 2 or len(ok) < 3:
        p.notes.append(f"fewer than 3 runs passed over 2 levels ({len(ok)}): no slope")
        return p
    # Theil-Sen (Sen 1968): the median of the pairwise slopes, with its confidence interval. A
    # launch another tenant slowed down (2x-20x on a shared 2-core machine) moves a least-squares
    # line at will; it moves the median of slopes only by its share of the pairs.
    ts = stats.theilslopes(y, x, alpha=CONFIDENCE)
    p.intercept_s, p.slope_s_per_us = float(ts.intercept), float(ts.slope)
    p.slope_ci_s_per_us = (float(ts.low_slope), float(ts.high_slope))
    p.critical_calls_per_run = float(ts.slope) * 1e6
    if per_rank:
        p.critical_share = p.critical_calls_per_run / per_rank
        if p.critical_share > 1.2:
            p.notes.append(f"the slope is {p.critical_share:.1f} times the delayed calls per rank: each delay costs "
                           "more than itself (ranks waiting in the MPI library wake up late on a machine with more "
                           "ranks and tenants than cores, docs/delay-table.md 'Per call or per message'; or the "
                           "delayed calls of several ranks lie on the path one after another)")
    # linearity on the levels' medians (robust as the slope): the p-value of a quadratic term
    lvs = np.array([levels[i] for i, m in enumerate(med) if m is not None])
    mv = np.array([m for m in med if m is not None])
    if len(lvs) >= 4:
        X = np.column_stack([np.ones_like(lvs), lvs, lvs ** 2])
        beta, *_ = np.linalg.lstsq(X, mv, rcond=None)
        resid = mv - X @ beta
        dof = len(mv) - 3
        s2 = float(resid @ resid) / dof
        cov = s2 * np.linalg.pinv(X.T @ X)
        se = math.sqrt(max(float(cov[2, 2]), 0.0))
        if se > 0:
            tval = float(beta[2]) / se
            p.quadratic_p = float(2 * stats.t.sf(abs(tval), dof))
            p.linear = p.quadratic_p >= 0.05
    lo = p.slope_ci_s_per_us[0]
    for g in GROWTH:
        key = f"{g * 100:g}%"
        if lo > 0 and p.intercept_s > 0:
            p.delay_for_growth_us[key] = g * p.intercept_s / p.slope_s_per_us
        else:
            p.delay_for_growth_us[key] = None
    if lo <= 0:
        p.notes.append("the slope's CI does not exclude 0: no measurable latency sensitivity at these levels")
    return p


def _fmt(v: float | None, spec: str) -> str:
    return "n/a" if v is None or not math.isfinite(v) else format(v, spec)


def lines(profs: list[ClassProfile], np_: int) -> list[str]:
    out = []
    for p in profs:
        if p.slope_s_per_us is None or p.slope_ci_s_per_us is None:
            out.append(f"{p.calls}: slope n/a ({'; '.join(p.notes)})")
            continue
        lo, hi = p.slope_ci_s_per_us
        share = ("n/a" if p.critical_share is None else f"{p.critical_share * 100:.0f} %")
        lin = ("n/a (fewer than 4 levels)" if p.linear is None else
               f"{'yes' if p.linear else 'no'} (quadratic term p = {_fmt(p.quadratic_p, '.2g')})")
        grow = ", ".join(f"+{k} at {_fmt(v, '.3g')} us" if v is not None else f"+{k}: n/a"
                         for k, v in p.delay_for_growth_us.items())
        out.append(f"{p.calls}: slope {p.slope_s_per_us * 1e6:.1f} us per us of latency "
                   f"({CONFIDENCE * 100:g} % CI {lo * 1e6:.1f} .. {hi * 1e6:.1f}), i.e. "
                   f"{p.critical_calls_per_run:.0f} latency-critical messages per run; the injector delayed "
                   f"{_fmt(p.delayed_calls_per_rank, '.0f')} calls per rank and run ({share} on the critical path, "
                   f"np {np_}); linear: {lin}; runtime {_fmt(p.intercept_s, '.4g')} s at 0 us, {grow}")
    return out


def figure(profs: list[ClassProfile], runs: list[dict[str, Any]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, p in enumerate(profs):
        c = f"C{i}"
        ok = [r for r in runs if r["calls"] == p.calls and r["status"] == "ok"]
        ax.plot([r["delay_us"] for r in ok], [r["runtime_s"] for r in ok], "o", color=c, alpha=0.4, ms=4)
        if p.slope_s_per_us is not None and p.intercept_s is not None:
            xs = np.array([min(p.levels_us), max(p.levels_us)])
            ax.plot(xs, p.intercept_s + p.slope_s_per_us * xs, "-", color=c,
                    label=f"{p.calls}: {p.slope_s_per_us * 1e6:.1f} us/us")
        else:
            ax.plot([], [], "o", color=c, label=f"{p.calls}: slope n/a")
    ax.set_xlabel("injected constant delay per call (us)")
    ax.set_ylabel("runtime (s)")
    ax.set_title("latency sensitivity (Theil-Sen line over every run)")
    ax.legend()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from latscope import jsonio
    from latscope import tables as T
    from latscope.inject import ENV_KEYS, InjectSettings
    from latscope.run import launch, user_command
    from latscope.study.appspec import SpecError, make_spec
    from latscope.study.matrix import append, execute, inject_summary

    usage = "latscope study sensitivity [--levels 0,1,2,5,10,20] [--classes all,p2p,coll] -- COMMAND [ARGS...]"
    try:
        cmd = user_command(args.command, usage, args.np)
    except ValueError as e:
        raise StudyError(str(e)) from None
    levels = _levels(args.levels)
    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    bad = [c for c in classes if c not in CLASSES]
    if bad or not classes or len(set(classes)) != len(classes):
        raise StudyError(f"--classes {args.classes!r}: a list of {', '.join(CLASSES)}, each once")
    if args.repetitions < 1:
        raise StudyError(f"--repetitions {args.repetitions}: must be >= 1")
    if not args.timeout > 0:
        raise StudyError(f"--timeout {args.timeout}: must be > 0 seconds")
    doc: dict[str, Any] = {"runtime": args.runtime if args.runtime or args.runtime_regex else "wall"}
    for key in ("runtime_regex", "runtime_unit", "verify", "verify_match", "verify_reject"):
        if getattr(args, key) is not None:
            doc[key] = getattr(args, key)
    if args.runtime_regex and not args.runtime:
        del doc["runtime"]
    try:
        spec = make_spec(Path(cmd[0]).name, doc, "wall")
    except SpecError as e:
        raise StudyError(str(e).replace(f"{e.key} =", f"--{e.key.replace('_', '-')}")) from None
    import os
    import shutil

    prog = cmd[0] if "/" in cmd[0] else shutil.which(cmd[0])
    if prog is None or not Path(prog).is_file() or not os.access(prog, os.X_OK):
        raise StudyError(f"{cmd[0]}: not an executable program (give its path, e.g. ./is.W.x)")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise StudyError(f"-o {out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    tdir = out / "tables"
    tdir.mkdir(exist_ok=True)
    tpaths = {}
    for lv in levels:
        tpaths[lv] = T.write_table(T.make("constant", {"mean": lv * 1e-6}), tdir / f"c{lv:g}us.tbl")
    ln = launch(args.np)
    cells = [(c, lv) for c in classes for lv in levels]
    runs: list[dict[str, Any]] = []
    total = len(cells) * args.repetitions
    print(f"latscope study sensitivity: {total} launches ({len(classes)} classes x {len(levels)} levels x "
          f"{args.repetitions}), np {args.np}: {shlex.join(cmd)}", file=sys.stderr)
    t0 = time.monotonic()
    k = 0
    with open(out / "runs.jsonl", "w") as f:
        append(f, {"type": "meta", "schema": SCHEMA, "command": shlex.join(cmd), "np": args.np, "levels_us": levels,
                   "classes": classes, "repetitions": args.repetitions, "seed": args.seed,
                   "timing": spec.timing_text(), "verify": spec.verify_text(),
                   "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        for rep in range(args.repetitions):
            order = np.random.default_rng([args.seed, rep]).permutation(len(cells))
            for i in order:
                calls, lv = cells[int(i)]
                k += 1
                log_dir = out / "logs" / f"{calls}.{lv:g}us.r{rep}"
                log_dir.mkdir(parents=True, exist_ok=True)
                for old in log_dir.glob("inject.*.json"):
                    old.unlink()
                s = InjectSettings(tpaths[lv], str(args.seed * 1_000_003 + rep), calls=CLASSES[calls],
                                   log_prefix=log_dir / "inject")
                env = s.env({kk: v for kk, v in ln.env.items() if kk not in ENV_KEYS})
                app = ["env", f"LD_PRELOAD={env['LD_PRELOAD']}", *cmd]
                if ln.env.get("LD_PRELOAD"):
                    env["LD_PRELOAD"] = ln.env["LD_PRELOAD"]
                else:
                    del env["LD_PRELOAD"]
                o = execute(ln.prefix + app, env, args.timeout, spec)
                inj = inject_summary(log_dir)
                per_rank = None if not inj or not inj["ranks"] else inj["count"] / inj["ranks"]
                rec = {"type": "run", "calls": calls, "delay_us": lv, "rep": rep, "status": o.status,
                       "runtime_s": o.runtime_s, "verification": o.verification, "reason": o.reason,
                       "wall_s": o.wall_s, "exit_status": o.exit_status, "delayed_per_rank": per_rank,
                       "inject": inj}
                append(f, rec)
                runs.append(rec)
                what = f"{o.runtime_s:.4f} s" if o.runtime_s is not None else "-"
                if o.reason:
                    what += f" ({o.reason})"
                print(f"[{k}/{total}] {calls} {lv:g} us rep={rep}: {o.status} {what}; elapsed "
                      f"{time.monotonic() - t0:.0f} s", file=sys.stderr)
    profs = [profile(c, runs, levels) for c in classes]
    res = {"schema": SCHEMA, "command": shlex.join(cmd), "np": args.np, "confidence": CONFIDENCE,
           "timing": spec.timing_text(), "verify": spec.verify_text(),
           "classes": [asdict(p) for p in profs]}
    (out / "sensitivity.json").write_text(jsonio.dumps(res, indent=1) + "\n")
    fig = figure(profs, runs, out / "sensitivity.png")
    as_json = getattr(args, "json", False)
    for ln_ in ([] if as_json else lines(profs, args.np)):
        print(ln_)
    if as_json:
        print(jsonio.dumps(res, indent=1))
    for p in profs:
        for n in p.notes:
            print(f"{p.calls}: {n}", file=sys.stderr)
    failed = sum(1 for r in runs if r["status"] != "ok")
    if failed:
        print(f"latscope study sensitivity: {failed} of {len(runs)} launches failed (runs.jsonl says why)",
              file=sys.stderr)
    if not as_json:
        print(out / "sensitivity.json")
        print(fig)
    return 1 if failed == len(runs) else 0
