"""`latscope study load`: load characterisation (seed 004 §5, Figs 2-3; docs/study.md).

At each load level, latscope-congest (§5.1, Algorithm 3) keeps that fraction of its pair's one-way
bandwidth busy while latscope-bench measures small-message ping-pong latency with every sample
kept (--raw). Per level: n, mean, sd, median, p99 and the three-parameter lognormal fit of §5.3
(latscope.tables.fit_lognormal, the one `latscope tables fit` uses) with its KS distance."""
from __future__ import annotations

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from latscope.study import StudyError

HELP = "seed 004 §5: ping-pong latency under background load (latscope-congest), per load level"
DEFAULT_LOADS = "0,10,...,90"
SCHEMA = "latscope.study-load/1"
RANKS = 2                    # one congest pair, one ping-pong pair
READY_TIMEOUT_S = 60.0       # congest's start-up (MPI_Init of its ranks) may take long on a busy machine
_NUM = r"[0-9]+(?:\.[0-9]*)?"


def parse_loads(text: str) -> list[float]:
    """'0,10,50' or an arithmetic run 'a,b,...,c' (step b - a, c included): percent of the one-way
    bandwidth, each in [0, 100], strictly increasing (one level each)."""
    words = [w.strip() for w in text.split(",")]
    if not text.strip() or any(not w for w in words):
        raise StudyError(f"--loads {text!r}: a comma-separated list of percentages, e.g. 0,10,...,90 or 0,50")
    vals: list[float] = []
    if "..." in words:
        k = words.index("...")
        if words.count("...") > 1 or k < 2 or k != len(words) - 2:
            raise StudyError(f"--loads {text!r}: '...' needs two values before it and one after: a,b,...,c")
        head = [_load_value(w, text) for w in words[:k]]
        a, b, c = head[-2], head[-1], _load_value(words[-1], text)
        step = b - a
        if step <= 0 or c < b:
            raise StudyError(f"--loads {text!r}: a,b,...,c needs a < b <= c")
        n = round((c - a) / step)
        if abs(a + n * step - c) > 1e-9 * max(1.0, c):
            raise StudyError(f"--loads {text!r}: {c:g} is not {a:g} plus a whole number of steps of {step:g}")
        vals = head[:-2] + [round(a + i * step, 9) for i in range(n + 1)]
    else:
        vals = [_load_value(w, text) for w in words]
    for x, y in zip(vals, vals[1:]):
        if y <= x:
            raise StudyError(f"--loads {text!r}: {y:g} after {x:g}; the levels must increase (each once)")
    return vals


def _load_value(w: str, text: str) -> float:
    if not re.fullmatch(_NUM, w):
        raise StudyError(f"--loads {text!r}: {w!r} is not a percentage; use numbers from 0 to 100, e.g. 0,10,...,90")
    v = float(w)
    if v > 100:
        raise StudyError(f"--loads {text!r}: {w}: a load is at most 100 (% of the one-way bandwidth)")
    return v


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--loads", default=DEFAULT_LOADS,
                   help=f"load levels in %% of the pair's one-way bandwidth: a list, or a,b,...,c "
                        f"(default {DEFAULT_LOADS})")
    p.add_argument("--duration", default="2s", help="ping-pong time per level, with a unit (default 2s)")
    p.add_argument("--samples", default="20000", help="at most this many ping-pongs per level (default 20000)")
    p.add_argument("--size", default="8", help="ping-pong message size in bytes (default 8)")
    p.add_argument("--congest-size", default="64K", help="latscope-congest message size (default 64K)")
    p.add_argument("--bandwidth", help="the one-way bandwidth the loads are fractions of, e.g. 10G "
                                       "(default: measured once by latscope-congest before the sweep)")
    p.add_argument("--seed", default="1", help="seed of the congestion generator's gaps (default 1)")
    p.add_argument("-o", "--out", default="study-load", help="output directory (default study-load)")
    p.add_argument("--json", action="store_true",
                   help="print the levels (load.jsonl's level records) as one JSON document instead of the table")


