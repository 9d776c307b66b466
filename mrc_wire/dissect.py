"""Decode MRC 1.0 packets in a capture: one JSON object per frame.

    python -m mrc_wire.dissect FILE.pcap [FILE.pcapng ...]

Each line holds the frame's number and, for an MRC packet, its headers
keyed in lower case (`outer` for the encapsulating IPv6 header of a frame
on the fabric, `ipv6`, `udp`, `bth`, then `meth`, `tseth`, `reth`,
`immdt`, `seth`, `cc_state`, `neth`, `peth`, `aeth`, `erth`, `eeth` as
the opcode says), each with its fields as integers under the names of
mrc_wire.headers (reserved fields left out), the EV the packet travels on
(`ev`: UDP source port and low flow label) and `payload_len` (the ICRC
not counted). A frame that is not MRC, or is cut short, gets one line
with `error` saying why; the run goes on. Reads pcap and pcapng (Ethernet
or raw IP link types). Exit status 1 if a file cannot be read at all.
"""

from __future__ import annotations

import ipaddress
import json
import struct
import sys
from collections.abc import Iterator
from typing import Any

from mrc_wire import headers as L
from mrc_wire.constants import ETHERTYPE_IPV6, ICRC_LEN, IPPROTO_IPV6, IPPROTO_UDP, IPV6_LEN, ROCE_PORT, UDP_LEN
from mrc_wire.text import printable

LINK_ETHERNET = 1
LINK_RAW = (101, 228, 229)  # raw IP, raw IPv4, raw IPv6


class CaptureError(Exception):
    """A file that is not a capture this reads."""


def frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(link type, frame) of every packet of a pcap or pcapng capture."""
    if len(data) < 4:
        raise CaptureError("too short for a capture header")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        yield from _pcap(data)
    elif magic == b"\x0a\x0d\x0d\x0a":
        yield from _pcapng(data)
    else:
        raise CaptureError(f"not pcap or pcapng (magic {magic.hex()})")


def _pcap(data: bytes) -> Iterator[tuple[int, bytes]]:
    end = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    if len(data) < 24:
        raise CaptureError("pcap header cut short")
    link = struct.unpack_from(end + "I", data, 20)[0] & 0xFFFF
    at = 24
    while at + 16 <= len(data):
        caplen = struct.unpack_from(end + "I", data, at + 8)[0]
        yield link, data[at + 16:at + 16 + caplen]
        at += 16 + caplen


def _pcapng(data: bytes) -> Iterator[tuple[int, bytes]]:
    if len(data) < 28:  # a section header block is 28 bytes at least: shorter is a cut file, not an empty one
        raise CaptureError("pcapng section header cut short")
    links: list[int] = []
    end, at = "<", 0
    while at + 12 <= len(data):
        if data[at:at + 4] == b"\x0a\x0d\x0d\x0a":  # section header: its byte order, its interfaces
            end = "<" if data[at + 8:at + 12] == b"\x4d\x3c\x2b\x1a" else ">"
            links = []
        btype, blen = struct.unpack_from(end + "II", data, at)
        if blen < 12:
            raise CaptureError(f"pcapng block of {blen} bytes at offset {at}")
        if btype == 1:  # interface description
            links.append(struct.unpack_from(end + "H", data, at + 8)[0])
        elif btype == 6:  # enhanced packet
            iface, caplen = struct.unpack_from(end + "I", data, at + 8)[0], struct.unpack_from(end + "I", data,
                                                                                               at + 20)[0]
            yield (links[iface] if iface < len(links) else LINK_ETHERNET), data[at + 28:at + 28 + caplen]
        elif btype == 3:  # simple packet
            yield (links[0] if links else LINK_ETHERNET), data[at + 12:at + blen - 4]
        at += blen


def _ipv6(buf: bytes, at: int) -> dict[str, Any]:
    vtf = int.from_bytes(buf[at:at + 4], "big")
    return {"src": str(ipaddress.IPv6Address(buf[at + 8:at + 24])),
            "dst": str(ipaddress.IPv6Address(buf[at + 24:at + 40])),
            "dscp": (vtf >> 22) & 0x3F, "ecn": (vtf >> 20) & 3, "flow_label": vtf & 0xFFFFF,
            "payload_len": int.from_bytes(buf[at + 4:at + 6], "big"), "next_header": buf[at + 6],
            "hop_limit": buf[at + 7]}


def decode(link: int, frame: bytes) -> dict[str, Any]:
    """The headers of one frame (ValueError: why it is not MRC)."""
    out: dict[str, Any] = {}
    at = 0
    if link == LINK_ETHERNET:
        if len(frame) < 14 or int.from_bytes(frame[12:14], "big") != ETHERTYPE_IPV6:
            raise ValueError("not Ethernet / IPv6")
        at = 14
    elif link not in LINK_RAW:
        raise ValueError(f"link type {link} is not Ethernet or raw IP")
    if len(frame) < at + IPV6_LEN or frame[at] >> 4 != 6:
        raise ValueError("not IPv6")
    if frame[at + 6] == IPPROTO_IPV6:
        out["outer"] = _ipv6(frame, at)
        at += IPV6_LEN
        if len(frame) < at + IPV6_LEN or frame[at] >> 4 != 6:
            raise ValueError("inner header is not IPv6")
    out["ipv6"] = ip = _ipv6(frame, at)
    if ip["next_header"] != IPPROTO_UDP:
        raise ValueError(f"next header {ip['next_header']} is not UDP")
    at += IPV6_LEN
    if len(frame) < at + UDP_LEN:
        raise ValueError("UDP header cut short")
    sport, dport, ulen = struct.unpack_from("!HHH", frame, at)
    if dport != ROCE_PORT:
        raise ValueError(f"UDP port {dport} is not 4791")
    out["udp"] = {"sport": sport, "dport": dport, "len": ulen}
    out["ev"] = (sport << 16) | (ip["flow_label"] & 0xFFFF)
    at += UDP_LEN
    bth = _header(out, "bth", frame, at)
    at += L.size("bth")
    for name in L.stack(bth["opcode"], bth["ts"]):
        _header(out, name, frame, at)
        at += L.size(name)
    out["payload_len"] = max(0, len(frame) - at - ICRC_LEN)
    return out


def _header(out: dict[str, Any], name: str, frame: bytes, at: int) -> dict[str, int]:
    try:
        fields = L.unpack(name, frame, at)
    except ValueError as e:
        raise ValueError(f"cut short: {e}") from None
    out[name] = fields
    return fields


def lines(data: bytes) -> Iterator[str]:
    """One JSON line per frame of a capture."""
    for n, (link, frame) in enumerate(frames(data), 1):
        try:
            obj: dict[str, Any] = {"frame": n, **decode(link, frame)}
        except ValueError as e:
            obj = {"frame": n, "error": str(e)}
        yield json.dumps(obj)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m mrc_wire.dissect FILE.pcap [FILE ...]", file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    status = 0
    for path in args:
        try:
            with open(path, "rb") as f:
                data = f.read()
            for line in lines(data):
                print(line)
        except OSError as e:
            print(f"error: {printable(path)}: cannot read: {e.strerror or e}", file=sys.stderr)
            status = 1
        except CaptureError as e:
            print(f"error: {printable(path)}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
