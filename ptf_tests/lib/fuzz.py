"""Seeded fuzz frames for both pipelines: valid frames, then the same
truncated, bit-flipped, with IPv6 extension headers, as random bytes
(some made to look like IPv6), and (models only) jumbo frames and frames
shorter than an Ethernet header."""

from __future__ import annotations

import random

from control_plane import nic_plan as N
from mrc_wire.constants import ETH_LEN, IPPROTO_IPV6, IPV6_LEN
from mrc_wire.packet import cut_short
from ptf_tests.lib import nic_fabric as NF
from ptf_tests.lib.fabric import T0_PORTS, carrier, frame, sid_dl, sid_t0, sid_t1

EXT_HEADERS = (0, 43, 60)  # hop-by-hop, routing, destination options


def _switch_valid(rng: random.Random) -> tuple[int, bytes]:
    sids = rng.choice([[sid_t1(0)], [sid_t1(1)], [sid_dl(1)], [sid_t0(0), sid_t1(1)], [sid_t0(0), sid_dl(0)],
                       [sid_t0(0)], [sid_t1(7)]])
    port = rng.choice(T0_PORTS)
    pkt = frame(carrier(*sids), hlim=rng.choice([1, 2, 64]), tc=rng.randrange(256) & ~3,
                size=rng.randint(60, 1500), in_port=port)
    return port, bytes(pkt)


def _nic_valid(rng: random.Random) -> tuple[int, bytes]:
    if rng.random() < 0.5:
        return N.HOST_PORT, bytes(
            NF.host_data(psn=rng.randrange(1 << 24), payload=rng.randbytes(rng.randint(0, 600)))
        )
    ev = NF.PROFILE.home[rng.randrange(len(NF.PROFILE.home))]
    f = NF.from_fabric(NF.PEER, NF.ME, ev, outer_ecn=rng.choice([0, 3]), payload=rng.randbytes(rng.randint(0, 600)))
    return N.plane_port(ev & 7), bytes(f)


def _with_extension_header(raw: bytes, rng: random.Random) -> bytes:
    """An 8-byte extension header between IPv6 and its payload."""
    nh = rng.choice(EXT_HEADERS)
    b = bytearray(raw)
    ext = bytes([b[20], 0]) + rng.randbytes(6)
    b[20] = nh
    b[18:20] = (int.from_bytes(b[18:20], "big") + 8).to_bytes(2, "big")
    return bytes(b[:54]) + ext + bytes(b[54:])


def mutate(port: int, raw: bytes, rng: random.Random, ports: list[int], min_len: int) -> tuple[int, bytes]:
    kind = rng.randrange(6)
    if kind == 0:  # as is
        return port, raw
    if kind == 1:  # truncated
        return port, raw[: rng.randint(min_len, max(min_len, len(raw) - 1))]
    if kind == 2:  # 1 to 4 bits flipped
        b = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return port, bytes(b)
    if kind == 3:  # extension header
        return port, _with_extension_header(raw, rng)
    b = bytearray(rng.randbytes(rng.randint(min_len, 300)))  # random bytes
    if kind == 5 and len(b) >= 15:  # ... that look like IPv6
        b[12:14] = b"\x86\xdd"
        b[14] = 0x60 | (b[14] & 0x0F)
    return rng.choice(ports), bytes(b)


def frames(program: str, count: int, seed: int, *, on_wire: bool = True) -> list[tuple[int, bytes]]:
    """`count` fuzz frames for "switch" or "nic". `on_wire`: only what a
    raw socket can send (15 bytes or more, at most 1514); else also shorter
    than Ethernet and jumbo frames."""
    rng = random.Random(seed)
    valid, ports = (_switch_valid, T0_PORTS) if program == "switch" else (_nic_valid, NF.PORTS)
    min_len = 15 if on_wire else 0  # ptf warns the kernel may not send 14-byte frames
    # Valid frames come from a pool (scapy builds ~1,000 frames/s); the
    # mutations, which make most of the variety, are bytes and cheap.
    pool = [valid(rng) for _ in range(min(count, 300))]
    out = []
    for _ in range(count):
        port, raw = mutate(*rng.choice(pool), rng, ports, min_len)
        if not on_wire and rng.random() < 0.02:
            raw = raw + rng.randbytes(rng.randint(1500, 8000))  # jumbo
        out.append((port, raw[:1514] if on_wire else raw))
    return out



def nic_reads_past_end(port: int, raw: bytes) -> bool:
    """Whether the NIC's parser (p4src/nic/parser.p4) would extract a header
    past the end of `raw` arriving at `port`: Ethernet, then from the host
    the IPv6 header and, for version 6, what follows it (mrc_wire's
    cut_short: UDP, the BTH and the MRC headers of its opcode); from the
    fabric the outer IPv6 header, and for version 6 and next header 41 the
    same behind it. A P4 parser counts such a frame malformed; SWX reads on
    into whatever its buffer held (docs/swx.md)."""
    if len(raw) < ETH_LEN:
        return True
    if raw[12:14] != b"\x86\xdd":
        return False
    ip = raw[ETH_LEN:]
    if port != N.HOST_PORT:
        if len(ip) < IPV6_LEN:
            return True
        if ip[0] >> 4 != 6 or ip[6] != IPPROTO_IPV6:
            return False
        ip = ip[IPV6_LEN:]
    return len(ip) < IPV6_LEN or (ip[0] >> 4 == 6 and cut_short(ip))
