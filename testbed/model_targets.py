"""Reference-model targets: the switch and NIC models behind the same
interface as a P4Runtime device (testbed/targets.py), so one test body
runs on both. What a model sends out is kept in order and matched as ptf
matches a device's output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol, SupportsBytes

import ptf.dataplane

from control_plane import nic_plan as N
from control_plane import switch_plan as S
from mrc_wire.constants import NIC_EVENTS
from mrc_wire.entries import CongestionConfig, EcnProfile, EvChange
from nic_model.nic_pipeline import NicModel
from switch_model.pipeline import SwitchModel


class Target(Protocol):
    name: str
    ports: list[int]
    counts_cut_frames: bool

    def send(self, port: int, pkt: SupportsBytes) -> None: ...
    def verify_packet(self, pkt: object, port: int) -> None: ...
    def verify_no_other_packets(self) -> None: ...
    def burst(self, frames: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]: ...
    def drop_count(self, reason: str) -> int: ...


class ModelTarget:
    """A reference model, with what it sent out kept in order (each
    subclass holds its model and runs a frame through it)."""

    name = "model"
    counts_cut_frames = True  # a header cut short by the frame's end is malformed

    def __init__(self, ports: list[int]):
        self.ports = ports
        self.received: list[tuple[int, bytes]] = []

    def _process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """(port, frame) of what the model sends out for `frame` in at `port`."""
        raise NotImplementedError

    def send(self, port: int, pkt: SupportsBytes) -> None:
        self.received += self._process(port, bytes(pkt))

    def verify_packet(self, pkt: object, port: int) -> None:
        for i, (p, frame) in enumerate(self.received):
            if p == port and ptf.dataplane.match_exp_pkt(pkt, frame):
                del self.received[i]
                return
        raise AssertionError(f"expected packet not received on port {port}; received {self.received!r}")

    def verify_no_other_packets(self) -> None:
        assert not self.received, f"unexpected packets: {self.received!r}"

    def burst(self, frames: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        return [o for port, frame in frames for o in self._process(port, frame)]

    def reset(self) -> None:
        self.received.clear()


class SwitchModelTarget(ModelTarget):
    def __init__(self, state: S.SwitchState, ports: list[int]):
        self.model = SwitchModel(state.name)
        self.model.install(state.entries())
        super().__init__(ports)
        self.high_queue: Counter[int] = Counter()

    def set_qdepth(self, port: int, depth: int) -> None:
        self.model.set_qdepth(port, depth)

    def set_congestion(self, cfg: CongestionConfig) -> None:
        self.model.install([cfg])

    def set_ecn_profile(self, profile: EcnProfile) -> None:
        self.model.install([profile])

    def at_depth(self, port: int, depth: int, frames: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        """Each frame decided with `port`'s data queue `depth` deep; what came out."""
        self.set_qdepth(port, depth)
        return self.burst(frames)

    def drop_count(self, reason: str) -> int:
        return self.model.drops[reason]

    def event_count(self, event: str) -> int:
        return self.model.events[event]

    def port_counts(self, port: int) -> tuple[int, int, int]:
        m = self.model
        return m.port_rx[port], m.port_tx[port], m.port_drop[port]

    def port_bytes(self, port: int) -> tuple[int, int]:
        return self.model.port_rx_bytes[port], self.model.port_tx_bytes[port]

    def _process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        out = self.model.process(port, frame)
        if out is None:
            return []
        self.high_queue[out.port] += out.high_priority  # the queue the frame is handed to
        return [(out.port, out.frame)]

    def high_queue_count(self, port: int) -> int:
        return self.high_queue[port]

    def delete_neighbour(self, port: int) -> None:
        self.model.uninstall([self.model.neighbours[port]])


class NicModelTarget(ModelTarget):
    def __init__(self, state: N.NicState, ports: list[int]):
        self.model = NicModel(state.name)
        self.model.install(state.entries())
        super().__init__(ports)

    def _process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        return [(o.port, o.frame) for o in self.model.process(port, frame)]

    def drop_count(self, reason: str) -> int:
        return self.model.drops[reason]

    def ev_count(self, ev: int) -> int:
        return self.model.ev_tx[ev]

    def plane_count(self, plane: int) -> int:
        return self.model.plane_tx[plane]

    def ev_bytes(self, ev: int) -> int:
        return self.model.ev_tx_bytes[ev]

    def plane_bytes(self, plane: int) -> int:
        return self.model.plane_tx_bytes[plane]

    def nack_count(self, reason: int) -> int:
        return self.model.nacks[reason]

    def event_count(self, event: str) -> int:
        if event not in NIC_EVENTS:
            raise KeyError(f"unknown NIC event {event!r} (known: {', '.join(NIC_EVENTS)})")
        return self.model.events[event]

    def rewrite_slots(self, writes: Sequence[tuple[int, int]]) -> None:
        self.model.install([N.SlotEv(slot, ev) for slot, ev in writes])

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        """The host's reverse EV of `plane` for local QP `qpn` (its SACKs' path)."""
        self.model.set_reverse(qpn, plane, ev)

    def set_bad(self, qpn: int, slots: int) -> None:
        self.model.set_bad(qpn, slots)

    def set_port_down(self, planes: int) -> None:
        self.model.set_port_down(planes)

    def health(self, qpn: int) -> tuple[int, int, int]:
        """(skip, bad, peer's planes down) of local QP `qpn`."""
        i = self.model.peers[qpn].qp_index
        h = self.model.health
        return h.skip[i], h.bad[i], h.peer_down[i]

    def ev_changes(self, expect: int = 0, wait: float = 0.0) -> list[EvChange]:
        return self.model.ev_changes()

    def delete_slots(self, qpn: int) -> None:
        qp = self.model.qps[qpn]
        self.model.uninstall([N.SlotEv(s, 0) for s in range(qp.base, qp.base + qp.mask + 1)])
