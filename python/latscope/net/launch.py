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
