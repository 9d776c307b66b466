"""Cached and full reference models side by side: the
same seeded fuzz frames through a model with its decision cache and one
without, with the queue depths changing and table entries deleted and
re-added mid-stream (the cache must forget what it learnt from them);
every output frame, priority and counter must be equal.

`compare_elided` holds the timed fabric's frames without their zeros
(`pad`, mrc_wire.packet) to the same frames with the zeros carried."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import fuzz, nic_fabric
from ptf_tests.lib.fabric import T0, T0_PORTS, carrier, frame, sid_dl, sid_t0, sid_t1
from switch_model.pipeline import SwitchModel

NF_D = nic_fabric.D  # the topology's DSCPs
SWITCH_COUNTERS = ("port_rx", "port_tx", "port_drop", "port_rx_bytes", "port_tx_bytes", "drops", "events")
NIC_COUNTERS = ("rotation", "ev_tx", "plane_tx", "ev_tx_bytes", "plane_tx_bytes", "drops", "nacks", "events")


def _switch_pair() -> tuple[SwitchModel, SwitchModel]:
    pair = SwitchModel(T0.name, cache=True), SwitchModel(T0.name, cache=False)
    for m in pair:
        m.install(T0.entries())
    return pair


def _nic_pair() -> tuple[NicModel, NicModel]:
    pair = NicModel(nic_fabric.NIC.name, cache=True), NicModel(nic_fabric.NIC.name, cache=False)
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
        change = rng.choice(["delete", "rewrite"]) if now is not None else "restore"
        for m in models:
            if change == "delete":
                m.uninstall([entry])
            elif change == "rewrite":
                m.install([dataclasses.replace(now, dst_mac=now.dst_mac ^ 1)])
            else:
                m.install([entry])


def _outs(res: Any) -> list[tuple[int, bytes, bool]]:
    outs = res if isinstance(res, list) else [] if res is None else [res]
    return [(o.port, o.frame, o.high_priority) for o in outs]


def compare(program: str, count: int, seed: int) -> int:
    """Run `count` fuzz frames through both; return how many frames (or
    counters at the end) differed."""
    rng = random.Random(seed)
    models: tuple[Any, Any]
    churn: Callable[[random.Random, Any], None]
    if program == "switch":
        models, churn, counters = _switch_pair(), _switch_churn, SWITCH_COUNTERS
    else:
        models, churn, counters = _nic_pair(), _nic_churn, NIC_COUNTERS
    bad = 0
    for port, raw in fuzz.frames(program, count, seed=seed, on_wire=False):
        churn(rng, models)
        bad += _outs(models[0].process(port, raw)) != _outs(models[1].process(port, raw))
    bad += sum(getattr(models[0], c) != getattr(models[1], c) for c in counters)
    return bad


# Bytes a model reads from the front of a frame (the longest header chain):
# what the timed fabric always carries; only zeros after it are padded.
HEADER_SPAN = {"switch": 54, "nic": 54 + 40 + 8 + 12 + 36}  # a SACK's SETH and CC_STATE, or an EETH


def _materialized(res: Any) -> list[tuple[Any, ...]]:
    outs = res if isinstance(res, list) else [] if res is None else [res]
    return [(o.port, o.frame + bytes(o.pad), o.high_priority,
             None if getattr(o, "pkt", None) is None else (o.pkt.payload, o.pkt.payload_len)) for o in outs]


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
        return nic_fabric.N.HOST_PORT, _grown(bytes(nic_fabric.host_data(payload=b"")), rng.randint(0, 5000), (14,), 54)
    ev = nic_fabric.PROFILE.home[rng.randrange(len(nic_fabric.PROFILE.home))]
    outer = rng.choice([None, NF_D["trimmed"], NF_D["trimmed_lasthop"]])
    raw = bytes(nic_fabric.from_fabric(nic_fabric.PEER, nic_fabric.ME, ev, outer_dscp=outer,
                                       outer_ecn=rng.choice([0, 3]), payload=b""))
    return nic_fabric.N.plane_port(ev & 7), _grown(raw, rng.randint(0, 5000), (14, 54), 94)


def compare_elided(program: str, count: int, seed: int) -> int:
    """Frames through two models, one given each frame whole, the other only
    what precedes its trailing zeros (at least the headers) and their count
    (`pad`): half the fuzz frames with up to 5,000 zeros after them, half
    well-formed packets of the fabric's kinds with zero payloads. Returns
    how many frames (or counters at the end) differed."""
    rng = random.Random(seed)
    models: tuple[Any, Any]
    churn: Callable[[random.Random, Any], None]
    if program == "switch":  # queue depths change: ECN and trimming too
        models, churn, counters = _switch_pair(), _switch_churn, SWITCH_COUNTERS
    else:
        models, churn, counters = _nic_pair(), _nic_churn, NIC_COUNTERS
    span = HEADER_SPAN[program]
    pool = [_fabric_like(program, rng) for _ in range(min(count, 200))]
    bad = 0
    for port, raw in fuzz.frames(program, count, seed=seed, on_wire=False):
        churn(rng, models)
        if rng.random() < 0.5:
            port, whole = rng.choice(pool)
        else:
            whole = raw + bytes(rng.choice([0, 1, rng.randint(2, 5000)]))
        body = whole.rstrip(b"\0")
        carried = whole[:max(len(body), span)]
        full = models[0].process(port, whole)
        elided = models[1].process(port, carried, len(whole) - len(carried))
        bad += _materialized(full) != _materialized(elided)
    bad += sum(getattr(models[0], c) != getattr(models[1], c) for c in counters)
    return bad
