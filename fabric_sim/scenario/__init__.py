"""Scenario files (YAML): topology, links, endpoint, transports, workload,
timed events, and an optional sweep. Validated before anything runs, every
mistake of a file in one pass, each error naming its field path, e.g.
`events[2].link_down: no cable between t0-p0-r0 and t0-p0-r1`. The models
below are the format (docs/simulator.md; docs/schema/scenario.schema.json
is generated from them): a field's type, range and default are written
once, here.

A new field is one line in its section's model, e.g. in Transport
`pfc_xoff: Annotated[int, Int(1, 1 << 20, "what it means")] = 64` (Int, Num: ranges; a
Literal for a choice; a Model subclass for a new section), then
`python -m fabric_sim.scenario.schema`. A check that needs other sections goes in
capacity.py, collecting its errors."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from control_plane import topology as T
from control_plane.config import ConfigError, Int, Model, Name, Num, join, printable, read_mapping, validate
from fabric_sim.scenario import capacity, cc_profile, chakra, sweep
from fabric_sim.scenario import events as scenario_events
from fabric_sim.scenario.events import EVENTS, Event  # noqa: F401 (re-exported)
from fabric_sim.scenario.fields import ScenarioError
from fabric_sim.scenario.kinds import Kind, facts
from fabric_sim.scenario.pfc_config import PfcConfig
from fabric_sim.scenario.pfc_config import resolve as resolve_pfc
from fabric_sim.scenario.sweep import override
from mrc_host.ev import DOWN_AFTER, MAX_DOUBLINGS
from mrc_wire.constants import ACK_BYTES

__all__ = ["ScenarioError", "Event", "Scenario", "Transport", "Workload", "Flow", "Pin", "Links", "EndpointCfg",
           "parse", "load", "variants", "override"]

Pattern = Literal["permutation", "all_to_all", "incast", "ring_allreduce", "sendrecv", "flows", "chakra"]
CACHE_FOLDER = "cache"  # results/cache: the run cache (fabric_sim/runner/run_cache.py)
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")  # a results folder: no '/', no '..', not hidden
ABLATIONS = ("port_bitmap", "ecn_echo", "ev_retire")  # transports[].ablate: MRC mechanisms switched off (docs/paper.md)


def _topology(raw: Any, info: ValidationInfo) -> T.Topology:
    """A topology written inline or named by a file (relative to the scenario's folder)."""
    if isinstance(raw, T.Topology):
        return raw
    base = (info.context or {}).get("base", Path("."))
    if not isinstance(raw, str):
        return validate(T.Topology, raw, base=base)
    try:
        data = read_mapping(base / raw)
    except ConfigError as exc:
        raise ConfigError("", f"cannot read {raw!r}: {exc.reason}") from None
    try:
        return T.parse(data, str(base / raw))
    except ConfigError as exc:
        raise exc.prefixed(f" ({raw}):") from None


TopologyField = Annotated[T.Topology, BeforeValidator(_topology, json_schema_input_type=str | T.Topology),
                          Field(description="the fabric: a topology file's path (from this file's folder) or "
                                            "the topology inline (docs/topology.md)")]


class Links(Model):
    """Link speeds, delay and queue sizes (the fabric's LinkConfig)."""

    nic_gbps: Annotated[float, Num(0.001, 1e5, "NIC-T0 links, per plane")] = 100.0
    fabric_gbps: Annotated[float, Num(0.001, 1e5, "T0-T1 links")] = 100.0
    prop_us: Annotated[float, Num(0, 1e6, "propagation delay of every link")] = 0.5
    data_queue: Annotated[int, Int(1, 1 << 20, "packets; tail drop beyond")] = 256
    high_queue: Annotated[int, Int(1, 1 << 20)] = 1024


class EndpointCfg(Model):
    mtu: Annotated[int, Int(64, 9000)] = 4096
    rto_us: Annotated[float, Num(0.01, 1e9, "default: 10 base RTTs")] | None = None
    retry_limit: Annotated[int, Int(0, 1000)] = 8
    probe_interval_us: Annotated[float, Num(0.01, 1e9, "default: 2 base RTTs")] | None = None
    reorder_window_us: Annotated[float, Num(0, 1e9, "default: 1 base RTT")] | None = None
    tx_backlog: Annotated[int, Int(0, 1 << 20, "NIC QP scheduler: data packets queued per live port before QPs wait "
                                "(0: no scheduler)")] = 8
    ack_bytes: Annotated[int, Int(0, 1 << 20, "MRC's ACK coalescing: an ACK per this many payload bytes, and at "
                                              "once on CE, a trim, a gap (past the SACK bitmap, or the first hole "
                                              "closing), a duplicate and the ack-request bit (0: an ACK per data "
                                              "packet; docs/simulator.md)")] = ACK_BYTES


class EvDamping(Model):
    """mrc: how an EV profile keeps a flapping EV out and lets a link that
    came back in at once (mrc_host/ev.py, Damping: the defaults and why)."""

    max_doublings: Annotated[int, Int(0, 16, "a strike doubles the good probes a restoration needs, at most this "
                                             "many times (0: no damping)")] = MAX_DOUBLINGS
    down_after: Annotated[int, Int(0, 1000, "probes lost in a row, none answered since the EV was retired, "
                                            "after which the first answered restores it (0: no fast path)")] = \
        DOWN_AFTER


class RcTimer(Model):
    """RoCE's retransmission timer as the verbs QP attributes set it
    (IBTA; ibv_modify_qp's `timeout` and `retry_cnt`): one local ACK
    timeout of 4.096 µs x 2^timeout, the same for every retry, and
    `retry_cnt` timeouts in a row before the QP errs. The defaults are
    NCCL's (src/transport/net_ib.cc: NCCL_IB_TIMEOUT 20, NCCL_IB_RETRY_CNT
    7), which sets them on ConnectX and Thor (bnxt_re) alike: 4.29 s."""

    timeout: Annotated[int, Int(1, 31, "local ACK timeout exponent: 4.096 µs x 2^timeout")] = 20
    retry_cnt: Annotated[int, Int(0, 7, "timeouts in a row before the QP enters its error state")] = 7

    @property
    def rto_us(self) -> float:
        return 4.096 * float(1 << self.timeout)


class Transport(Model):
    name: Name = Field("", description="default: the kind; printable characters")
    kind: Kind
    evs_per_qp: Annotated[int, Int(1, 65536)] = 64
    backups_per_plane: Annotated[int, Int(0, 256)] = 2
    ev_state: StrictBool = Field(True, description="false: oblivious spraying (an ablation)")
    ev_min_active: Annotated[int, Int(0, 65536)] = 1
    reconvergence_us: Annotated[float, Num(0, 1e9, "single_path, roce: routing moves flows off dead paths this long "
                                  "after a fault")] = 500.0
    qps_per_pair: Annotated[int, Int(1, 256, "overrides the workload's")] | None = None
    damping: EvDamping = Field(EvDamping(), description="mrc: EV restoration's damping and fast path")
    ecn_move: Literal["skip", "swap"] = Field("swap", description="mrc: an ECN-marked EV is swapped with an idle "
                                                                  "spare, or skipped for a rotation")
    topology: TopologyField | None = Field(None, description="this transport's own fabric (same NICs), "
                                                             "e.g. RoCE on one plane")
    links: Links | None = None
    pfc: PfcConfig | None = Field(
        None,
        validate_default=True,
        description="roce: lossless by PFC, on unless `pfc: {enabled: false}`; "
        "other kinds: off (docs/simulator.md, PFC)",
    )

    rc: RcTimer = Field(RcTimer(), description="roce: the QPs' retransmission timer (IBTA, as NCCL sets it); "
                                               "endpoint.rto_us, if given, overrides its timeout")
    dcqcn: StrictBool = Field(True, description="roce: DCQCN rate control (its receivers send CNPs on CE); false: "
                                                "PFC alone, no CNP, every QP at line rate")
    cc: cc_profile.CcProfile = Field(cc_profile.CcProfile(), validate_default=True,
                                     description="mrc, single_path: the window (fabric_sim/scenario/cc_profile.py)")

    @field_validator("cc", mode="before")
    @classmethod
    def _cc(cls, raw: Any, info: ValidationInfo) -> Any:
        return cc_profile.check_kind(raw, info.data.get("kind"))

    @field_validator("pfc", mode="before")
    @classmethod
    def _pfc(cls, raw: Any, info: ValidationInfo) -> Any:
        return resolve_pfc(raw, info.data.get("kind"))

    ablate: tuple[Literal["port_bitmap", "ecn_echo", "ev_retire"], ...] = Field(
        (), description="MRC mechanisms switched off in the endpoint, to show a check needs them (docs/paper.md)")

    @field_validator("ablate")
    @classmethod
    def _mrc_only(cls, ablate: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        if ablate and not facts(info.data.get("kind")).sprays:
            raise ValueError(f"ablations are of the MRC endpoint, not of kind {info.data.get('kind')}")
        return ablate

    @field_validator("rc")
    @classmethod
    def _rc_of_roce(cls, rc: RcTimer, info: ValidationInfo) -> RcTimer:
        if not facts(info.data.get("kind")).go_back_n:
            raise ValueError(f"the RC timer is RoCE's, not of kind {info.data.get('kind')}")
        return rc

    @field_validator("dcqcn")
    @classmethod
    def _roce_only(cls, on: bool, info: ValidationInfo) -> bool:
        if not on and facts(info.data.get("kind")).windowed:  # a window, not DCQCN's rate
            raise ValueError(f"DCQCN is RoCE's rate control, not of kind {info.data.get('kind')}")
        return on

    @model_validator(mode="after")
    def _min_active(self) -> Transport:
        if self.ev_min_active > self.evs_per_qp:  # the floor could never be met: the QP would wait for EVs forever
            raise ConfigError("ev_min_active", f"{self.ev_min_active} is more than the QP's {self.evs_per_qp} EVs "
                                               "(evs_per_qp)")
        return self

    @model_validator(mode="before")
    @classmethod
    def _named(cls, raw: Any) -> Any:
        return {**raw, "name": raw.get("kind")} if isinstance(raw, dict) and raw.get("name") is None else raw


class Pin(Model):
    """A flow's MRC QPs use only these spines of one plane, with these spares."""

    plane: Annotated[int, Int(0, 7)]
    spines: tuple[Annotated[int, Int(0, 255)], ...] = Field(
        description="a power of two of spines (the slots of a rotation)")
    backups: tuple[Annotated[int, Int(0, 255)], ...] = ()


class FlowEntry(Model):
    """One flow of pattern `flows` as the file writes it (unset: the workload's)."""

    src: str
    dst: str
    messages: Annotated[int, Int(1, 100_000)] | None = None
    message_bytes: Annotated[int, Int(1, 2**32 - 1)] | None = None
    start_us: Annotated[float, Num(0, 1e9)] | None = None
    pin: Pin | None = None


class Flow(Model):
    src: int
    dst: int
    messages: int
    size: int
    start_us: float = 0.0
    pin: Pin | None = None


def _flows(raw: Any) -> Any:
    if raw is None or (isinstance(raw, tuple) and all(isinstance(f, Flow) for f in raw)):
        return raw or ()
    if not isinstance(raw, list):
        raise ConfigError("", "expected a list of {src, dst}")
    return tuple(raw)  # FlowEntry mappings: resolved against the topology by the scenario


def _trace(raw: Any, info: ValidationInfo) -> chakra.Trace:
    """A Chakra trace folder (relative to the scenario's folder), read and checked."""
    if isinstance(raw, chakra.Trace):
        return raw
    if not isinstance(raw, str):
        raise ConfigError("", "expected a folder's path (from this file's folder)")
    return chakra.load((info.context or {}).get("base", Path(".")) / raw, raw)


TraceField = Annotated[chakra.Trace, BeforeValidator(_trace, json_schema_input_type=str),
                       Field(description="chakra: a folder of per-rank Chakra ET files, <prefix>.<rank>.et, and "
                                         "<prefix>.json with the process groups (from this file's folder; "
                                         "docs/simulator.md, Chakra traces)")]


class Workload(Model):
    pattern: Pattern
    message_bytes: Annotated[int, Int(1, 2**32 - 1, "every pattern but chakra (its trace gives the sizes)")] | None = (
        None)
    messages: Annotated[int, Int(1, 100_000, "per pair, back to back")] = 1
    qps_per_pair: Annotated[int, Int(1, 256)] = 1
    start_us: Annotated[float, Num(0, 1e9)] = 0.0
    hosts: Annotated[int, Int(2, 1 << 22, "the first N NICs; default: all")] | None = None
    fan_in: Annotated[int, Int(1, 1 << 22, "incast senders; default: 8, at most hosts - 1")] | None = None
    target: Annotated[int, Int(0, 1 << 22, "incast receiver")] = 0
    placement: Literal["packed", "spread"] = Field("packed", description="ring: rank r on host r, or spread: "
                                                                         "consecutive ranks in different racks")
    flows: Annotated[tuple[Any, ...], BeforeValidator(_flows, json_schema_input_type=list[FlowEntry])] = ()
    chunk_bytes: Annotated[int, Int(1024, 2**31, "collectives: NCCL's chunk (ring) or p2p chunk; default: NCCL's "
                                  "(fabric_sim/scenario/collectives.py)")] | None = None
    trace: TraceField | None = None
    iterations: Annotated[int, Int(1, 10_000, "chakra: the trace run this many times on every rank, each "
                                              "iteration once the rank's previous one has ended")] = 1

    @model_validator(mode="after")
    def _sizes(self) -> Workload:
        """A trace gives its own sizes and ranks; every other pattern needs message_bytes."""
        traced = self.pattern == "chakra"
        errors = [(k, f"not for pattern chakra ({why})") for k, why in
                  (("message_bytes", "the trace gives every size"), ("hosts", "the trace gives the ranks"))
                  if traced and getattr(self, k) is not None]
        if not traced and self.trace is not None:
            errors.append(("trace", "only for pattern chakra"))
        if not traced and self.iterations != 1:
            errors.append(("iterations", "only for pattern chakra (messages repeats the other patterns)"))
        if traced and self.trace is None:
            errors.append(("trace", "pattern chakra needs the trace's folder"))
        if not traced and self.message_bytes is None:
            errors.append(("message_bytes", "missing key"))
        if errors:
            raise ConfigError.of(errors)
        return self

    @property
    def size(self) -> int:
        """message_bytes, which every pattern but chakra has (checked when parsed)."""
        assert self.message_bytes is not None, f"pattern {self.pattern} has no message_bytes"
        return self.message_bytes


def _non_empty(items: tuple[Any, ...]) -> tuple[Any, ...]:
    if not items:
        raise ConfigError("", "expected a non-empty list")
    return items


class Scenario(Model):
    topology: TopologyField
    links: Links = Links()
    endpoint: EndpointCfg = EndpointCfg()
    workload: Workload
    transports: Annotated[tuple[Transport, ...], AfterValidator(_non_empty)] = Field(
        (Transport(kind="mrc"),), json_schema_extra={"minItems": 1})
    duration_us: Annotated[float, Num(0.001, 1e10, "µs of simulated time at most (a run ends when its workload "
                                                   "does)")] = 10_000.0
    events: Annotated[tuple[Event, ...], BeforeValidator(scenario_events.parse_all,
                                                         json_schema_input_type=list[scenario_events.EventSpec])] = ()
    name: Name = Field("scenario", pattern=SAFE_NAME.pattern, description="the results folder's name "
                                                                         "(default: the file's name; not `cache`, "
                                                                         "the run cache's folder)")

    @field_validator("name")
    @classmethod
    def _not_the_cache(cls, name: str) -> str:
        if name == CACHE_FOLDER:  # results/<name> would be results/cache, where finished runs are kept
            raise ConfigError("", f"{name!r} is the run cache's folder (results/{CACHE_FOLDER}): choose another name")
        return name
    seed: Annotated[int, Int(0, 2**32)] = 1
    ecmp_seed: Annotated[int, Int(0, 2**32, "the switches' ECMP hash seed: where single_path and roce put each "
                                            "QP's one path (0: the hash of the pair and QP alone)")] = 0
    bins: Annotated[int, Int(2, 10_000)] = 100
    scale: Any = Field(None, description="free text: how this scenario is scaled from what it stands for")
    sweep: dict[str, Any] | None = Field(None, description="dotted.path: [values]; every combination "
                                                                 "is a run")
    source: SkipJsonSchema[str] = "<scenario>"  # not in files (refused as unknown there)
    meta: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict)  # scale; raw, base, sweep: for variants()

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, raw: Any, info: ValidationInfo) -> Any:
        ctx = info.context or {}
        if not isinstance(raw, dict) or "source" not in ctx:
            return raw
        stem = Path(ctx["source"]).stem
        return {"name": stem if SAFE_NAME.fullmatch(stem) else "scenario", **raw, "source": ctx["source"],
                "meta": {"raw": {k: v for k, v in raw.items() if k != "sweep"}, "base": ctx.get("base", Path("."))}}

    @field_validator("workload")
    @classmethod
    def _workload(cls, w: Workload, info: ValidationInfo) -> Workload:
        topo = info.data.get("topology")
        return capacity.workload(w, topo, Flow, FlowEntry) if topo is not None else w

    @model_validator(mode="after")
    def _finish(self) -> Scenario:
        errors = self._after_the_end()
        try:
            capacity.transports(self.transports, self.topology, self.workload)
        except ConfigError as exc:
            errors += exc.errors
        if errors:
            raise ConfigError.of(errors)
        combos = sweep.parse(self.sweep)
        if combos:  # each key and value alone, never every combination (a sweep may have thousands)
            sweep.check(self.meta["raw"], combos, lambda doc: parse(doc, self.source, self.meta["base"]))
        self.meta.update(scale=self.scale, sweep=sweep.parse(self.sweep))
        return self

    def _after_the_end(self) -> list[tuple[str, str]]:
        """Events and starts past duration_us: one rule for every timed field (the run would end first)."""
        times = [(f"events[{i}].at_us", e.at_us) for i, e in enumerate(self.events)]
        times.append(("workload.start_us", self.workload.start_us))
        raw_flows = self.meta.get("raw", {}).get("workload", {}).get("flows") or []
        times += [(f"workload.flows[{i}].start_us", f["start_us"]) for i, f in enumerate(raw_flows)
                  if isinstance(f, dict) and isinstance(f.get("start_us"), (int, float))]
        return [(path, f"{t:g} is after the run's end (duration_us {self.duration_us:g}): it would never be applied")
                for path, t in times if t > self.duration_us]


