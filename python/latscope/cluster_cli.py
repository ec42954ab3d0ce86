"""`latscope cluster up|down|status`: the emulated Ethernet cluster of `latscope net run`
(docs/network.md), kept for commands of your own: `up` makes it (nodes = network namespaces
ltsnet-keep-n0.., one or two bridges, rate, MTU, loss) and prints how to start a process on a
node; `down` removes it and any cluster left by a killed run; `status` says what exists. Root
only: otherwise one line, exit 2."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_USAGE = 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from latscope.net_cli import add_cluster_args
    p: argparse.ArgumentParser = subparsers.add_parser(
        "cluster", help="make, remove or show the emulated Ethernet cluster (network namespaces and bridges)",
        description=(__doc__ or "").split("\n\n")[0])
    sub = p.add_subparsers(dest="cluster_cmd", required=True)
    up = sub.add_parser("up", help="make the cluster and keep it until 'latscope cluster down'")
    add_cluster_args(up)
    sub.add_parser("down", help="remove the kept cluster and every cluster left by a dead run")
    la = sub.add_parser("launch", help="start a program on the kept cluster, one rank per node (MPICH over TCP); "
                                       "as a --launcher line: latscope bench p2p --launcher 'latscope cluster launch'")
    la.add_argument("--np", type=int, default=None, help="ranks, one per node, 1..nodes (default: every node)")
    la.add_argument("command", nargs=argparse.REMAINDER, help="the program and its arguments")
    st = sub.add_parser("status", help="the kept cluster and every latscope cluster namespace now")
    st.add_argument("--json", action="store_true", help="print as JSON")
    return p


def _fail(msg: str) -> int:
    print(f"latscope cluster: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def main(args: argparse.Namespace) -> int:
    from latscope.net import cluster as C
    if args.cluster_cmd == "status":
        s = C.status()
        if args.json:
            print(json.dumps(s))
        else:
            k = s["kept"]
            print(f"kept cluster: {k['nodes']} nodes, {k['networks']} network(s), rate {k['rate'] or 'none'}, "
                  f"MTU {k['mtu_bytes']}, loss {100 * k['loss']:g} %" if k else "kept cluster: none")
            print(f"latscope cluster namespaces: {len(s['namespaces'])} ({len(s['stale'])} of dead runs)")
        return 0
    reason = C.skip_reason()
    if reason:
        return _fail(f"the emulated cluster {reason}")
    if args.cluster_cmd == "launch":
        return _launch(args)
    if args.cluster_cmd == "down":
        gone = C.remove_all_kept() + C.remove_stale()
        print(f"removed {len(gone)} namespaces")
        return 0
    try:
        cl = C.Cluster(args.nodes, args.networks, rate=C.parse_rate(args.rate), mtu=C.parse_mtu(args.mtu),
                       loss=C.parse_loss(args.loss), keep=True)
        cl.open()
    except C.ClusterError as e:
        return _fail(str(e))
    except RuntimeError as e:
        print(f"latscope cluster: error: {e}", file=sys.stderr)
        return 1
    d = cl.describe()
    for i, ns in enumerate(d["namespaces"]):
        print(f"node {i}: ip netns exec {ns} ...   addresses {', '.join(d['addresses'][i])} on {', '.join(d['ifaces'])}")
    return 0


def _launch(args: argparse.Namespace) -> int:
    from latscope.net.launch import exec_on_cluster
    from latscope.run import LaunchError
    cmd = args.command[1:] if args.command[:1] == ["--"] else list(args.command)
    try:
        exec_on_cluster(args.np, cmd)
    except (ValueError, LaunchError) as e:
        return _fail(f"launch: {e}")
    return 0
