"""P4Runtime server addresses, parsed once where a topology or a flag is
read: `host:port` (an IPv4 address or a DNS name), `[IPv6]:port`, or a
Unix socket `unix:PATH` / `unix:///ABSOLUTE/PATH` (gRPC's forms, with no
port). A port is 1..65535 in ASCII digits. Anything else is refused with
the reason, so an address that can never be reached is an error of the
file, not an "unreachable" minutes later."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from control_plane.config import short

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")
_PORT = re.compile(r"[0-9]{1,5}")  # ASCII only: str.isdigit() also takes '²' and Arabic-Indic digits
_V6 = re.compile(r"\[([^\]]*)\]:(.*)")


@dataclass(frozen=True)
class Address:
    host: str  # "" for a Unix socket
    port: int  # 0 for a Unix socket
    path: str = ""  # the Unix socket's path

    @property
    def key(self) -> tuple[str, int]:
        """One server, however it is written: localhost and 127.0.0.1 are one, as are two spellings of an IPv6."""
        if self.path:
            return "unix:" + self.path, 0
        host = self.host.lower().rstrip(".")
        if host == "localhost":
            host = "127.0.0.1"
        try:
            host = str(ipaddress.ip_address(host))
        except ValueError:
            pass
        return host, self.port

    @property
    def is_local(self) -> bool:
        """A Unix socket or a loopback address: no one else on the network can reach it."""
        host, _ = self.key
        if self.path:
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False


def parse(text: object) -> Address:
    """The Address `text` names; ValueError with the reason (the value cut)."""
    if not isinstance(text, str):
        raise ValueError(f"expected host:port, got {short(text)}")
    if not text or not text.isprintable() or any(c.isspace() for c in text) or len(text) > 255:
        raise ValueError(f"expected host:port with no spaces or control characters, got {short(text)}")
    if text.startswith("unix:"):
        return _unix(text)
    m = _V6.fullmatch(text)
    if m:
        return Address(_ipv6(m.group(1), text), _port(m.group(2), text))
    if text.count(":") != 1:
        raise ValueError(f"expected host:port (an IPv6 address in brackets: [::1]:9559), got {short(text)}")
    host, port = text.split(":")
    if not _HOSTNAME.fullmatch(host) or len(host) > 253:
        raise ValueError(f"{short(host)} is not a host name or an IPv4 address")
    return Address(host, _port(port, text))


def _unix(text: str) -> Address:
    rest = text.removeprefix("unix:")
    if rest.startswith("//") and not rest.startswith("///"):
        raise ValueError(f"a Unix socket is unix:PATH or unix:///ABSOLUTE/PATH (no host), got {short(text)}")
    path = rest[2:] if rest.startswith("///") else rest
    if not path or path.endswith("/"):
        raise ValueError(f"a Unix socket needs a path, got {short(text)}")
    if re.search(r":[0-9]*$", path):
        raise ValueError(f"a Unix socket takes no port, got {short(text)}")
    return Address("", 0, path)


def _ipv6(host: str, text: str) -> str:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        raise ValueError(f"{short(host)} in brackets is not an IPv6 address ({short(text)})") from None
    return host


def _port(port: str, text: str) -> int:
    if not _PORT.fullmatch(port) or not 1 <= int(port) <= 65535:
        raise ValueError(f"the port must be 1..65535 in digits, got {short(port)} in {short(text)}")
    return int(port)
