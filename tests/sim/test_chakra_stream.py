"""Chakra ET files as bytes (fabric_sim/scenario/chakra/stream.py, trace.py):
read from byte streams made by hand from the schema's field numbers
(Chakra's et_def.proto: Node.id = 1, name = 2, type = 3, ctrl_deps = 4,
data_deps = 5, duration_micros = 7, attr = 10; AttributeProto.name = 1,
int32_val = 7, int64_val = 9, bool_val = 27, string_val = 29), each
message after its length as a varint, the lengths at the varint's edges;
from files the project's writer makes; and the committed generated module
held to the schema."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from control_plane.config import ConfigError
from fabric_sim.scenario.chakra import chakra_et_pb2 as pb
from fabric_sim.scenario.chakra import load, stream
from fabric_sim.scenario.chakra.trace import Coll, Kind
from fabric_sim.scenario.chakra.writer import Rank, write

HERE = Path(__file__).resolve().parents[2] / "fabric_sim" / "scenario" / "chakra"


# An encoder of the test's own, from the protobuf encoding's definition (not stream.py's).
def uvarint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n % 128, n // 128
        out += bytes([low + (128 if n else 0)])
        if not n:
            return out


def key(field: int, wire: int) -> bytes:
    return uvarint(field * 8 + wire)


def vfield(field: int, n: int) -> bytes:  # wire type 0; a negative int64 as its 64-bit two's complement
    return key(field, 0) + uvarint(n % (1 << 64))


def lfield(field: int, body: bytes) -> bytes:  # wire type 2
    return key(field, 2) + uvarint(len(body)) + body


def attr(name: str, field: int, value: int | bytes) -> bytes:
    inner = lfield(1, name.encode()) + (lfield(field, value) if isinstance(value, bytes) else vfield(field, value))
    return lfield(10, inner)


def node(nid: int, kind: int, name: str = "", deps: list[int] = (), us: int = 0, attrs: bytes = b"") -> bytes:
    """Proto3's encoding: fields in number order, a scalar at its default (0, "") left out."""
    body = (vfield(1, nid) if nid else b"") + (lfield(2, name.encode()) if name else b"") + vfield(3, kind)
    if deps:
        body += lfield(5, b"".join(uvarint(d) for d in deps))  # packed, as proto3 writes a repeated scalar
    return body + (vfield(7, us) if us else b"") + attrs


def framed(*messages: bytes) -> bytes:
    return b"".join(uvarint(len(m)) + m for m in messages)


META = lfield(1, b"1.0.0")  # GlobalMetadata.version
COMP, SEND, RECV, COLL = 4, 5, 6, 7


def test_varints_at_their_edges_are_the_encodings_protobuf_defines():
    edges = {0: b"\x00", 127: b"\x7f", 128: b"\x80\x01", 16383: b"\xff\x7f", 16384: b"\x80\x80\x01",
             2**21 - 1: b"\xff\xff\x7f", 2**21: b"\x80\x80\x80\x01", 2**32 - 1: b"\xff\xff\xff\xff\x0f",
             2**64 - 1: b"\xff" * 9 + b"\x01"}
    for n, want in edges.items():
        assert stream.varint(n) == want == uvarint(n)
        assert stream.read_varint(b"\x07" + want + b"\x07", 1) == (n, 1 + len(want))


def _sized(size: int) -> bytes:
    """A Node of exactly `size` bytes: id 3, then its name padded (0 bytes: the empty Node; 2: its id alone)."""
    if size < 6:
        return {0: b"", 2: vfield(1, 3)}[size]
    for pad in range(max(0, size - 8), size):
        body = vfield(1, 3) + lfield(2, b"x" * pad)
        if len(body) == size:
            return body
    raise AssertionError(size)


@pytest.mark.parametrize("size", [0, 2, 127, 128, 16383, 16384, 2**21 - 1, 2**21])
def test_messages_of_each_length_edge_are_read_whole(size):
    """A GlobalMetadata and Nodes whose length prefixes take 1, 2, 3 and 4 bytes, each followed by
    another message: a prefix read one byte short or long would misplace the next."""
    body = _sized(size)
    assert len(body) == size and len(uvarint(size)) == (size > 127) + (size > 16383) + (size > 2**21 - 1) + 1
    meta = _sized(size) if size in (0, 2) else META  # an empty GlobalMetadata is a message of length 0
    data = framed(meta if size else b"", body, node(4, COMP, "after", [3], 1))
    m, nodes = stream.decode(data)
    assert [len(n.SerializeToString()) for n in nodes] == [size, len(node(4, COMP, "after", [3], 1))]
    assert (nodes[1].id, nodes[1].name, list(nodes[1].data_deps), nodes[1].duration_micros) == (4, "after", [3], 1)
    assert nodes[0].id == (3 if size else 0) and nodes[0].SerializeToString() == body


