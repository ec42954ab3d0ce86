"""`latscope net`: barriers on a user-level UDP layer across an emulated Ethernet cluster (seed 002;
docs/network.md). `net run` makes the cluster (network namespaces, bridges, rate, MTU, loss),
launches latscope-net on it (the layer's LogP parameters, then each barrier row), removes the
cluster and prints predicted against measured; `net compare FILE` prints that table again;
`net predict` prints the rows' LogP costs up to any P from a file's parameters or the seed's own;
`net list` the rows. Bad input: one line naming the value, exit 2, nothing created."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_USAGE = 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "net", help="barriers on a UDP messaging layer across an emulated Ethernet cluster (seed 002)",
        description=(__doc__ or "").split("\n\n")[0])
    sub = p.add_subparsers(dest="net_cmd", required=True)
    r = sub.add_parser("run", help="make the cluster, measure LogP and the barriers on it, remove it")
    add_cluster_args(r)
    r.add_argument("--algs", default="all", help="barrier rows: a,b,-c or all (default: all the networks allow)")
    r.add_argument("--recv", default="block", help="block (poll() in the kernel) or poll (spin); default block")
    r.add_argument("--reps", type=int, default=None, help="timed barriers per row (default 300; quick: 30)")
    r.add_argument("--warmup", type=int, default=None, help="untimed barriers first (default 30)")
    r.add_argument("--gap-us", type=int, default=None, help="dummy loop after each barrier, us (default 30)")
    r.add_argument("--gap", default=None, help="the dummy loop sleeps (default: each node has its own CPU) or spins")
    r.add_argument("--timeout-us", type=int, default=None, help="retransmission timeout, us (default 2000)")
    r.add_argument("--check", action="store_true",
                   help="random arrival delays and the check that no rank leaves before all arrive")
    r.add_argument("--delay-us", type=int, default=None, help="largest random delay with --check (default 200)")
    r.add_argument("--seed", type=int, default=None, help="seed of the random delays (default 1)")
    r.add_argument("--logp-reps", type=int, default=None, help="samples per LogP parameter (default 300; 0: none)")
    r.add_argument("-o", "--output", required=True, help="results file (latscope.net/1 JSON Lines)")
    r.add_argument("--timeout", type=float, default=600, help="kill the launch after this many seconds (default 600)")
    r.add_argument("--json", action="store_true", help="print the comparison as JSON Lines")
    c = sub.add_parser("compare", help="predicted against measured, per row, with the worst row")
    c.add_argument("files", nargs="+", help="latscope net run -o files")
    c.add_argument("--json", action="store_true", help="print the rows as JSON Lines")
    q = sub.add_parser("predict", help="the rows' LogP costs at P = 2..N")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--from", dest="source", help="the LogP parameters measured in this latscope net run file")
    src.add_argument("--seed-params", action="store_true",
                     help="seed 002 §5.1.1's MCD parameters (o_s 3 us, L 17.5 us, o_r 9.5 us, g 9 us)")
    q.add_argument("--nodes", default="2,4,8,16,32", help="values of P, comma-separated (default 2,4,8,16,32)")
    q.add_argument("--algs", default="all", help="rows (default all)")
    sub.add_parser("list", help="the barrier rows and their LogP costs")
    return p


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("emulated cluster")
    g.add_argument("--nodes", type=int, default=2, help="nodes (network namespaces), 1..8; one rank each (default 2)")
    g.add_argument("--networks", type=int, default=1, help="networks (bridges), each node one veth on each: 1 or 2")
    g.add_argument("--rate", default="100mbit", help="per-link rate (tc tbf): 100mbit, 1gbit, ... or none (default 100mbit)")
    g.add_argument("--mtu", default="1500", help="MTU of every link, bytes (default 1500)")
    g.add_argument("--loss", default="0", help="random loss of UDP datagrams at each receiver: 1%%, 0.01, ... (default 0)")


def _fail(msg: str) -> int:
    print(f"latscope net: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def registry() -> list[dict[str, Any]]:
    import subprocess
    from latscope.run import program
    cp = subprocess.run([str(program("latscope-net")), "list", "--json"], capture_output=True, text=True, timeout=30)
    rows: list[dict[str, Any]] = json.loads(cp.stdout)["barriers"]
    return rows


def select(spec: str, rows: list[dict[str, Any]], networks: int | None) -> list[dict[str, Any]]:
    """The include/exclude grammar (a,b,-c; all) over the rows; ValueError naming a bad name. 'all'
    leaves out the fake row and rows needing more networks than there are."""
    names = [r["name"] for r in rows]
    chosen: list[str] = []
    parts = [s.strip() for s in spec.split(",") if s.strip()]
    if not parts:
        raise ValueError(f"--algs '{spec}': name at least one row (allowed: {', '.join(names)}, all)")
    if parts[0].startswith("-"):
        parts.insert(0, "all")
    for s in parts:
        neg, name = s.startswith("-"), s.lstrip("-")
        if name == "all":
            add = [r["name"] for r in rows if r["name"] != "null" and (networks is None or r["networks"] <= networks)]
        elif name in names:
            row = rows[names.index(name)]
            if networks is not None and row["networks"] > networks and not neg:
                raise ValueError(f"--algs: '{name}' needs {row['networks']} networks; --networks is {networks}")
            add = [name]
        else:
            raise ValueError(f"--algs: unknown barrier '{name}' (allowed: {', '.join(names)}, all)")
        chosen = [c for c in chosen if c not in add] if neg else chosen + [a for a in add if a not in chosen]
    if not chosen:
        raise ValueError(f"--algs '{spec}': selects no row")
    return [r for r in rows if r["name"] in chosen]


def _t(v: float | None) -> str:
    from latscope.units import fmt_time
    return "n/a" if v is None else fmt_time(v)


def print_compare(rows: list[dict[str, Any]], logp: Any, out: Any = None) -> None:
    from latscope.net.model import worst
    out = out or sys.stdout
    if logp is not None:
        print("LogP parameters of the UDP layer (median, bootstrap 95 % interval):", file=out)
        for p in logp.params.values():
            ci = "" if p.lo_s is None else f"  [{_t(p.lo_s)}, {_t(p.hi_s)}]"
            val = _t(p.value_s) if p.value_s is not None else f"n/a ({p.why})"
            note = f"  ({p.note})" if p.note else ""
            print(f"  {p.name:<4} {val}{ci}  n={p.n}{note}", file=out)
    else:
        print("LogP parameters: none (a one-rank run or --logp-reps 0): no prediction", file=out)
    print(f"{'algorithm':<16} {'P':>2} {'predicted':>10} {'measured':>10} {'error':>7} {'mean':>10} "
          f"{'lost':>5} {'retx':>5} {'check':>7}", file=out)
    for r in rows:
        c = r["counters"]
        chk = r["check"]
        cs = "-" if not chk else ("ok" if chk["violations"] == 0 else f"{chk['violations']} BAD")
        err = "n/a" if r["error"] is None else f"{100 * r['error']:+.1f}%"
        print(f"{r['alg']:<16} {r['ranks']:>2} {_t(r['predicted_s']):>10} {_t(r['measured_s']):>10} {err:>7} "
              f"{_t(r['mean_s']):>10} {c.get('lost', 0):>5} {c.get('retransmissions', 0):>5} {cs:>7}", file=out)
    w = worst(rows)
    checked = any(r["check"] for r in rows)
    why = "a --check run: its times include the random arrival delays" if checked else "no row has a prediction"
    print("worst row: " + (f"{w['alg']} at P = {w['ranks']}: {100 * w['error']:+.1f}%" if w else f"none ({why})"),
          file=out)


def _run(args: argparse.Namespace) -> int:
    import os
    from latscope.net import cluster as C
    from latscope.net import launch, model
    from latscope.run import LaunchError
    try:
        rate = C.parse_rate(args.rate)
        loss = C.parse_loss(args.loss)
        mtu = C.parse_mtu(args.mtu)
        C.check_nodes(args.nodes)
        C.check_networks(args.networks)
        if args.gap not in (None, "sleep", "spin"):
            raise ValueError(f"--gap '{args.gap}': must be sleep or spin")
        if args.recv not in ("block", "poll"):
            raise ValueError(f"--recv '{args.recv}': must be block or poll")
        for name in ("reps", "warmup", "gap_us", "timeout_us", "delay_us", "seed", "logp_reps"):
            v = getattr(args, name)
            if v is not None and v < (1 if name == "reps" else 0):
                raise ValueError(f"--{name.replace('_', '-')} {v}: must be {'positive' if name == 'reps' else '>= 0'}")
        rows = select(args.algs, registry(), args.networks)
    except ValueError as e:
        return _fail(str(e))
    except LaunchError as e:
        return _fail(str(e))
    reason = C.skip_reason()
    if reason:
        return _fail(f"the emulated cluster {reason}")
    quick = os.environ.get("LATSCOPE_QUICK") == "1"
    reps = args.reps if args.reps is not None else (30 if quick else None)
    logp_reps = args.logp_reps if args.logp_reps is not None else (50 if quick else None)
    out = Path(args.output).resolve()
    opts = {"algs": ",".join(r["name"] for r in rows), "recv": args.recv, "reps": reps, "warmup": args.warmup,
            "gap-us": args.gap_us, "gap": args.gap, "timeout-us": args.timeout_us, "check": args.check, "delay-us": args.delay_us,
            "seed": args.seed, "logp-reps": logp_reps}
    cl = C.Cluster(args.nodes, args.networks, rate=rate, mtu=mtu, loss=loss)
    try:
        cl.open()
        cp = launch.run(cl, launch.net_args(cl, opts, out), args.timeout)
    except (LaunchError, RuntimeError) as e:
        print(f"latscope net: error: {e}", file=sys.stderr)
        return 1
    finally:
        cl.close()
    if cp.returncode != 0:
        lines = [ln for ln in cp.stderr.strip().splitlines() if ln.strip()]
        msg = next((ln for ln in lines if "latscope-net" in ln), lines[-1] if lines else "no message")
        print(f"latscope net: {'error: ' if cp.returncode == 2 else ''}{msg}", file=sys.stderr)
        return 2 if cp.returncode == 2 else 1
    _add_provenance(out, cl.describe(), sys.argv)
    run = model.read(out)
    table = model.compare(run)
    if args.json:
        from latscope import jsonio
        for t in table:
            print(jsonio.dumps(t))
    else:
        print_compare(table, run.logp)
    return 0


def _add_provenance(path: Path, cluster: dict[str, Any], argv: list[str]) -> None:
    from latscope import jsonio
    lines = path.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["cluster"] = cluster
    meta["command"] = argv
    lines[0] = jsonio.dumps(meta)
    path.write_text("\n".join(lines) + "\n")


def main(args: argparse.Namespace) -> int:
    from latscope.net import model
    from latscope.run import LaunchError
    try:
        if args.net_cmd == "list":
            for r in registry():
                print(f"{r['name']:<16} {r['networks']} net  {r['help']}\n{'':16} cost = {r['cost']}")
            return 0
        if args.net_cmd == "run":
            return _run(args)
        if args.net_cmd == "compare":
            table: list[dict[str, Any]] = []
            last = None
            for f in args.files:
                run = model.read(f)
                table += model.compare(run)
                last = run.logp
            if args.json:
                from latscope import jsonio
                for t in table:
                    print(jsonio.dumps(t))
            else:
                print_compare(table, last if len(args.files) == 1 else None)
            return 0
        if args.net_cmd == "predict":
            try:
                ps = [int(x) for x in args.nodes.split(",")]
            except ValueError:
                return _fail(f"--nodes '{args.nodes}': whole numbers, comma-separated")
            if not ps or any(not 1 <= p <= 4096 for p in ps):
                return _fail(f"--nodes '{args.nodes}': each in 1..4096")
            rows = select(args.algs, registry(), None)
            if args.seed_params:
                vals, src = dict(model.SEED_PARAMS), "seed 002 §5.1.1"
            else:
                run = model.read(args.source)
                v = run.logp.values() if run.logp else None
                if v is None:
                    why = "; ".join(run.logp.invalid()) if run.logp else "no LogP record"
                    return _fail(f"{args.source}: no valid LogP parameters ({why})")
                vals, src = v, args.source
            print(f"LogP costs with the parameters of {src}:")
            print(f"{'algorithm':<16}" + "".join(f"{'P=' + str(p):>10}" for p in ps))
            for r in rows:
                if r["name"] == "null":
                    continue
                print(f"{r['name']:<16}" + "".join(f"{_t(model.cost(r['cost'], p, vals)):>10}" for p in ps))
            costs = {r["name"]: r["cost"] for r in registry()}
            measured = None if args.seed_params else model.compare(model.read(args.source))
            print("the seed's questions:")
            for line in model.answers(vals, costs, measured, max(ps)):
                print(f"  {line}")
            return 0
    except (model.NetDataError, ValueError) as e:
        return _fail(str(e))
    except LaunchError as e:
        return _fail(str(e))
    return _fail(f"unknown subcommand {args.net_cmd}")
