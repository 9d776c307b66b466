"""Decode MRC 1.0 packets in a capture: one JSON object per frame.

    python -m mrc_wire.dissect FILE.pcap [FILE.pcapng ...]

Each line holds the frame's number and, for an MRC packet, its headers
keyed in lower case (`outer` for the encapsulating IPv6 header of a frame
on the fabric, `ipv6`, `udp`, `bth`, then `meth`, `tseth`, `reth`,
`immdt`, `seth`, `cc_state`, `neth`, `peth`, `aeth`, `erth`, `eeth` as
the opcode says), each with its fields as integers under the names of
mrc_wire.headers (reserved fields left out), the EV the packet travels on
(`ev`: UDP source port and low flow label) and `payload_len`: the payload
its length fields give (IPv6 and UDP, which must agree; the ICRC not
counted), whatever the capture kept of it.

Every frame is checked against its capture and its own length fields, as
the switch checks payload_len against the frame:
- `snapped` ({"captured", "length"}): the capture kept only the first
  bytes of the frame (`tcpdump -s 128`); the fields it kept are given;
- `trimmed` ({"kept", "length"}: bytes of the IPv6 packet): a fabric
  frame a switch trimmed (its outer IPv6 header says less than the inner
  packet's lengths), or the stub of one the NIC hands its host (a
  trimmed class's default DSCP, 16 or 18, and lengths past the frame);
- `not_mrc`: a frame read whole that is not MRC (not IPv6, not UDP port
  4791, an opcode MRC does not define);
- `error`: a frame that cannot be read (cut inside a header, lengths that
  disagree with each other or run past the frame, a bad record, a link
  type or interface this does not read), with the fields read before it.
A bad record is reported and skipped where the next one can be found;
where it cannot, one line says so and the file ends there. Reads pcap
(either byte order, micro- or nanosecond) and pcapng, Ethernet or raw IP
link types, a record at a time: memory stays bounded whatever the size
of the file; an input that is not a regular file (a FIFO, a device) is
refused, not read.

Exit status: 0 when every frame was read (MRC or not); 1 when any frame
or file was unreadable (the frame's line says why, and a line on stderr
counts them); 2 for a wrong command line; 3 when the output could not be
written (a full disk; a closed pipe, `| head`, ends quietly).
"""

from __future__ import annotations

import io
import ipaddress
import json
import os
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from mrc_wire import headers as L
from mrc_wire.constants import (
    DSCP_DEFAULTS,
    ETHERTYPE_IPV6,
    EXT_LEN,
    ICRC_LEN,
    IPPROTO_IPV6,
    IPPROTO_UDP,
    IPV6_LEN,
    ROCE_PORT,
    UDP_LEN,
)
from mrc_wire.text import file_kind, printable

