"""`latscope characterize`: the main job. On min(cores, 4) local ranks (or a given launcher): a
point-to-point latency sweep with adaptive repetitions, the two-roundtrip points, a bandwidth
sweep, Hockney fits, then results/…/report.html and a summary table."""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from latscope import fit, parts, report
from latscope.parts import Step
from latscope.results import Results, load
from latscope.run import cores, run_program
from latscope.units import fmt_rate, fmt_time


def steps(quick: bool) -> list[Step]:
    """The point-to-point steps, then those of every latscope.parts module."""
    return p2p_steps(quick) + [st for part in parts.load_all() for st in part.demo_steps(quick)]


def p2p_steps(quick: bool) -> list[Step]:
    lat_sizes = "0,1:64K:x4" if quick else "0,1:4M:x2"
    bw_sizes = "1K:256K:x4" if quick else "1K:4M:x4"
    budget = "0.5" if quick else "2"
    common = ["--progress", "--budget", budget]
    return [
        Step("p2p_pingpong", ["p2p", "--op", "pingpong", "--mode", "par", "--sizes", lat_sizes] + common),
        Step("p2p_roundtrip0", ["p2p", "--op", "roundtrip", "--reply-size", "0", "--sizes", "0,64K"] + common),
        Step("p2p_bandwidth", ["p2p", "--op", "bandwidth", "--window", "16", "--sizes", bw_sizes, "--max-reps", "200"] + common),
    ]


def run(out: Path, np_: int | None = None, launcher: str | None = None, hostfile: str | None = None,
        quick: bool = False, timer: str = "monotonic", as_json: bool = False, timeout: float | None = None,
        oversubscribe: bool = False) -> int:
    out.mkdir(parents=True, exist_ok=True)
    if np_ is None and launcher is None:
        np_ = max(2, min(cores(), 4))
    results: list[Results] = []
    plan = steps(quick)
    for k, st in enumerate(plan, 1):
        path = out / f"{st.name}.jsonl"
        n = st.np if (st.np and not launcher) else np_
        print(f"== [{k}/{len(plan)}] {st.name} on {n or 'launcher'} ranks -> {path}", file=sys.stderr, flush=True)
        cp = run_program("latscope-bench", st.args[:1] + ["--timer", timer, "-o", str(path)] + st.args[1:], n, launcher,
                         hostfile, timeout, oversubscribe=oversubscribe)
        if cp.returncode != 0:
            print(f"latscope: {st.name} failed with exit status {cp.returncode}", file=sys.stderr)
            return cp.returncode
        results.append(load(path))

    fits = [fit.hockney_regression(results[0])]
    fits.append(fit.hockney_two_roundtrip(results[1]))
    for pair in sorted(results[0].points["pair"].unique()):
        fits.append(fit.hockney_regression(results[0], pair=pair))
    params_path = out / "params.json"
    fit.write_params(fits, str(params_path), results[0].meta)

    params = report.load_params(params_path)
    for part in parts.load_all():
        part.after_demo(out, results, params)
    html = report.build(results, out / "report.html", params, "latscope characterize")
    if as_json:
        from latscope import jsonio
        print(jsonio.dumps({
            "out": str(out), "params": str(params_path), "report": str(html), "quick": quick,
            "points": results[0].summary().to_dict(orient="records"),
            "fits": [{"method": f.method, "pair": list(f.pair) if f.pair else None, "alpha_s": f.alpha_s,
                      "beta_s_per_byte": f.beta_s_per_byte, "bandwidth_bytes_per_s": f.bandwidth_bytes_per_s}
                     for f in fits]}, indent=1))
        return 0
    print()
    print(results[0].summary().to_string(index=False))
    print()
    rows = [{"method": f.method, "pair": "all" if not f.pair else "↔".join(map(str, f.pair)),
             "alpha": fmt_time(f.alpha_s), "beta (s/B)": f"{f.beta_s_per_byte:.3g}",
             "1/beta": fmt_rate(f.bandwidth_bytes_per_s)} for f in fits]
    print("Hockney fits (one-way T(m) = alpha + beta*m):")
    print(pd.DataFrame(rows).to_string(index=False))
    print(f"\nresults: {out}/*.jsonl  parameters: {params_path}  report: {html}")
    return 0
