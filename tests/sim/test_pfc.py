"""PFC (fabric_sim/net/pfc.py): the pause reaches the upstream queue one
propagation delay after XOFF, headroom absorbs what is on its way, XON
resumes it, and in a fabric RoCE is lossless by pauses, which block a
victim sharing a paused link (head-of-line blocking)."""

from __future__ import annotations

import pytest

from fabric_sim import report
from fabric_sim.net.links import CallReceiver
from fabric_sim.net.pfc import Arrival, Ingress, PfcEgress
from fabric_sim.runner.run import run
from fabric_sim.scenario import ScenarioError
from fabric_sim.scenario.pfc_config import PfcConfig
from mrc_wire.frame import Frame
from sim_core.sim import Sim
from tests.sim.helpers import make, sized

ONE_PLANE = {"planes": 1, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 4}
SIZE, GBPS, PROP = 1000, 100.0, 0.5  # bytes per frame, link rate, propagation (µs)
SER = SIZE * 8 / (GBPS * 1e3)  # 0.08 µs a frame


class Hop:
    """An upstream egress feeding a switch port whose only egress is held
    paused: every frame that arrives stays in the port's ingress buffer."""

    def __init__(self, xoff: int, xon: int, headroom: int, frames: int = 40):
        self.sim = Sim()
        self.arrivals: list[float] = []
        arrival = Arrival()
        self.down = PfcEgress(self.sim, "sw->out", GBPS, PROP, CallReceiver(lambda port, f: None), 0,
                              data_cap=1, high_cap=1, rng=None)
        self.up = PfcEgress(self.sim, "in->sw", GBPS, PROP, CallReceiver(self._rx), 0, data_cap=1000, high_cap=1,
                            rng=None)
        self.up.arrival = self.down.arrival = arrival
        self.ing = self.up.peer_ingress = Ingress("sw:0", self.sim, xoff, xon, headroom, self.up)
        self.down.pause()
        for _ in range(frames):
            self.up.send(sized(SIZE), False)

    def _rx(self, port: int, frame: Frame) -> None:
        self.arrivals.append(self.sim.now)
        self.down.send(frame, False)


def test_xoff_stops_the_upstream_queue_one_propagation_delay_later_after_the_frame_on_the_wire():
    h = Hop(xoff=5 * SIZE, xon=3 * SIZE, headroom=13 * SIZE)
    h.sim.run(until=4.0)
    t_xoff = 5 * SER + PROP  # the 5th frame's arrival crosses XOFF: 0.9 µs
    t_pause = t_xoff + PROP  # 1.4 µs: upstream starts nothing after this
    # Frames start every 0.08 µs: the 18th starts at 1.36, before the pause, and is the last one sent;
    # it ends 0.04 µs after the pause, within one frame.
    assert h.up.tx_pkts == 18 and h.up.depth() == 40 - 18
    assert h.arrivals[-1] == pytest.approx(18 * SER + PROP)
    assert t_pause < 18 * SER < t_pause + SER
    assert h.up.paused and h.up.pauses == 1 and h.up.paused_total(4.0) == pytest.approx(4.0 - t_pause)
    assert h.ing.held == h.ing.peak == 18 * SIZE and h.ing.overflows == 0  # 13 frames of headroom held them


def test_headroom_one_byte_short_drops_the_last_frame_in_flight():
    h = Hop(xoff=5 * SIZE, xon=3 * SIZE, headroom=13 * SIZE - 1)
    h.sim.run(until=4.0)
    assert h.ing.held == 17 * SIZE and h.ing.overflows == 1 and h.down.drops == {"pfc_headroom": 1}


