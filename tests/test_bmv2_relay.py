"""The BMv2 fabric's cable relay (testbed/links.py) on frames it reads:
an MRC carrier is counted by its EV and sent on; a frame too short to
carry an inner BTH (the kernel's own IPv6 packets on a veth) is sent on
uncounted, and the relay keeps going (it once raised on one and stopped
forwarding, so a whole BMv2 fabric delivered nothing)."""

from testbed.links import Link


class FakeSocket:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, frame: bytes) -> None:
        self.sent.append(frame)


def _link() -> tuple[Link, FakeSocket, FakeSocket]:
    link = Link([])
    a, b = FakeSocket(), FakeSocket()
    link.peer = {a: b, b: a}  # type: ignore[dict-item]
    link.side = {a: "a", b: "b"}  # type: ignore[dict-item]
    link.cable = {a: ("x", "y"), b: ("x", "y")}  # type: ignore[dict-item]
    return link, a, b


def _carrier(ev: int, opcode: int) -> bytes:
    f = bytearray(200)
    f[56:58] = (ev & 0xFFFF).to_bytes(2, "big")  # inner flow label, low 16 bits
    f[94:96] = (ev >> 16).to_bytes(2, "big")  # inner UDP source port
    f[102] = opcode
    return bytes(f)


def test_a_short_frame_is_sent_on_and_the_next_carrier_is_counted():
    link, a, b = _link()
    mld = bytes(90)  # an MLDv2 report: Ethernet, IPv6, hop-by-hop, 28 bytes
    link.relay(a, mld)  # type: ignore[arg-type]
    link.relay(a, _carrier(0x12345, 0xC6))  # type: ignore[arg-type]
    assert b.sent == [mld, _carrier(0x12345, 0xC6)]
    assert link.short == 1 and link.seen == {0x12345: 1} and link.data_from == {"a": {0x12345: 1}}


def test_a_carrier_on_the_dropped_ev_is_dropped():
    link, a, b = _link()
    link.drop_ev = 7
    link.relay(b, _carrier(7, 0xC6))  # type: ignore[arg-type]
    assert a.sent == [] and link.dropped == 1
