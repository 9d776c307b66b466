"""The switch model's route cache (switch_model/pipeline.py) holds one
entry per locator routing reads (block and next uSID, usid.p4's
meta.locator), not one per address: a switch on thousands of paths keeps
a few routes. The shifted address is the packet's own (DESIGN.md
section 3: block kept, our uSID dropped, the rest moved up, zero-filled)."""

import random

from mrc_wire import entries as S
from mrc_wire.frame import Frame
from switch_model.pipeline import SwitchModel

BLOCK = 0xFC00_0000
MINE = BLOCK << 16 | 0x4001  # this switch's uSID
NEXT = BLOCK << 16 | 0x8005  # the next hop's: routed to port 3
TRANSIT = BLOCK << 16 | 0x8006  # not ours: routed as it is, to port 4


def _switch() -> SwitchModel:
    m = SwitchModel("t1")
    m.install([S.MyUsid(MINE), S.UsidRoute(NEXT, 3), S.UsidRoute(TRANSIT, 4),
               S.PortNeighbour(3, 0x02_00_00_00_00_03, 0x02_00_00_00_00_33, False),
               S.PortNeighbour(4, 0x02_00_00_00_00_04, 0x02_00_00_00_00_44, False)])
    return m


def _frame(dst: bytes) -> Frame:
    src = bytes.fromhex("fc00000040020000") + bytes(8)
    return Frame(bytes(14), 0, 0, 8, 17, 64, src, dst, bytes(8))


def test_a_thousand_addresses_through_two_locators_cache_two_routes():
    m, rng = _switch(), random.Random(1)
    for _ in range(1000):
        rest = rng.randbytes(8)  # the uSIDs after the next and the host bits: a different path each
        ours = (MINE << 80 | 0x8005 << 64 | int.from_bytes(rest, "big")).to_bytes(16, "big")
        out = m.forward(1, _frame(ours))
        assert out is not None and out.port == 3
        assert out.wire.dst == (BLOCK << 96 | 0x8005 << 80 | int.from_bytes(rest, "big") << 16).to_bytes(16, "big")
        transit = (TRANSIT << 80 | int.from_bytes(rest + b"\0\0", "big")).to_bytes(16, "big")
        out = m.forward(1, _frame(transit))
        assert out is not None and out.port == 4 and out.wire.dst == transit
    assert m.routes_cached == 2


def test_a_packet_for_the_switch_itself_is_dropped_before_routing():
    m = _switch()
    assert m.forward(1, _frame((MINE << 80).to_bytes(16, "big"))) is None
    assert m.drops == {"for_me": 1} and m.routes_cached == 0


def test_each_locator_is_routed_once_then_read_from_the_cache(monkeypatch):
    """The cache is read, not only filled: 200 frames through two locators
    run routing twice (a lookup that never hit would run it 200 times and
    still cache two routes)."""
    m, routed = _switch(), []
    full = SwitchModel.route

    def counting(self: SwitchModel, loc: int):
        routed.append(loc)
        return full(self, loc)

    monkeypatch.setattr(SwitchModel, "route", counting)
    for i in range(100):
        host = i.to_bytes(8, "big")
        assert m.forward(1, _frame((MINE << 80 | 0x8005 << 64 | int.from_bytes(host, "big")).to_bytes(16, "big")))
        assert m.forward(1, _frame((TRANSIT << 80 | int.from_bytes(host, "big") << 16).to_bytes(16, "big")))
    assert sorted(routed) == sorted([NEXT, TRANSIT])
