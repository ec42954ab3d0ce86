"""The latency budget (docs/budget.md; seed 000): a ladder of same-clock ping-pongs measured by
`latscope-bench budget`, one launch per environment (shared memory, MPI forced onto TCP, two
network namespaces joined by a veth pair), and components deduced by differences of rungs, each
with its propagated uncertainty, marked measured or derived, a closure check, a what-if.

The component and closure definitions are data (COMPONENTS, CLOSURES, read from budget_table.json,
a file in the format of the user's JSON file that extends or overrides them by name: `latscope
budget --table FILE`). A component is a linear combination of quantities: rungs (their one-way
median) and `mpi-tcp.syscalls`, the kernel time per message inside the MPI calls measured by
liblatscope_systime.so. Keeping every component as
coefficients over the quantities makes sums, residuals and what-ifs exact: shared rungs cancel
before the uncertainty is propagated.

Longer than 600 lines on purpose: the definitions, the measuring, the component arithmetic and the
records share one representation (quantities and coefficients) and are read together; the
namespaces, which are not budget logic, live in latscope.netns."""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from latscope import jsonio
from latscope.run import LaunchError, build_dir, launch, mpi_flavor, mpiexec_path, program
from latscope.units import fmt_time
from latscope.netns import NETNS_IFACE, NS_ADDRS as NS_ADDRS, NS_PREFIX as NS_PREFIX, Namespaces as Namespaces
from latscope.netns import list_namespaces as list_namespaces, netns_skip_reason as netns_skip_reason
from latscope.netns import remove_stale as remove_stale
from latscope.netns import pid_alive

WORKDIR_PREFIX = "latscope-budget-"

FORMAT = "latscope.budget/1"
SYSTIME_QTY = "mpi-tcp.syscalls"


class BudgetError(ValueError):
    """Bad input (an unknown rung or component, a bad size or table): exit 2."""


# ---- the definitions: data, extended by --table FILE ------------------------------------------
# budget_table.json, in the format of a --table file. A component: of, the quantity measured;
# minus, quantities subtracted; factor, a cost paid once per round trip (inside one side) is
# factor 2 of a one-way difference; kind, measured (one rung, or the interposer) or derived (a
# difference), as seed 000's figures mark derived numbers. A closure: total, a rung measured end to
# end; parts, components whose sum should give it (seed 000 §6: the 8-vs-10 us write-DMA
# discussion is such a residual).
_TABLE = json.loads((Path(__file__).parent / "budget_table.json").read_text(encoding="utf-8"))
COMPONENTS: list[dict[str, Any]] = _TABLE["components"]
CLOSURES: list[dict[str, Any]] = _TABLE["closures"]

