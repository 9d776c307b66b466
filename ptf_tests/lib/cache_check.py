"""Cached and full reference models side by side (issue 23, item 1): the
same seeded fuzz frames through a model with its decision cache and one
without, with the queue depths changing and table entries deleted and
re-added mid-stream (the cache must forget what it learnt from them);
every output frame, priority and counter must be equal."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import fuzz, nic_fabric
from ptf_tests.lib.fabric import T0, T0_PORTS
from switch_model.pipeline import SwitchModel

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
