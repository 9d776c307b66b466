"""Cached and full reference models side by side: the
same seeded fuzz frames through a model with its decision cache and one
without, with the queue depths changing and table entries deleted and
re-added mid-stream (the cache must forget what it learnt from them);
every output frame, priority and counter must be equal.

`compare_elided` holds the timed fabric's frames without their zeros
(`pad`, mrc_wire.packet) to the same frames with the zeros carried;
`compare_fields` holds a model given header fields (mrc_wire.frame, what
the timed fabric hands it) to one given the same frames as bytes."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence

from control_plane import nic_plan as N
from mrc_wire.constants import ETH_LEN
from mrc_wire.frame import not_ipv6_frame, parse_frame
from nic_model.nic_pipeline import NicModel
from nic_model.nic_pipeline import Output as NicOutput
from ptf_tests.lib import fuzz, nic_fabric
from ptf_tests.lib.fabric import T0, T0_PORTS, carrier, frame, sid_dl, sid_t0, sid_t1
from switch_model.pipeline import Output as SwitchOutput
from switch_model.pipeline import SwitchModel

NF_D = nic_fabric.D  # the topology's DSCPs
SWITCH_COUNTERS = ("port_rx", "port_tx", "port_drop", "port_rx_bytes", "port_tx_bytes", "drops", "events")
NIC_COUNTERS = ("turns", "ev_tx", "plane_tx", "ev_tx_bytes", "plane_tx_bytes", "drops", "nacks", "events")


def _switch_pair(full: bool = True) -> tuple[SwitchModel, SwitchModel]:
    pair = SwitchModel(T0.name, cache=True), SwitchModel(T0.name, cache=not full)
    for m in pair:
        m.install(T0.entries())
    return pair


def _nic_pair(full: bool = True) -> tuple[NicModel, NicModel]:
    pair = NicModel(nic_fabric.NIC.name, cache=True), NicModel(nic_fabric.NIC.name, cache=not full)
    for m in pair:
        m.install(nic_fabric.NIC.entries())
    return pair


def _switch_churn(rng: random.Random, models: tuple[SwitchModel, SwitchModel]) -> None:
    """A new queue depth on a random port, and now and then a neighbour or
    route deleted and put back."""
    port = rng.choice(T0_PORTS)
    depth = rng.choice([0, T0.congestion.ecn_threshold, T0.congestion.trim_threshold, rng.randrange(400)])
    for m in models:
        m.set_qdepth(port, depth)
    if rng.random() < 0.02:
        nb = models[0].neighbours.get(port)
        if nb is not None:
            for m in models:
                m.uninstall([nb])
        else:
            entry = next(e for e in T0.entries() if getattr(e, "port", None) == port and hasattr(e, "dst_mac"))
            for m in models:
                m.install([entry])


def _nic_churn(rng: random.Random, models: tuple[NicModel, NicModel]) -> None:
    """Now and then a plane port deleted, put back, or rewritten with
    another next-hop MAC (and back)."""
    if rng.random() < 0.03:
        entry = rng.choice(nic_fabric.NIC.planes)
        now = models[0].planes.get(entry.plane)
        if now is None:
            for m in models:
                m.install([entry])
            return
        change = rng.choice(["delete", "rewrite"])
        for m in models:
            if change == "delete":
                m.uninstall([entry])
            else:
                m.install([dataclasses.replace(now, dst_mac=now.dst_mac ^ 1)])


Out = SwitchOutput | NicOutput
Process = Callable[[int, bytes, int], Sequence[Out]]  # (in port, frame, zeros after it) -> what goes out


@dataclasses.dataclass(frozen=True)
class _Pair:
    """A program's model with its decision cache and one without: each run
    as a list of its outputs, what churns their tables, what they count."""

    models: tuple[object, object]  # their counters compared by name
    cached: Process
    full: Process
    churn: Callable[[random.Random], None]
    counters: tuple[str, ...]


def _switch_process(m: SwitchModel) -> Process:
    def process(port: int, frame: bytes, pad: int) -> list[Out]:
        out = m.process(port, frame, pad)
        return [] if out is None else [out]
    return process


def _switch_fields(m: SwitchModel) -> Process:
    """The switch as the timed fabric drives it: header fields in and out."""
    def forward(port: int, frame: bytes, pad: int) -> list[Out]:
        out = m.forward(port, parse_frame(frame, pad))
        return [] if out is None else [out]
    return forward


def _nic_fields(m: NicModel) -> Process:
    """The NIC as the timed fabric drives it: the host's packet (without
    the host port's Ethernet header) to `transmit` (with the completion the
    host port would get), header fields from a plane port to `receive`."""
    def given(port: int, frame: bytes, pad: int) -> Sequence[Out]:
        if port == N.HOST_PORT:
            return m.with_completion(frame, m.transmit(frame[ETH_LEN:], pad))
        return m.receive(parse_frame(frame, pad))
    return given


def _pair(program: str, fields: bool = False) -> _Pair:
    """Cached against full models, both given bytes; or (`fields`) two
    cached models, the second given header fields."""
    if program == "switch":
        sw = _switch_pair(full=not fields)
        return _Pair(sw, _switch_process(sw[0]), (_switch_fields if fields else _switch_process)(sw[1]),
                     lambda rng: _switch_churn(rng, sw), SWITCH_COUNTERS)
    nic = _nic_pair(full=not fields)
    return _Pair(nic, nic[0].process, _nic_fields(nic[1]) if fields else nic[1].process,
                 lambda rng: _nic_churn(rng, nic), NIC_COUNTERS)


def _counters_differ(p: _Pair) -> int:
    return sum(getattr(p.models[0], c) != getattr(p.models[1], c) for c in p.counters)


def _outs(res: Sequence[Out]) -> list[tuple[int, bytes, bool]]:
    return [(o.port, o.frame, o.high_priority) for o in res]


def compare(program: str, count: int, seed: int) -> int:
    """Run `count` fuzz frames through both; return how many frames (or
    counters at the end) differed."""
    rng = random.Random(seed)
    p = _pair(program)
    bad = 0
    for port, raw in fuzz.frames(program, count, seed=seed, on_wire=False):
        p.churn(rng)
        bad += _outs(p.cached(port, raw, 0)) != _outs(p.full(port, raw, 0))
    return bad + _counters_differ(p)


# Bytes a model reads from the front of a frame (the longest header chain):
# what the timed fabric always carries; only zeros after it are padded.
HEADER_SPAN = {"switch": 54, "nic": 54 + 40 + 8 + 12 + 36}  # a SACK's SETH and CC_STATE, or an EETH


def _materialized(res: Sequence[Out]) -> list[tuple[int, bytes, bool, tuple[bytes, int] | None]]:
    return [(o.port, o.frame + bytes(o.pad), o.high_priority,
             (o.pkt.payload, o.pkt.payload_len) if isinstance(o, NicOutput) and o.pkt is not None else None)
            for o in res]


def _grown(raw: bytes, zeros: int, ipv6_at: tuple[int, ...], udp_at: int) -> bytes:
    """`raw` with `zeros` zero bytes after it and its IPv6 and UDP lengths grown to match."""
    b = bytearray(raw + bytes(zeros))
    for at in (*(a + 4 for a in ipv6_at), udp_at + 4):
        b[at:at + 2] = (int.from_bytes(b[at:at + 2], "big") + zeros).to_bytes(2, "big")
    return bytes(b)


def _fabric_like(program: str, rng: random.Random) -> tuple[int, bytes]:
    """A well-formed packet of the timed fabric's kinds, its payload zeros:
    data (trimmable, resent), control; at the NIC also trimmed arrivals."""
    if program == "switch":
        dscp = rng.choice([NF_D["data_trimmable"], NF_D["data_trimmable_retx"], NF_D["control"]])
        port = rng.choice(T0_PORTS)
        sids = rng.choice([[sid_t1(0)], [sid_t1(1)], [sid_dl(1)], [sid_t0(0), sid_dl(0)]])
        raw = bytes(frame(carrier(*sids), tc=(dscp << 2) | rng.choice([0, 2, 3]), size=62, in_port=port))[:62]
        raw = raw[:18] + (8).to_bytes(2, "big") + raw[20:58] + (8).to_bytes(2, "big") + raw[60:]
        return port, _grown(raw, rng.randint(0, 5000), (14,), 54)
    if rng.random() < 0.5:
        return N.HOST_PORT, _grown(bytes(nic_fabric.host_data(payload=b"")), rng.randint(0, 5000), (14,), 54)
    ev = nic_fabric.PROFILE.home[rng.randrange(len(nic_fabric.PROFILE.home))]
    outer = rng.choice([None, NF_D["trimmed"], NF_D["trimmed_lasthop"]])
    raw = bytes(nic_fabric.from_fabric(nic_fabric.PEER, nic_fabric.ME, ev, outer_dscp=outer,
                                       outer_ecn=rng.choice([0, 3]), payload=b""))
    return N.plane_port(ev & 7), _grown(raw, rng.randint(0, 5000), (14, 54), 94)


def compare_elided(program: str, count: int, seed: int) -> int:
    """Frames through two models, one given each frame whole, the other only
    what precedes its trailing zeros (at least the headers) and their count
    (`pad`): half the fuzz frames with up to 5,000 zeros after them, half
    well-formed packets of the fabric's kinds with zero payloads. Returns
    how many frames (or counters at the end) differed."""
    rng = random.Random(seed)
    p = _pair(program)  # the switch's queue depths change: ECN and trimming too
    span = HEADER_SPAN[program]
    pool = [_fabric_like(program, rng) for _ in range(min(count, 200))]
    bad = 0
    for port, raw in fuzz.frames(program, count, seed=seed, on_wire=False):
        p.churn(rng)
        if rng.random() < 0.5:
            port, whole = rng.choice(pool)
        else:
            whole = raw + bytes(rng.choice([0, 1, rng.randint(2, 5000)]))
        body = whole.rstrip(b"\0")
        carried = whole[:max(len(body), span)]
        given_whole = p.cached(port, whole, 0)
        given_elided = p.full(port, carried, len(whole) - len(carried))
        bad += _materialized(given_whole) != _materialized(given_elided)
    return bad + _counters_differ(p)


def _fields_can_hold(program: str, port: int, raw: bytes) -> bool:
    """Whether the timed fabric could hand this frame over as header
    fields: an Ethernet / IPv6 frame (at a NIC's host port, one whose
    Ethernet type says IPv6)."""
    if program == "nic" and port == N.HOST_PORT:
        return len(raw) >= ETH_LEN and raw[12:14] == b"\x86\xdd"
    return not_ipv6_frame(raw) is None


def compare_fields(program: str, count: int, seed: int) -> int:
    """Frames through two models with their caches, one given bytes
    (`process`: the PTF model target, BMv2's peer), the other the same
    frames as header fields; outputs serialized and compared. Half the
    frames are fuzz frames a Frame can hold, half well-formed packets of
    the fabric's kinds with their zeros not carried. Returns how many
    frames (or counters at the end) differed."""
    rng = random.Random(seed)
    p = _pair(program, fields=True)
    span = HEADER_SPAN[program]
    pool = [_fabric_like(program, rng) for _ in range(min(count, 200))]
    bad = n = 0
    for port, raw in fuzz.frames(program, 4 * count, seed=seed, on_wire=False):
        if n == count:
            break
        if rng.random() < 0.5:
            port, whole = rng.choice(pool)
            body = whole.rstrip(b"\0")
            raw = whole[:max(len(body), span)]
            pad = len(whole) - len(raw)
        elif _fields_can_hold(program, port, raw):
            pad = rng.choice([0, 0, 1, rng.randint(2, 5000)])
        else:
            continue
        n += 1
        p.churn(rng)
        bad += _materialized(p.cached(port, raw, pad)) != _materialized(p.full(port, raw, pad))
    return bad + _counters_differ(p) + (n < count)
