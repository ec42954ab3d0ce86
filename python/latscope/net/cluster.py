"""The emulated Ethernet cluster (docs/network.md): N nodes = N network namespaces, each with one
veth per network into a switch namespace holding one Linux bridge per network; per-link rate by
`tc tbf` on both ends of every veth, the MTU on both ends, and random loss as an iptables
`statistic` DROP in each node's INPUT (silent loss: a DROP in OUTPUT would return EPERM to the
sender). Everything lives in namespaces latscope creates, so deleting them removes every veth,
bridge and rule. Names carry the owner's pid: a run killed with SIGKILL leaves namespaces that the
next run (or `latscope cluster down`) removes; SIGINT/SIGTERM/SIGHUP and exit remove them at once
(latscope.netns's handling, shared with the budget's namespaces)."""
from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from latscope.netns import pid_alive

PREFIX = "ltsnet-"
KEEP = "keep"              # the owner field of a cluster made by `latscope cluster up`
IFACE = "lts"              # node interfaces lts0, lts1
MAX_NODES = 8
STATE = Path("/run/latscope-cluster.json")


class ClusterError(ValueError):
    """Bad input for the cluster (a rate, an MTU, a loss, a node count): one line, exit 2."""


class NotRoot(RuntimeError):
    """The cluster needs root (network namespaces): one line, exit 2."""


def parse_rate(s: str | None) -> str | None:
    """'100mbit', '1gbit', '500kbit' (tc's units) -> the same string; None / 'none': no limit."""
    if s is None or s == "none":
        return None
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(kbit|mbit|gbit)", s.strip().lower())
    if not m or float(m.group(1)) <= 0 or _rate_bps(m.group(0)) > 100e9:
        raise ClusterError(f"--rate '{s}': must be a positive rate like 100mbit, 1gbit or 500kbit (at most 100gbit), "
                           "or none")
    return m.group(0)


