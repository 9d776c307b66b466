"""The switch model's dscp_class table (congestion.p4's class lookup):
installed and deleted classes take effect on the next packet, and a key
that is no 6-bit DSCP matches none."""

from mrc_wire import entries as S
from mrc_wire.constants import CLASS_PRIORITY
from mrc_wire.frame import Frame
from switch_model.pipeline import SwitchModel

LOC = 0xFC00_0000 << 16 | 0x8005


def _switch() -> SwitchModel:
    m = SwitchModel("t0")
    m.install([S.UsidRoute(LOC, 3), S.PortNeighbour(3, 0x02_00_00_00_00_03, 0x02_00_00_00_00_33, False)])
    return m


def _high(m: SwitchModel, dscp: int) -> bool:
    src = bytes.fromhex("fc00000040020000") + bytes(8)
    out = m.forward(1, Frame(bytes(14), dscp << 2, 0, 8, 17, 64, src, (LOC << 80).to_bytes(16, "big"), bytes(8)))
    assert out is not None
    return out.high_priority


def test_a_class_installed_then_deleted_takes_effect_on_the_next_packet():
    m = _switch()
    assert not _high(m, 10)
    m.install([S.DscpClass(10, CLASS_PRIORITY)])
    assert _high(m, 10) and not _high(m, 11)
    m.uninstall([S.DscpClass(10, CLASS_PRIORITY)])
    assert not _high(m, 10)


def test_a_key_that_is_no_dscp_matches_none():
    m = _switch()
    m.install([S.DscpClass(64, CLASS_PRIORITY), S.DscpClass(-1, CLASS_PRIORITY)])
    assert not any(_high(m, d) for d in range(64))
