"""The NIC's path-health digests (nic_model/ev_health.py): kept for a
reader (the testbed, the PTF model target), counted and not kept where
none reads them (the timed fabric), the data plane acting the same
either way; and ev_slots keyed per QP."""

import pytest

from fabric_sim.net.fabric import Fabric
from mrc_wire.constants import EVR_CONGESTION, EVS_GOOD, EVS_SKIP
from mrc_wire.entries import EvChange
from nic_model.ev_health import EvHealth
from nic_model.nic_pipeline import NicModel
from sim_core.sim import Sim
from tests.sim.helpers import make

EV = (0x1F_FFFF << 11) | (3 << 3) | 1  # the largest salt: all 32 bits of an EV in use
SLOTS = (1 << 5) | (1 << 63)  # slots 5 and 63 of QP 2 hold it


def _marked(keep: bool) -> EvHealth:
    h = EvHealth(keep=keep)
    h.ensure(2)
    h.move(2, 5, None, EV)
    h.move(2, 63, None, EV)
    h.move(1, 0, None, EV)  # QP 1's slot 0 holds the same EV: not QP 2's
    h.mark_skip(2, EV, EVR_CONGESTION)
    return h


def test_a_mark_skips_the_evs_slots_of_its_qp_alone_and_is_digested():
    h = _marked(keep=True)
    assert h.skip == [0, 0, SLOTS]
    assert h.drain() == [EvChange(2, EVR_CONGESTION, EV, SLOTS, EVS_GOOD, EVS_SKIP, 0, 0)]
    assert h.drain() == [] and h.digests == 1


def test_with_no_reader_a_digest_is_counted_not_kept_and_the_data_plane_acts_the_same():
    h = _marked(keep=False)
    assert h.skip == [0, 0, SLOTS]
    assert h.changes == [] and h.digests == 1
    h.mark_skip(2, EV, EVR_CONGESTION)  # already skipping: no change, no digest
    assert h.digests == 1


def test_asking_a_nic_that_keeps_no_digests_for_them_is_an_error_saying_so():
    with pytest.raises(RuntimeError, match=r"^nic-3: built with digests=False: its 0 digests were counted, not kept$"):
        NicModel("nic-3", digests=False).ev_changes()
    assert NicModel("nic-3").ev_changes() == []


def test_the_timed_fabrics_nics_keep_no_digests():
    """No controller reads them there: kept, they grew without end."""
    sc = make({"pattern": "permutation", "message_bytes": 1000})
    fab = Fabric(sc.topology, sc.links, Sim())
    with pytest.raises(RuntimeError, match="digests=False"):
        fab.nics[0].model.ev_changes()
