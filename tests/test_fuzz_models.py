"""Seeded fuzzing of both reference models (a few thousand frames each;
`make bench` runs 100,000): nothing raises, every frame is either output
or counted under exactly one drop reason, and what the switch forwards is
the frame it got with only the header fields DESIGN.md lets it change."""

from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import cache_check, fuzz, nic_fabric
from ptf_tests.lib.fabric import T0
from switch_model.pipeline import SwitchModel

COUNT = 3000


def switch_model() -> SwitchModel:
    m = SwitchModel(T0.name)
    m.install(T0.entries())
    return m


def test_switch_model_outputs_or_counts_every_fuzzed_frame():
    m = switch_model()
    forwarded = 0
    for port, raw in fuzz.frames("switch", COUNT, seed=1, on_wire=False):
        before = sum(m.drops.values())
        out = m.process(port, raw)
        dropped = sum(m.drops.values()) - before
        assert dropped + (out is not None) == 1, (port, raw.hex())
        if out is not None:
            forwarded += 1
            o = out.frame
            assert len(o) == len(raw) and o[14] >> 4 == 6  # no queue, no trim: same length
            assert o[21] == raw[21] - 1 and o[22:38] == raw[22:38] and o[54:] == raw[54:]
    assert sum(m.port_rx.values()) == sum(m.port_tx.values()) + sum(m.port_drop.values()) == COUNT
    assert COUNT * 0.05 < forwarded < COUNT * 0.9  # the mix reaches both outcomes


def test_nic_model_outputs_or_counts_every_fuzzed_frame():
    m = NicModel(nic_fabric.NIC.name)
    m.install(nic_fabric.NIC.entries())
    outputs = 0
    for port, raw in fuzz.frames("nic", COUNT, seed=2, on_wire=False):
        before = sum(m.drops.values())
        outs = m.process(port, raw)
        dropped = sum(m.drops.values()) - before
        assert dropped + bool(outs) == 1, (port, raw.hex())
        assert all(o.port in nic_fabric.PORTS for o in outs)
        outputs += bool(outs)
    assert COUNT * 0.05 < outputs < COUNT * 0.9
    assert m.drops["malformed"] > 0 and m.drops["not_mrc"] + m.drops["not_encap"] > 0


def test_nic_model_counts_a_header_cut_short_as_malformed_like_the_p4_parser():
    """Found by fuzzing against BMv2: a frame that ends inside the UDP, BTH or
    extension header its IPv6 header announces is `malformed` (P4's
    PacketTooShort), not `not_mrc` or `bad_inner`."""
    host = bytes(nic_fabric.host_data())
    fabric = bytes(nic_fabric.from_fabric(nic_fabric.PEER, nic_fabric.ME, nic_fabric.PROFILE.home[0]))
    plane_port = nic_fabric.PORTS[1 + (nic_fabric.PROFILE.home[0] & 7)]
    for port, whole, ip_at in ((0, host, 14), (plane_port, fabric, 54)):
        for cut in (ip_at + 40 + 4, ip_at + 40 + 8 + 6, ip_at + 40 + 8 + 12 + 3):  # in UDP, BTH, extension
            m = NicModel(nic_fabric.NIC.name)
            m.install(nic_fabric.NIC.entries())
            assert m.process(port, whole[:cut]) == [] and m.drops == {"malformed": 1}, (port, cut, m.drops)


def test_the_frames_left_out_for_swx_are_those_the_nic_counts_malformed_for_ending_early():
    """fuzz.nic_reads_past_end (what SWX's fuzz stream leaves out: its parser
    reads on past a frame's end) flags only frames the NIC model counts
    malformed, and every frame the model counts malformed that it does not
    flag stays malformed with bytes behind it that parse (a bad IP version,
    not a cut)."""
    m = NicModel(nic_fabric.NIC.name)
    m.install(nic_fabric.NIC.entries())
    flagged = 0
    for port, raw in fuzz.frames("nic", COUNT, seed=11):
        before = m.drops["malformed"]
        m.process(port, raw)
        malformed = m.drops["malformed"] > before
        if fuzz.nic_reads_past_end(port, raw):
            flagged += 1
            assert malformed, (port, raw.hex())
        elif malformed:
            before = m.drops["malformed"]
            m.process(port, raw + b"\x60" * 256)  # version 6 wherever read, no next header the parser follows
            assert m.drops["malformed"] > before, (port, raw.hex())
    assert flagged > COUNT * 0.03


def test_the_switch_decision_cache_changes_nothing():
    """Cached and full switch models, depths changing and neighbours deleted mid-stream: equal frames,
    priorities and counters (make bench: 100,000 frames)."""
    assert cache_check.compare("switch", COUNT, seed=11) == 0


def test_the_nic_header_cache_changes_nothing():
    assert cache_check.compare("nic", COUNT, seed=12) == 0


def test_the_switch_model_gives_the_same_frames_with_a_payloads_zeros_not_carried():
    """The timed fabric carries headers and a count of zeros (`pad`): the
    same frames, priorities and counters as with the zeros carried,
    trimming included (make bench: 100,000 frames)."""
    assert cache_check.compare_elided("switch", COUNT, seed=13) == 0


def test_the_nic_model_gives_the_same_frames_and_payloads_with_the_zeros_not_carried():
    assert cache_check.compare_elided("nic", COUNT, seed=14) == 0


def test_the_switch_given_header_fields_gives_what_it_gives_for_the_bytes():
    """The timed fabric hands the switch header fields (mrc_wire.frame), the
    PTF model target bytes: the same frames out, serialized, and the same
    counters (make bench: 100,000 frames)."""
    assert cache_check.compare_fields("switch", COUNT, seed=15) == 0


def test_the_nic_given_header_fields_gives_what_it_gives_for_the_bytes():
    assert cache_check.compare_fields("nic", COUNT, seed=16) == 0
