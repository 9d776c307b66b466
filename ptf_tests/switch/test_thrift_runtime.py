"""BMv2's Thrift runtime (register writes PI cannot do) decides success by
the server's answer: a refused write raises with the server's error code
and names the register; an accepted one changes what the switch does (here
a reset; the congestion suites cover writes)."""

import pytest

from ptf_tests.lib.fabric import DOWNLINKS, TOPO, UPLINKS, carrier, forwarded, frame, sid_t1
from testbed.bmv2_thrift import ThriftError

pytestmark = pytest.mark.bmv2


def test_out_of_range_index_is_refused_with_the_servers_code(bmv2_t0):
    with pytest.raises(ThriftError, match=r"register_write port_qdepth\[512\] = 1 refused: INVALID_INDEX"):
        bmv2_t0.bmv2.runtime().register_write("port_qdepth", 512, 1)


def test_unknown_register_is_named_with_the_known_ones(bmv2_t0):
    with pytest.raises(
        ThriftError, match=r"register 'no_such' is not in the running program \(registers: port_qdepth\)"
    ):
        bmv2_t0.bmv2.runtime().register_write("no_such", 0, 1)


def test_a_reset_register_no_longer_trims(bmv2_t0):
    """Depth at the trim threshold, then a register reset: the next
    trimmable packet leaves whole, as at depth 0."""
    t = bmv2_t0
    t.reset()
    t.set_qdepth(UPLINKS[0], TOPO.congestion.trim_threshold)
    t.bmv2.runtime().register_reset("port_qdepth")
    try:
        pkt = frame(carrier(sid_t1(0)), tc=TOPO.dscp["data_trimmable"] << 2, size=1000, in_port=DOWNLINKS[0])
        t.send(DOWNLINKS[0], pkt)
        t.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
        t.verify_no_other_packets()
    finally:
        t.reset()
