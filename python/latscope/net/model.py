"""LogP parameters of the UDP layer and the barrier rows' predicted times (seed 002 §5.1).

The parameters come from the samples latscope-net writes (its "logp" record, measured in the same
launch as the barriers): o_s and o_r directly (the send call; the receive call with the datagram
already there), L = RTT/2 - o_s - o_r (seed 002 §5.1: RTT/2 = o_s + L + o_r), g from the
inter-arrival time within bursts, and the multicast's o_s, o_r and L the same way (its RTT: a
multicast ping, a unicast pong). Each is the median of its samples with a bootstrap 95 % interval
(the derived L's resamples its three medians together). A barrier row's cost is an expression
over them, read from the C row (latscope-net list --json), so the formula is written once."""
from __future__ import annotations

import ast
import json
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PARAMS = ("os", "or", "L", "g", "osm", "orm", "Lm")

# seed 002 §5.1.1 (MCD on Fast Ethernet, 4-byte messages): o_s 3 us, L 17.5 us, o_r 9.5 us,
# g = o_s + the 6 us send-completion interrupt; no separate multicast figures, so the unicast's.
SEED_PARAMS = {"os": 3e-6, "or": 9.5e-6, "L": 17.5e-6, "g": 9e-6, "osm": 3e-6, "orm": 9.5e-6, "Lm": 17.5e-6}


class NetDataError(ValueError):
    """A results file that cannot be used (missing records, a parameter that is not valid)."""


def lg(p: float) -> int:
    return 0 if p <= 1 else math.ceil(math.log2(p) - 1e-12)


def lgk(k: float, p: float) -> int:
    d, span = 0, 1
    while span < p:
        span *= int(k)
        d += 1
    return d


def lgf(p: float) -> int:
    return int(math.floor(math.log2(p) + 1e-12)) if p >= 1 else 0


def npw2(p: float) -> int:
    return 0 if p >= 1 and (int(p) & (int(p) - 1)) == 0 else 1


def ksum(k: float, p: float, a: float, b: float) -> float:
    """Sum over the root's phases i of a k-nomial tree on p ranks of a + c_i b, c_i the root's
    children in phase i: min(k - 1, ceil(p / k^i) - 1)."""
    total, span = 0.0, 1
    while span < p:
        c = min(int(k) - 1, math.ceil(p / span) - 1)
        total += a + c * b
        span *= int(k)
    return total


FUNCS: dict[str, Callable[..., float]] = {"lg": lg, "lgk": lgk, "lgf": lgf, "npw2": npw2, "ksum": ksum, "max": max,
                                          "min": min}
BINOPS: dict[type, Callable[[Any, Any], Any]] = {ast.Add: operator.add, ast.Sub: operator.sub,
                                                  ast.Mult: operator.mul, ast.Div: operator.truediv}
CMPOPS: dict[type, Callable[[Any, Any], Any]] = {ast.Gt: operator.gt, ast.Lt: operator.lt, ast.GtE: operator.ge,
                                                  ast.LtE: operator.le}


