"""A fabric of reference models on the wall clock: every switch of a
topology the switch model with its planned tables, the NICs asked for the
NIC model (each its host's `mrc_wire.pcie.Nic`, its own tables planned,
its QPs its host's to create), every cable a link of LINK_US that
carries frames as bytes. What the live fabric (testbed/live.py) runs
where BMv2 is absent, with the same host agents and the same calls."""

from __future__ import annotations

from control_plane import addressing as A
from control_plane import nic_plan
from control_plane import switch_plan as S
from control_plane.topology import Topology
from mrc_wire import ids
from mrc_wire.frame import parse_frame
from nic_model.nic_pipeline import NicModel, Output
from sim_core.realtime import RealClock
from switch_model.pipeline import SwitchModel

LINK_US = 5.0


class _Port:
    """A NIC model's plane ports: what it sends goes on the cable of that port."""

    def __init__(self, fab: ModelFabric, dev: ids.DeviceId):
        self.fab, self.dev = fab, dev

    def send(self, out: Output) -> None:
        self.fab.carry(self.dev, out.port, out.frame)


class ModelFabric:
    def __init__(self, topo: Topology, nics: list[int], clock: RealClock):
        self.topo, self.clock = topo, clock
        self.switches: dict[ids.DeviceId, SwitchModel] = {}
        for name in S.switch_names(topo):
            dev = topo.device(name)
            m = SwitchModel(name)
            m.install(S.switch_state(topo, name).entries())
            self.switches[dev] = m
        self.nics: dict[int, NicModel] = {}
        for n in sorted(nics):
            nic = NicModel(A.nic_name(n))
            nic.install(nic_plan.nic_state(topo, n).entries())
            nic.connect(_Port(self, ids.nic(n)))
            self.nics[n] = nic
        self.peer: dict[tuple[ids.DeviceId, int], tuple[ids.DeviceId, int]] = {}
        for da, pa, db, pb, _ in topo.cables():
            self.peer[(da, pa)] = (db, pb)
            self.peer[(db, pb)] = (da, pa)

    def carry(self, dev: ids.DeviceId, port: int, frame: bytes) -> None:
        """A frame out of `dev`'s `port`: at the far end LINK_US later."""
        far = self.peer.get((dev, port))
        if far is not None:
            self.clock.at(LINK_US, self._arrive, far[0], far[1], frame)

    def _arrive(self, dev: ids.DeviceId, port: int, frame: bytes) -> None:
        if dev.kind == "nic":
            nic = self.nics.get(dev.index)
            if nic is not None:
                nic.on_wire(parse_frame(frame))
            return
        out = self.switches[dev].process(port, frame)
        if out is not None:
            self.carry(dev, out.port, out.frame)
