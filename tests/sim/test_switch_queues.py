"""In the timed fabric a switch hands control and trimmed stubs to the
egress port's high-priority queue and data to its data queue (DESIGN.md
section 7), on the depth of the data queue."""

import pytest

from fabric_sim.net.fabric import SwitchNode
from mrc_wire import ids
from mrc_wire.frame import Frame, parse_frame
from ptf_tests.lib.fabric import DOWNLINKS, T0, TOPO, UPLINKS, carrier, frame, sid_t1


class Port:
    """An egress port that records what it is handed, with a data queue
    `depth` packets deep (departures still in the future)."""

    def __init__(self, depth: int):
        self._depth = depth
        self.sent: list[tuple[int, bool]] = []

    def depth(self) -> int:
        return self._depth

    def send(self, frame: Frame, high: bool) -> None:
        self.sent.append((frame.size, high))


def _node(depth: int) -> tuple[SwitchNode, Port]:
    node = SwitchNode(ids.t0(0, 0), T0, mark_last_hop=False)
    port = Port(depth)
    node.attach_port(UPLINKS[0], port)
    return node, port


@pytest.mark.parametrize("cls, depth, high, size", [
    ("control", 0, True, 1000),
    ("control", TOPO.congestion.trim_threshold, True, 1000),  # never trimmed
    ("data_trimmable", 0, False, 1000),
    ("data_trimmable", TOPO.congestion.trim_threshold, True, TOPO.congestion.trim_bytes),  # the stub
    ("data_no_trim", TOPO.congestion.trim_threshold - 1, False, 1000),
])
def test_queue_the_switch_hands_each_class_to(cls, depth, high, size):
    node, port = _node(depth)
    raw = bytes(frame(carrier(sid_t1(0)), tc=TOPO.dscp[cls] << 2, size=1000, in_port=DOWNLINKS[0]))
    node.rx(DOWNLINKS[0], parse_frame(raw))
    assert port.sent == [(size, high)]


def test_a_frame_routed_to_a_port_with_no_cable_is_counted_not_sent():
    node, port = _node(0)  # only the first uplink has a cable
    node.rx(DOWNLINKS[0], parse_frame(bytes(frame(carrier(sid_t1(1)), tc=TOPO.dscp["data_trimmable"] << 2, size=1000,
                                                  in_port=DOWNLINKS[0]))))
    assert (node.unrouted, port.sent) == (1, [])