def cost(expr: str, p: int, params: dict[str, float]) -> float:
    """Evaluate a row's cost expression (arithmetic, comparisons as 0/1, the functions of FUNCS)
    for P = p ranks. Only those forms: it is data from the C registry, not Python."""
    env: dict[str, float] = {"P": float(p), **params}

    def ev(n: ast.AST) -> float:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return float(n.value)
        if isinstance(n, ast.Name) and n.id in env:
            return env[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in BINOPS:
            return float(BINOPS[type(n.op)](ev(n.left), ev(n.right)))
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in CMPOPS:
            return float(CMPOPS[type(n.ops[0])](ev(n.left), ev(n.comparators[0])))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in FUNCS and not n.keywords:
            return float(FUNCS[n.func.id](*[ev(a) for a in n.args]))
        raise NetDataError(f"cost expression '{expr}': '{ast.unparse(n)}' is not allowed")

    # `or` is a Python keyword: the expression's parameter `or` is read as `o_r`
    env["o_r"] = env.get("or", float("nan"))
    src = " ".join(("o_r" if tok == "or" else tok) for tok in _tokens(expr))
    return ev(ast.parse(src, mode="eval"))


def _tokens(expr: str) -> list[str]:
    out, cur = [], ""
    for ch in expr:
        if ch.isalnum() or ch in "_.":
            cur += ch
        else:
            if cur:
                out.append(cur)
                cur = ""
            if not ch.isspace():
                out.append(ch)
    if cur:
        out.append(cur)
    return out


@dataclass
class Param:
    name: str
    value_s: float | None
    lo_s: float | None
    hi_s: float | None
    n: int
    why: str | None = None      # why there is no value
    note: str | None = None     # what a valid but surprising value means


@dataclass
class LogP:
    params: dict[str, Param] = field(default_factory=dict)

    def values(self) -> dict[str, float] | None:
        """Every parameter's value, or None when one is missing or invalid."""
        if any(p.value_s is None for p in self.params.values()) or len(self.params) < len(PARAMS):
            return None
        return {k: float(p.value_s) for k, p in self.params.items() if p.value_s is not None}

    def invalid(self) -> list[str]:
        return [f"{p.name}: {p.why}" for p in self.params.values() if p.value_s is None]


def logp_from_samples(samples: dict[str, list[float]], boot: int = 1000, seed: int = 0) -> LogP:
    import numpy as np
    rng = np.random.default_rng(seed)
    arr = {k: np.asarray(v, dtype=float) for k, v in samples.items()}

    def boot_med(name: str) -> Any:
        x = arr.get(name)
        if x is None or x.size == 0:
            return None
        idx = rng.integers(0, x.size, size=(boot, x.size))
        return np.median(x[idx], axis=1), float(np.median(x)), int(x.size)

    meds = {k: boot_med(k) for k in ("rtt2_s", "os_s", "or_s", "g_s", "osm_s", "orm_s", "mrtt_s")}
    out = LogP()

    def put(name: str, parts: list[tuple[str, float]], signed: bool = False) -> None:
        if any(meds[k] is None for k, _ in parts):
            out.params[name] = Param(name, None, None, None, 0, "no samples")
            return
        val = sum(c * meds[k][1] for k, c in parts)
        bs = sum(c * meds[k][0] for k, c in parts)
        n = min(meds[k][2] for k, _ in parts)
        lo, hi = (float(v) for v in np.percentile(bs, [2.5, 97.5]))
        if not math.isfinite(val) or (val < 0 and not signed):
            out.params[name] = Param(name, None, lo, hi, n, f"negative ({val * 1e6:.2f} us): the model does not apply")
        elif val < 0:
            # RTT/2 < o_s + o_r: on a veth the send call itself carries the datagram into the
            # receiver's socket (the wire is inside o_s). The costs use o_s + L + o_r, which is
            # RTT/2 whatever L's sign, so the parameter stays usable; it is said, not hidden.
            out.params[name] = Param(name, val, lo, hi, n, note="negative: the delivery runs inside the send call "
                                     "(o_s + L + o_r = RTT/2 still holds)")
        else:
            out.params[name] = Param(name, val, lo, hi, n)

    put("os", [("os_s", 1)])
    put("or", [("or_s", 1)])
    put("L", [("rtt2_s", 1), ("os_s", -1), ("or_s", -1)], signed=True)
    put("g", [("g_s", 1)])
    put("osm", [("osm_s", 1)])
    put("orm", [("orm_s", 1)])
    put("Lm", [("mrtt_s", 1), ("rtt2_s", -1), ("osm_s", -1), ("orm_s", -1)], signed=True)
    return out


@dataclass
class Run:
    meta: dict[str, Any]
    logp: LogP | None
    rows: list[dict[str, Any]]


def read(path: str | Path) -> Run:
    meta: dict[str, Any] = {}
    logp = None
    rows = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise NetDataError(f"{path}: cannot read ({e.strerror})") from None
    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            continue
        try:
            r = json.loads(ln)
        except ValueError:
            raise NetDataError(f"{path}:{i}: not JSON") from None
        t = r.get("type")
        if t == "meta":
            meta = r
        elif t == "logp":
            logp = logp_from_samples(r["samples"])
        elif t == "barrier":
            rows.append(r)
    if meta.get("schema") != "latscope.net/1":
        raise NetDataError(f"{path}: not a latscope-net results file (schema latscope.net/1)")
    return Run(meta, logp, rows)


def compare(run: Run) -> list[dict[str, Any]]:
    """Each barrier row: predicted (its cost at the run's P with the run's own LogP parameters),
    measured (the mean over ranks of each rank's median time in the barrier: seed 002 §4.3's
    statistic, with medians), their relative error; None where undefined."""
    vals = run.logp.values() if run.logp else None
    out = []
    for r in run.rows:
        if r["alg"] == "null":
            continue
        pred = cost(r["cost"], int(r["ranks"]), vals) if vals else None
        meas = r.get("measured_s")
        # a --check run's times include its random arrival delays, which no cost has
        err = (pred - meas) / meas if pred is not None and meas and not r.get("check") else None
        out.append({"alg": r["alg"], "ranks": r["ranks"], "predicted_s": pred, "measured_s": meas,
                    "error": err, "counters": r.get("counters", {}), "check": r.get("check"),
                    "mean_s": r.get("mean_s")})
    return out


def worst(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    ok = [r for r in rows if r["error"] is not None]
    return max(ok, key=lambda r: abs(r["error"])) if ok else None


def answers(vals: dict[str, float], costs: dict[str, str], measured: list[dict[str, Any]] | None = None,
            p: int = 32) -> list[str]:
    """Seed 002's questions (§5.1.2, §5.2, §6), answered from LogP parameters `vals` and the rows'
    cost expressions `costs` (name -> expression); `measured` (compare() rows) adds what a run saw
    of the two-network rows beside their one-network twins."""
    from latscope.units import fmt_time
    out = []
    mc = {n: cost(costs[n], p, vals) for n in ("concurrent", "mtree2", "mtree3", "mtree4") if n in costs}
    se = cost(costs["pairwise"], p, vals)
    best = min(mc, key=lambda n: mc[n])
    verdict = "beats" if mc[best] < se else "does not beat"
    out.append(f"multicast release at P = {p}: the best multicast row, {best} ({fmt_time(mc[best])}), {verdict} "
               f"shuffle-exchange (pairwise, {fmt_time(se)})")
    lhs, rhs = 3 * max(vals["or"], vals["g"]), vals["os"] + vals["L"]
    out.append(f"what multicast needs (seed §5.1.2, the 4-ary tree at 16 nodes): 3 max(o_r, g) < o_s + L; here "
               f"{fmt_time(lhs)} {'<' if lhs < rhs else '>='} {fmt_time(rhs)}"
               + ("" if lhs < rhs else f": o_r and g below {fmt_time(rhs / 3)} would do it"))
    out.append("a second network: the model predicts no gain (the receiving CPU pays o_r per message "
               "whichever network it came on, seed §5.2)")
    if measured:
        m = {(r["alg"], r["ranks"]): r["measured_s"] for r in measured if r.get("measured_s") is not None}
        for two, one in (("concurrent-2net", "concurrent"), ("mtree3-2net", "mtree3"), ("mtree2-2net", "mtree2"),
                         ("pairwise-2net", "pairwise")):
            for (alg, ranks), v in sorted(m.items()):
                if alg == two and (one, ranks) in m:
                    w = m[(one, ranks)]
                    out.append(f"  measured at P = {ranks}: {two} {fmt_time(v)} against {one} {fmt_time(w)} "
                               f"({100 * (v - w) / w:+.0f} %)")
    return out
