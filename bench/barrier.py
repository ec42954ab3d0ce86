#!/usr/bin/env python3
"""Benchmarks of issue 4, measured side by side in one run:
  (a) best latscope barrier / native MPI_Barrier at np = 2 (target <= 1.1) and np = 4, both among
      the eligible rows only (latscope.selection: negative, zero-like or non-converged times are set
      aside and printed);
  (b) mean |predicted - measured| / measured over every modelled barrier algorithm (target <= 10 %),
      the predictions from LogP parameters measured in the same run (latscope-bench logp at np = 2,
      latscope fit logp) — never from the barrier runs.
The barrier loop is the seed's (seed 002 §4.3): {t0; barrier; t1; 30 us dummy work} back to back;
measured = each rank's median averaged over ranks. Two predictions are printed side by side:
  closed   the seed's §5.1.2 closed form (one barrier, every rank entering at the same instant);
  loop     the row's message schedule simulated under LogP through the same loop in steady state
           (latscope.models.barrier_sim), with the fit's raw L = RTT/2 - o_s - o_r;
the error columns and the target use the loop prediction (the closed form's error is shown too).
np 3 and 4 on a 2-core machine are oversubscribed: their times are scheduler delays, which LogP
does not model; they are reported apart and the target applies to np <= cores.
--runs N repeats the whole measurement (LogP fit included) N times and states the spread of the
error across runs; the error target holds when it is met in all runs but one (4 of 5), the ratio
target in every run. Exit status 1 when a target is missed."""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope import logp  # noqa: E402
from latscope.barrier import bench_args, compare_results, mean_abs_rel_err  # noqa: E402
from latscope.models import from_dict  # noqa: E402
from latscope.results import load  # noqa: E402
from latscope.run import cores, launch, program  # noqa: E402


def run(np_: int, args: list[str], timeout: float = 300) -> None:
    ln = launch(np_)
    cp = subprocess.run(ln.prefix + [str(program("latscope-bench"))] + args, env=ln.env, capture_output=True,
                        text=True, timeout=timeout)
    if cp.returncode != 0:
        sys.exit(f"latscope-bench {' '.join(args)} at np {np_} failed ({cp.returncode}): {cp.stderr[-2000:]}")


