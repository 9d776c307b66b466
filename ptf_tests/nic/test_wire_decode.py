"""What the NIC emits, read by mrc_wire.dissect: the NACK it builds for a
trimmed data packet (NETH) decodes, field by field, to what the NIC
reference model predicts, on every target (on BMv2: the P4 against the
model); every header of a packet it forwards is left as the host wrote it."""

from __future__ import annotations

from scapy.layers.l2 import Ether

from control_plane import nic_plan as N
from mrc_wire import dissect
from mrc_wire.constants import NACK_TRIMMED, NACK_TRIMMED_LASTHOP, OP_NACK
from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import headers as H
from ptf_tests.lib.nic_fabric import ME, NIC, PEER, PROFILE, D, from_fabric, host_control

EV = PROFILE.home[3]
PLANE_PORT = N.plane_port(EV & 7)


def _model(port: int, frame: bytes) -> list[tuple[int, bytes]]:
    m = NicModel()
    m.install(NIC.entries())
    return [(o.port, o.frame) for o in m.process(port, frame)]


def _fabric(outputs: list[tuple[int, bytes]]) -> list[dict]:
    return [dissect.decode(dissect.LINK_ETHERNET, f) for p, f in outputs if p != N.HOST_PORT]


def test_the_nack_for_a_trimmed_packet_decodes_as_the_model_predicts(nic_target):
    for dscp, reason in ((D["trimmed"], NACK_TRIMMED), (D["trimmed_lasthop"], NACK_TRIMMED_LASTHOP)):
        stub = bytes(from_fabric(PEER, ME, EV, outer_dscp=dscp, payload=bytes(1000), psn=0x123456))[:256]
        [got] = _fabric(nic_target.burst([(PLANE_PORT, stub)]))
        [want] = _fabric(_model(PLANE_PORT, stub))
        assert got == want
        assert got["bth"]["opcode"] == OP_NACK and got["neth"]["nack_reason"] == reason
        assert (got["neth"]["nack_psn"], got["neth"]["entropy"], got["neth"]["tx_timestamp"]) == (0x123456, EV, 0x2A5)


def test_a_sack_from_the_host_leaves_with_its_headers_as_written(nic_target):
    seth = H.SETH(m=1, ack_psn_offset=-3, entropy=0xDEADBEEF, cack_psn=0xABCDEF, sack_offset=2,
                  sack_bitmap=0x8000000000000001)
    pkt = host_control(H.OP_SACK, seth / H.CCState(ooo_count=5, rcvd_bytes=77), PROFILE.home[1])
    [got] = _fabric(nic_target.burst([(N.HOST_PORT, bytes(pkt))]))
    assert got["seth"] == dissect.decode(dissect.LINK_ETHERNET, bytes(Ether(bytes(pkt))))["seth"]
    assert (got["seth"]["ack_psn_offset"], got["cc_state"]["ooo_count"]) == (-3, 5)