def test_hand_made_nodes_read_as_chakra_means_them(tmp_path):
    """Every kind of node and attribute, written byte by byte from the schema's numbers."""
    r0 = framed(META,
                node(0, COMP, "fwd", us=120, attrs=attr("is_cpu_op", 27, 0)),
                node(1, COMP, "host", [0], us=7, attrs=attr("is_cpu_op", 27, 1)),
                node(2, COLL, "ar", [0], attrs=attr("comm_type", 9, 0) + attr("comm_size", 9, 1 << 20)),
                node(5, SEND, "s", [1], attrs=attr("comm_dst", 7, 1) + attr("comm_size", 9, 4096)
                     + attr("comm_tag", 7, 9)),
                node(6, 1, "meta", [2, 5]))
    r1 = framed(META,
                node(0, COMP, "fwd", us=120),
                node(1, COMP, "host", [0], us=7, attrs=attr("is_cpu_op", 27, 1)),
                node(2, COLL, "ar", [0], attrs=attr("comm_type", 9, 0) + attr("comm_size", 9, 1 << 20)),
                node(5, RECV, "r", [1], attrs=attr("comm_src", 7, 0) + attr("comm_size", 9, 4096)
                     + attr("comm_tag", 7, 9)),
                node(6, 1, "meta", [2, 5]))
    for r, data in enumerate((r0, r1)):
        (tmp_path / f"workload.{r}.et").write_bytes(data)
    t = load(tmp_path, "t")
    ops = {op.id: op for op in t.ranks[0]}
    assert (ops[0].kind, ops[0].duration_us, ops[1].kind) == (Kind.COMPUTE, 120.0, Kind.HOST)
    assert (ops[2].kind, ops[2].coll, ops[2].size, ops[2].group) == (Kind.COLL, Coll.ALL_REDUCE, 1 << 20, "")
    assert (ops[5].kind, ops[5].peer, ops[5].size, ops[5].tag, ops[5].deps) == (Kind.SEND, 1, 4096, 9, (1,))
    assert (ops[6].kind, ops[6].deps) == (Kind.MARK, (2, 5))
    assert t.ranks[1][3].kind is Kind.RECV and t.ranks[1][3].peer == 0 and t.prefix == "workload"


def test_the_writer_writes_what_the_hand_encoding_says(tmp_path):
    """The project's writer and the hand encoding agree byte for byte on a node."""
    k = Rank()
    k.compute("fwd", 120)
    k.collective("ag", Coll.ALL_GATHER, 4096, [0], group="tp")
    want = [node(0, COMP, "fwd", us=120, attrs=attr("is_cpu_op", 27, 0)),
            node(1, COLL, "ag", [0], attrs=attr("is_cpu_op", 27, 0) + attr("comm_type", 9, 2)
                 + attr("comm_size", 9, 4096) + attr("pg_name", 29, b"tp"))]
    _, nodes = stream.decode(k.data())
    assert [n.SerializeToString() for n in nodes] == want


def test_what_the_writer_writes_reads_back(tmp_path):
    ranks = []
    for r in range(3):
        k = Rank()
        a = k.compute("fwd", 10 + r)
        b = k.collective("bc", Coll.BROADCAST, 300_000, [a], group="g")
        k.send("s", (r + 1) % 3, 999, tag=r, deps=[b])
        k.recv("r", (r - 1) % 3, 999, tag=(r - 1) % 3, deps=[b])  # not after the send: a ring would deadlock
        ranks.append(k)
    paths = write(tmp_path, ranks, {"g": [2, 0, 1]}, prefix="job")
    assert [p.name for p in paths] == ["job.0.et", "job.1.et", "job.2.et", "job.json"]
    t = load(tmp_path, "t")
    assert t.groups == {"g": (2, 0, 1)} and len(t.ranks) == 3
    assert [(op.kind, op.deps) for op in t.ranks[1]] == [(Kind.COMPUTE, ()), (Kind.COLL, (0,)), (Kind.SEND, (1,)),
                                                         (Kind.RECV, (1,))]
    assert (t.ranks[1][0].duration_us, t.ranks[1][2].peer, t.ranks[1][3].peer) == (11.0, 2, 0)


@pytest.mark.parametrize("data, why", [
    (b"", "an empty file"),
    (b"\x1f\x8b\x08\x00", "a gzip file"),
    (b"\x05abc", "byte 0: a message of 5 bytes, 3 left in the file"),
    (b"\x80\x80", "a length that runs past the end"),
    (b"\xff" * 11, "more than 10 bytes"),
    (framed(META, b"\x08"), "a Node does not parse"),
    (framed(META + vfield(14, 1)), "has field 14, which Chakra's schema does not"),
    (framed(META, node(1, COMP) + vfield(40, 2)), "has field 40"),
    (b"{\"nodes\": []}\n", "a message of 123 bytes, 13 left"),  # a JSON trace: '{' read as a length
    (framed(META, key(1, 3)), "byte 8: a Node does not parse"),  # a group (wire type 3): not proto3's
])
def test_bytes_that_are_not_an_et_are_refused_saying_where(data, why):
    with pytest.raises(stream.NotAnEt, match=re.escape(why)):
        stream.decode(data)


