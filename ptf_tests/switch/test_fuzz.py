"""Seeded fuzz frames through the switch (model and BMv2): the target
sends out exactly what the reference model sends out for the same frames,
counts exactly the model's drops by reason, and per port rx = tx + drops
holds over the whole run."""

from collections import Counter

from mrc_wire.constants import SWITCH_DROPS
from ptf_tests.lib import fuzz
from ptf_tests.lib.fabric import T0, T0_PORTS
from testbed.model_targets import SwitchModelTarget

COUNT = 1500


def test_fuzzed_frames_match_the_model_and_are_all_accounted_for(target):
    frames = fuzz.frames("switch", COUNT, seed=7)
    drops0 = {r: target.drop_count(r) for r in SWITCH_DROPS}
    ports0 = {p: target.port_counts(p) for p in T0_PORTS}
    outs = target.burst(frames)
    drops = {r: target.drop_count(r) - drops0[r] for r in SWITCH_DROPS}
    ports = {p: tuple(a - b for a, b in zip(target.port_counts(p), ports0[p], strict=True)) for p in T0_PORTS}

    model = SwitchModelTarget(T0, T0_PORTS)
    expected = model.burst(frames)
    assert Counter(outs) == Counter(expected), "outputs differ from the reference model"
    assert drops == {r: model.model.drops[r] for r in SWITCH_DROPS}
    assert len(outs) + sum(drops.values()) == COUNT
    rx, tx, dropped = (sum(c[i] for c in ports.values()) for i in range(3))
    assert rx == COUNT and rx == tx + dropped
