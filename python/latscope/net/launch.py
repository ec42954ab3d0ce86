"""Launching latscope-net across an emulated cluster: one rank per node namespace (an MPMD line,
each rank under `ip netns exec`), MPICH over TCP on the nodes' first network (MPIR_CVAR_NOLOCAL=1,
ofi's tcp provider on lts0: docs/network.md), the UDP layer on
lts0 (and lts1). The cluster is removed when the launch ends, however it ends."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from latscope.net.cluster import Cluster
from latscope.run import LaunchError, launch, program

TCP_ENV = {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp",
           "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1"}


def command(cl: Cluster, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The launch line and environment for latscope-net ARGS on the cluster's nodes."""
    ln = launch(cl.nodes)
    prefix = ln.prefix[:-2]   # without "-n P": one "-n 1" per node
    exe = str(program("latscope-net"))
    cmd = list(prefix)
    for i in range(cl.nodes):
        if i:
            cmd.append(":")
        cmd += ["-n", "1", *cl.exec_prefix(i), exe, *args]
    env = dict(ln.env)
    env.update(TCP_ENV)
    env["FI_TCP_IFACE"] = cl.ifaces()[0]
    return cmd, env


def run(cl: Cluster, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run latscope-net on the cluster; stderr captured. The launch has its own session so that a
    timeout or a signal reaches every process of it."""
    cmd, env = command(cl, args)
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _killpg(proc)
        raise LaunchError(f"latscope-net did not finish within {timeout:g} s: the launch was killed") from None
    except BaseException:
        _killpg(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _killpg(proc: subprocess.Popen[str]) -> None:
    # the whole tree, not only the group: hydra's proxy and ranks each call setsid
    from latscope.jobs.job import end_popen
    end_popen(proc)


def net_args(cl: Cluster, opts: dict[str, Any], out: Path) -> list[str]:
    """latscope-net run's arguments from the command's options (None: the program's default)."""
    a = ["run", "--iface", ",".join(cl.ifaces()), "-o", str(out)]
    for k, v in opts.items():
        if v is None or v is False:
            continue
        a += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    return a


# ---- ranks of any command on the kept cluster (`latscope cluster up`; --net) -------------------
def kept_cluster() -> dict[str, Any]:
    """The kept cluster's description; ValueError (one line, exit 2) when there is none or the
    caller cannot use namespaces."""
    from latscope.net import cluster as C
    reason = C.skip_reason()
    if reason:
        raise ValueError(f"--net: the emulated cluster {reason}")
    kept = C.status()["kept"]
    if kept is None:
        raise ValueError("--net: no kept cluster: make one first, e.g. 'latscope cluster up --nodes 2 --rate 1gbit'")
    return dict(kept)


def cluster_line(kept: dict[str, Any], np_: int, cmd: list[str]) -> tuple[list[str], dict[str, str]]:
    """mpiexec with one `-n 1 ip netns exec NODE CMD` per rank (MPMD), and its environment: MPICH
    over TCP on the nodes' first network (docs/network.md, "Your own commands on the cluster")."""
    from latscope.run import mpiexec_path
    line = [mpiexec_path()]
    for i in range(np_):
        line += ([":"] if i else []) + ["-n", "1", "ip", "netns", "exec", kept["namespaces"][i], *cmd]
    env = dict(TCP_ENV)
    env["FI_TCP_IFACE"] = kept["ifaces"][0]
    env["LATSCOPE_NET_CLUSTER"] = describe(kept)
    return line, env


def describe(kept: dict[str, Any]) -> str:
    """The cluster in one line, as results record it (metadata's emulated_network)."""
    return (f"{kept['nodes']} nodes, {kept['networks']} network(s), rate {kept['rate'] or 'none'}, "
            f"MTU {kept['mtu_bytes']}, loss {100 * float(kept['loss']):g} %")


def check_np(kept: dict[str, Any], np_: int | None, opt: str = "--np") -> int:
    """Ranks on the kept cluster: one per node, 1..nodes (default: every node)."""
    n = int(kept["nodes"]) if np_ is None else np_
    if not 1 <= n <= int(kept["nodes"]):
        raise ValueError(f"{opt} {np_}: must be in 1..{kept['nodes']} (one rank per node of the kept cluster)")
    return n


def launcher_line(np_: int | None) -> str:
    """--net as a launcher line: this module run as a program (`python -m latscope.net.launch --np N`),
    which replaces itself with the MPMD mpiexec line; so every command that takes --launcher
    places its ranks on the cluster with nothing else to change."""
    import shlex
    import sys
    n = check_np(kept_cluster(), np_)
    return shlex.join([sys.executable, "-m", "latscope.net.launch", "--np", str(n)])


def exec_on_cluster(np_: int | None, cmd: list[str]) -> None:
    """Replace this process with CMD's ranks on the kept cluster (ValueError: bad input)."""
    import os
    kept = kept_cluster()
    if not cmd:
        raise ValueError("no program given (latscope cluster launch [--np N] PROGRAM ARGS...)")
    line, tcp = cluster_line(kept, check_np(kept, np_), cmd)
    env = dict(os.environ)
    env.update(tcp)
    os.execvpe(line[0], line, env)


def _main() -> int:
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="latscope cluster launch")
    ap.add_argument("--np", type=int, default=None)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    try:
        exec_on_cluster(a.np, cmd)
    except (ValueError, LaunchError) as e:
        print(f"latscope cluster launch: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