LINK_ETHERNET, LINK_RAW, LINK_IPV4, LINK_IPV6 = 1, 101, 228, 229
LINKS = "Ethernet (1) or raw IP (101, 228, 229)"
MAX_CAPLEN = 262_144  # libpcap's MAXIMUM_SNAPLEN: no capture keeps more of a frame
MAX_BLOCK = 16 << 20  # pcapng: the largest block read (Wireshark's bound)
PCAP_LE = (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")  # micro- and nanosecond, little-endian
PCAP_BE = (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d")
SHB = b"\x0a\x0d\x0d\x0a"
ETH_LEN = 14
# A stub the receiving NIC hands its host after a trim keeps its inner lengths and carries a trimmed
# class's DSCP (the defaults: a topology may choose others, which this cannot know).
TRIMMED_DSCP = (DSCP_DEFAULTS["trimmed"], DSCP_DEFAULTS["trimmed_lasthop"])


class CaptureError(Exception):
    """A file that is not a capture this reads, or whose rest cannot be found."""


@dataclass(frozen=True)
class Record:
    """One packet record: its link type, the bytes the capture kept, the
    frame's length on the wire, and why the record itself is bad (None: it
    is not; a bad record is reported, not decoded)."""

    link: int
    data: bytes
    length: int
    bad: str | None = None


# ---- records, read one at a time ----------------------------------------------------------------------------

def records(f: BinaryIO, size: int | None = None) -> Iterator[Record]:
    """Every packet record of the pcap or pcapng capture `f` (`size`: its
    bytes, where known: a length past the end is found before reading)."""
    magic = f.read(4)
    if len(magic) < 4:
        raise CaptureError("too short for a capture header")
    if magic in PCAP_LE + PCAP_BE:
        yield from _pcap(f, "<" if magic in PCAP_LE else ">", size)
    elif magic == SHB:
        yield from _pcapng(f, size)
    else:
        raise CaptureError(f"not pcap or pcapng (magic {magic.hex()})")


def frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(link type, frame) of every packet of a capture held in memory."""
    for r in records(io.BytesIO(data), len(data)):
        yield r.link, r.data


def _pcap(f: BinaryIO, end: str, size: int | None) -> Iterator[Record]:
    head = f.read(20)
    if len(head) < 20:
        raise CaptureError("pcap header cut short")
    major, minor, _, _, _, linkfield = struct.unpack(end + "HHiIII", head)
    link = linkfield & 0xFFFF  # the high bits say whether frames carry an FCS
    if major != 2:
        raise CaptureError(f"pcap version {major}.{minor}: this reads 2.x")
    if link not in (LINK_ETHERNET, LINK_RAW, LINK_IPV4, LINK_IPV6):
        raise CaptureError(f"link type {link} is not {LINKS}")
    at, n = 24, 0
    while hdr := f.read(16):
        n += 1
        if len(hdr) < 16:
            raise CaptureError(f"the file ends inside record {n}'s header ({len(hdr)} of 16 bytes)")
        caplen, length = struct.unpack(end + "II", hdr[8:])
        if caplen > MAX_CAPLEN:
            if not _found_next(f, end, length, size):
                raise CaptureError(f"record {n} at offset {at}: capture length {caplen:,} over {MAX_CAPLEN:,} (the "
                                   "most a capture keeps): the records after it cannot be found")
            f.seek(length, os.SEEK_CUR)
            at += 16 + length
            yield Record(link, b"", length, f"bad record: capture length {caplen:,} over {MAX_CAPLEN:,} (the most "
                                            "a capture keeps); skipped by its original length")
            continue
        data = f.read(caplen)
        at += 16 + caplen
        if len(data) < caplen:
            yield Record(link, data, length, f"the file ends inside this record: {len(data)} of its {caplen} bytes")
            return
        yield Record(link, data, length, f"bad record: {caplen} bytes kept of a {length}-byte frame"
                     if caplen > length else None)


def _found_next(f: BinaryIO, end: str, length: int, size: int | None) -> bool:
    """Whether a record header follows `length` bytes on (or the file ends
    exactly there): a record whose capture length is broken is then
    skipped by its original length. The file's position is kept."""
    if length > MAX_CAPLEN or not f.seekable():
        return False
    here = f.tell()
    if size is not None and here + length == size:
        return True
    f.seek(length, os.SEEK_CUR)
    nxt = f.read(16)
    f.seek(here)
    if len(nxt) < 16:
        return False
    usec, caplen, orig = (int(x) for x in struct.unpack(end + "III", nxt[4:]))
    return usec < 1_000_000_000 and caplen <= min(orig, MAX_CAPLEN)


def _pcapng(f: BinaryIO, size: int | None) -> Iterator[Record]:
    end, at, links = "<", 0, list[int]()
    btype_raw = SHB
    while True:
        length = f.read(4)
        if btype_raw == SHB:  # a section: its own byte order, its own interfaces
            bom = f.read(4)
            if len(length) < 4 or len(bom) < 4 or (size is not None and at + 28 > size):
                raise CaptureError(f"pcapng section header cut short (offset {at})")
            if bom not in (b"\x4d\x3c\x2b\x1a", b"\x1a\x2b\x3c\x4d"):
                raise CaptureError(f"pcapng section header at offset {at}: byte-order magic {bom.hex()} unknown")
            end = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            btype, blen = 0x0A0D0D0A, struct.unpack(end + "I", length)[0]
            body = bom + _block_body(f, at, blen, 28, size, 12, end)
            links = []
        else:
            if len(length) < 4:
                raise CaptureError(f"the file ends inside the pcapng block header at offset {at}")
            btype, blen = struct.unpack(end + "I", btype_raw)[0], struct.unpack(end + "I", length)[0]
            body = _block_body(f, at, blen, 12, size, 8, end)
        if btype == 1:
            links.append(struct.unpack_from(end + "H", body)[0] if len(body) >= 8 else -1)
        elif btype in (2, 3, 6):
            yield _packet(btype, body, end, links)
        at += blen
        btype_raw = f.read(4)
        if not btype_raw:
            return
        if len(btype_raw) < 4:
            raise CaptureError(f"the file ends inside the pcapng block header at offset {at}")


def _block_body(f: BinaryIO, at: int, blen: int, least: int, size: int | None, read: int, end: str) -> bytes:
    """A block's body, its length checked and its closing copy read (`read`:
    bytes of the block read before the body; `end`: the section's byte
    order); CaptureError where the next block cannot be found."""
    where = f"pcapng block at offset {at}"
    if blen < least or blen % 4:
        raise CaptureError(f"{where}: length {blen:,} (at least {least}, a multiple of 4)")
    if blen > MAX_BLOCK:
        raise CaptureError(f"{where}: length {blen:,} over {MAX_BLOCK:,}: not a capture's block")
    if size is not None and at + blen > size:
        raise CaptureError(f"{where}: length {blen:,} runs past the end of the file ({size:,} bytes)")
    body, closing = f.read(blen - read - 4), f.read(4)
    if len(closing) < 4:
        raise CaptureError(f"{where}: the file ends inside it")
    if struct.unpack(end + "I", closing)[0] != blen:
        raise CaptureError(f"{where}: its closing length {struct.unpack(end + 'I', closing)[0]:,} is not its "
                           f"opening {blen:,}")
    return body


def _packet(btype: int, body: bytes, end: str, links: list[int]) -> Record:
    """An enhanced (6), simple (3) or obsolete (2) packet block as a record."""
    if btype == 3:
        if len(body) < 4:
            return Record(-1, b"", 0, f"bad record: simple packet block of {12 + len(body)} bytes (at least 16)")
        length = struct.unpack_from(end + "I", body)[0]
        return _on(links, 0, body[4:4 + length], length)
    fixed = 20
    if len(body) < fixed:
        name = "enhanced" if btype == 6 else "obsolete"
        return Record(-1, b"", 0, f"bad record: {name} packet block of {12 + len(body)} bytes (at least 32)")
    if btype == 6:
        iface, _, _, caplen, length = struct.unpack_from(end + "IIIII", body)
    else:
        iface, _, _, _, caplen, length = struct.unpack_from(end + "HHIIII", body)
    if caplen > len(body) - fixed:
        return Record(-1, b"", length, f"bad record: capture length {caplen:,} runs past its block")
    if caplen > length:
        return Record(-1, b"", length, f"bad record: {caplen} bytes kept of a {length}-byte frame")
    return _on(links, iface, body[fixed:fixed + caplen], length)


def _on(links: list[int], iface: int, data: bytes, length: int) -> Record:
    """A record of interface `iface` of the section (`links`: each one's link type)."""
    if iface >= len(links):
        return Record(-1, data, length, f"interface {iface} is not described in this section (it describes "
                                        f"{len(links)})")
    if links[iface] not in (LINK_ETHERNET, LINK_RAW, LINK_IPV4, LINK_IPV6):
        return Record(links[iface], data, length, f"link type {links[iface]} (interface {iface}) is not {LINKS}")
    return Record(links[iface], data, length)


# ---- one frame ------------------------------------------------------------------------------------------------

class _Cut(Exception):
    """The bytes ran out inside a header."""

    def __init__(self, header: str, have: int, need: int):
        super().__init__(header)
        self.header, self.have, self.need = header, have, need


class _NotMrc(Exception):
    """Read whole, and not MRC."""


class _Broken(Exception):
    """Fields that disagree with each other or with the frame."""


def _need(frame: bytes, at: int, n: int, header: str) -> None:
    if len(frame) < at + n:
        raise _Cut(header, max(0, len(frame) - at), n)


def _ipv6(buf: bytes, at: int) -> dict[str, Any]:
    vtf = int.from_bytes(buf[at:at + 4], "big")
    return {"src": str(ipaddress.IPv6Address(buf[at + 8:at + 24])),
            "dst": str(ipaddress.IPv6Address(buf[at + 24:at + 40])),
            "dscp": (vtf >> 22) & 0x3F, "ecn": (vtf >> 20) & 3, "flow_label": vtf & 0xFFFFF,
            "payload_len": int.from_bytes(buf[at + 4:at + 6], "big"), "next_header": buf[at + 6],
            "hop_limit": buf[at + 7]}


def decode(link: int, frame: bytes, length: int | None = None) -> dict[str, Any]:
    """The headers of one frame (`length`: its length on the wire, where
    the capture kept less), with `snapped`, `trimmed`, `not_mrc` or
    `error` as the module says."""
    length = len(frame) if length is None else length
    out: dict[str, Any] = {}
    if length > len(frame):
        out["snapped"] = {"captured": len(frame), "length": length}
    try:
        _decode(out, link, frame, length)
    except _Cut as e:
        out["error"] = (f"snapped inside the {e.header}: the capture kept {len(frame)} of the frame's {length} bytes"
                        if length > len(frame) else f"cut short inside the {e.header} header: {e.have} of its "
                                                    f"{e.need} bytes")
    except _NotMrc as e:
        out["not_mrc"] = str(e)
    except _Broken as e:
        out["error"] = str(e)
    return out


def _decode(out: dict[str, Any], link: int, frame: bytes, length: int) -> None:
    at = _link(link, frame)
    _need(frame, at, 1, "IPv6")
    if frame[at] >> 4 != 6:
        raise _NotMrc(f"IP version {frame[at] >> 4}, not IPv6")
    _need(frame, at, IPV6_LEN, "IPv6")
    ip = _ipv6(frame, at)
    end = at + IPV6_LEN + ip["payload_len"]  # where the packet ends, by its own length
    if end > length and ip["dscp"] in TRIMMED_DSCP and ip["next_header"] == IPPROTO_UDP:
        out["trimmed"] = {"kept": length - at, "length": end - at}  # the NIC's notice to its host of a trim
    elif end > length:
        out["ipv6"] = ip
        raise _Broken(f"IPv6 payload length {ip['payload_len']} runs {end - length} bytes past the frame's end "
                      f"({length} bytes)")
    if ip["next_header"] == IPPROTO_IPV6:
        out["outer"] = ip
        at += IPV6_LEN
        _need(frame, at, 1, "inner IPv6")
        if frame[at] >> 4 != 6:
            raise _NotMrc("the encapsulated packet is not IPv6")
        _need(frame, at, IPV6_LEN, "inner IPv6")
        ip = _ipv6(frame, at)
        inner_end = at + IPV6_LEN + ip["payload_len"]
        if inner_end > end:  # a switch cut it and set only the outer length (congestion.p4)
            out["trimmed"] = {"kept": end - at, "length": inner_end - at}
        elif inner_end < end:
            raise _Broken(f"outer IPv6 payload length {out['outer']['payload_len']} is more than the inner "
                          f"packet's {inner_end - at}")
        end = inner_end
    out["ipv6"] = ip
    if ip["next_header"] != IPPROTO_UDP:
        raise _NotMrc(f"next header {ip['next_header']} is not UDP")
    _mrc(out, frame, at + IPV6_LEN, ip, end)


def _link(link: int, frame: bytes) -> int:
    """Where the IP header starts in a frame of `link`."""
    if link == LINK_ETHERNET:
        _need(frame, 0, ETH_LEN, "Ethernet")
        ethertype = int.from_bytes(frame[12:14], "big")
        if ethertype != ETHERTYPE_IPV6:
            raise _NotMrc(f"ethertype 0x{ethertype:04x} is not IPv6")
        return ETH_LEN
    if link == LINK_IPV4:
        raise _NotMrc("a raw IPv4 link: MRC runs on IPv6")
    if link in (LINK_RAW, LINK_IPV6):
        return 0
    raise _Broken(f"link type {link} is not {LINKS}")


def _mrc(out: dict[str, Any], frame: bytes, at: int, ip: dict[str, Any], end: int) -> None:
    """UDP, the BTH and its extension headers from `at`; `end`: where the
    packet ends by its IPv6 length."""
    if ip["payload_len"] < UDP_LEN:
        raise _Broken(f"IPv6 payload length {ip['payload_len']} is too short for UDP")
    _need(frame, at, UDP_LEN, "UDP")
    sport, dport, ulen = struct.unpack_from("!HHH", frame, at)
    out["udp"] = {"sport": sport, "dport": dport, "len": ulen}
    if dport != ROCE_PORT:
        raise _NotMrc(f"UDP port {dport} is not {ROCE_PORT}")
    if ulen != ip["payload_len"]:
        raise _Broken(f"UDP length {ulen} is not the IPv6 payload length {ip['payload_len']}")
    out["ev"] = (sport << 16) | (ip["flow_label"] & 0xFFFF)
    at += UDP_LEN
    _need(frame, at, L.size("bth"), "BTH")
    bth = L.unpack("bth", frame, at)
    if bth["opcode"] not in EXT_LEN:
        raise _NotMrc(f"BTH opcode 0x{bth['opcode']:02x} is not one MRC defines")
    out["bth"] = bth
    at += L.size("bth")
    names = L.stack(bth["opcode"], bth["ts"])
    headers_end = at + sum(L.size(n) for n in names)
    if headers_end + ICRC_LEN > end:
        raise _Broken(f"UDP length {ulen} is too short for the BTH, {', '.join(n.upper() for n in names)} and ICRC "
                      f"({headers_end + ICRC_LEN - (end - ulen)} bytes)")
    for name in names:
        _need(frame, at, L.size(name), name.upper())
        out[name] = L.unpack(name, frame, at)
        at += L.size(name)
    out["payload_len"] = end - at - ICRC_LEN


def lines(data: bytes | BinaryIO, size: int | None = None) -> Iterator[str]:
    """One JSON line per frame of a capture (bytes, or a binary file of
    `size` bytes), read a record at a time."""
    f = io.BytesIO(data) if isinstance(data, bytes) else data
    for n, r in enumerate(records(f, len(data) if isinstance(data, bytes) else size), 1):
        obj: dict[str, Any] = {"frame": n, **({"error": r.bad} if r.bad else decode(r.link, r.data, r.length))}
        yield json.dumps(obj)


# ---- the command ----------------------------------------------------------------------------------------------

class _OutputFailed(Exception):
    """stdout could not be written (a closed pipe: `quiet`)."""

    def __init__(self, why: str, quiet: bool):
        super().__init__(why)
        self.quiet = quiet


def _out(line: str | None) -> None:
    """`line` to stdout (None: flush it); _OutputFailed if it cannot take it."""
    try:
        if line is None:
            sys.stdout.flush()
        else:
            sys.stdout.write(line + "\n")
    except BrokenPipeError:
        raise _OutputFailed("closed", True) from None
    except OSError as e:
        raise _OutputFailed(e.strerror or str(e), False) from None


def _open(path: str) -> tuple[BinaryIO, int]:
    """The regular file `path`, opened without waiting (a FIFO with no
    writer would block the open), and its size."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    st = os.fstat(fd)
    what = file_kind(st.st_mode)
    if what is not None:
        os.close(fd)
        raise CaptureError(f"not a regular file ({what})")
    return os.fdopen(fd, "rb", buffering=1 << 16), st.st_size


def dissect(path: str) -> int:
    """Print one JSON line per frame of `path`; 1 if a frame or the file
    was unreadable (one line on stderr says so), else 0."""
    where = printable(path)
    bad = total = 0
    try:
        f, size = _open(path)
        with f:
            for line in lines(f, size):
                _out(line)
                total += 1
                bad += '"error": ' in line
    except OSError as e:
        _out(None)
        print(f"error: {where}: cannot read: {e.strerror or e}", file=sys.stderr)
        return 1
    except CaptureError as e:
        _out(None)
        print(f"error: {where}: {e}", file=sys.stderr)
        return 1
    _out(None)
    if bad:
        print(f"error: {where}: {bad} of {total} frames unreadable (their lines say why)", file=sys.stderr)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if args and args[0] == "--":
        args = args[1:]
    elif any(a.startswith("-") for a in args):
        print(f"error: unknown option {printable(next(a for a in args if a.startswith('-')))} (files only; "
              "--help says more)", file=sys.stderr)
        return 2
    if not args:
        print("usage: python -m mrc_wire.dissect FILE.pcap [FILE ...]  (--help says more)", file=sys.stderr)
        return 2
    status = 0
    try:
        for path in args:
            status = max(status, dissect(path))
    except _OutputFailed as e:
        null = os.open(os.devnull, os.O_WRONLY)  # what is left in stdout's buffer goes nowhere, quietly
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        if not e.quiet:
            print(f"error: output: cannot write: {e}", file=sys.stderr)
        return 3
    return status


if __name__ == "__main__":
    sys.exit(main())
