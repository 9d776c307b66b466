"""Seeded fuzz frames through the NIC (model, BMv2, SWX): the target sends
out exactly what the reference model sends out for the same frames, and
counts exactly the model's drops by reason.

A target that cannot see where a frame ends (SWX: PNA gives the parser no
frame length and SWX's extract checks none, docs/swx.md) gets the stream
without the frames its parser would read past the end of, and as many
frames as the others all the same: the rule "a header cut short is
malformed" is not one it can keep, and what such a frame becomes depends on
the bytes a buffer held before."""

from collections import Counter

from mrc_wire.constants import HOST_PORT, NIC_DROPS
from mrc_wire.packet import ev_of
from ptf_tests.lib import fuzz, nic_fabric
from testbed.model_targets import NicModelTarget

COUNT = 1200


def _model_in_step(nic_target) -> NicModelTarget:
    """A model whose QP rotation stands where the target's does: one data
    packet shows the target's slot (a remote device cannot reset it)."""
    sent = nic_target.burst([(HOST_PORT, bytes(nic_fabric.host_data(nic_fabric.PEER)))])
    [(_, first)], _done = nic_fabric.split(sent)
    ev = ev_of(first[14 + 40:])  # the inner header, after Ethernet and the outer IPv6
    [qp] = [q for q in nic_fabric.NIC.qps if q.qpn == nic_fabric.PEER_QPN]  # QpEv: keyed by the peer's QP
    [slot] = [s.slot for s in nic_fabric.NIC.slots if s.ev == ev and qp.base <= s.slot <= qp.base + qp.mask]
    model = NicModelTarget(nic_fabric.NIC, nic_fabric.PORTS)
    model.model.set_turn(qp.qp_index, slot - qp.base + 1)
    return model


def _frames(nic_target) -> list[tuple[int, bytes]]:
    if nic_target.counts_cut_frames:
        return fuzz.frames("nic", COUNT, seed=11)
    # The same seeded stream (its first COUNT frames are the others'), read on past the cut ones.
    stream = fuzz.frames("nic", 2 * COUNT, seed=11)
    kept = [f for f in stream if not fuzz.nic_reads_past_end(*f)][:COUNT]
    assert len(kept) == COUNT
    return kept


def test_fuzzed_frames_match_the_model_and_are_all_accounted_for(nic_target):
    frames = _frames(nic_target)
    model = _model_in_step(nic_target)
    drops0 = {r: nic_target.drop_count(r) for r in NIC_DROPS}
    outs = nic_target.burst(frames)
    drops = {r: nic_target.drop_count(r) - drops0[r] for r in NIC_DROPS}

    expected = model.burst(frames)
    assert Counter(outs) == Counter(expected), "outputs differ from the reference model"
    assert drops == {r: model.model.drops[r] for r in NIC_DROPS}
    assert sum(drops.values()) > 0 and outs