@dataclass(frozen=True)
class Options:
    loads_pct: list[float]
    duration_s: float
    samples: int
    size: int
    congest_size: str
    bandwidth: str | None
    seed: int
    out: Path


def options(args: argparse.Namespace) -> Options:
    from latscope.units import parse_duration

    loads = parse_loads(args.loads)
    try:
        duration = parse_duration(args.duration)
    except ValueError as e:
        raise StudyError(f"--duration: {e}") from None
    if not 0 < duration <= 3600:
        raise StudyError(f"--duration {args.duration}: must be above 0 and at most 1 h")
    samples = _int(args.samples, "--samples", 20)
    size = _bytes(args.size, "--size", 0, 1 << 20, "0 to 1M (a small message)")
    _bytes(args.congest_size, "--congest-size", 1, 1 << 30, "1 to 1G")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise StudyError(f"-o {out}: exists and is not a directory")
    return Options(loads, duration, samples, size, args.congest_size, args.bandwidth,
                   _int(args.seed, "--seed", 0), out)


def _bytes(text: str, flag: str, lo: int, hi: int, allowed: str) -> int:
    from latscope.units import parse_size

    try:
        v = parse_size(text)
    except ValueError as e:
        raise StudyError(f"{flag}: {e}") from None
    if v != int(v) or not lo <= v <= hi:
        raise StudyError(f"{flag} {text}: a whole number of bytes from {allowed}")
    return int(v)


