"""A QP's share of the endpoint's path state (mrc_host/paths.py's
PathState acts on it): the reverse EV set that carries this side's control
packets, when each plane's reverse EV was last confirmed or probed, the
probes awaiting an answer, and the planes whose port is down at the peer.
It changes only through these methods."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from mrc_wire.constants import ev_plane

NEVER = -1e18  # a time before any run's start


class ProbeKind(enum.Enum):
    PATH = "path"  # a retired EV: a reply makes it good again
    SUSPECT = "suspect"  # the EV of a copy late past the reorder window: no reply by its deadline retires it
    REVERSE = "reverse"  # a reverse-set candidate: a reply makes it its plane's reverse EV
    ENDPOINT = "endpoint"  # the controller's EV_PROBE (mrc_host/ctl.py): its reply's time is kept


@dataclass(frozen=True, slots=True)
class Probe:
    ev: int
    sent_at: float
    kind: ProbeKind


class QpPaths:
    __slots__ = ("reverse", "fresh", "probed", "reverse_probe_at", "probes", "peer_down", "path_probe_at")

    def __init__(self) -> None:
        self.reverse: dict[int, int] = {}  # plane -> the EV this side's control packets use on it
        self.fresh: dict[int, float] = {}  # plane -> when its reverse EV was last confirmed
        self.probed: dict[int, float] = {}  # plane -> its last reverse-set probe
        self.reverse_probe_at = NEVER  # the last reverse-set probe (one per probe interval)
        self.probes: dict[int, Probe] = {}  # probe id -> the probe, until answered or given up
        self.peer_down = 0  # bitmap of the peer's planes whose NIC port is down
        self.path_probe_at: dict[int, float] = {}  # a retired EV -> when its last path probe was sent

    def begin(self, home: Iterable[int], now: float) -> None:
        """The reverse set starts as the first of `home` on each plane, trusted from `now`."""
        for ev in home:
            self.reverse.setdefault(ev_plane(ev), ev)
            self.fresh.setdefault(ev_plane(ev), now)

    def confirm(self, ev: int, now: float) -> None:
        """`ev` becomes its plane's reverse EV, confirmed at `now` (the one
        place the reverse set changes; the NIC's own register is the
        endpoint's to write)."""
        plane = ev_plane(ev)
        self.reverse[plane] = ev
        self.fresh[plane] = now

    def only(self, ev: int) -> None:
        """Control packets use `ev` alone from now on (a single-path baseline's rehash)."""
        self.reverse = {ev_plane(ev): ev}

    def sent(self, probe_id: int, probe: Probe) -> None:
        self.probes[probe_id] = probe

    def answered(self, probe_id: int) -> Probe | None:
        """The probe `probe_id` is done with (answered, or its deadline passed): it, if it was waiting."""
        return self.probes.pop(probe_id, None)

    def probed_path(self, ev: int, now: float) -> None:
        self.path_probe_at[ev] = now

    def earlier(self, probe: Probe) -> list[Probe]:
        """The path probes of `probe`'s EV sent before it and still waiting,
        given up (a later one was answered: on one path they were lost)."""
        gone = [pid for pid, p in self.probes.items()
                if p.kind is ProbeKind.PATH and p.ev == probe.ev and p.sent_at < probe.sent_at]
        return [self.probes.pop(pid) for pid in gone]

    def awaiting(self) -> set[int]:
        """The EVs with a probe waiting for its answer."""
        return {p.ev for p in self.probes.values()}

    def expire(self, now: float, timeout: float) -> list[Probe]:
        """Give up the probes unanswered for `timeout` (suspects have their
        own deadline: LossRecovery's); the ones given up."""
        gone = [pid for pid, p in self.probes.items() if p.kind is not ProbeKind.SUSPECT and now - p.sent_at >= timeout]
        return [self.probes.pop(pid) for pid in gone]

    def probed_reverse(self, plane: int, now: float) -> None:
        self.reverse_probe_at = self.probed[plane] = now

    def peer_ports(self, down: int) -> int:
        """The peer's planes down are now `down`: the planes that changed."""
        changed, self.peer_down = down ^ self.peer_down, down
        return changed