def test_xon_at_the_lower_threshold_resumes_the_upstream_queue_one_propagation_delay_later():
    h = Hop(xoff=5 * SIZE, xon=3 * SIZE, headroom=13 * SIZE)
    h.sim.call_at(5.0, h.down.resume)  # the switch's egress drains the buffer, a frame every 0.08 µs
    h.sim.run(until=100.0)
    # 18 frames held: XON once 15 have left (3 frames left = xon) at 5 + 15 x 0.08 = 6.2 µs, and upstream
    # resumes at 6.7 µs: its 19th frame arrives one frame and one propagation delay after that.
    t_resume = 5.0 + 15 * SER + PROP
    assert h.arrivals[18] == pytest.approx(t_resume + SER + PROP)
    assert h.up.paused_us == pytest.approx(t_resume - (5 * SER + 2 * PROP))
    assert h.up.tx_pkts == 40 and h.ing.held == 0 and not h.up.paused
    assert h.up.pauses == 1 and h.ing.peak == 18 * SIZE  # drained as fast as it refills: not paused again


def _incast(pfc, victim: bool = False, **sc):
    flows = [{"src": f"nic-{s}", "dst": "nic-0", "message_bytes": 1_000_000} for s in (4, 5, 6)]
    flows.append({"src": "nic-7", "dst": "nic-1" if victim else "nic-0", "message_bytes": 1_000_000})
    t = {"name": "roce", "kind": "roce", **({"pfc": pfc} if pfc is not None else {})}
    s = make({"pattern": "flows", "message_bytes": 1_000_000, "flows": flows}, [t],
             topology=sc.pop("topology", ONE_PLANE), **sc)
    fabs = []
    return run(s, s.transports[0], hooks=[(0.0, fabs.append)]), fabs[0]


def test_a_4_to_1_incast_is_lossless_under_pfc_and_drops_without_it():
    r, fab = _incast(None)  # kind roce: PFC on by default
    assert r.complete and r.drops == {} and r.retx == {"sack": 0, "nack": 0, "timeout": 0}
    assert r.pfc["pause_frames"] > 0 and r.pfc["headroom_drops"] == 0
    nic_ports = [e for e in fab.egresses() if e.owner.kind == "nic"]
    assert any(e.pauses for e in nic_ports), "the T0 pauses the senders' NICs"
    # The RoCE scheduler holds its packets while its port is paused: one frame on the wire, at most one
    # more handed over at the instant it ends.
    assert 1 <= max(e.peak for e in nic_ports) <= 2
    off, _ = _incast({"enabled": False})
    assert off.drops.get("switch:congestion", 0) > 0 and off.pfc is None


def test_a_roce_nic_under_pfc_holds_its_data_while_its_port_queue_is_full_never_drops_it():
    # An all-to-all: every NIC's port also carries the ACKs of what it receives, ahead of its data, so a
    # scheduler pacing data at line rate outruns its port. With a 2-packet NIC queue it used to tail-drop
    # its own data, and go-back-N resent from each drop.
    sc = make({"pattern": "all_to_all", "message_bytes": 256 << 10}, [{"name": "r", "kind": "roce"}],
              topology=ONE_PLANE, links={"data_queue": 2})
    fabs: list = []
    r = run(sc, sc.transports[0], hooks=[(0.0, fabs.append)])
    assert r.complete and r.drops == {} and r.retx == {"sack": 0, "nack": 0, "timeout": 0}
    nic_ports = [e for e in fabs[0].egresses() if e.owner.kind == "nic"]
    assert max(e.peak for e in nic_ports) == 2, "held at the queue's size, then woken as it drains"


def test_pause_frames_and_paused_time_are_reported_per_link():
    r, fab = _incast(None)
    paused = {e.name: e for e in fab.egresses() if e.pauses}
    assert paused, "the incast pauses links"
    assert set(r.pfc["links"]) == set(paused) and r.pfc["links_paused"] == len(paused)
    for name, e in paused.items():
        assert r.pfc["links"][name] == {"pause_frames": e.pauses, "paused_us": round(e.paused_total(r.end_us), 3)}
    assert r.pfc["pause_frames"] == sum(e.pauses for e in paused.values())
    assert r.pfc["paused_us"] == pytest.approx(sum(v["paused_us"] for v in r.pfc["links"].values()))
    assert report.summary(r)["pfc"] is r.pfc
    assert f"PFC roce: {r.pfc['pause_frames']} pause frames on {len(paused)} links" in report.table([r])