# The launch environments (the C rows name theirs). MPICH: the netmod and libfabric's tcp
# provider for every rank, also on one host (MPIR_CVAR_NOLOCAL=1); Open MPI: the tcp BTL.
LAUNCH_ENV: dict[str, dict[str, dict[str, str]]] = {
    "mpich": {
        "local": {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "shm"},
        "mpi-tcp": {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"},
        "netns": {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "shm"},
        "netns-tcp": {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp",
                      "FI_TCP_IFACE": NETNS_IFACE},
    },
    "openmpi": {
        "local": {},
        "mpi-tcp": {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "tcp,self"},
        "netns": {},
        "netns-tcp": {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "tcp,self", "OMPI_MCA_btl_tcp_if_include": NETNS_IFACE},
    },
}
CLASS_ORDER = ["local", "mpi-tcp", "netns", "netns-tcp"]


# ---- the rung registry, from the C side (one table: src/bench/ops_budget.c) ---------------------
@dataclass
class Rung:
    name: str
    launch: str
    mech: str
    blocking: bool
    default: bool
    help: str


def rungs() -> list[Rung]:
    """The C registry, as `latscope-bench budget --list` prints it (a singleton run, no mpiexec)."""
    env = dict(os.environ)
    env.setdefault("MPIR_CVAR_CH4_NETMOD", "ofi")
    env.setdefault("FI_PROVIDER", "shm")
    cp = subprocess.run([str(program("latscope-bench")), "budget", "--list"], capture_output=True, text=True,
                        env=env, timeout=60)
    if cp.returncode != 0:
        raise LaunchError(f"latscope-bench budget --list failed ({cp.returncode}): {cp.stderr.strip()[-300:]}")
    out = []
    for ln in cp.stdout.splitlines():
        if ln.startswith("{"):
            r = json.loads(ln)
            out.append(Rung(r["name"], r["launch"], r["mech"], bool(r["blocking"]), bool(r["default"]), r["help"]))
    return out


def load_table(path: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """COMPONENTS and CLOSURES, extended (or overridden by name) by a user's JSON file
    {"components": [...], "closures": [...]}."""
    comps = {c["name"]: dict(c) for c in COMPONENTS}
    clos = {c["name"]: dict(c) for c in CLOSURES}
    if path:
        try:
            user = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise BudgetError(f"--table '{path}': cannot be read as JSON ({e})") from None
        if not isinstance(user, dict) or set(user) - {"components", "closures"}:
            raise BudgetError(f"--table '{path}': must be an object with 'components' and/or 'closures' lists")
        for c in user.get("components", []):
            if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not isinstance(c.get("of"), str):
                raise BudgetError(f"--table '{path}': a component needs 'name' and 'of' (and optional 'minus', "
                                  f"'factor', 'kind', 'help'): {c!r}")
            c.setdefault("minus", [])
            c.setdefault("kind", "derived" if c["minus"] else "measured")
            comps[c["name"]] = c
        for c in user.get("closures", []):
            if not isinstance(c, dict) or not isinstance(c.get("total"), str) or not isinstance(c.get("parts"), list):
                raise BudgetError(f"--table '{path}': a closure needs 'name', 'total' and 'parts': {c!r}")
            clos[str(c.get("name", c["total"]))] = c
    for c in clos.values():
        for p in c["parts"]:
            if p not in comps:
                raise BudgetError(f"closure '{c['name']}': unknown component '{p}'; known: {', '.join(comps)}")
    return list(comps.values()), list(clos.values())


def select_rungs(spec: str | None, table: list[Rung]) -> list[Rung]:
    """--rungs grammar a,b,-c (all: every row); default: the default ladder."""
    names = [r.name for r in table]
    if not spec:
        return [r for r in table if r.default]
    chosen: list[str] = []
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if not items:
        raise BudgetError(f"--rungs '{spec}': empty; valid: {', '.join(names)}")
    if all(s.startswith("-") for s in items):
        chosen = [r.name for r in table if r.default]
    for s in items:
        nm = s[1:] if s.startswith("-") else s
        if nm not in names and nm != "all":
            raise BudgetError(f"--rungs '{spec}': unknown rung '{nm}'; valid: {', '.join(names)}, all")
        if s.startswith("-"):
            chosen = [c for c in chosen if c != nm]
        elif nm == "all":
            chosen += [n for n in names if n not in chosen]
        elif nm not in chosen:
            chosen.append(nm)
    return [r for r in table if r.name in chosen]


def parse_size(s: str) -> int:
    if not re.fullmatch(r"[0-9]+", s or "") or not 1 <= int(s) <= 65000:
        raise BudgetError(f"--size '{s}': must be a whole number of bytes in 1..65000 (UDP's datagram limit)")
    return int(s)


# ---- measuring --------------------------------------------------------------------------------
def _systime_lib() -> Path | None:
    p = build_dir() / "lib" / "liblatscope_systime.so"
    return p if p.exists() else None


class ClusterPair:
    """Nodes 0 and 1 of the kept emulated cluster (`budget --net`) in the place of the budget's
    own namespace pair: the veth rungs then cross the cluster's bridge with its rate and MTU
    (docs/network.md); latscope cluster down removes them, not the budget."""

    def __init__(self, kept: dict[str, Any]) -> None:
        self.names = (str(kept["namespaces"][0]), str(kept["namespaces"][1]))
        self.addrs = (str(kept["addresses"][0][0]), str(kept["addresses"][1][0]))
        self.iface = str(kept["ifaces"][0])

    def close(self) -> None:
        pass


def _run_launch(cls: str, names: list[str], size: int, out: Path, bench_args: list[str],
                ns: Namespaces | ClusterPair | None, systime_out: Path | None, timeout: float) -> None:
    ln = launch(2)
    flavor = mpi_flavor(mpiexec_path())
    env = dict(ln.env)
    for k, v in LAUNCH_ENV.get(flavor, LAUNCH_ENV["mpich"])[cls].items():
        env[k] = v
    if isinstance(ns, ClusterPair):
        for k in ("FI_TCP_IFACE", "OMPI_MCA_btl_tcp_if_include"):
            if k in env:
                env[k] = ns.iface
    args = ["budget", "--launch", cls, "--rungs", ",".join(names), "--size", str(size), "-o", str(out)] + bench_args
    exe = str(program("latscope-bench"))
    if systime_out is not None and (lib := _systime_lib()) is not None:
        env["LD_PRELOAD"] = str(lib)
        env["LATSCOPE_SYSTIME_OUT"] = str(systime_out)
    if ns is not None:
        args += ["--addrs", ",".join(ns.addrs if isinstance(ns, ClusterPair) else NS_ADDRS)]
        # rank 0 in one namespace, rank 1 in the other (MPMD launch); Open MPI: the same colon form
        prefix = [p for p in ln.prefix if p not in ("-n", "2")]
        cmd = prefix + ["-n", "1", "ip", "netns", "exec", ns.names[0], exe, *args, ":",
                        "-n", "1", "ip", "netns", "exec", ns.names[1], exe, *args]
    else:
        cmd = ln.prefix + [exe, *args]
    # its own session, so a kill reaches every process of the launch
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except BaseException:
        _killpg(proc)
        raise
    if proc.returncode == 2:   # latscope-bench refused an argument: bad input, said in one line
        raise BudgetError(err.strip().splitlines()[-1] if err.strip() else "latscope-bench refused the arguments")
    if proc.returncode != 0:
        raise LaunchError(f"latscope-bench budget --launch {cls} failed with exit status {proc.returncode}: "
                          f"{err.strip()[-500:]}")


def _killpg(proc: subprocess.Popen[str]) -> None:
    # the whole tree, not only the group: hydra's proxy and ranks each call setsid
    from latscope.jobs.job import end_popen
    end_popen(proc)


def _read_points(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    meta: dict[str, Any] = {}
    pts = []
    for ln in path.read_text().splitlines():
        if not ln.strip():
            continue
        r = json.loads(ln)
        if r.get("type") == "meta":
            meta = r
        elif r.get("type") == "point":
            pts.append(r)
    return meta, pts


def _systime_qty(path: Path) -> dict[str, Any] | None:
    """Kernel time per message inside the MPI calls: (sum over ranks of send_like and recv_like
    ns) / (messages sent = the ranks' send_like calls); docs/budget.md "Inside the MPI call"."""
    if not path.exists():
        return None
    recs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    recs = [r for r in recs if r.get("rank") in (0, 1) and r.get("format") == "latscope.systime/1"]
    if len(recs) != 2:
        return None
    sends = sum(int(r["send_like"]["calls"]) for r in recs)
    if sends == 0:
        return None
    ns = sum(int(r["send_like"]["ns"]) + int(r["recv_like"]["ns"]) for r in recs)
    waits = sum(int(r["wait"]["calls"]) for r in recs)
    return {"value_s": ns / sends * 1e-9, "messages": sends, "wait_calls_per_message": waits / sends,
            "send_s": sum(int(r["send_like"]["ns"]) for r in recs) / sends * 1e-9,
            "recv_s": sum(int(r["recv_like"]["ns"]) for r in recs) / sends * 1e-9}


@dataclass
class Measured:
    """One run of the ladder: rung name -> its record; skipped rung -> reason."""

    rungs: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    systime: dict[str, Any] | None = None
    load1: list[float] = field(default_factory=list)


def measure(selected: list[Rung], size: int, bench_args: list[str], workdir: Path, run: int,
            systime: bool = True, timeout: float = 600.0, log: Any = None,
            net: dict[str, Any] | None = None) -> Measured:
    """Run every launch class the selection needs, in CLASS_ORDER; the namespace classes only as
    root (skipped with the reason otherwise), inside namespaces that are always removed, or, with
    `net` (the kept cluster), between its nodes 0 and 1."""
    log = log if log is not None else sys.stderr
    m = Measured()
    by_class: dict[str, list[str]] = {}
    for r in selected:
        by_class.setdefault(r.launch, []).append(r.name)
    reason = netns_skip_reason()
    ns: Namespaces | ClusterPair | None = None
    try:
        for cls in CLASS_ORDER:
            names = by_class.get(cls)
            if not names:
                continue
            if cls.startswith("netns") and reason:
                for n in names:
                    m.skipped[n] = reason
                print(f"latscope budget: skipping {', '.join(names)}: {reason}", file=log)
                continue
            if cls.startswith("netns") and ns is None:
                ns = ClusterPair(net) if net is not None else Namespaces().open()
            out = workdir / f"run{run}-{cls}.jsonl"
            st = workdir / f"run{run}-{cls}.systime.jsonl" if systime and cls == "mpi-tcp" else None
            if st is not None and st.exists():
                st.unlink()
            print(f"latscope budget: run {run + 1}: {cls}: {', '.join(names)}", file=log, flush=True)
            _run_launch(cls, names, size, out, bench_args, ns if cls.startswith("netns") else None, st, timeout)
            meta, pts = _read_points(out)
            if isinstance(meta.get("load"), dict) and meta["load"].get("load1") is not None:
                m.load1.append(float(meta["load"]["load1"]))
            for p in pts:
                p["launch"] = cls
                m.rungs[str(p["op"])] = p
            if st is not None:
                m.systime = _systime_qty(st)
    finally:
        if ns is not None:
            ns.close()
    return m


# ---- components, closure, stability ------------------------------------------------------------
def _half(rec: dict[str, Any]) -> float | None:
    lo, hi = rec.get("ci_lo_s"), rec.get("ci_hi_s")
    if lo is None or hi is None:
        return None
    return (float(hi) - float(lo)) / 2.0


def quantities(m: Measured) -> dict[str, tuple[float, float | None, float | None]]:
    """name -> (median-based value, CI half-width, minimum-based value)."""
    q: dict[str, tuple[float, float | None, float | None]] = {}
    for name, rec in m.rungs.items():
        if rec.get("median_s") is not None:
            q[name] = (float(rec["median_s"]), _half(rec), None if rec.get("min_s") is None else float(rec["min_s"]))
    if m.systime is not None:
        # a mean per call over the whole window: no CI of its own (reported as unknown)
        q[SYSTIME_QTY] = (float(m.systime["value_s"]), None, None)
    return q


def coefficients(comp: dict[str, Any]) -> dict[str, float]:
    f = float(comp.get("factor", 1.0))
    co: dict[str, float] = {comp["of"]: f}
    for x in comp.get("minus", []):
        co[x] = co.get(x, 0.0) - f
    return co


def combine(co: dict[str, float], q: dict[str, tuple[float, float | None, float | None]]) -> dict[str, Any]:
    """value, CI half-width (in quadrature; the rungs are independent measurements), min-based
    value; None where a quantity is missing or has no CI."""
    co = {k: v for k, v in co.items() if abs(v) > 1e-12}
    missing = sorted(k for k in co if k not in q)
    if missing:
        return {"value_s": None, "ci_half_s": None, "min_based_s": None, "missing": missing}
    val = sum(c * q[k][0] for k, c in co.items())
    hs = [q[k][1] for k in co]
    half: float | None = None
    if all(h is not None for h in hs):
        half = math.sqrt(sum((c * (h or 0.0)) ** 2 for c, h in zip(co.values(), hs)))
    ms = [q[k][2] for k in co]
    mn: float | None = None
    if all(x is not None for x in ms):
        mn = sum(c * (x or 0.0) for c, x in zip(co.values(), ms))
    return {"value_s": val, "ci_half_s": half, "min_based_s": mn, "missing": []}


def formula(comp: dict[str, Any]) -> str:
    f = float(comp.get("factor", 1.0))
    body = " - ".join([comp["of"], *comp.get("minus", [])])
    return body if f == 1.0 else f"{f:g} * ({body})"


def resolution(value_s: float, ci_half_s: float | None) -> tuple[bool | None, float | None]:
    """``(resolved, upper_s)``: a component is a duration, so it is resolved only when its CI lies
    above zero (``value - half > 0``); otherwise the measurement bounds it from above by
    ``upper_s = value + half`` and no more (None where there is no CI: resolved only if positive)."""
    if ci_half_s is None:
        return (value_s > 0.0), None
    return (value_s - ci_half_s > 0.0), value_s + ci_half_s


def _agree(vals: list[float], halves: list[float | None]) -> bool | None:
    if len(vals) < 2 or any(h is None for h in halves):
        return None
    return all(abs(vals[i] - vals[j]) <= (halves[i] or 0.0) + (halves[j] or 0.0)
               for i in range(len(vals)) for j in range(i + 1, len(vals)))


def components(runs: list[Measured], comps: list[dict[str, Any]], window: int | None = None) -> list[dict[str, Any]]:
    """One record per component: per-run values, the mean over runs, the widest CI, and stable
    (every pair of runs agrees within their CIs; None with one run or no CI).

    ``window``: the verdict, value and CI come from the newest ``window`` runs that measured every
    rung the component needs (repeat rounds measure only the rungs of unstable components, so a
    run may lack some); ``repeats`` counts the runs beyond the first ``window``."""
    qs = [quantities(m) for m in runs]
    out = []
    for c in comps:
        per_all = [combine(coefficients(c), q) for q in qs]
        rec: dict[str, Any] = {"type": "component", "name": c["name"], "kind": c.get("kind", "derived"),
                               "formula": formula(c), "coefficients": coefficients(c), "help": c.get("help", "")}
        first = per_all[:window] if window else per_all
        if not first or any(p["value_s"] is None for p in first):
            rec.update(value_s=None, ci_half_s=None, min_based_s=None, runs_s=[p["value_s"] for p in per_all],
                       stable=None, missing=per_all[0]["missing"] if per_all else [], resolved=None, upper_s=None,
                       repeats=0, superseded_s=[])
            out.append(rec)
            continue
        avail = [p for p in per_all if p["value_s"] is not None]
        per = avail[-window:] if window else avail
        vals = [float(p["value_s"]) for p in per]
        halves = [p["ci_half_s"] for p in per]
        mins = [p["min_based_s"] for p in per]
        value = sum(vals) / len(vals)
        half = max(h for h in halves if h is not None) if all(h is not None for h in halves) else None
        resolved, upper = resolution(value, half)
        rec.update(value_s=value, ci_half_s=half,
                   min_based_s=min(x for x in mins if x is not None) if all(x is not None for x in mins) else None,
                   runs_s=vals, stable=_agree(vals, halves), missing=[], resolved=resolved, upper_s=upper,
                   repeats=len(avail) - len(first),
                   superseded_s=[float(p["value_s"]) for p in avail[:len(avail) - len(per)]])
        out.append(rec)
    return out


def unstable_rungs(comp_recs: list[dict[str, Any]]) -> set[str]:
    """The rungs (quantities) the unstable components are computed from."""
    return {k for c in comp_recs if c.get("stable") is False for k in c["coefficients"]}


def _run_mean_q(runs: list[Measured]) -> dict[str, tuple[float, float | None, float | None]]:
    qs = [quantities(m) for m in runs]
    keys = set.intersection(*(set(q) for q in qs)) if qs else set()
    res: dict[str, tuple[float, float | None, float | None]] = {}
    for k in keys:
        v = sum(q[k][0] for q in qs) / len(qs)
        hs = [q[k][1] for q in qs]
        h = max(x for x in hs if x is not None) if all(x is not None for x in hs) else None
        ms = [q[k][2] for q in qs]
        mn = min(x for x in ms if x is not None) if all(x is not None for x in ms) else None
        res[k] = (v, h, mn)
    return res


def closures(runs: list[Measured], comps: list[dict[str, Any]], clos: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sum of the parts against the measured total; residual = total - sum (exact on shared
    rungs), verdict: closes (|residual| within its CI), overlap (sum exceeds the whole), or
    unaccounted (time the parts miss)."""
    q = _run_mean_q(runs)
    byname = {c["name"]: c for c in comps}
    out = []
    for cl in clos:
        summed: dict[str, float] = {}
        for p in cl["parts"]:
            for k, v in coefficients(byname[p]).items():
                summed[k] = summed.get(k, 0.0) + v
        resid = {cl["total"]: 1.0}
        for k, v in summed.items():
            resid[k] = resid.get(k, 0.0) - v
        tot, s, r = combine({cl["total"]: 1.0}, q), combine(summed, q), combine(resid, q)
        verdict = None
        if r["value_s"] is not None:
            h = r["ci_half_s"]
            if h is not None and abs(r["value_s"]) <= h:
                verdict = "closes"
            else:
                verdict = "overlap" if r["value_s"] < 0 else "unaccounted"
        out.append({"type": "closure", "name": cl.get("name", cl["total"]), "total": cl["total"],
                    "parts": list(cl["parts"]), "total_s": tot["value_s"], "sum_s": s["value_s"],
                    "residual_s": r["value_s"], "residual_ci_half_s": r["ci_half_s"], "verdict": verdict,
                    "missing": sorted(set(tot["missing"]) | set(s["missing"])), "help": cl.get("help", "")})
    return out


# ---- records and text --------------------------------------------------------------------------
def rung_records(runs: list[Measured], table: list[Rung], first: int | None = None) -> list[dict[str, Any]]:
    """``first``: runs from this index on are repeat rounds, written as ``rung_repeat`` records (the
    rung table, closures and what-ifs read the ``rung`` records of the full runs only)."""
    info = {r.name: r for r in table}
    out = []
    for k, m in enumerate(runs):
        kind = "rung_repeat" if first is not None and k >= first else "rung"
        for name, p in m.rungs.items():
            r = info.get(name)
            out.append({"type": kind, "run": k, "name": name, "launch": p.get("launch"),
                        "mech": r.mech if r else None, "blocking": r.blocking if r else None,
                        "size_bytes": p.get("size_bytes"), "median_s": p.get("median_s"), "min_s": p.get("min_s"),
                        "ci_lo_s": p.get("ci_lo_s"), "ci_hi_s": p.get("ci_hi_s"), "ci_level": p.get("ci_level"),
                        "n": p.get("n"), "reps_total": p.get("reps_total"), "stop_reason": p.get("stop_reason"),
                        "stationary": p.get("stationary"), "load1": p.get("load1")})
        for name, why in m.skipped.items():
            out.append({"type": "rung", "run": k, "name": name, "launch": info[name].launch if name in info else None,
                        "skipped": why, "median_s": None, "min_s": None, "ci_lo_s": None, "ci_hi_s": None})
    return out


def write(path: Path, meta: dict[str, Any], records: list[dict[str, Any]]) -> None:
    with open(path, "w") as f:
        for r in [meta, *records]:
            f.write(jsonio.dumps(r) + "\n")


def read(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    p = Path(path)
    try:
        lines = p.read_text().splitlines()
    except OSError as e:
        raise BudgetError(f"{path}: cannot be read ({e.strerror})") from None
    recs = []
    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            continue
        try:
            recs.append(json.loads(ln))
        except json.JSONDecodeError:
            raise BudgetError(f"{path}:{i}: not JSON: not a budget file (latscope budget -o FILE)") from None
    if not recs or recs[0].get("format") != FORMAT:
        raise BudgetError(f"{path}: not a budget file: its first record must have format '{FORMAT}'")
    return recs[0], recs[1:]


def _pm(v: float | None, h: float | None) -> str:
    if v is None:
        return "-"
    return fmt_time(v) + (f" ± {fmt_time(h)}" if h is not None else " ± ?")


def shown_value(c: dict[str, Any]) -> str:
    """A component as printed: ``value ± CI`` when resolved; else ``not resolved (< upper)``, never a
    negative duration (its CI reaches zero, so the data bound it only from above)."""
    v, h = c.get("value_s"), c.get("ci_half_s")
    if v is None:
        return "-"
    resolved = c.get("resolved")
    upper = c.get("upper_s")
    if resolved is None:   # a file written before components carried their resolution
        resolved, upper = resolution(float(v), None if h is None else float(h))
    if resolved:
        return _pm(v, h)
    if upper is not None and upper > 0:
        return f"not resolved (< {fmt_time(upper)})"
    return "not resolved (<= 0)"


def _nonneg_time(v: float | None) -> str:
    if v is None:
        return "-"
    return fmt_time(v) if v > 0 else "<= 0"


def text(meta: dict[str, Any], recs: list[dict[str, Any]]) -> str:
    lines = [f"latency budget: {meta.get('size_bytes')} B one-way (RTT/2), timer {meta.get('timer')}, "
             f"{meta.get('runs')} run(s); CI {100 * float(meta.get('ci_level') or 0.95):g}% of the median"]
    if meta.get("emulated_network"):
        lines.append(f"veth rungs across the emulated cluster's nodes 0 and 1: {meta['emulated_network']}")
    rr = [r for r in recs if r["type"] == "rung" and r.get("run") == 0]
    lines.append(f"{'rung':<16}{'launch':<11}{'median':>11}{'min':>11}{'CI':>24}{'n':>8}")
    for r in rr:
        if r.get("skipped"):
            lines.append(f"{r['name']:<16}{str(r.get('launch')):<11}  skipped: {r['skipped']}")
            continue
        ci = f"[{fmt_time(r['ci_lo_s'])}, {fmt_time(r['ci_hi_s'])}]" if r.get("ci_lo_s") is not None else "-"
        lines.append(f"{r['name']:<16}{str(r.get('launch')):<11}{fmt_time(r['median_s']):>11}{fmt_time(r['min_s']):>11}"
                     f"{ci:>24}{r.get('n') or '-':>8}")
    lines.append("")
    lines.append(f"{'component':<18}{'kind':<9}{'value ± CI':>24}{'from minima':>13}  {'stable':<18}formula")
    for c in recs:
        if c["type"] != "component":
            continue
        if c["value_s"] is None:
            lines.append(f"{c['name']:<18}{c['kind']:<9}{'-':>24}{'-':>13}  {'-':<18}{c['formula']}  "
                         f"(missing {', '.join(c.get('missing') or [])})")
            continue
        st = {True: "yes", False: "UNSTABLE", None: "-"}[c.get("stable")]
        if c.get("repeats"):
            st += f" ({c['repeats']} rep.)"
        lines.append(f"{c['name']:<18}{c['kind']:<9}{shown_value(c):>24}"
                     f"{_nonneg_time(c['min_based_s']):>13}  {st:<18}{c['formula']}")
    lines.append("")
    for cl in recs:
        if cl["type"] != "closure":
            continue
        if cl["residual_s"] is None:
            lines.append(f"closure {cl['name']}: not measured (missing {', '.join(cl['missing'])})")
            continue
        lines.append(f"closure {cl['name']}: total {fmt_time(cl['total_s'])} = {' + '.join(cl['parts'])} "
                     f"{fmt_time(cl['sum_s'])} + residual {_pm(cl['residual_s'], cl['residual_ci_half_s'])} "
                     f"-> {cl['verdict']}")
    unstable = [c["name"] for c in recs if c["type"] == "component" and c.get("stable") is False]
    if unstable:
        rep = meta.get("repeat_unstable") or 0
        after = f", after up to {rep} interleaved repeat(s) of their rungs" if rep else ""
        lines.append(f"unstable (the runs disagree beyond their CIs{after}): {', '.join(unstable)}")
    hist = meta.get("unstable_by_round") or []
    if len(hist) > 1:
        lines.append("unstable before each repeat round and after the last: "
                     + " -> ".join(str(len(h)) for h in hist))
    unres = [c["name"] for c in recs if c["type"] == "component" and c.get("value_s") is not None
             and not (c.get("resolved") if c.get("resolved") is not None
                      else resolution(float(c["value_s"]), c.get("ci_half_s"))[0])]
    if unres:
        lines.append(f"not resolved (the CI reaches zero: smaller than this ladder can measure): {', '.join(unres)}")
    if meta.get("load1"):
        lines.append(f"machine load (1-min load average at each launch): {', '.join(f'{x:g}' for x in meta['load1'])} "
                     f"on {meta.get('cpus')} CPUs")
    return "\n".join(lines)


def whatif(meta: dict[str, Any], recs: list[dict[str, Any]], remove: list[str], total: str | None,
           scale: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Seed 000 §8: the latency with components removed (``remove``) or scaled (``scale``: name ->
    factor, 0 = removed, 0.5 = halved), for each closure containing one of them (or for --total
    RUNG): ``total - sum (1 - factor) * component``, the CI propagated exactly through the rungs'
    coefficients (a rung shared by the total and a component cancels instead of adding)."""
    factors: dict[str, float] = {r: 0.0 for r in remove}
    factors.update(scale or {})
    comps = {c["name"]: c for c in recs if c["type"] == "component"}
    for r, f in factors.items():
        opt = "--remove" if r in remove and r not in (scale or {}) else "--scale"
        if r not in comps:
            raise BudgetError(f"{opt}: unknown component '{r}'; valid: {', '.join(comps)}")
        if comps[r]["value_s"] is None:
            raise BudgetError(f"{opt}: component '{r}' was not measured in this file "
                              f"(missing {', '.join(comps[r].get('missing') or [])})")
        if not (math.isfinite(f) and f >= 0.0):
            raise BudgetError(f"--scale {r}={f!r}: the factor must be a number >= 0 (0 removes the component)")
    names = list(factors)
    rq: dict[str, tuple[float, float | None, float | None]] = {}
    for rec in recs:
        if rec["type"] == "rung" and rec.get("median_s") is not None:
            rows = [x for x in recs if x["type"] == "rung" and x["name"] == rec["name"] and x.get("median_s") is not None]
            v = sum(float(x["median_s"]) for x in rows) / len(rows)
            hs = [_half(x) for x in rows]
            rq[rec["name"]] = (v, max(h for h in hs if h is not None) if all(h is not None for h in hs) else None, None)
    if meta.get("systime") and meta["systime"].get("value_s") is not None:
        rq[SYSTIME_QTY] = (float(meta["systime"]["value_s"]), None, None)
    targets: list[tuple[str, list[str]]] = []
    if total:
        if total not in rq:
            raise BudgetError(f"--total: rung '{total}' not measured in this file; measured: {', '.join(sorted(rq))}")
        targets.append((total, names))
    else:
        for cl in recs:
            if cl["type"] == "closure" and cl.get("total_s") is not None and set(names) & set(cl["parts"]):
                targets.append((cl["total"], [r for r in names if r in cl["parts"]]))
        if not targets:
            raise BudgetError(f"{','.join(names)}: no measured closure contains these components; "
                              "name the latency to project with --total RUNG")
    out = []
    for tot, rem in targets:
        co: dict[str, float] = {tot: 1.0}
        for r in rem:
            if comps[r].get("repeats"):
                # its value comes from repeat rounds, runs other than the total's: it enters as its
                # own (independent) quantity, not through rungs the total's runs measured
                key = f"component:{r}"
                rq[key] = (float(comps[r]["value_s"]), comps[r].get("ci_half_s"), None)
                co[key] = co.get(key, 0.0) - (1.0 - factors[r])
                continue
            for k, v in comps[r]["coefficients"].items():
                co[k] = co.get(k, 0.0) - (1.0 - factors[r]) * float(v)
        base, proj = combine({tot: 1.0}, rq), combine(co, rq)
        out.append({"type": "whatif", "total": tot, "removed": [r for r in rem if factors[r] == 0.0],
                    "scaled": {r: factors[r] for r in rem}, "total_s": base["value_s"],
                    "projected_s": proj["value_s"], "projected_ci_half_s": proj["ci_half_s"],
                    "saving_s": None if proj["value_s"] is None or base["value_s"] is None
                    else base["value_s"] - proj["value_s"]})
    return out


def remove_stale_workdirs(tmpdir: str | None = None) -> list[Path]:
    """Remove the temporary work directories of budget runs that no longer exist (SIGKILL runs no
    cleanup); only this user's, named with a pid that is gone. Not an error when one cannot go."""
    gone: list[Path] = []
    root = Path(tmpdir or tempfile.gettempdir())
    try:
        entries = list(root.iterdir())
    except OSError:
        return gone
    for d in entries:
        m = re.fullmatch(re.escape(WORKDIR_PREFIX) + r"(\d+)-[^/]+", d.name)
        try:
            if not m or not d.is_dir() or d.is_symlink() or d.stat().st_uid != os.geteuid():
                continue
            if pid_alive(int(m.group(1))):
                continue
            shutil.rmtree(d)
            gone.append(d)
        except OSError:
            continue
    return gone


def run_budget(rung_spec: str | None, size: int, runs: int, bench_args: list[str], table_path: str | None,
               out: Path | None, workdir: Path | None = None, systime: bool = True,
               log: Any = None, repeat_unstable: int = 2,
               net: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Measure the ladder `runs` times and derive everything; write `out` if given.

    A component whose runs disagree beyond their CIs is not given up at once: up to
    ``repeat_unstable`` more rounds re-measure only the rungs of the still-unstable components
    (each round one launch per class, so the classes alternate: interleaved), and the verdict,
    value and CI come from the newest ``runs`` runs of each component (its record's ``repeats``
    says how many were added; ``runs_s`` keeps every run). Closures use the first ``runs`` runs,
    which measured every rung. net: the kept cluster (latscope.net.launch.kept_cluster), whose
    nodes 0 and 1 carry the veth rungs."""
    comps, clos = load_table(table_path)
    table = rungs()
    selected = select_rungs(rung_spec, table)
    if netns_skip_reason() is None:
        remove_stale()   # a run killed with SIGKILL left its namespaces: its pid is gone
    tmp = None
    if workdir is None:
        remove_stale_workdirs()
        # the pid in the name lets a later run remove it after this one is SIGKILLed
        tmp = tempfile.TemporaryDirectory(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    rounds = 0
    history: list[list[str]] = []   # the unstable components before each repeat round, and after the last
    try:
        measured = [measure(selected, size, bench_args, workdir, k, systime=systime, log=log, net=net)
                    for k in range(runs)]
        while runs >= 2:
            now = components(measured, comps, window=runs)
            history.append(sorted(c["name"] for c in now if c.get("stable") is False))
            if rounds >= repeat_unstable:
                break
            again = unstable_rungs(now)
            subset = [r for r in selected if r.name in again]
            if not subset:
                break
            print(f"latscope budget: unstable, measuring again ({rounds + 1} of {repeat_unstable}): "
                  f"{', '.join(r.name for r in subset)}", file=log if log is not None else sys.stderr, flush=True)
            measured.append(measure(subset, size, bench_args, workdir, len(measured), systime=systime, log=log,
                                    net=net))
            rounds += 1
    finally:
        if tmp is not None:
            tmp.cleanup()
    first_meta = measured[0]
    sts = [m.systime for m in measured[:runs] if m.systime is not None]
    timer = "tsc"
    if "--timer" in bench_args:
        timer = bench_args[bench_args.index("--timer") + 1]
    meta: dict[str, Any] = {
        "type": "budget_meta", "format": FORMAT, "size_bytes": size, "runs": runs, "timer": timer,
        "ci_level": 0.95, "rungs": [r.name for r in selected], "skipped": first_meta.skipped,
        "mpi_flavor": mpi_flavor(mpiexec_path()), "euid": os.geteuid(), "cpus": os.cpu_count(),
        "load1": [x for m in measured for x in m.load1],
        "systime": None if not sts else {
            "value_s": sum(s["value_s"] for s in sts) / len(sts), "runs": sts,
            "note": "kernel time per message in send/recv-like calls inside MPI (mpi-tcp rung); a mean per call"},
        "bench_args": bench_args, "repeat_unstable": repeat_unstable, "repeat_rounds": rounds,
        "unstable_by_round": history,
        "emulated_network": None if net is None else _describe_net(net),
    }
    # a component or closure that needs a rung nobody asked for (the synthetic one, by default)
    # is left out; one whose rung was skipped stays, with what is missing
    unasked = {r.name for r in table} - {r.name for r in selected}
    comp_recs = [c for c in components(measured, comps, window=runs) if not (set(c.get("missing") or []) & unasked)]
    clos_recs = [c for c in closures(measured[:runs], comps, clos) if not (set(c.get("missing") or []) & unasked)]
    recs = rung_records(measured, table, first=runs) + comp_recs + clos_recs
    if out is not None:
        write(out, meta, recs)
    return meta, recs


def _describe_net(kept: dict[str, Any]) -> str:
    from latscope.net.launch import describe
    return describe(kept)


def compare(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two budget files' components: agree when their values differ by at most the sum of their
    CI half-widths (the reproducibility check of docs/budget.md); None where either lacks one."""
    ca = {c["name"]: c for c in a if c["type"] == "component" and c.get("value_s") is not None}
    out = []
    for c in b:
        if c["type"] != "component" or c.get("value_s") is None or c["name"] not in ca:
            continue
        x, y = ca[c["name"]], c
        ha, hb = x.get("ci_half_s"), y.get("ci_half_s")
        diff = float(y["value_s"]) - float(x["value_s"])
        tol = None if ha is None or hb is None else float(ha) + float(hb)
        out.append({"type": "compare", "name": c["name"], "a_s": x["value_s"], "b_s": y["value_s"], "diff_s": diff,
                    "tolerance_s": tol, "stable": None if tol is None else abs(diff) <= tol})
    return out