def _rate_bps(r: str) -> float:
    m = re.fullmatch(r"([0-9.]+)(kbit|mbit|gbit)", r)
    assert m
    return float(m.group(1)) * {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[m.group(2)]


def parse_loss(s: str | None) -> float:
    """'1%', '0.5%' or a fraction '0.01' -> a probability in [0, 0.5]."""
    if s is None or s in ("0", "none"):
        return 0.0
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(%?)", s.strip())
    if not m:
        raise ClusterError(f"--loss '{s}': must be a percentage like 1% or a fraction like 0.01, in 0..50 %")
    p = float(m.group(1)) / (100 if m.group(2) else 1)
    if not 0 <= p <= 0.5:
        raise ClusterError(f"--loss '{s}': must be in 0..50 % (0..0.5)")
    return p


def parse_mtu(s: str | int | None) -> int:
    try:
        v = int(s) if s is not None else 1500
    except ValueError:
        v = -1
    if not 576 <= v <= 9000:
        raise ClusterError(f"--mtu '{s}': must be a whole number of bytes in 576..9000")
    return v


def check_nodes(n: int) -> int:
    if not 1 <= n <= MAX_NODES:
        raise ClusterError(f"--nodes {n}: must be in 1..{MAX_NODES} (one rank per node)")
    return n


def check_networks(n: int) -> int:
    if n not in (1, 2):
        raise ClusterError(f"--networks {n}: must be 1 or 2")
    return n


def skip_reason() -> str | None:
    """Why the cluster cannot be made here (None: it can)."""
    if os.geteuid() != 0:
        return f"needs root to create network namespaces (running as uid {os.geteuid()})"
    for tool in ("ip", "tc", "iptables"):
        if not shutil.which(tool):
            return f"needs the {tool} command (apt-get install iproute2 iptables)"
    return None


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cp = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and cp.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {cp.stderr.strip()}")
    return cp


def list_namespaces() -> list[str]:
    if not shutil.which("ip"):
        return []
    cp = _run("ip", "netns", "list", check=False)
    return [ln.split()[0] for ln in cp.stdout.splitlines() if ln.startswith(PREFIX)]


def owner(ns: str) -> str | None:
    m = re.fullmatch(re.escape(PREFIX) + r"([0-9]+|" + KEEP + r")-(?:n[0-9]+|sw)", ns)
    return m.group(1) if m else None


def remove_stale() -> list[str]:
    """Remove the namespaces of clusters whose owner process is gone (a run killed with SIGKILL)."""
    gone = []
    for ns in list_namespaces():
        o = owner(ns)
        if o is not None and o != KEEP and not pid_alive(int(o)):
            _run("ip", "netns", "del", ns, check=False)
            gone.append(ns)
    return gone


def remove_all_kept() -> list[str]:
    gone = []
    for ns in list_namespaces():
        if owner(ns) == KEEP:
            _run("ip", "netns", "del", ns, check=False)
            gone.append(ns)
    STATE.unlink(missing_ok=True)
    return gone


@dataclass
class Cluster:
    """nodes namespaces, networks bridges; created by open(), removed by close() (and at exit, and
    on SIGTERM / SIGINT / SIGHUP)."""

    nodes: int
    networks: int = 1
    rate: str | None = None
    mtu: int = 1500
    loss: float = 0.0
    keep: bool = False                      # `latscope cluster up`: outlives this process
    created: list[str] = field(default_factory=list)
    _old: dict[int, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_nodes(self.nodes)
        check_networks(self.networks)
        self.tag = KEEP if self.keep else str(os.getpid())

    @property
    def node_names(self) -> list[str]:
        return [f"{PREFIX}{self.tag}-n{i}" for i in range(self.nodes)]

    @property
    def switch(self) -> str:
        return f"{PREFIX}{self.tag}-sw"

    @staticmethod
    def address(net: int, node: int) -> str:
        return f"10.252.{net}.{node + 1}"

    def ifaces(self) -> list[str]:
        return [f"{IFACE}{k}" for k in range(self.networks)]

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    def open(self) -> Cluster:
        reason = skip_reason()
        if reason:
            raise NotRoot(f"the emulated cluster {reason}")
        remove_stale()
        if self.keep and any(owner(ns) == KEEP for ns in list_namespaces()):
            raise ClusterError("a cluster made by 'latscope cluster up' exists already: 'latscope cluster down' first")
        if not self.keep:
            atexit.register(self.close)
            for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                self._old[s] = signal.signal(s, self._on_signal)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        if self.keep:
            STATE.write_text(json.dumps(self.describe()))
        return self

    def _tbf(self, ns: str, dev: str) -> None:
        if self.rate is None:
            return
        # the bucket: at least two full frames, or a millisecond at the rate (the qdisc timer)
        burst = max(2 * (self.mtu + 64), int(_rate_bps(self.rate) / 8 / 1000))
        _run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", self.rate,
             "burst", str(burst), "latency", "50ms")

    def _build(self) -> None:
        sw = self.switch
        _run("ip", "netns", "add", sw)
        self.created.append(sw)
        _run("ip", "-n", sw, "link", "set", "lo", "up")
        for k in range(self.networks):
            br = f"br{k}"
            _run("ip", "-n", sw, "link", "add", br, "type", "bridge", "mcast_snooping", "0")
            _run("ip", "-n", sw, "link", "set", br, "up")
        for i, ns in enumerate(self.node_names):
            _run("ip", "netns", "add", ns)
            self.created.append(ns)
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            for k in range(self.networks):
                a, b = f"lx{os.getpid() % 100000}n{i}k{k}", f"ly{os.getpid() % 100000}n{i}k{k}"
                _run("ip", "link", "add", a, "mtu", str(self.mtu), "type", "veth", "peer", "name", b,
                     "mtu", str(self.mtu))
                _run("ip", "link", "set", a, "netns", ns)
                _run("ip", "link", "set", b, "netns", sw)
                dev = f"{IFACE}{k}"
                _run("ip", "-n", ns, "link", "set", a, "name", dev)
                _run("ip", "-n", ns, "addr", "add", f"{self.address(k, i)}/24", "dev", dev)
                _run("ip", "-n", ns, "link", "set", dev, "up")
                _run("ip", "-n", sw, "link", "set", b, "master", f"br{k}")
                _run("ip", "-n", sw, "link", "set", b, "up")
                self._tbf(ns, dev)
                self._tbf(sw, b)
            if self.loss > 0:
                _run("ip", "netns", "exec", ns, "iptables", "-A", "INPUT", "-p", "udp", "-m", "statistic",
                     "--mode", "random", "--probability", f"{self.loss:.6f}", "-j", "DROP")

    def close(self) -> None:
        while self.created:
            _run("ip", "netns", "del", self.created.pop(), check=False)   # veths and bridges go with them
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old.clear()
        if self.keep:
            STATE.unlink(missing_ok=True)

    def describe(self) -> dict[str, Any]:
        """The cluster's shape, as recorded in results' metadata."""
        return {"nodes": self.nodes, "networks": self.networks, "rate": self.rate, "mtu_bytes": self.mtu,
                "loss": self.loss, "namespaces": self.node_names, "switch": self.switch,
                "ifaces": self.ifaces(),
                "addresses": [[self.address(k, i) for k in range(self.networks)] for i in range(self.nodes)]}

    def exec_prefix(self, node: int) -> list[str]:
        return ["ip", "netns", "exec", self.node_names[node]]


def status() -> dict[str, Any]:
    """What exists now: the kept cluster's description (if any) and every latscope cluster namespace."""
    kept = None
    if STATE.exists():
        try:
            kept = json.loads(STATE.read_text())
        except (OSError, ValueError):
            kept = None
    nss = list_namespaces()
    return {"kept": kept if any(owner(n) == KEEP for n in nss) else None, "namespaces": nss,
            "stale": [n for n in nss if (o := owner(n)) not in (None, KEEP) and not pid_alive(int(o))]}