def one_run(nps: list[int], reps: int, td: Path, show: bool) -> tuple[float, list[float], str]:
    """One measurement: LogP at np 2, every barrier row at each np, the comparison. Returns the
    np <= cores mean |error| of the loop prediction, the best/native ratios at np 2, and a note on
    the load the run saw."""
    lp = td / "logp.jsonl"
    run(2, ["logp", "--sizes", "0,64,1K,8K,64K", "--stop-rule", "median", "--budget", "1", "-o", str(lp)])
    f = logp.fit_logp([load(lp)])
    params = from_dict({"schema": "latscope.params/1", "model": "loggp", "params": f.loggp_params()}).model
    if show:
        print(f"LogP (np 2): L = {f.L_s * 1e9:.0f} ns (raw), o_s = {f.o_s_s * 1e9:.0f} ns, o_r = {f.o_r_s * 1e9:.0f} ns, "
              f"g = {f.g_s * 1e9:.0f} ns; RTT/2 = o_s + L + o_r = {(f.o_s_s + f.L_s + f.o_r_s) * 1e9:.0f} ns; "
              + ("" if f.L_loop_s is None else f"in the loop: L = {f.L_loop_s * 1e9:.0f} ns, RTT/2 = "
                 f"{(f.o_s_s + f.L_loop_s + f.o_r_s) * 1e9:.0f} ns; ")
              + f"post = {(f.post_s or 0) * 1e9:.0f} ns, poll = "
              + ("-" if f.poll_s is None else f"{f.poll_s * 1e9:.0f} ns") + ", flag = "
              + ("-" if f.flag_s is None else f"{f.flag_s * 1e9:.0f} ns") + ", mcast = "
              + ("-" if f.mcast_s is None else f"{f.mcast_s * 1e9:.0f} ns"))
    res = []
    for np_ in nps:
        out = td / f"b{np_}.jsonl"
        run(np_, bench_args("all", 30e-6, reps) + ["-o", str(out)])
        res.append(load(out))
    # post_s / poll_s / flag_s: logp's post, poll and flag (measured above, like every other parameter)
    # MPI_Bcast release: "auto" (mcast where the measured broadcast beats a message on one host)
    # the loop's hop: logp's rtt_loop (the round trip in this same loop) when measured
    df = compare_results(params, res, L_raw_s=f.L_s if f.L_loop_s is None else f.L_loop_s, post_s=f.post_s or 0.0, flag_s=f.flag_s,
                         mcast_s=f.mcast_s, poll_s=f.poll_s)
    loaded = [r for r in res if "under_load" in r.points and r.points["under_load"].fillna(False).astype(bool).any()]
    note = f"{len(loaded)} of {len(res)} barrier files had points under load" if loaded else "no point under load"

    def us(v: object) -> str:
        return "-" if v is None or v != v else f"{float(v) * 1e6:.3f} us"   # type: ignore[arg-type]

    def pct(v: object) -> str:
        return "-" if v is None or v != v else f"{100 * float(v):+.0f}%"   # type: ignore[arg-type]

    if show:
        print("\npredicted: closed = seed §5.1.2 closed form (simultaneous entry); loop = LogP simulation of the "
              "benchmark loop (the error uses this one)")
        print(f"{'np':>3} {'algorithm':<16} {'closed':>10} {'loop':>10} {'measured':>10} {'err(loop)':>9} {'err(closed)':>11}")
        for _, r in df.sort_values(["P", "measured_s"]).iterrows():
            print(f"{r['P']:>3} {r['alg']:<16} {us(r['closed_form_s']):>10} {us(r['predicted_s']):>10} "
                  f"{us(r['measured_s']):>10} {pct(r['rel_err']):>9} {pct(r['closed_form_rel_err']):>11}")
        print()
    ratios = []
    for np_ in (2, 4):
        d = df[df["P"] == np_]
        if d.empty:
            continue
        # best and native among the eligible rows only (latscope.selection): a negative, zero-like
        # or non-converged time never makes a ratio; a missing one fails the target, never passes it
        for _, r in d[d["set_aside"] != ""].iterrows():
            print(f"np {np_}: {r['alg']} set aside: {r['set_aside']}")
        ok = d[d["set_aside"] == ""]
        natr, oursr = ok[ok["alg"] == "native"], ok[ok["alg"] != "native"].sort_values("measured_s")
        if natr.empty or oursr.empty:
            print(f"best latscope barrier / native MPI_Barrier at np {np_}: undefined (no eligible "
                  f"{'native row' if natr.empty else 'latscope barrier'})")
            if np_ == 2:
                ratios.append(float("inf"))
            continue
        nat = float(natr["measured_s"].iloc[0])
        ours = oursr.iloc[0]
        ratio = float(ours["measured_s"]) / nat
        if np_ == 2:
            ratios.append(ratio)
        over = " (oversubscribed: %d ranks on %d cores)" % (np_, cores()) if np_ > cores() else ""
        if show:
            print(f"best latscope barrier / native MPI_Barrier at np {np_}: {ours['alg']} {ours['measured_s'] * 1e6:.3f} us"
                  f" / {nat * 1e6:.3f} us = {ratio:.2f}{' target <= 1.1' if np_ == 2 else ''}{over}")
    fit_ = df[df["P"] <= cores()]
    err = mean_abs_rel_err(fit_) if not fit_.empty else float("nan")
    if show:
        sets = [(fit_, f"np {','.join(str(n) for n in nps if n <= cores())} (not oversubscribed)")]
        if (df["P"] > cores()).any():
            sets.append((df[df["P"] > cores()], f"np {','.join(str(n) for n in nps if n > cores())} (oversubscribed on "
                         f"{cores()} cores: scheduler delays, not LogP; reported apart)"))
        for sub, label in sets:
            if sub.empty:
                continue
            e, ec = mean_abs_rel_err(sub), mean_abs_rel_err(sub, "closed_form_rel_err")
            print(f"mean |predicted - measured| / measured over {int(sub['rel_err'].notna().sum())} modelled points, "
                  f"{label}: loop {100 * e:.0f}%; closed form {100 * ec:.0f}%")
    return err, ratios, note


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=300, help="barriers per algorithm and np (default 300)")
    ap.add_argument("--nps", default="2,3,4")
    ap.add_argument("--runs", type=int, default=1, help="repeat the whole measurement, for the spread across runs")
    a = ap.parse_args()
    nps = [int(x) for x in a.nps.split(",")]
    errs, ratios, notes = [], [], []
    with tempfile.TemporaryDirectory() as td:
        for k in range(a.runs):
            if a.runs > 1:
                print(f"== run {k + 1} of {a.runs}")
            e, r, note = one_run(nps, a.reps, Path(td), show=k == 0 or a.runs == 1)
            errs.append(e)
            ratios += r
            notes.append(note)
            if a.runs > 1:
                print(f"run {k + 1}: mean |loop error| at np <= {cores()}: {100 * e:.1f}%; best/native at np 2: "
                      + ", ".join(f"{x:.2f}" for x in r) + f"; {note}")
    met = sum(1 for e in errs if e <= 0.10)
    need = a.runs - 1 if a.runs >= 5 else a.runs
    ok = met >= need and all(x <= 1.1 for x in ratios)
    good = [e for e in errs if e == e]
    print(f"\nmean |loop error| at np <= {cores()} over {a.runs} run(s): "
          + ", ".join(f"{100 * e:.1f}%" for e in errs)
          + (f"; spread {100 * min(good):.1f}..{100 * max(good):.1f}%, worst {100 * max(good):.1f}%" if good else "")
          + f"; target <= 10% in {need} of {a.runs}: {met} met -> {'MET' if met >= need else 'MISSED'}")
    if ratios:
        print(f"best/native at np 2: {min(ratios):.2f}..{max(ratios):.2f}, target <= 1.1 in every run: "
              f"{'MET' if all(x <= 1.1 for x in ratios) else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
