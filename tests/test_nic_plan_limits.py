"""NIC plans that do not fit the P4 program's sizes are refused with the
reason, naming the QP that does not fit (mrc_wire.qp_table, as when a host
creates it): the qp_rotation register and qp_ev table hold 4,096 QPs, the
slot_ev table 65,536 slots."""

import pytest

from control_plane import nic_plan, topology
from mrc_wire.constants import NIC_MAX_QPS, NIC_MAX_SLOTS

TOPO = topology.parse({"planes": 2, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 2})


def _qps(n: int, evs: int, first: int = 0) -> list[nic_plan.QpCreate]:
    return [nic_plan.QpCreate(2 * i + 1, 2 * i + 2, tuple(range(evs))) for i in range(first, first + n)]


def test_the_largest_plans_that_fit_are_accepted():
    assert len(nic_plan.nic_state(TOPO, 0, _qps(NIC_MAX_QPS, 16)).qps) == NIC_MAX_QPS
    assert len(nic_plan.nic_state(TOPO, 0, _qps(1024, 64)).slots) == NIC_MAX_SLOTS


def test_one_qp_too_many_is_refused():
    with pytest.raises(ValueError, match=r"nic-0: QP 8193: the NIC's 4096 QPs are all in use \(qp_rotation register"):
        nic_plan.nic_state(TOPO, 0, _qps(NIC_MAX_QPS + 1, 1))


def test_one_slot_too_many_is_refused():
    with pytest.raises(ValueError, match=r"nic-0: QP 2049: 1 slots do not fit the NIC's slot_ev table \(65536, "
                                         r"65536 in use\)"):
        nic_plan.nic_state(TOPO, 0, _qps(1024, 64) + _qps(1, 1, first=1024))
