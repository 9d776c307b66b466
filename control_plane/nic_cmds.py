"""mrcctl's commands on running NICs, through a live fabric's host agents
(testbed/live.py; the agents run the host's MRC API, OCP's mrc.h and
mrc_ctl.h, and reach each NIC only through its PCIe side):

    mrcctl qp create NIC_A NIC_B [--evs N] [--spares N] [--no-health]
    mrcctl qp send NIC QPN BYTES [--wait SECONDS]
    mrcctl qp show NIC
    mrcctl ev show NIC QPN
    mrcctl ev set NIC QPN EV STATE          (GOOD, ASSUMED_BAD or DENIED)
    mrcctl ev watch NIC [--count N] [--timeout SECONDS]
    mrcctl port set NIC PORT enabled|disabled
    mrcctl device NIC

each with --agent HOST:PORT (default 127.0.0.1:7070).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from control_plane.agent_client import DEFAULT, Agent, AgentError
from control_plane.config import printable

COMMANDS = ("qp", "ev", "port", "device")


def _ev(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an EV (a number: 0x1a2 or 418)") from None
    if not 0 <= v < 2**32:
        raise argparse.ArgumentTypeError(f"{text!r}: an EV is 32 bits")
    return v


def _positive(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return int(text)


def add(sub: Any) -> None:
    """The commands, on mrcctl's subparsers."""
    agent = argparse.ArgumentParser(add_help=False)
    agent.add_argument("--agent", default=DEFAULT, metavar="HOST:PORT",
                       help="the live fabric's control socket (default: %(default)s)")
    qp = sub.add_parser("qp", help="QPs on running NICs (a live fabric)").add_subparsers(dest="action", required=True)
    c = qp.add_parser("create", parents=[agent], help="a QP pair between two NICs")
    c.add_argument("a", metavar="NIC_A")
    c.add_argument("b", metavar="NIC_B")
    c.add_argument("--evs", type=_positive, default=8, help="EVs of each end's rotation (default: %(default)s)")
    c.add_argument("--spares", type=int, default=1, help="spare EVs per plane (default: %(default)s)")
    c.add_argument("--no-health", action="store_true", help="no path health in the NICs' data planes")
    s = qp.add_parser("send", parents=[agent], help="post a message on a QP")
    s.add_argument("nic")
    s.add_argument("qpn", type=_positive)
    s.add_argument("bytes", type=_positive)
    s.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for its delivery")
    qp.add_parser("show", parents=[agent], help="a host's QPs").add_argument("nic")
    ev = sub.add_parser("ev", help="a QP's EVs on a running NIC").add_subparsers(dest="action", required=True)
    show = ev.add_parser("show", parents=[agent], help="the QP's EVs, their OCP states and use")
    show.add_argument("nic")
    show.add_argument("qpn", type=_positive)
    st = ev.add_parser("set", parents=[agent], help="MODIFY_EV_STATE of one EV")
    st.add_argument("nic")
    st.add_argument("qpn", type=_positive)
    st.add_argument("ev", type=_ev)
    st.add_argument("state", choices=["GOOD", "ASSUMED_BAD", "DENIED"])
    w = ev.add_parser("watch", parents=[agent], help="print a host's EV events as they come")
    w.add_argument("nic")
    w.add_argument("--count", type=_positive, help="stop after this many")
    w.add_argument("--timeout", type=float, metavar="SECONDS", help="stop after this long")
    port = sub.add_parser("port", help="a NIC port's admin state").add_subparsers(dest="action", required=True)
    ps = port.add_parser("set", parents=[agent], help="enable or disable a port (1-based: plane + 1)")
    ps.add_argument("nic")
    ps.add_argument("port", type=_positive)
    ps.add_argument("state", choices=["enabled", "disabled"])
    sub.add_parser("device", parents=[agent], help="a NIC's MRC capabilities").add_argument("nic")


def run(args: argparse.Namespace) -> int:
    """One command; a refusal is one line (exit 1), as is an agent not reached."""
    try:
        with Agent(args.agent) as a:
            return _run(a, args)
    except AgentError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return 1


def _run(a: Agent, args: argparse.Namespace) -> int:
    cmd = (args.command, getattr(args, "action", None))
    if cmd == ("qp", "create"):
        r = a.ask("qp_create", a=args.a, b=args.b, evs=args.evs, spares=args.spares, health=not args.no_health)
        for end in ("a", "b"):
            print(f"{r[end]['nic']} QP {r[end]['qpn']}: EVs {' '.join(hex(e) for e in r[end]['evs'])}")
    elif cmd == ("qp", "send"):
        r = a.ask("qp_send", nic=args.nic, qpn=args.qpn, bytes=args.bytes, wait=args.wait)
        print(f"message {r['msg_id']} " + ("delivered" if r.get("delivered") else "posted"))
    elif cmd == ("qp", "show"):
        r = a.ask("qp_show", nic=args.nic)
        for q in r["qps"]:
            print(f"QP {q['qpn']} -> {q['peer_nic']} QP {q['peer_qpn']}: {q['inflight']} in flight, "
                  f"{q['placed']} B placed" + (f", error: {q['error']}" if q["error"] else ""))
        print(", ".join(f"{k} {v}" for k, v in r["stats"].items()))
    elif cmd == ("ev", "show"):
        for e in a.ask("ev_show", nic=args.nic, qpn=args.qpn)["evs"]:
            print(f"{e['ev']:#010x} port {e['port']}  {e['state']:<11} {e['slots']} slots  {e['sent']} sent")
    elif cmd == ("ev", "set"):
        a.ask("ev_set", nic=args.nic, qpn=args.qpn, ev=args.ev, state=args.state)
        print(f"{args.nic} QP {args.qpn}: EV {args.ev:#x} {args.state}")
    elif cmd == ("ev", "watch"):
        return _watch(a, args)
    elif cmd == ("port", "set"):
        a.ask("port_set", nic=args.nic, port=args.port, state=args.state)
        print(f"{args.nic} port {args.port} {args.state}")
    else:
        d = a.ask("device", nic=args.nic)["device"]
        print(f"EVs: {d['ev']['ev_max_count']} at most, {d['ev']['ev_free_count']} free; "
              f"CC: {', '.join(d['cc_algorithms'])}; options: {', '.join(d['opt_attr'])}")
    return 0


def _watch(a: Agent, args: argparse.Namespace) -> int:
    a.ask("ev_watch", nic=args.nic)
    print(f"watching {args.nic}'s EV events", flush=True)
    if args.timeout:
        a.sock.settimeout(args.timeout)
    end = time.monotonic() + args.timeout if args.timeout else None
    n = 0
    try:
        for e in a.events():
            print(f"profile {e['profile']}: EV {e['ev']:#010x} port {e['port']} {e['state']} ({e['reason']})"
                  + (f", {e['drop_count']} dropped before" if e["drop_count"] else ""), flush=True)
            n += 1
            if args.count and n >= args.count:
                break
            if end is not None:
                a.sock.settimeout(max(0.01, end - time.monotonic()))
    except TimeoutError:
        pass
    return 0 if not args.count or n >= args.count else 1