def _victim_gbps(r) -> float:
    [m] = [m for m in r.messages if m.dst == 1]
    return m.size * 8 / ((m.done_at - m.posted_at) * 1e3)


def test_a_victim_sharing_a_paused_link_with_an_incast_loses_throughput_head_of_line_blocking():
    # One spine, 400 Gb/s fabric links: a 3:1 incast into nic-0 (100 Gb/s) congests only nic-0's link, and
    # nic-7 -> nic-1 shares the spine's downlink into rack 0 with it; nic-1's own link is idle. The T0's
    # pauses of that downlink stop the victim's packets queued behind the incast's.
    one_spine = {**ONE_PLANE, "t1_per_plane": 1}
    fast = {"fabric_gbps": 400}
    on, fab = _incast(None, victim=True, topology=one_spine, links=fast)
    off, _ = _incast({"enabled": False}, victim=True, links={**fast, "data_queue": 100_000},
                     topology={**one_spine, "congestion": {"trim_threshold": 500_000}})  # lossless by depth
    assert on.complete and on.drops == {} and off.complete and off.drops == {}
    assert _victim_gbps(off) > 0.9 * 100, "alone on nic-1's link, the victim runs at line rate"
    assert _victim_gbps(on) < 0.6 * 100, "paused behind the incast, the victim loses throughput"
    assert on.pfc["links"]["t1-p0-s0->t0-p0-r0"]["pause_frames"] > 0


def test_pfc_is_on_by_default_for_roce_only_and_refused_elsewhere_or_with_xon_above_xoff():
    w = {"pattern": "permutation", "message_bytes": 4096}
    sc = make(w, [{"name": "r", "kind": "roce"}, {"name": "off", "kind": "roce", "pfc": {"enabled": False}},
                  {"name": "m", "kind": "mrc"}])
    assert [t.pfc for t in sc.transports] == [PfcConfig(), None, None]
    with pytest.raises(ScenarioError, match=r"transports\[0\]\.pfc: PFC is for kind roce"):
        make(w, [{"name": "m", "kind": "mrc", "pfc": {"enabled": True}}])
    with pytest.raises(ScenarioError, match=r"transports\[0\]\.pfc\.xon_kb: 20 is above xoff_kb 19"):
        make(w, [{"name": "r", "kind": "roce", "pfc": {"xon_kb": 20}}])


def test_dcqcn_off_sends_no_cnp_and_keeps_every_qp_at_line_rate_pfc_alone_holds_the_incast():
    # ECN from 3 packets, as the paper's RoCE fabrics: with DCQCN the incast's senders are cut by CNPs;
    # with `dcqcn: false` (PFC alone) the marks draw no CNP and no QP leaves line rate, and the incast is
    # still lossless, by pauses alone.
    topo = {**ONE_PLANE, "congestion": {"ecn_threshold": 3}}
    cuts = {}
    for on in (True, False):
        flows = [{"src": f"nic-{s}", "dst": "nic-0", "message_bytes": 1_000_000} for s in (4, 5, 6, 7)]
        s = make({"pattern": "flows", "message_bytes": 1_000_000, "flows": flows},
                 [{"name": "roce", "kind": "roce", "dcqcn": on}], topology=topo)
        fabs: list = []
        r = run(s, s.transports[0], hooks=[(0.0, fabs.append)])
        assert r.complete and r.drops == {} and r.events["ecn_marked"] > 0
        qps = [qp for nic in fabs[0].nics if nic.host is not None for qp in nic.host.qps.values()]
        cuts[on] = (sum(qp.cc.cnps for qp in qps), sum(qp.cc.rc < qp.cc.line for qp in qps))
        assert on or r.pfc["pause_frames"] > 0
    assert cuts[True][0] > 0 and cuts[True][1] > 0 and cuts[False] == (0, 0)
    with pytest.raises(ScenarioError, match=r"transports\[0\]\.dcqcn"):
        make({"pattern": "permutation", "message_bytes": 4096}, [{"name": "m", "kind": "mrc", "dcqcn": False}])
