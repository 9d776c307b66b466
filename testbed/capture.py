"""A capture to look at: one transfer between two NICs of the demo
topology, with a trim, a loss and a probe, written as a pcap.

    python -m testbed.capture [OUT.pcap]      (make capture; default results/capture.pcap)

OUT.pcap is checked before the transfer runs (control_plane/outputs.py: a
regular file or one that can be created, not a folder, a device or the
run cache) and written under a temporary name, moved into place whole.

Two reference NIC pipelines (nic_model.nic_pipeline) with the MRC endpoint
on each (its NIC is the model, mrc_wire.pcie), plane ports linked back to
back on the event clock (a link of 5 µs). The link trims the first copy of PSN 4 (as a switch over
its threshold would: cut to 256 bytes, DSCP TRIMMED) and drops every
packet on one EV until 400 µs (a broken path that heals), so the capture
holds data, SACKs, the NIC's NACK for the trim, the loss's resend, the
probes of the retired EV, their answers and the EV's return. Every frame
on a plane link is written as it leaves its NIC, and every frame a NIC
hands its host; the times are the event clock's. Read it with
`python -m mrc_wire.dissect OUT.pcap` or with Wireshark and
wireshark/mrc.lua (docs/nic.md, "Captures").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from control_plane import nic_plan as N
from control_plane import outputs, topology
from control_plane.addressing import nic_address
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.settings import HostConfig
from mrc_wire import pcap
from mrc_wire.constants import DATA_OPCODES, ETH_LEN, IPV6_LEN
from mrc_wire.text import printable
from nic_model.nic_pipeline import NicModel, Output
from sim_core.sim import Sim
from testbed import toolchain

DEMO = toolchain.REPO / "bmv2_configs" / "topologies" / "demo.yaml"
A_NIC, B_NIC, A_QPN, B_QPN = 0, 3, 1, 2
LINK_US = 5.0
TRIM_PSN, TRIM_BYTES = 4, 256
HEAL_US = 400.0
ETH = bytes.fromhex("02aa00000002") + bytes.fromhex("02aa00000001") + b"\x86\xdd"
INNER = ETH_LEN + IPV6_LEN  # where the inner IPv6 header of a frame on a plane link starts


def _ev(frame: bytes) -> int:
    return (int.from_bytes(frame[INNER + 40:INNER + 42], "big") << 16) | int.from_bytes(frame[INNER + 2:INNER + 4],
                                                                                        "big")


class _Port:
    """Where one NIC's frames to its plane ports go: into the capture, then the link."""

    def __init__(self, cap: Capture, nic: int):
        self.cap, self.nic = cap, nic

    def send(self, out: Output) -> None:
        self.cap.frames.append((self.cap.sim.now, out.frame))
        self.cap.link(self.nic, out.port, out.frame)


class Capture:
    """The two NICs, their hosts and the link between them; `frames` what was seen."""

    def __init__(self) -> None:
        topo = topology.load(DEMO)
        self.sim = Sim()
        self.frames: list[tuple[float, bytes]] = []
        def profile() -> EvProfile:
            return EvProfile.spread(planes=topo.planes, spines=topo.t1_per_plane, slots=8)

        pa, pb = profile(), profile()
        self.bad = pa.home[1]
        self.trimmed = False
        self.nics = {A_NIC: NicModel("a"), B_NIC: NicModel("b")}
        self.ports = {nic: _Port(self, nic) for nic in self.nics}
        for nic, model in self.nics.items():
            model.install(N.nic_state(topo, nic).entries())  # its own tables; its QP is its host's to create
            model.connect(self.ports[nic])
        self.eps = {n: Endpoint(self.sim, str(nic_address(topo, n)), self.nics[n], HostConfig(probe_interval=100.0))
                    for n in (A_NIC, B_NIC)}
        self.eps[A_NIC].connect(A_QPN, B_QPN, str(nic_address(topo, B_NIC)), pa)
        self.eps[B_NIC].connect(B_QPN, A_QPN, str(nic_address(topo, A_NIC)), pb)

    def _in(self, nic: int, port: int, frame: bytes) -> None:
        """A frame arriving at a plane port: what the NIC makes of it, seen;
        what it hands its host reaches the host 1 µs later (PCIe)."""
        for out in self.nics[nic].process(port, frame):
            if out.port == N.HOST_PORT:
                self.frames.append((self.sim.now, out.frame))
                pkt = out.pkt
                if pkt is not None:
                    self.sim.at(1.0, self.eps[nic].deliver, pkt)
            else:
                self.ports[nic].send(out)

    def link(self, nic: int, port: int, frame: bytes) -> None:
        """A frame on the link from `nic`'s port `port`: the broken path and the trim act here."""
        if _ev(frame) == self.bad and self.sim.now < HEAL_US:
            return  # the broken path
        opcode = frame[INNER + 48]
        if not self.trimmed and opcode in DATA_OPCODES and int.from_bytes(frame[INNER + 57:INNER + 60], "big") \
                == TRIM_PSN:
            self.trimmed = True
            trimmed = self.nics[nic].config.dscp_trimmed
            cut = bytearray(frame[:TRIM_BYTES])
            cut[ETH_LEN] = (cut[ETH_LEN] & 0xF0) | (trimmed >> 2)
            cut[ETH_LEN + 1] = ((trimmed & 3) << 6) | (cut[ETH_LEN + 1] & 0x3F)
            cut[ETH_LEN + 4:ETH_LEN + 6] = (TRIM_BYTES - ETH_LEN - IPV6_LEN).to_bytes(2, "big")  # as congestion.p4
            frame = bytes(cut)
        other = B_NIC if nic == A_NIC else A_NIC
        self.sim.at(LINK_US, lambda: self._in(other, port, frame))

    def run(self, message_bytes: int = 32 * 1024, until_us: float = 1500.0) -> None:
        self.eps[A_NIC].send_message(A_QPN, bytes(i % 251 for i in range(message_bytes)))
        self.sim.run(until=until_us)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m testbed.capture", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=str(Path("results") / "capture.pcap"),
                    help="the pcap file to write (default: %(default)s); checked before the transfer runs")
    args = ap.parse_args(argv)
    problem = outputs.file_refusal(args.out)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cap = Capture()
    cap.run()
    try:
        with outputs.replacing(out) as tmp:  # whole or not at all
            n = pcap.write(tmp, cap.frames)
    except OSError as exc:
        print(f"error: {printable(args.out)}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 1
    s = cap.eps[A_NIC].stats
    with outputs.quiet_stdout():
        print(f"wrote {n} frames to {printable(args.out)}: {s.sent} data sent, {s.retransmits} resent, {s.nacks} "
              f"NACKs, {s.probes} probes; read it with: python -m mrc_wire.dissect {printable(args.out)}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
