#!/usr/bin/env python3
"""Benchmarks of issue 4, measured side by side in one run:
  (a) best latscope barrier / native MPI_Barrier at np = 2 (target <= 1.1) and np = 4;
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
Exit status 1 when a target is missed."""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from latscope import logp  # noqa: E402
from latscope.barrier_cli import bench_args, compare_results, mean_abs_rel_err  # noqa: E402
from latscope.models import from_dict  # noqa: E402
from latscope.results import load  # noqa: E402
from latscope.run import cores, launch, program  # noqa: E402


def run(np_: int, args: list[str], timeout: float = 300) -> None:
    ln = launch(np_)
    cp = subprocess.run(ln.prefix + [str(program("latscope-bench"))] + args, env=ln.env, capture_output=True,
                        text=True, timeout=timeout)
    if cp.returncode != 0:
        sys.exit(f"latscope-bench {' '.join(args)} at np {np_} failed ({cp.returncode}): {cp.stderr[-2000:]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=300, help="barriers per algorithm and np (default 300)")
    ap.add_argument("--nps", default="2,3,4")
    a = ap.parse_args()
    nps = [int(x) for x in a.nps.split(",")]
    with tempfile.TemporaryDirectory() as td:
        lp = Path(td) / "logp.jsonl"
        run(2, ["logp", "--sizes", "0,64,1K,8K,64K", "--stop-rule", "median", "--budget", "1", "-o", str(lp)])
        f = logp.fit_logp([load(lp)])
        params = from_dict({"schema": "latscope.params/1", "model": "loggp", "params": f.loggp_params()}).model
        print(f"LogP (np 2): L = {f.L_s * 1e9:.0f} ns (raw), o_s = {f.o_s_s * 1e9:.0f} ns, o_r = {f.o_r_s * 1e9:.0f} ns, "
              f"g = {f.g_s * 1e9:.0f} ns; RTT/2 = o_s + L + o_r = {(f.o_s_s + f.L_s + f.o_r_s) * 1e9:.0f} ns; "
              f"post = {(f.post_s or 0) * 1e9:.0f} ns, flag = "
              + ("-" if f.flag_s is None else f"{f.flag_s * 1e9:.0f} ns") + ", mcast = "
              + ("-" if f.mcast_s is None else f"{f.mcast_s * 1e9:.0f} ns"))
        res = []
        for np_ in nps:
            out = Path(td) / f"b{np_}.jsonl"
            run(np_, bench_args("all", 30e-6, a.reps) + ["-o", str(out)])
            res.append(load(out))
        # post_s / flag_s: logp's post and flag (measured above, like every other parameter)
        # MPI_Bcast release: "auto" (mcast where the measured broadcast beats a message on one host)
        df = compare_results(params, res, L_raw_s=f.L_s, post_s=f.post_s or 0.0, flag_s=f.flag_s,
                             mcast_s=f.mcast_s)
    ok = True
    print("\npredicted: closed = seed §5.1.2 closed form (simultaneous entry); loop = LogP simulation of the "
          "benchmark loop (the error uses this one)")
    print(f"{'np':>3} {'algorithm':<16} {'closed':>10} {'loop':>10} {'measured':>10} {'err(loop)':>9} {'err(closed)':>11}")

    def us(v: object) -> str:
        return "-" if v is None or v != v else f"{float(v) * 1e6:.3f} us"   # type: ignore[arg-type]

    def pct(v: object) -> str:
        return "-" if v is None or v != v else f"{100 * float(v):+.0f}%"   # type: ignore[arg-type]

    for _, r in df.sort_values(["P", "measured_s"]).iterrows():
        print(f"{r['P']:>3} {r['alg']:<16} {us(r['closed_form_s']):>10} {us(r['predicted_s']):>10} "
              f"{us(r['measured_s']):>10} {pct(r['rel_err']):>9} {pct(r['closed_form_rel_err']):>11}")
    print()
    for np_ in (2, 4):
        d = df[df["P"] == np_]
        if d.empty:
            continue
        nat = float(d[d["alg"] == "native"]["measured_s"].iloc[0])
        ours = d[d["alg"] != "native"].sort_values("measured_s").iloc[0]
        ratio = float(ours["measured_s"]) / nat
        over = " (oversubscribed: %d ranks on %d cores)" % (np_, cores()) if np_ > cores() else ""
        target = " target <= 1.1" + (" MET" if ratio <= 1.1 else " MISSED") if np_ == 2 else ""
        if np_ == 2 and ratio > 1.1:
            ok = False
        print(f"best latscope barrier / native MPI_Barrier at np {np_}: {ours['alg']} {ours['measured_s'] * 1e6:.3f} us"
              f" / {nat * 1e6:.3f} us = {ratio:.2f}{target}{over}")
    fit_ = df[df["P"] <= cores()]
    sets = [(fit_, f"np {','.join(str(n) for n in nps if n <= cores())} (not oversubscribed)", True)]
    if (df["P"] > cores()).any():
        sets.append((df[df["P"] > cores()], f"np {','.join(str(n) for n in nps if n > cores())} (oversubscribed on "
                     f"{cores()} cores: scheduler delays, not LogP; reported apart)", False))
    for sub, label, has_target in sets:
        if sub.empty:
            continue
        e, ec = mean_abs_rel_err(sub), mean_abs_rel_err(sub, "closed_form_rel_err")
        tgt = (" target <= 10%" + (" MET" if e <= 0.10 else " MISSED")) if has_target else ""
        print(f"mean |predicted - measured| / measured over {int(sub['rel_err'].notna().sum())} modelled points, "
              f"{label}: loop {100 * e:.0f}%{tgt}; closed form {100 * ec:.0f}%")
        if has_target and not e <= 0.10:
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
