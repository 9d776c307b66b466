"""Host agents of a live fabric and the control socket `mrcctl`'s qp, ev
and port commands talk to (docs/nic.md, "A QP on a running NIC").

On each NIC's host an agent holds what a host runs: the MRC endpoint on
its NIC (a `mrc_wire.pcie.Nic`: a BMv2 NIC, or the reference model) and
its MRC API (mrc_host/verbs.py and ctl.py: the application's and the
controller's calls), with an EV event CQ the watchers read. The server
takes one JSON object per line and answers with one per line (a watcher
gets a line per event until it hangs up). Everything runs on the fabric's
clock, in the thread that polls it: `Server.poll` is part of that poll.

Requests (`op` and its fields):
  device      nic                                  the device's capabilities (query_device)
  qp_create   a, b, evs=8, spares=1, health=true   a QP pair between two NICs, each end on an EV profile
                                                    of its own (explicit: `evs` EVs spread over the planes)
  qp_send     nic, qpn, bytes, wait=0              post a message (wait: seconds for its delivery)
  qp_show     nic                                  the host's QPs and their counters
  ev_show     nic, qpn                             the QP's EVs: OCP state, data packets sent on each
  ev_set      nic, qpn, ev, state                  MODIFY_EV_STATE: GOOD, ASSUMED_BAD or DENIED
  ev_watch    nic                                  stream the host's EV events
  port_set    nic, port, state                     a port's admin state: enabled or disabled
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from mrc_host import verbs
from mrc_host.cc import Aimd
from mrc_host.ctl import MrcCtl
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.ocp import (
    CcProfileAttr,
    Ev,
    EvEvent,
    EvOp,
    EvOpEntry,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    MrcError,
    PortAdminState,
    PortAttr,
    PortAttrMask,
)
from mrc_host.settings import HostConfig
from mrc_wire.pcie import Nic
from sim_core.realtime import RealClock

# The endpoint's timers on the wall clock (µs): BMv2's round trips are milliseconds.
WALL_CLOCK = HostConfig(rto=300_000, probe_interval=50_000, reorder_window=50_000)
# AIMD on the wall clock: NSCC's delay rules would read BMv2's software latency as queueing.
CC = CcProfileAttr(algorithm="aimd", cc_config=Aimd(cwnd=16.0, max_cwnd=64.0, target_delay=1e9))
WATCHED = EvState.GOOD | EvState.ASSUMED_BAD | EvState.DENIED
CQ_DEPTH = 4096


class Deliveries:
    """An agent's application: what its QPs delivered (mrc_host.host.App)."""

    def __init__(self, clock: RealClock):
        self.clock = clock
        self.done: dict[tuple[int, int], float] = {}  # (QP, message) -> when, s

    def delivered(self, qpn: int, msg_id: int, data: bytes | None) -> None:
        self.done[(qpn, msg_id)] = time.monotonic()

    def placed(self, qpn: int, msg_id: int, offset: int, length: int) -> None:
        pass

    def failed(self, qpn: int, reason: str) -> None:
        pass


class HostAgent:
    """One NIC's host: its endpoint and MRC API."""

    def __init__(self, name: str, addr: bytes, nic: Nic, clock: RealClock, planes: int, spines: int):
        self.name, self.addr, self.planes, self.spines = name, addr, planes, spines
        self.app = Deliveries(clock)
        self.ep = Endpoint(clock, addr, nic, WALL_CLOCK, self.app)
        self.api = verbs.MrcContext(self.ep, MrcCtl(self.ep, planes))
        self.cq = self.api.ctl.create_ev_event_cq(CQ_DEPTH)
        self.peers: dict[int, tuple[str, int]] = {}  # QP -> (peer NIC, peer QP)

    def open(self, qpn: int, peer: HostAgent, peer_qpn: int, evs: int, spares: int, health: bool) -> list[int]:
        """QP `qpn` to `peer`'s `peer_qpn`: its EV profile, ONLINE, then the QP through RESET .. RTS."""
        plan = EvProfile.spread(self.planes, self.spines, evs, spares, salt=qpn % self.spines)
        plan.health = health
        verbs.open_qp(self.api, qpn, peer_qpn, peer.addr, plan, verbs.cc_profile(self.api.ctl, 1, CC),
                      event_mask=WATCHED)
        self.peers[qpn] = (peer.name, peer_qpn)
        return plan.home


def _ev_json(e: EvEvent) -> dict[str, Any]:
    return {"profile": e.profile_id, "ev": e.ev.val, "port": e.ev.port, "state": e.state.name,
            "drop_count": e.drop_count, "reason": e.reason}