def test_field_numbers_are_read_from_the_wire_without_the_schema():
    body = vfield(1, 7) + lfield(2, b"abc") + key(9, 1) + bytes(8) + key(12, 5) + bytes(4) + vfield(300, 1)
    assert stream.field_numbers(body) == [1, 2, 9, 12, 300]
    with pytest.raises(stream.NotAnEt, match="wire type 6 of field 2"):
        stream.field_numbers(key(2, 6))


def test_a_negative_size_written_as_int64_is_refused(tmp_path):
    bad = node(0, COLL, "ar", attrs=attr("comm_type", 9, 0) + attr("comm_size", 9, -5))
    assert len(vfield(9, -5)) == 11  # a negative int64 takes ten bytes after its key
    (tmp_path / "t.0.et").write_bytes(framed(META, bad))
    (tmp_path / "t.1.et").write_bytes(framed(META, bad))
    with pytest.raises(ConfigError, match=r"t\.0\.et: node 0 \(ar\): comm_size -5: a transfer moves at least"):
        load(tmp_path, "t")


PROTOC_VERSION = re.compile(r"# Protobuf Python Version: (\S+)")


def _fresh(tmp_path: Path) -> tuple[str, str]:
    shutil.copy(HERE / "chakra_et.proto", tmp_path)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", f"--python_out={tmp_path}",
                    f"--pyi_out={tmp_path}", str(tmp_path / "chakra_et.proto")], check=True, capture_output=True)
    return (tmp_path / "chakra_et_pb2.py").read_text(), (tmp_path / "chakra_et_pb2.pyi").read_text()


def test_the_committed_module_is_what_the_schema_compiles_to(tmp_path):
    pytest.importorskip("grpc_tools", reason="grpcio-tools (the test extra) is not installed: its protoc regenerates "
                                             "the module")
    py, pyi = _fresh(tmp_path)
    committed = (HERE / "chakra_et_pb2.py").read_text()
    if PROTOC_VERSION.search(py)[1] == PROTOC_VERSION.search(committed)[1]:
        assert py == committed, "regenerate: see the head of chakra_et.proto"
        assert pyi == (HERE / "chakra_et_pb2.pyi").read_text()
    else:  # another protoc writes its own version checks: the schema it carries must still be the same
        def descriptor(text: str) -> str:
            return re.search(r"AddSerializedFile\((b'.*?')\)", text, re.S)[1]

        assert descriptor(py) == descriptor(committed), "regenerate: see the head of chakra_et.proto"


def test_the_schema_numbers_are_chakras():
    """The numbers a Chakra file is written with (et_def.proto), read from the generated descriptor."""
    fields = {f.name: (f.number, f.type) for f in pb.Node.DESCRIPTOR.fields}
    t = pb.Node.DESCRIPTOR.fields_by_name["id"]
    assert fields == {"id": (1, t.TYPE_UINT64), "name": (2, t.TYPE_STRING), "type": (3, t.TYPE_ENUM),
                      "ctrl_deps": (4, t.TYPE_UINT64), "data_deps": (5, t.TYPE_UINT64),
                      "start_time_micros": (6, t.TYPE_UINT64), "duration_micros": (7, t.TYPE_UINT64),
                      "inputs": (8, t.TYPE_MESSAGE), "outputs": (9, t.TYPE_MESSAGE), "attr": (10, t.TYPE_MESSAGE)}
    assert dict(pb.NodeType.items()) == {"INVALID_NODE": 0, "METADATA_NODE": 1, "MEM_LOAD_NODE": 2,
                                         "MEM_STORE_NODE": 3, "COMP_NODE": 4, "COMM_SEND_NODE": 5,
                                         "COMM_RECV_NODE": 6, "COMM_COLL_NODE": 7}
    assert dict(pb.CollectiveCommType.items()) == {"ALL_REDUCE": 0, "REDUCE": 1, "ALL_GATHER": 2, "GATHER": 3,
                                                   "SCATTER": 4, "BROADCAST": 5, "ALL_TO_ALL": 6,
                                                   "REDUCE_SCATTER": 7, "REDUCE_SCATTER_BLOCK": 8, "BARRIER": 9}
    a = {f.name: f.number for f in pb.AttributeProto.DESCRIPTOR.fields}
    assert (a["name"], a["int32_val"], a["int64_val"], a["uint64_val"], a["bool_val"], a["string_val"]) == \
        (1, 7, 9, 13, 27, 29)
