"""The endpoint's parts are objects of their own: loss
recovery and path state run with nothing but what they are built with (a
clock, counters, settings and callbacks), and the message cut that both
transports share gives exact packets."""

from __future__ import annotations

import random
from typing import Any

from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvEvent, EvProfile
from mrc_host.paths import PathState
from mrc_host.qp import Inflight, QueuePair
from mrc_host.qp_paths import Probe, ProbeKind, QpPaths
from mrc_host.recovery import LossRecovery
from mrc_host.settings import HostConfig
from mrc_host.stats import Stats
from mrc_wire import packet as W
from mrc_wire.constants import (
    EP_PORT_STATUS,
    OP_EP_REQUEST,
    OP_EP_RESPONSE,
    OP_SACK,
    OP_WRITE_FIRST,
    OP_WRITE_LAST,
    OP_WRITE_MIDDLE,
    OP_WRITE_ONLY,
    ev_plane,
)
from mrc_wire.packet import PacketHost
from mrc_wire.segment import Segment, segments
from sim_core.sim import Sim
from tests.support.spy_nic import SpyNic


class Calls:
    """Every callback a part makes, in order: (name, args without the QP)."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *args: self.log.append((name, *args[1:])) or 7  # 7: a probe id


def _qp(**kw: Any) -> QueuePair:
    return QueuePair(1, 2, bytes(16), EvProfile.spread(planes=2, spines=4, slots=8), **kw)


def _copy(qp: QueuePair, psn: int, ev: int, sent_at: float) -> Inflight:
    inf = Inflight(Segment(psn, 1, 0, 4096, OP_WRITE_ONLY, 4096, None), ev, sent_at)
    qp.inflight[psn] = inf
    qp.sendq.append(inf)
    return inf


def _recovery(calls: Calls, stats: Stats) -> LossRecovery:
    return LossRecovery(Sim(), stats, rto=100.0, rto_max=300.0, retry_limit=2, reorder_window=25.0,
                        send=calls.send, lost=calls.lost, fail=calls.fail, event=calls.event, pump=calls.pump,
                        probe=calls.probe)


def test_timeouts_back_off_to_rto_max_then_fail_with_only_the_callbacks_given():
    """rto 100, cap 300, 2 retries: expired at 100 and 200 (2 x 100), then
    the third at 300 (4 x 100 capped at 300) is past the retry limit."""
    calls, stats = Calls(), Stats()
    rec, qp = _recovery(calls, stats), _qp()
    inf = _copy(qp, 0, 0x1F, 0.0)
    for now in (99.0, 100.0, 199.0, 200.0, 299.0, 300.0):
        rec.timeouts(qp, now)
    assert calls.log == [("lost", inf, EvEvent.LOSS), ("lost", inf, EvEvent.LOSS),
                         ("fail", "PSN 0 not acknowledged after 2 retransmissions by timeout (last EV 0x1f)")]
    assert stats.timeouts == 3 and inf.timeouts == 3


def test_a_copy_past_the_reorder_window_is_lost_and_its_ev_probed():
    """RACK: the latest delivered copy was sent at 100, the window is 25:
    the copy sent at 70 is lost and its EV suspect, the one at 80 is not."""
    calls, stats = Calls(), Stats()
    rec, qp = _recovery(calls, stats), _qp(reo_wnd=25.0)
    old, young = _copy(qp, 0, qp.profile.home[0], 70.0), _copy(qp, 1, qp.profile.home[1], 80.0)
    qp.rack_time = 100.0
    rec.detect_losses(qp)
    assert calls.log == [("lost", old, None), ("probe", qp.profile.home[0], ProbeKind.SUSPECT)]
    assert stats.retx_sack == 1 and list(qp.sendq) == [young]


def _paths(calls: Calls, qps: dict[int, QueuePair], ignore_peer_ports: bool = False) -> PathState:
    return PathState(Sim(), Stats(), qps, probe_interval=10.0, probe_timeout=100.0,
                     ignore_peer_ports=ignore_peer_ports, rng=random.Random(0), send_control=calls.send_control,
                     event=calls.event, push_slots=calls.push_slots, lost=calls.lost, pump=calls.pump,
                     arm_timer=calls.arm_timer, set_reverse=calls.set_reverse)


def test_a_port_down_resends_that_planes_copies_and_tells_the_peer_on_the_other_plane():
    calls, qp = Calls(), _qp()
    ev0, ev1 = qp.profile.home[0], qp.profile.home[1]
    assert (ev_plane(ev0), ev_plane(ev1)) == (0, 1)
    qp.paths.begin([ev0, ev1], 0.0)
    on0 = _copy(qp, 0, ev0, 0.0)
    _copy(qp, 1, ev1, 0.0)
    paths = _paths(calls, {1: qp})
    paths.port_down(0)
    assert paths.ports_down == 0b1
    status = W.erth_ext(EP_PORT_STATUS, 0b1)  # MRC's port status update: an endpoint request
    assert calls.log == [("push_slots",), ("lost", on0, None), ("pump",),
                         ("send_control", ev1, OP_EP_REQUEST, 0, status), ("arm_timer",)]
    assert paths.control_ev(qp, 0) == ev1
    paths.port_up(0)
    assert paths.ports_down == 0 and paths.control_ev(qp, 0) == ev0


def test_the_port_bitmap_ablation_ignores_the_peers_ports():
    calls, qp = Calls(), _qp()
    _paths(calls, {1: qp}, ignore_peer_ports=True).peer_ports(qp, 0b10)
    assert calls.log == [] and qp.paths.peer_down == 0
    _paths(calls, {1: qp}).peer_ports(qp, 0b10)
    assert qp.paths.peer_down == 0b10 and calls.log[0] == ("push_slots",)


def test_the_endpoint_is_composed_of_its_parts_not_mixed_from_them():
    """No mixin comes back: the endpoint's only base is the host interface,
    and the parts are plain classes it holds."""
    assert Endpoint.__bases__ == (PacketHost,)
    assert LossRecovery.__bases__ == (object,) and PathState.__bases__ == (object,)
    ep = Endpoint(Sim(), "fd00::1", SpyNic(), HostConfig(rto=80.0))
    assert isinstance(ep.recovery, LossRecovery) and isinstance(ep.paths, PathState)
    # The defaults derived from rto are written once, in the endpoint, and held by the part that uses them.
    assert (ep.recovery.rto_max, ep.recovery.reorder_window, ep.paths.probe_timeout) == (64 * 80.0, 20.0, 80.0)


def test_a_message_is_cut_into_write_packets_across_the_psn_wrap():
    segs = segments(0xFFFFFF, 9, 10000, 4096)
    assert [(s.psn, s.opcode, s.offset, s.length, s.msg_len, s.payload) for s in segs] == [
        (0xFFFFFF, OP_WRITE_FIRST, 0, 4096, 10000, None),
        (0x000000, OP_WRITE_MIDDLE, 4096, 4096, 10000, None),
        (0x000001, OP_WRITE_LAST, 8192, 1808, 10000, None)]
    data = bytes(range(256)) * 8
    assert [(s.opcode, s.payload) for s in segments(5, 1, data, 4096)] == [(OP_WRITE_ONLY, data)]
    assert [(s.opcode, s.length) for s in segments(5, 1, 0, 4096)] == [(OP_WRITE_ONLY, 0)]
    assert [s.payload for s in segments(0, 1, data, 1024)] == [data[:1024], data[1024:]]


def test_a_port_status_is_sent_again_until_the_peer_answers():
    calls, qp = Calls(), _qp()
    qp.paths.begin(qp.profile.home[:2], 0.0)
    paths = _paths(calls, {1: qp})
    paths.port_down(1)
    requests = lambda: [c for c in calls.log if c[0] == "send_control" and c[2] == OP_EP_REQUEST]  # noqa: E731
    paths.probe(qp, 50.0)
    assert len(requests()) == 1  # within the probe timeout (100 µs): waits
    paths.probe(qp, 100.0)
    assert len(requests()) == 2 and paths.announcing()
    paths.on_endpoint_response(qp, W.Mrc(W.build(bytes(16), bytes(16), 46, 0, 0, OP_EP_RESPONSE, 1, 0,
                                                 W.eeth_ext(EP_PORT_STATUS))))
    paths.probe(qp, 300.0)
    assert len(requests()) == 2 and not paths.announcing()


def test_the_peers_port_status_retires_its_plane_and_is_answered():
    calls, qp = Calls(), _qp()
    qp.paths.begin(qp.profile.home[:2], 0.0)
    paths = _paths(calls, {1: qp})
    req = W.Mrc(W.build(bytes(16), bytes(16), 46, 0, 0, OP_EP_REQUEST, 1, 0, W.erth_ext(EP_PORT_STATUS, 0b10)))
    paths.on_endpoint_request(qp, req)
    assert qp.paths.peer_down == 0b10 and paths.plane_down(qp, 1) and not paths.plane_down(qp, 0)
    assert calls.log[-1] == ("send_control", qp.profile.home[0], OP_EP_RESPONSE, 0, W.eeth_ext(EP_PORT_STATUS))


def test_a_reverse_probe_answer_goes_to_set_reverse_a_path_probe_answer_is_an_ev_event():
    """The reverse EV a probe's answer confirms goes to `set_reverse` (the host's set and its NIC's
    rx_reverse register, where the NIC's SACKs take it); a path probe's answer is an EV event."""
    calls, qp = Calls(), _qp()
    ev = qp.profile.home[3]
    qp.paths.sent(5, Probe(ev, 0.0, ProbeKind.REVERSE))
    qp.paths.sent(6, Probe(ev, 0.0, ProbeKind.PATH))
    paths = _paths(calls, {1: qp})
    for pid in (5, 6):
        paths.on_probe_reply(qp, W.Mrc(W.build(bytes(16), bytes(16), 46, 0, 0, OP_SACK, 1, 0,
                                               W.probe_reply_ext(ev, pid, 0, 0))))
    assert calls.log == [("set_reverse", ev_plane(ev), ev), ("event", ev, EvEvent.PROBE_OK)]


def test_placement_hands_a_message_over_once_in_order_and_a_late_copy_places_nothing():
    from mrc_host.placement import Placement
    rx = Placement(keep=True)
    assert rx.place(7, 4, 4, b"5678") == 4
    assert rx.place(7, 0, 4, b"1234") == 8
    assert rx.take(7) == b"12345678" and rx.bytes == 8
    assert rx.place(7, 0, 4, b"1234") == -1 and rx.bytes == 8  # a duplicate of a delivered message


def test_probes_given_up_on_the_tick_are_the_path_and_reverse_ones_past_their_timeout_not_suspects():
    paths = QpPaths()
    for pid, (t, kind) in enumerate([(0.0, ProbeKind.PATH), (0.0, ProbeKind.SUSPECT), (50.0, ProbeKind.REVERSE),
                                     (10.0, ProbeKind.REVERSE)]):
        paths.sent(pid, Probe(pid, t, kind))
    assert [p.ev for p in paths.expire(100.0, 90.0)] == [0, 3]
    assert paths.awaiting() == {1, 2} and paths.answered(2) == Probe(2, 50.0, ProbeKind.REVERSE)
