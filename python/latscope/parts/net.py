"""Barriers over the emulated Ethernet cluster (`latscope net run`; seed 002; docs/network.md): the
report shows any net.jsonl next to its results files: the layer's LogP parameters, each barrier
row predicted against measured with the worst row, the rows' costs to 32 nodes, and the seed's
questions answered from the run's own parameters and from the seed's."""
from __future__ import annotations

import html
from typing import Any


def _t(v: Any) -> str:
    from latscope.units import fmt_time
    return "n/a" if v is None else fmt_time(float(v))


def section_net(inp: Any) -> str | None:
    from latscope.net import model
    from latscope.net_cli import registry
    from latscope.parts import beside_results

    files = beside_results(inp, "net.jsonl")
    if not files:
        return None
    costs = {r["name"]: r["cost"] for r in registry()}
    out = []
    for f in files:
        try:
            run = model.read(f)
        except model.NetDataError as e:
            out.append(f"<p>{html.escape(str(e))}</p>")
            continue
        rows = model.compare(run)
        cl = run.meta.get("cluster", {})
        out.append(f"<h3>{html.escape(str(f))}</h3><p>{cl.get('nodes', run.meta.get('ranks'))} nodes, "
                   f"{cl.get('networks', run.meta.get('networks'))} network(s), rate {html.escape(str(cl.get('rate')))}, "
                   f"loss {100 * float(cl.get('loss') or 0):g} %, receive by {html.escape(str(run.meta.get('recv')))}</p>")
        if run.logp is not None:
            out.append("<table class='t'><tr><th>parameter</th><th>median</th><th>95 % interval</th><th>n</th></tr>")
            for p in run.logp.params.values():
                val = _t(p.value_s) if p.value_s is not None else f"n/a ({html.escape(str(p.why))})"
                out.append(f"<tr><td>{p.name}</td><td>{val}</td><td>{_t(p.lo_s)} .. {_t(p.hi_s)}</td><td>{p.n}</td></tr>")
            out.append("</table>")
        out.append("<table class='t'><tr><th>row</th><th>P</th><th>predicted</th><th>measured</th><th>error</th>"
                   "<th>mean</th><th>lost</th><th>retransmitted</th></tr>")
        for r in rows:
            err = "n/a" if r["error"] is None else f"{100 * r['error']:+.1f} %"
            c = r["counters"]
            out.append(f"<tr><td>{r['alg']}</td><td>{r['ranks']}</td><td>{_t(r['predicted_s'])}</td>"
                       f"<td>{_t(r['measured_s'])}</td><td>{err}</td><td>{_t(r['mean_s'])}</td>"
                       f"<td>{c.get('lost', 0)}</td><td>{c.get('retransmissions', 0)}</td></tr>")
        out.append("</table>")
        w = model.worst(rows)
        out.append("<p>worst row: " + (f"{w['alg']} at P = {w['ranks']}: {100 * w['error']:+.1f} %" if w else "none")
                   + "</p>")
        sources: list[tuple[str, dict[str, float], list[dict[str, Any]] | None]] = [
            ("the seed's parameters (§5.1.1)", dict(model.SEED_PARAMS), None)]
        vals = run.logp.values() if run.logp else None
        if vals:
            sources.insert(0, ("this run's parameters", vals, rows))
        for name, v, meas in sources:
            ps = [2, 4, 8, 16, 32]
            out.append(f"<p>LogP costs with {name}:</p><table class='t'><tr><th>row</th>"
                       + "".join(f"<th>P = {p}</th>" for p in ps) + "</tr>")
            for alg, expr in costs.items():
                if alg != "null":
                    out.append(f"<tr><td>{alg}</td>" + "".join(f"<td>{_t(model.cost(expr, p, v))}</td>" for p in ps)
                               + "</tr>")
            out.append("</table><ul>" + "".join(f"<li>{html.escape(a)}</li>" for a in model.answers(v, costs, meas))
                       + "</ul>")
    return "\n".join(out)


SECTIONS = [("Barriers over an emulated Ethernet cluster (seed 002)", section_net)]
