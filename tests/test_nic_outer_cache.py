"""The NIC model's encapsulation cache (nic_model/nic_pipeline.py) holds
one entry per plane and destination, the EV's spine put into the carrier
per packet: every EV sends the carrier of its own plane and spine
(DESIGN.md section 3, built here by control_plane.addressing), and a
destination in our row has no spine on its path."""

import ipaddress

from mrc_host.ev import make_ev
from mrc_wire.frame import parse_frame
from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import nic_fabric as F
from ptf_tests.lib.fabric import TOPO

[QP] = [q for q in F.NIC.qps if q.qpn == F.PEER_QPN]
SPINES = 8  # EV spines past the demo fabric's two: the carrier is the same arithmetic


def _carrier_sent(m: NicModel, ev: int, dst: int) -> bytes:
    m.write_slots(F.QPN, [(s, ev) for s in range(QP.mask + 1)])  # every slot on `ev`
    out, _completion = m.process(0, bytes(F.host_data(dst=dst)))  # data: its transmit completion too
    return parse_frame(out.frame).dst


def _expected(plane: int, dst: int, spine: int) -> bytes:
    return ipaddress.IPv6Address(F.carrier(plane, F.ME, dst, spine)).packed


def test_each_ev_gets_its_planes_and_spines_carrier_from_one_cached_entry_per_plane_and_destination():
    m = NicModel(F.NIC.name)
    m.install(F.NIC.entries())
    for dst in (F.PEER, F.SAME_ROW_PEER):
        for plane in range(TOPO.planes):
            for spine in range(SPINES):
                ev = make_ev(plane, spine, salt=spine + 1)
                assert _carrier_sent(m, ev, dst) == _expected(plane, dst, spine), (dst, plane, spine)
    assert m.headers_cached == 2 * TOPO.planes


def test_a_destination_in_our_row_has_no_spine_on_its_path():
    assert _expected(0, F.SAME_ROW_PEER, 1) == _expected(0, F.SAME_ROW_PEER, 5)
    assert _expected(0, F.PEER, 1) != _expected(0, F.PEER, 5)