def parse(data: Any, source: str = "<scenario>", base: Path = Path(".")) -> Scenario:
    """A checked Scenario from a file's data; ConfigError with every mistake."""
    if isinstance(data, dict) and ({"source", "meta"} & set(data)):
        raise ConfigError.of((k, "unknown key") for k in ("source", "meta") if k in data)
    return validate(Scenario, data, source=source, base=base)


SHOWN_VARIANTS = 20  # failing variants listed one a line; the rest are counted


def variants(sc: Scenario) -> list[tuple[dict[str, Any], Scenario]]:
    """(values, scenario) for every combination of the sweep; the scenario
    itself if it has none. Every variant is parsed before any is returned
    (values valid alone may not be together: `duration_us: 10` with an
    event at 500), and ConfigError has one line per variant that fails."""
    combos = sc.meta.get("sweep") or ()
    if not combos:
        return [({}, sc)]
    n = sweep.count(combos)
    out, errors = [], []
    for i, combo in enumerate(itertools.product(*(vals for _, vals in combos))):
        values = dict(zip((k for k, _ in combos), combo, strict=True))
        try:  # override's errors name the sweep key already
            out.append((values, parse(sweep.override(sc.meta["raw"], values), sc.source, sc.meta["base"])))
        except ConfigError as exc:
            errors.append(_variant_error(i, n, values, exc))
    if len(errors) > SHOWN_VARIANTS:
        errors[SHOWN_VARIANTS:] = [("sweep", f"{len(errors) - SHOWN_VARIANTS:,} more variants fail the same way")]
    if errors:
        raise ConfigError.of(errors)
    return out


def _variant_error(i: int, n: int, values: dict[str, Any], exc: ConfigError) -> tuple[str, str]:
    """A failing variant's first error, named by its number and values, in one line."""
    label = " ".join(f"{k.rsplit('.', 1)[-1]}={printable(str(v), 40)}" for k, v in values.items())
    more = f" (and {len(exc.errors) - 1} more)" if len(exc.errors) > 1 else ""
    return join(f"sweep [{i + 1}/{n}] ({label}):", exc.path), exc.reason + more


def load(path: str | Path) -> Scenario:
    path = Path(path)
    return parse(read_mapping(path), str(path), path.parent)
