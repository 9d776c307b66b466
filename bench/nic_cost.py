"""The NIC model's cost per packet on its paths (nic_model/nic_pipeline.py,
as the build running it: interpreted, or compiled by `make fast`): the
host's data sprayed by the plain rotation, by the rotation with path
health (every slot usable: its fast path; and with a plane down at the
peer: the whole pick), and in-order data from the fabric through the
receiver (a SACK due on each). The same frames each time, best of 3."""

from __future__ import annotations

import time
from collections.abc import Callable

from control_plane import nic_plan as N
from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import nic_fabric as NF

COUNT = 20_000


def _model() -> NicModel:
    m = NicModel(NF.NIC.name)
    m.install(NF.NIC.entries())
    return m


def _cost(frames: list[tuple[int, bytes]], prepare: Callable[[NicModel], None] = lambda m: None) -> float:
    """µs per frame, best of 3 fresh models."""
    best = float("inf")
    for _ in range(3):
        m = _model()
        prepare(m)
        t0 = time.perf_counter()
        for port, raw in frames:
            m.process(port, raw)
        best = min(best, (time.perf_counter() - t0) / len(frames) * 1e6)
    return best


def run() -> list[str]:
    host = N.HOST_PORT
    plain = [(host, bytes(NF.host_data(psn=i & 0xFFFFFF, qpn=NF.PEER_QPN))) for i in range(COUNT)]
    health = [(host, bytes(NF.host_data(psn=i & 0xFFFFFF, qpn=NF.HEALTH_PEER_QPN))) for i in range(COUNT)]
    ev = NF.PROFILE.home[0]
    rx = [(N.plane_port(ev & 7), bytes(NF.from_fabric(NF.PEER, NF.ME, ev, psn=i, ackreq=1)))
          for i in range(COUNT)]

    def plane_down(m: NicModel) -> None:
        m.health.port_status(m.peers[NF.HEALTH_QPN].qp_index, 1 << 1)

    rows = [("host data, plain rotation", _cost(plain)),
            ("host data, rotation with path health (all usable)", _cost(health)),
            ("host data, rotation with path health (a plane down at the peer)", _cost(health, plane_down)),
            ("fabric data through the receiver (a SACK each)", _cost(rx))]
    return ["## NIC model cost per packet (this build)", "",
            *[f"- {what}: {us:.2f} µs per frame" for what, us in rows]]


if __name__ == "__main__":
    print("\n".join(run()))
