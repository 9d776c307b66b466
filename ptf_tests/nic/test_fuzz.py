"""Seeded fuzz frames through the NIC (model and BMv2): the target sends
out exactly what the reference model sends out for the same frames, and
counts exactly the model's drops by reason."""

from collections import Counter

from mrc_wire.constants import NIC_DROPS
from ptf_tests.lib import fuzz, nic_fabric
from testbed.targets import NicModelTarget

COUNT = 1200


def test_fuzzed_frames_match_the_model_and_are_all_accounted_for(nic_target):
    frames = fuzz.frames("nic", COUNT, seed=11)
    drops0 = {r: nic_target.drop_count(r) for r in NIC_DROPS}
    outs = nic_target.burst(frames)
    drops = {r: nic_target.drop_count(r) - drops0[r] for r in NIC_DROPS}

    model = NicModelTarget(nic_fabric.NIC, nic_fabric.PORTS)
    expected = model.burst(frames)
    assert Counter(outs) == Counter(expected), "outputs differ from the reference model"
    assert drops == {r: model.model.drops[r] for r in NIC_DROPS}
    assert sum(drops.values()) > 0 and outs
