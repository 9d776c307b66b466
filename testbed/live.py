"""A live fabric: the devices of a topology kept running, a host agent on
each NIC (its MRC endpoint and MRC API), and the control socket that
`mrcctl qp`, `mrcctl ev` and `mrcctl port` talk to (testbed/agent.py).

    python -m testbed.live TOPO [--nics NAME,...] [--port 7070] [--model]

On BMv2 (simple_switch_grpc on veth pairs, root): every switch and the
NICs asked for (default: every NIC of TOPO, up to 16 devices in all),
tables from our controller, cables relayed. With --model, or where BMv2
is absent and --model is given, the reference models on the wall clock.
Ctrl-C stops it, and everything it started."""

from __future__ import annotations

import argparse
import logging
import select
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from control_plane import addressing as A
from control_plane import topology
from control_plane.config import ConfigError, printable
from control_plane.topology import Topology
from mrc_wire.pcie import Nic
from sim_core.realtime import RealClock
from testbed import toolchain
from testbed.agent import HostAgent, Server
from testbed.model_fabric import ModelFabric

MAX_DEVICES = 16


def _nics(topo: Topology, names: str | None) -> list[int]:
    if not names:
        return list(range(topo.nics))
    out = []
    for name in names.split(","):
        dev = topo.device(name.strip())
        if dev.kind != "nic":
            raise ValueError(f"--nics: {name} is not a NIC")
        out.append(dev.index)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m testbed.live", description=__doc__.split("\n\n")[0])
    ap.add_argument("topology", type=Path)
    ap.add_argument("--nics", metavar="NAME,...", help="the NICs to start (default: every NIC of the topology)")
    ap.add_argument("--port", type=int, default=7070, help="the control socket's port (default: %(default)s)")
    ap.add_argument("--model", action="store_true", help="the reference models, not BMv2")
    args = ap.parse_args(argv)
    try:
        topo = topology.load(args.topology)
        nics = _nics(topo, args.nics)
    except ConfigError as exc:
        exc.report()
        return 2
    except ValueError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return 2
    if not args.model:
        why = toolchain.bmv2_unavailable()
        if why:
            print(f"error: BMv2: {why}; --model runs the reference models instead", file=sys.stderr)
            return 2
        if topo.switches + len(nics) > MAX_DEVICES:
            print(f"error: {topo.switches} switches and {len(nics)} NICs: BMv2 here takes {MAX_DEVICES} devices",
                  file=sys.stderr)
            return 2
    return serve(topo, nics, args.port, args.model)


class _Polled(Protocol):
    """A NIC whose host port is a socket (testbed.bmv2_nic.Bmv2Nic)."""

    def fileno(self) -> int: ...

    def poll(self, timeout: float = 0.0) -> int: ...


def serve(topo: Topology, nics: list[int], port: int, model: bool) -> int:
    polled: list[_Polled] = []
    servers: list[Server] = []

    def poll(timeout: float) -> None:
        select.select([n.fileno() for n in polled] + [f.fileno() for s in servers for f in s.fds()], [], [], timeout)
        for nic in polled:
            nic.poll()
        for s in servers:
            s.poll()

    clock = RealClock(poll)
    stop: Callable[[], None] = lambda: None  # noqa: E731 (the models: nothing outside this process)
    fab_nics: dict[int, Nic]
    if model:
        fab_nics = dict(ModelFabric(topo, nics, clock).nics)
    else:
        from testbed.bmv2_fabric import Bmv2Fabric  # finsy and BMv2 only when BMv2 runs

        logging.getLogger("finsy").setLevel(logging.ERROR)  # BMv2 has no gNMI: not worth a warning per device
        fab = Bmv2Fabric(topo, nics)
        polled += fab.nics.values()
        fab_nics = dict(fab.nics)
        stop = fab.stop
    try:
        agents = {A.nic_name(n): HostAgent(A.nic_name(n), A.nic_address(topo, n).packed, nic, clock, topo.planes,
                                           topo.t1_per_plane) for n, nic in fab_nics.items()}
        server = Server(agents, port)
        servers.append(server)

        def on_term(signum: int, frame: object) -> None:
            server.stopped = True

        signal.signal(signal.SIGTERM, on_term)
        print(f"live fabric ({'models' if model else 'BMv2'}): {topo.switches} switches, NICs "
              f"{', '.join(agents)}; mrcctl qp create {' '.join(list(agents)[:2])} --agent 127.0.0.1:{server.port}",
              flush=True)
        try:
            clock.run(stop=lambda: server.stopped)
        except KeyboardInterrupt:
            pass
    finally:
        for s in servers:
            s.close()
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
