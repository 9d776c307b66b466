"""`make run`: the main job for now.

Compile (if p4c is present), start t0-p0-r0 of the demo topology on BMv2
(else on the reference model, saying so), install its tables with the
controller, verify them, send a handful of carriers and print, per packet,
where it left and how its address was rewritten.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import addressing as A
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane import topology
from testbed import toolchain
from testbed.model_targets import SwitchModelTarget
from testbed.targets import SwitchBmv2Target

SPORT = 0x1000
DEMO = toolchain.REPO / "bmv2_configs" / "topologies" / "demo.yaml"


def demo_frames(topo: topology.Topology, state: S.SwitchState) -> list[tuple[str, int, bytes]]:
    """(description, in port, frame) for a few carriers through T0(0, 0)."""
    def t0(r: int) -> int:
        return A.usid(A.TIER_T0, 0, r)

    def t1(j: int) -> int:
        return A.usid(A.TIER_T1, 0, j)

    def dl(k: int) -> int:
        return A.usid(A.TIER_DL, 0, k)

    up0, up1 = topo.t0_uplink_port(0), topo.t0_uplink_port(1)
    cases = [
        ("NIC 0 -> NIC 3 via spine 1", 0, [t0(0), t1(1), t0(1), dl(1)], 64),
        ("NIC 1 -> NIC 2 via spine 0", 1, [t0(0), t1(0), t0(1), dl(0)], 64),
        ("NIC 0 -> NIC 1, same T0", 0, [t0(0), dl(1)], 64),
        ("from spine 0, last hop to NIC 0", up0, [t0(0), dl(0)], 62),
        ("transit to spine 1 (no shift)", 1, [t1(1), t0(1), dl(0)], 64),
        ("argument zero: for the switch", up1, [t0(0)], 64),
        ("unknown neighbour", 0, [t0(0), A.usid(A.TIER_T1, 0, 9)], 64),
        ("hop limit 1", 0, [t0(0), t1(0), t0(1), dl(0)], 1),
    ]
    nbs = {n.port: n for n in state.neighbours}
    out = []
    for i, (text, port, sids, hlim) in enumerate(cases):
        pkt = (
            Ether(src=A.mac_str(nbs[port].dst_mac), dst=A.mac_str(nbs[port].src_mac))
            / IPv6(src=str(A.nic_address(topo, 0)), dst=str(A.carrier(topo, sids)), hlim=hlim)
            / UDP(sport=SPORT + i, dport=4791)  # sport tells outputs apart
            / bytes(64)
        )
        out.append((text, port, bytes(pkt)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topology", type=Path, default=DEMO, help="topology file (default: %(default)s)")
    ap.add_argument("--switch", default="t0-p0-r0", help="the switch of the topology to run (default: %(default)s)")
    ap.add_argument("--model", action="store_true", help="use the reference model even if BMv2 is present")
    args = ap.parse_args(argv)
    logging.getLogger("finsy").setLevel(logging.ERROR)  # BMv2 has no gNMI: not worth a warning

    try:
        topo = topology.load(args.topology)
        topo.device(args.switch)
    except topology.TopologyError as exc:
        exc.report()
        return 2
    except ValueError as exc:  # not a device of the topology
        print(f"error: --switch: {exc}", file=sys.stderr)
        return 2
    state = S.switch_state(topo, args.switch)
    ports = sorted(n.port for n in state.neighbours)

    if toolchain.p4c():
        toolchain.compile_program("switch")
        print("compiled p4src/switch/switch.p4 with p4c-bm2-ss")
    else:
        print("p4c-bm2-ss not found: using the committed bmv2_configs/build/switch.json")
    p4info, blob = toolchain.artifacts("switch")
    reason = toolchain.bmv2_unavailable() if not args.model else "--model given"
    if reason is None and not blob.exists():
        reason = f"{blob} missing"
    if reason is None:
        print(f"starting {state.name} on BMv2 simple_switch_grpc, ports {ports}")
        bmv2 = SwitchBmv2Target(state, ports)
        target: SwitchBmv2Target | SwitchModelTarget = bmv2
        diff = bmv2.session.verify([P.to_p4(e) for e in state.entries()], P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        readback = "OK" if not diff else diff.summary()
        print(f"installed {len(state.entries())} entries over P4Runtime; read back: {readback}")
    else:
        print(f"BMv2 not used ({reason}): running {state.name} on the reference model")
        target = SwitchModelTarget(state, ports)
        print(f"installed {len(state.entries())} entries into the model")
    try:
        frames = demo_frames(topo, state)
        outputs = target.burst([(port, frame) for _, port, frame in frames])
        left = {Ether(f)[UDP].sport - SPORT: (port, Ether(f)[IPv6]) for port, f in outputs}
        print(f"\n{'packet':34} {'in':>3} {'out':>4}  address rewrite")
        for i, (text, in_port, frame) in enumerate(frames):
            before = Ether(frame)[IPv6].dst
            if i not in left:
                print(f"{text:34} {in_port:>3} {'drop':>4}  {before}")
                continue
            port, ip = left[i]
            print(f"{text:34} {in_port:>3} {port:>4}  {before} -> {ip.dst}  (hop limit {ip.hlim})")
        print(f"\ndrops by reason: {_drops(target)}")
    finally:
        if isinstance(target, SwitchBmv2Target):
            target.close()
    return 0


def _drops(target: SwitchBmv2Target | SwitchModelTarget) -> str:
    from mrc_wire.constants import SWITCH_DROPS as DROP_REASONS

    counts = {r: target.drop_count(r) for r in DROP_REASONS}
    return ", ".join(f"{r} {n}" for r, n in counts.items() if n) or "none"


if __name__ == "__main__":
    raise SystemExit(main())