def _int(text: str, flag: str, lo: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise StudyError(f"{flag} {text!r}: not an integer") from None
    if v < lo:
        raise StudyError(f"{flag} {v}: must be >= {lo}")
    return v


# ---------------------------------------------------------------- running one level

def _congest_cmd(o: Options, load: float, bandwidth: str, seconds: float, json_path: Path) -> list[str]:
    from latscope.run import launch, program

    return launch(RANKS).prefix + [str(program("latscope-congest")), "--load", repr(load), "--bandwidth", bandwidth,
                                   "--size", o.congest_size, "--duration", f"{seconds:.3f}s",
                                   "--seed", str(o.seed), "--json", str(json_path)]


def measure_bandwidth(o: Options) -> str:
    """The bandwidth every level is a fraction of: given, or what latscope-congest measures at
    start-up (all pairs at once), once, so that the levels share one reference (§5.2: % of the NIC)."""
    if o.bandwidth:
        return o.bandwidth
    from latscope import jsonio
    from latscope.run import launch

    js = o.out / "bandwidth.json"
    cmd = _congest_cmd(o, 1.0, "", 0.2, js)
    k = cmd.index("--bandwidth")
    del cmd[k:k + 2]
    cp = subprocess.run(cmd, env=launch(RANKS).env, capture_output=True, text=True, timeout=120)
    if cp.returncode != 0:
        raise RuntimeError(f"latscope-congest (bandwidth) exited {cp.returncode}: {cp.stderr.strip()[-500:]}")
    rec = jsonio.loads_strict(js.read_text())
    bw = float(rec["pairs"][0]["bandwidth_bytes_per_s"])
    return repr(bw)


def _pingpong(o: Options, path: Path) -> None:
    from latscope.run import launch, program

    # adaptive repetitions that never stop on their CI (the mean's at rel-err 1e-9: the median's CI can
    # shrink to 0 on a timer tick): a level ends at --samples or when its --duration budget is spent
    args = ["p2p", "--op", "pingpong", "--sizes", str(o.size), "--min-reps", "20", "--max-reps", str(o.samples),
            "--stop-rule", "mean", "--rel-err", "1e-9", "--budget", repr(o.duration_s), "--raw", "-o", str(path)]
    ln = launch(RANKS)
    cp = subprocess.run(ln.prefix + [str(program("latscope-bench"))] + args, env=ln.env, capture_output=True,
                        text=True, timeout=120 + 10 * o.duration_s)
    if cp.returncode != 0:
        raise RuntimeError(f"latscope-bench (ping-pong) exited {cp.returncode}: {cp.stderr.strip()[-500:]}")


def _run_level(o: Options, load_pct: float, bandwidth: str) -> dict[str, Any]:
    """One level: congest started, its senders under way (each has sent a message), the ping-pong,
    then congest stopped by SIGTERM (it stops cleanly and writes --json: apps/latscope_congest.c)."""
    from latscope import jsonio
    from latscope.run import launch

    tag = f"{load_pct:05.1f}".replace(".", "_") if load_pct != int(load_pct) else f"{int(load_pct):03d}"
    raw = o.out / f"pingpong-{tag}.jsonl"
    if load_pct == 0:
        _pingpong(o, raw)
        return {"load_pct": load_pct, "raw_file": raw.name, "congest_file": None, "load_achieved": None}
    js = o.out / f"congest-{tag}.json"
    ready = o.out / f".ready-{tag}"
    for f in o.out.glob(f".ready-{tag}.*"):
        f.unlink()
    env = dict(launch(RANKS).env)
    env["LATSCOPE_TEST_READY_FILE"] = str(ready)   # congest's start hook: PATH.<sender rank> appears
    env["LATSCOPE_TEST_READY_MSGS"] = "1"
    # a generous own duration: the SIGTERM below is what ends it; the duration only bounds a run
    # whose parent died
    seconds = 60 + 10 * o.duration_s
    log = (o.out / f"congest-{tag}.txt").open("w")
    proc = subprocess.Popen(_congest_cmd(o, load_pct / 100, bandwidth, seconds, js), env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        t0 = time.monotonic()
        while not Path(f"{ready}.0").exists():
            if proc.poll() is not None:
                raise RuntimeError(f"latscope-congest at load {load_pct:g} % exited {proc.returncode} before "
                                   f"its load was under way (see {log.name})")
            if time.monotonic() - t0 > READY_TIMEOUT_S:
                raise RuntimeError(f"latscope-congest at load {load_pct:g} % not under way after {READY_TIMEOUT_S:g} s")
            time.sleep(0.02)
        _pingpong(o, raw)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)   # mpiexec and its ranks: the clean stop
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        for f in o.out.glob(f".ready-{tag}.*"):
            f.unlink()
    achieved = None
    if js.exists():
        rec = jsonio.loads_strict(js.read_text())
        tot = sum(float(p["achieved_bytes_per_s"] or 0) for p in rec["pairs"])
        bw = sum(float(p["bandwidth_bytes_per_s"] or 0) for p in rec["pairs"])
        achieved = tot / bw if bw > 0 else None
    return {"load_pct": load_pct, "raw_file": raw.name, "congest_file": js.name if js.exists() else None,
            "load_achieved": achieved}


def level_stats(samples_s: Any) -> dict[str, Any]:
    """n, mean, sd (ddof 1), median, p99 (linear interpolation), min, max, and the §5.3 lognormal fit
    (null with fit_error when it is degenerate: one level's bad fit must not cost the sweep)."""
    import numpy as np

    from latscope import tables

    x = np.asarray(samples_s, dtype=float)
    rec: dict[str, Any] = {"n": int(x.size), "mean_s": float(x.mean()),
                           "sd_s": float(x.std(ddof=1)) if x.size > 1 else None,
                           "median_s": float(np.median(x)), "p99_s": float(np.percentile(x, 99)),
                           "min_s": float(x.min()), "max_s": float(x.max())}
    try:
        f = tables.fit_lognormal(x)
        rec["fit"] = {"shape": f.shape, "loc_s": f.loc_s, "scale_s": f.scale_s, "ks_distance": f.ks_distance}
        rec["fit_error"] = None
    except tables.FitError as e:
        rec["fit"] = None
        rec["fit_error"] = str(e)
    return rec


# ---------------------------------------------------------------- outputs

COLUMNS = ["load_pct", "load_achieved", "n", "mean_s", "sd_s", "median_s", "p99_s", "shape", "loc_s", "scale_s",
           "ks_distance"]


def _row(lv: dict[str, Any]) -> dict[str, Any]:
    fit = lv.get("fit") or {}
    return {c: (fit.get(c) if c in ("shape", "loc_s", "scale_s", "ks_distance") else lv.get(c)) for c in COLUMNS}


def text_table(levels: list[dict[str, Any]]) -> str:
    from latscope.units import fmt_time

    def t(v: Any) -> str:
        return "-" if v is None else fmt_time(float(v))

    head = f"{'load':>6} {'achieved':>8} {'n':>6} {'mean':>9} {'sd':>9} {'median':>9} {'p99':>9}  " \
           f"{'shape':>6} {'loc':>9} {'scale':>9} {'KS':>6}"
    lines = [head]
    for lv in levels:
        r = _row(lv)
        ach = "-" if r["load_achieved"] is None else f"{100 * r['load_achieved']:.0f}%"
        fit = (f"{r['shape']:6.3f} {t(r['loc_s']):>9} {t(r['scale_s']):>9} {r['ks_distance']:6.3f}"
               if r["shape"] is not None else f"{'no fit (degenerate)':>33}")
        lines.append(f"{r['load_pct']:>5g}% {ach:>8} {r['n']:>6} {t(r['mean_s']):>9} {t(r['sd_s']):>9} "
                     f"{t(r['median_s']):>9} {t(r['p99_s']):>9}  {fit}")
    return "\n".join(lines) + "\n"


def write_outputs(o: Options, meta: dict[str, Any], levels: list[dict[str, Any]]) -> list[Path]:
    import csv

    from latscope import jsonio
    from latscope.parts import study_load

    jl = o.out / "load.jsonl"
    with jl.open("w") as f:
        for rec in [meta] + levels:
            f.write(jsonio.dumps(rec) + "\n")
    cs = o.out / "load.csv"
    with cs.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for lv in levels:
            w.writerow({k: ("" if v is None else v) for k, v in _row(lv).items()})
    txt = o.out / "load.txt"
    txt.write_text(text_table(levels))
    png = study_load.plot(levels, o.out / "load.png")
    return [jl, cs, txt, png]


def run(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from latscope import __version__, results
    from latscope.run import cores

    o = options(args)
    o.out.mkdir(parents=True, exist_ok=True)
    bandwidth = measure_bandwidth(o)
    meta = {"type": "meta", "schema": SCHEMA, "tool": "latscope", "version": __version__,
            "command": sys.argv, "utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "loads_pct": o.loads_pct, "duration_s": o.duration_s, "samples_max": o.samples,
            "size_bytes": o.size, "pingpong": {"op": "pingpong", "ranks": RANKS, "samples": "one-way (RTT/2)"},
            "congest": {"ranks": RANKS, "size": o.congest_size, "bandwidth": bandwidth,
                        "bandwidth_source": "given" if o.bandwidth else "measured", "seed": o.seed},
            "cores": cores(), "ranks_total": 2 * RANKS}
    levels: list[dict[str, Any]] = []
    for i, load in enumerate(o.loads_pct):
        print(f"latscope study load: level {i + 1}/{len(o.loads_pct)}: {load:g} %", file=sys.stderr)
        lv = {"type": "level", **_run_level(o, load, bandwidth)}
        res = results.load(o.out / lv["raw_file"])
        samples = [s for k in sorted(res.raw) for s in res.raw[k]]
        lv.update(level_stats(samples))
        levels.append(lv)
    paths = write_outputs(o, meta, levels)
    if getattr(args, "json", False):
        from latscope import jsonio

        print(jsonio.dumps({"meta": meta, "levels": levels}, indent=1))
    else:
        sys.stdout.write(text_table(levels))
    if any(lv["fit"] is None for lv in levels):
        print("latscope study load: note: no lognormal fit where a level's samples are degenerate "
              "(fit_error in load.jsonl)", file=sys.stderr)
    for p in ([] if getattr(args, "json", False) else paths):
        print(p)
    return 0 if all(math.isfinite(lv["mean_s"]) for lv in levels) else 1
