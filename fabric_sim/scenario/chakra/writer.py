"""A small writer of valid Chakra ETs, the project's own, for tests and
examples: one `Rank` per rank, its nodes added in order (each returns its
id, for the nodes that depend on it), then `write` puts the folder
together: `<prefix>.<rank>.et` per rank and, if there are process groups,
`<prefix>.json` (ASTRA-sim's communicator groups). Attributes are written
with the kinds Chakra's own tools use (chakra_et.proto), so that Chakra's
feeder and ASTRA-sim read them as this project does."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from fabric_sim.scenario.chakra import chakra_et_pb2 as pb
from fabric_sim.scenario.chakra.stream import encode
from fabric_sim.scenario.chakra.trace import COLLS, Coll

VERSION = "1.0.0"  # the schema version Chakra's generator writes
COMM_TYPE = {coll: value for value, coll in COLLS.items()}


class Rank:
    """One rank's graph, as it is written: node ids 0, 1, 2... in order."""

    def __init__(self) -> None:
        self.nodes: list[pb.Node] = []

    def _add(self, name: str, kind: pb.NodeType, deps: Iterable[int], attrs: list[pb.AttributeProto],
             duration_us: int = 0) -> int:
        node = pb.Node(id=len(self.nodes), name=name, type=kind, data_deps=list(deps), duration_micros=duration_us,
                       attr=attrs)
        self.nodes.append(node)
        return node.id

    def compute(self, name: str, us: int, deps: Iterable[int] = (), host: bool = False) -> int:
        """A COMP_NODE of `us` microseconds (on the host thread if `host`)."""
        return self._add(name, pb.COMP_NODE, deps, [pb.AttributeProto(name="is_cpu_op", bool_val=host)], us)

    def collective(self, name: str, coll: Coll, size: int, deps: Iterable[int] = (), group: str = "") -> int:
        """A COMM_COLL_NODE of `size` bytes (comm_size as Chakra means it:
        the buffer of an all-reduce or broadcast, each rank's input of an
        all-gather, reduce-scatter or all-to-all) on `group` (every rank if "")."""
        attrs = [pb.AttributeProto(name="is_cpu_op", bool_val=False),
                 pb.AttributeProto(name="comm_type", int64_val=COMM_TYPE[coll]),
                 pb.AttributeProto(name="comm_size", int64_val=size)]
        if group:
            attrs.append(pb.AttributeProto(name="pg_name", string_val=group))
        return self._add(name, pb.COMM_COLL_NODE, deps, attrs)

    def send(self, name: str, dst: int, size: int, tag: int = 0, deps: Iterable[int] = ()) -> int:
        return self._add(name, pb.COMM_SEND_NODE, deps, _p2p("comm_dst", dst, size, tag))

    def recv(self, name: str, src: int, size: int, tag: int = 0, deps: Iterable[int] = ()) -> int:
        return self._add(name, pb.COMM_RECV_NODE, deps, _p2p("comm_src", src, size, tag))

    def data(self) -> bytes:
        """The rank's ET file: the GlobalMetadata, then its nodes."""
        meta = pb.GlobalMetadata(version=VERSION, attr=[pb.AttributeProto(name="schema", string_val="mrc-offload")])
        return encode([meta, *self.nodes])


def _p2p(peer_key: str, peer: int, size: int, tag: int) -> list[pb.AttributeProto]:
    return [pb.AttributeProto(name="is_cpu_op", bool_val=False),
            pb.AttributeProto(name=peer_key, int32_val=peer),
            pb.AttributeProto(name="comm_size", int64_val=size),
            pb.AttributeProto(name="comm_tag", int32_val=tag)]


def write(folder: Path, ranks: list[Rank], groups: dict[str, list[int]] | None = None,
          prefix: str = "trace") -> list[Path]:
    """The trace folder: every rank's file and the groups; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for r, rank in enumerate(ranks):
        out.append(folder / f"{prefix}.{r}.et")
        out[-1].write_bytes(rank.data())
    if groups:
        out.append(folder / f"{prefix}.json")
        out[-1].write_text(json.dumps(groups, indent=1) + "\n")
    return out
