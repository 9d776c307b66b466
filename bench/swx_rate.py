"""DPDK's SWX pipeline packets per second of the NIC's PNA program beside
the bare L2 PNA program, with bench/bmv2_rate.py's frames, cases and
harness (a raw socket in, the others counting out), on TAP ports: the
same figures as BMv2's section, for the NIC-class target. Both app threads
share one core (as the suites run it), so the figures are one core's."""

from __future__ import annotations

from collections.abc import Callable

import finsy as fy

from bench import sections
from bench.bmv2_rate import IN_PORT, OUT_PORT, PACKETS, frame, measure, nic_cases
from testbed import toolchain
from testbed.swx import SwxPipeline
from testbed.swx_nic import SwxNicDevice

REPEATS = 3  # runs per figure, the median kept: one core shared with the rest of the machine


def _median(iface: Callable[[int], str], frames: list[bytes], in_port: int, out_ports: tuple[int, ...],
            before: Callable[[], None] = lambda: None) -> tuple[float, int]:
    """The median run of REPEATS, each after `before` (the device as it started)."""
    runs = []
    for _ in range(REPEATS):
        before()
        runs.append(measure(iface, frames, in_port, out_ports))
    return sorted(runs)[REPEATS // 2]


def _l2(frames: list[bytes], in_port: int, out_ports: tuple[int, ...]) -> tuple[float, int]:
    pipe = SwxPipeline("bench-l2fwd-pna", list(range(max(in_port, *out_ports) + 1)), "l2fwd-pna", ())
    with pipe:
        pipe.write([+fy.P4TableEntry("port_forward", match=fy.Match(port=in_port),
                                     action=fy.Action("forward", port=out_ports[0]))])
        return _median(pipe.iface, frames, in_port, out_ports)


def _nic(frames: list[bytes], in_port: int, out_ports: tuple[int, ...]) -> tuple[float, int]:
    from ptf_tests.lib import nic_fabric as NF

    device = SwxNicDevice(NF.NIC, NF.PORTS)
    try:
        # Each run from the planned tables and fresh registers: the receiver's PSNs new again.
        return _median(device.pipe.iface, frames, in_port, out_ports, device.reset)
    finally:
        device.close()


def _unavailable() -> str | None:
    return next((why for why in map(toolchain.swx_unavailable, ("nic-pna", "l2fwd-pna")) if why), None)


def run() -> list[str]:
    out = ["## SWX packet rate of the NIC's PNA program (dpdk-pipeline, one core; frames out per second, "
           f"median of {REPEATS})"]
    why = _unavailable()
    if why:
        return out + [f"skipped: {why}"]
    l2_pps, l2_n = _l2([frame()], IN_PORT, (OUT_PORT,))
    out.append(f"- bare L2 (l2fwd_pna.p4): {l2_pps:,.0f} pkt/s ({l2_n} of {PACKETS} received)")
    for what, frames, in_port, out_ports in nic_cases():
        pps, n = _nic(frames, in_port, out_ports)
        ratio = f"; {pps / l2_pps:.2f} of L2" if l2_pps else ""
        out.append(f"- {what}: {pps:,.0f} frames/s out ({n} for {PACKETS} in{ratio})")
    return out


def main(argv: list[str] | None = None) -> None:
    sections.main("python -m bench.swx_rate", __doc__, run, argv)


if __name__ == "__main__":
    main()
