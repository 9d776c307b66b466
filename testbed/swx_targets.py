"""The NIC suites' SWX target: nic_pna.p4 on DPDK's SWX pipeline
(testbed/swx_nic.py) behind the interface of the model and BMv2 NIC targets
(testbed/model_targets.py, testbed/targets.py), driven through ptf on its
TAP devices and waiting on the frames the program counts, not on time."""

from __future__ import annotations

from control_plane import nic_plan as N
from control_plane.ev_control import TableWriter
from mrc_wire.entries import EvChange
from testbed.settle import SETTLE_TIMEOUT, Settler
from testbed.swx_nic import PLANES, SwxNicDevice
from testbed.targets import NicSlots, PtfTarget


class NicSwxTarget(NicSlots, PtfTarget):
    name = "swx"
    # PNA gives the parser no frame length and SWX's extract checks none: a
    # header cut short is read on into the buffer's old bytes (docs/swx.md).
    counts_cut_frames = False

    def __init__(self, state: N.NicState, ports: list[int]):
        self.state = state
        self.device = SwxNicDevice(state, ports)
        try:
            super().__init__({p: self.device.pipe.iface(p) for p in ports}, ports)
        except BaseException:
            self.device.close()
            raise
        self.settler = Settler(state.name, self.device.progress, self.received)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.device.close()

    def table_writer(self) -> TableWriter:
        return self.device.pipe

    def reset(self) -> None:
        """Between tests: planned tables back, the planned QPs' registers cleared."""
        super().reset()
        self.device.reset()
        self._ev_control = None  # the slots as planned again

    # ---- counters (register arrays: PNA counters; ev_tx direct on ev_stats) ----
    def drop_count(self, reason: str) -> int:
        return self.device.drop_count(reason)

    def event_count(self, event: str) -> int:
        return self.device.event_count(event)

    def nack_count(self, reason: int) -> int:
        return self.device.counter("nack_reasons", reason)

    def plane_count(self, plane: int) -> int:
        return self.device.counter("plane_tx_packets", plane)

    def plane_bytes(self, plane: int) -> int:
        return self.device.counter("plane_tx_bytes", plane)

    def ev_count(self, ev: int) -> int:
        return self.device.pipe.direct("ev_tx_packets", "ev_stats", [ev])

    def ev_bytes(self, ev: int) -> int:
        return self.device.pipe.direct("ev_tx_bytes", "ev_stats", [ev])

    # ---- what the host writes and reads (registers) ---------------------------
    def _index(self, qpn: int) -> int:
        [qp] = [q for q in self.state.peers if q.qpn == qpn]
        return qp.qp_index

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        self.device.pipe.register_write("rx_reverse", self._index(qpn) * PLANES + plane, ev)

    def set_bad(self, qpn: int, slots: int) -> None:
        self.device.pipe.register_write("ev_bad", self._index(qpn), slots)

    def set_port_down(self, planes: int) -> None:
        self.device.pipe.register_write("port_down", 0, planes)

    def health(self, qpn: int) -> tuple[int, int, int]:
        """(skip, bad, peer's planes down) of local QP `qpn`, read back."""
        i, pipe = self._index(qpn), self.device.pipe
        return pipe.register_read("ev_skip", i), pipe.register_read("ev_bad", i), pipe.register_read("ev_peer_down", i)

    def ev_changes(self, expect: int = 0, wait: float = SETTLE_TIMEOUT) -> list[EvChange]:
        """The EV events since the last call: read back from the ring, in the
        order the data plane wrote them, once every frame sent is done."""
        assert self.settler is not None
        self.settler.wait()
        return self.device.events.drain()