class _Client:
    def __init__(self, sock: socket.socket):
        self.sock, self.buf = sock, b""
        self.watch: str | None = None  # the NIC whose events this client watches
        self.wait: tuple[str, int, int, float, int] | None = None  # (peer NIC, peer QP, message, deadline, id)


class Server:
    """The control socket on `port` (localhost) over `agents` (by NIC name)."""

    def __init__(self, agents: dict[str, HostAgent], port: int = 0):
        self.agents = agents
        self.listener = socket.create_server(("127.0.0.1", port))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.clients: list[_Client] = []
        self.next_qpn = 1  # fabric-wide: a NIC's qp_ev is keyed by its peers' QP numbers
        self.stopped = False

    def fds(self) -> list[socket.socket]:
        return [self.listener] + [c.sock for c in self.clients]

    def close(self) -> None:
        for c in self.clients:
            c.sock.close()
        self.listener.close()

    def poll(self) -> None:
        """Accept, read and answer what came; hand each watcher its NIC's events."""
        try:
            while True:
                s, _ = self.listener.accept()
                s.setblocking(False)
                self.clients.append(_Client(s))
        except BlockingIOError:
            pass
        events = {name: a.api.ctl.poll_ev_event(a.cq, CQ_DEPTH) for name, a in self.agents.items()}
        for c in list(self.clients):
            try:
                self._serve(c, events)
            except (ConnectionError, OSError):
                c.sock.close()
                self.clients.remove(c)

    def _serve(self, c: _Client, events: dict[str, list[EvEvent]]) -> None:
        try:
            data = c.sock.recv(65536)
            if not data:
                raise ConnectionResetError("closed")
            c.buf += data
        except BlockingIOError:
            pass
        while b"\n" in c.buf:
            line, c.buf = c.buf.split(b"\n", 1)
            self._answer(c, line)
        if c.watch is not None:
            for e in events.get(c.watch, []):
                self._send(c, {"event": _ev_json(e)})
        if c.wait is not None:
            self._check_wait(c)

    @staticmethod
    def _send(c: _Client, obj: dict[str, Any]) -> None:
        c.sock.setblocking(True)
        try:
            c.sock.sendall(json.dumps(obj).encode() + b"\n")
        finally:
            c.sock.setblocking(False)

    def _answer(self, c: _Client, line: bytes) -> None:
        try:
            req = json.loads(line)
            if not isinstance(req, dict) or not isinstance(req.get("op"), str):
                raise ValueError("a request is a JSON object with its op")
            handler = self._ops().get(req["op"])
            if handler is None:
                raise ValueError(f"op {req['op']!r}: one of {', '.join(self._ops())}")
            out = handler(c, req)
        except MrcError as exc:
            out = {"ok": False, "error": exc.strerror}
        except (ValueError, KeyError, TypeError) as exc:
            out = {"ok": False, "error": str(exc)}
        if out is not None:
            self._send(c, out)

    def _ops(self) -> dict[str, Callable[[_Client, dict[str, Any]], dict[str, Any] | None]]:
        return {"device": self._device, "qp_create": self._qp_create, "qp_send": self._qp_send,
                "qp_show": self._qp_show, "ev_show": self._ev_show, "ev_set": self._ev_set,
                "ev_watch": self._ev_watch, "port_set": self._port_set, "stop": self._stop}

    def _agent(self, req: dict[str, Any], key: str = "nic") -> HostAgent:
        name = req.get(key)
        if name not in self.agents:
            raise ValueError(f"{key}: {name!r} is not a NIC of this fabric ({', '.join(self.agents)})")
        return self.agents[name]

    @staticmethod
    def _int(req: dict[str, Any], key: str, default: int | None = None, lo: int = 0, hi: int = 2**32) -> int:
        v = req.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise ValueError(f"{key}: {v!r} is not a whole number in {lo}..{hi}")
        return v

    # ---- the operations ---------------------------------------------------------------------
    def _device(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        d = self._agent(req).api.ctl.query_device()
        return {"ok": True, "device": {"ev": {k: int(v) for k, v in asdict(d.ev).items()},
                                       "cc_algorithms": list(d.cc_algorithms), "phy_port_mask": d.phy_port_mask,
                                       "opt_attr": [f.name for f in type(d.opt_attr) if f & d.opt_attr]}}

    def _qp_create(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        a, b = self._agent(req, "a"), self._agent(req, "b")
        if a is b:
            raise ValueError("a and b: a QP pair needs two NICs")
        evs, spares = self._int(req, "evs", 8, 1, 256), self._int(req, "spares", 1, 0, 16)
        health = bool(req.get("health", True))
        qa, qb = self.next_qpn, self.next_qpn + 1
        home_a = a.open(qa, b, qb, evs, spares, health)
        home_b = b.open(qb, a, qa, evs, spares, health)
        self.next_qpn += 2
        return {"ok": True, "a": {"nic": a.name, "qpn": qa, "evs": home_a}, "b": {"nic": b.name, "qpn": qb,
                                                                                "evs": home_b}}

    def _qp(self, agent: HostAgent, req: dict[str, Any]) -> int:
        qpn = self._int(req, "qpn", None, 1, 2**24 - 1)
        if qpn not in agent.ep.qps:
            raise ValueError(f"qpn: {agent.name} has no QP {qpn} (its QPs: {sorted(agent.ep.qps)})")
        return qpn

    def _qp_send(self, c: _Client, req: dict[str, Any]) -> dict[str, Any] | None:
        agent = self._agent(req)
        qpn, size = self._qp(agent, req), self._int(req, "bytes", None, 1, 1 << 30)
        msg = agent.ep.send_message(qpn, size)
        wait = float(req.get("wait", 0))
        if wait <= 0:
            return {"ok": True, "msg_id": msg}
        peer, peer_qpn = agent.peers[qpn]
        c.wait = (peer, peer_qpn, msg, time.monotonic() + wait, msg)
        return None  # answered when delivered (_check_wait)

    def _check_wait(self, c: _Client) -> None:
        assert c.wait is not None
        peer, peer_qpn, msg, deadline, _ = c.wait
        at = self.agents[peer].app.done.get((peer_qpn, msg))
        if at is not None:
            self._send(c, {"ok": True, "msg_id": msg, "delivered": True})
        elif time.monotonic() > deadline:
            self._send(c, {"ok": False, "msg_id": msg, "error": f"message {msg} not delivered in time"})
        else:
            return
        c.wait = None

    def _qp_show(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        agent = self._agent(req)
        qps = []
        for qpn, qp in sorted(agent.ep.qps.items()):
            peer = agent.peers.get(qpn, ("?", qp.peer_qpn))
            qps.append({"qpn": qpn, "peer_nic": peer[0], "peer_qpn": qp.peer_qpn, "error": qp.error,
                        "inflight": len(qp.inflight), "placed": qp.rx_bytes})
        s = agent.ep.stats
        return {"ok": True, "qps": qps, "stats": {"sent": s.sent, "retransmits": s.retransmits,
                                                  "delivered": s.delivered, "probes": s.probes}}

    def _ev_show(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        agent = self._agent(req)
        qpn = self._qp(agent, req)
        q = agent.api.ctl.query_ev_profile(qpn, EvProfileAttrMask.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_ARRAY))
        sent = agent.ep.qps[qpn].ev_tx
        slots = agent.ep.qps[qpn].profile.slots
        return {"ok": True, "evs": [{"ev": e.ev.val, "port": e.ev.port, "state": e.state.name,
                                     "slots": slots.count(e.ev.val), "sent": sent.get(e.ev.val, 0)}
                                    for e in q.entries]}

    def _ev_set(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        agent = self._agent(req)
        qpn, ev = self._qp(agent, req), self._int(req, "ev", None)
        name = req.get("state")
        if name not in ("GOOD", "ASSUMED_BAD", "DENIED"):
            raise ValueError(f"state: {name!r}: GOOD, ASSUMED_BAD or DENIED")
        agent.api.ctl.modify_ev_profile(qpn, EvProfileAttr(ev_op=EvOp.MODIFY_EV_STATE, entries=[
            EvOpEntry(Ev.of(ev), state=EvState[name])]), EvProfileAttrMask.EV_OP)
        return {"ok": True}

    def _ev_watch(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        c.watch = self._agent(req).name
        return {"ok": True, "watching": c.watch}

    def _port_set(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        agent = self._agent(req)
        port = self._int(req, "port", None, 1, 8)
        state = {"enabled": PortAdminState.ENABLED, "disabled": PortAdminState.DISABLED}.get(str(req.get("state")))
        if state is None:
            raise ValueError(f"state: {req.get('state')!r}: enabled or disabled")
        agent.api.ctl.modify_port(port, PortAttr(state), PortAttrMask.ADMIN_STATE)
        return {"ok": True}

    def _stop(self, c: _Client, req: dict[str, Any]) -> dict[str, Any]:
        self.stopped = True
        return {"ok": True}
