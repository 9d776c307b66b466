"""Device ids: the one place where device names are made and parsed."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"^(?:(t0)-p(\d+)-r(\d+)|(t1)-p(\d+)-s(\d+)|(nic)-(\d+))$")
KINDS = ("t0", "t1", "nic")


@dataclass(frozen=True, order=True, slots=True)
class DeviceId:
    """t0-p<plane>-r<row>, t1-p<plane>-s<spine> or nic-<n> (plane 0)."""

    kind: str
    plane: int
    index: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"device kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def __str__(self) -> str:
        if self.kind == "nic":
            return f"nic-{self.index}"
        return f"{self.kind}-p{self.plane}-{'r' if self.kind == 't0' else 's'}{self.index}"

    @property
    def is_switch(self) -> bool:
        return self.kind != "nic"

    @classmethod
    def parse(cls, name: str) -> DeviceId:
        m = _NAME.match(str(name))
        if m is None:
            raise ValueError(f"{name!r} is not a device name (t0-p<plane>-r<row>, t1-p<plane>-s<spine>, nic-<n>)")
        g = m.groups()
        if g[0]:
            ident = cls("t0", int(g[1]), int(g[2]))
        elif g[3]:
            ident = cls("t1", int(g[4]), int(g[5]))
        else:
            ident = cls("nic", 0, int(g[7]))
        if str(ident) != name:  # leading zeros: one spelling per device
            raise ValueError(f"{name!r} is not a device name (write it as {str(ident)!r})")
        return ident


def t0(plane: int, row: int) -> DeviceId:
    return DeviceId("t0", plane, row)


def t1(plane: int, spine: int) -> DeviceId:
    return DeviceId("t1", plane, spine)


def nic(n: int) -> DeviceId:
    return DeviceId("nic", 0, n)
