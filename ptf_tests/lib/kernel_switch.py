"""The Linux kernel as the same T0 switch, for conformance.

A network namespace holds one veth end per switch port, with the switch
port's MAC; our end stays in the root namespace. The kernel's own uSID is
`seg6local action End flavors next-csid lblen 32 nflen 16`, every neighbour
/48 a static route via a permanent neighbour entry with the peer's MAC.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess

from control_plane import addressing as A
from control_plane import switch_plan as S
from control_plane.topology import Topology


def kernel_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root for network namespaces"
    if shutil.which("ip") is None:
        return "iproute2 'ip' command not found"
    probe = f"mrcprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class KernelSwitch:
    def __init__(self, topo: Topology, state: S.SwitchState):
        self.topo = topo
        self.state = state
        tag = f"k{os.getpid() % 100000}"
        self.ns = f"mrc{tag}"
        self.ports = sorted(n.port for n in state.neighbours)
        self.inner = {p: f"{tag}s{p}" for p in self.ports}
        self.outer = {p: f"{tag}h{p}" for p in self.ports}

    def _ns(self, *cmd: str) -> None:
        r = subprocess.run(["ip", "netns", "exec", self.ns, *cmd], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")

    def start(self) -> None:
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        subprocess.run(["ip", "netns", "add", self.ns], check=True, capture_output=True)
        try:
            self._setup()
        except BaseException:
            self.stop()
            raise

    def _setup(self) -> None:
        for key in ("net.ipv6.conf.all.forwarding=1", "net.ipv6.conf.all.seg6_enabled=1",
                    "net.ipv6.conf.default.seg6_enabled=1", "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.default.router_solicitations=0"):
            self._ns("sysctl", "-qw", key)
        nbs = {n.port: n for n in self.state.neighbours}
        for p in self.ports:
            inner, outer = self.inner[p], self.outer[p]
            subprocess.run(["ip", "link", "del", outer], capture_output=True)
            subprocess.run(["ip", "link", "add", "name", outer, "type", "veth", "peer", "name", inner,
                            "netns", self.ns], check=True, capture_output=True)
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{outer}.disable_ipv6=1"], capture_output=True)
            subprocess.run(["ip", "link", "set", outer, "up"], check=True, capture_output=True)
            self._ns("ip", "link", "set", inner, "address", A.mac_str(nbs[p].src_mac), "up")
            self._ns("ip", "-6", "neigh", "add", "fe80::1", "lladdr", A.mac_str(nbs[p].dst_mac),
                     "dev", inner, "nud", "permanent")
        first = self.inner[self.ports[0]]
        mine = self._prefix(self.state.my_usid.locator)
        self._ns("ip", "-6", "route", "add", mine, "encap", "seg6local", "action", "End",
                 "flavors", "next-csid", "lblen", "32", "nflen", "16", "dev", first)
        for r in self.state.routes:
            self._ns("ip", "-6", "route", "add", self._prefix(r.locator), "via", "fe80::1", "dev", self.inner[r.port])

    @staticmethod
    def _prefix(locator48: int) -> str:
        return f"{ipaddress.IPv6Address(locator48 << 80)}/48"

    def stop(self) -> None:
        for p in self.ports:
            subprocess.run(["ip", "link", "del", self.outer[p]], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
