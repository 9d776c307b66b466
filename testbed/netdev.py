"""The network devices the test bed makes for a target's ports (BMv2's veth
pairs, SWX's TAP devices), through iproute2 and sysctl."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable


def ip(*args: str) -> None:
    """An `ip` command; raises if it fails."""
    subprocess.run(["ip", *args], check=True, capture_output=True)


def delete(names: Iterable[str]) -> None:
    """Take the named devices out (one already gone is no error)."""
    for name in names:
        subprocess.run(["ip", "link", "del", name], capture_output=True)


def ipv6_off(name: str) -> None:
    """No IPv6 on the device: the kernel sends none of its own frames (router
    solicitations, neighbour discovery) on a target's port."""
    subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1"], capture_output=True)
