"""A Chakra ET file as bytes: a stream of protobuf messages, each after
its length as a base-128 varint (what protobuf's writeDelimitedTo and
Chakra's encodeMessage write), a GlobalMetadata first, then the Nodes.

The framing is read here, not by protobuf's internal decoder, so that a
file that is not an ET is refused with where and why: a length running
past the end, a varint longer than a 64-bit value, a message protobuf
cannot parse, or a field the schema (chakra_et.proto) does not have.
Protobuf itself would take most byte strings as a message of unknown
fields, so those are refused too: Chakra's tools write none."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from google.protobuf.message import DecodeError, Message

from fabric_sim.scenario.chakra import chakra_et_pb2 as pb

M = TypeVar("M", bound=Message)
MAX_VARINT = 10  # bytes of a 64-bit varint; Chakra's lengths are 32-bit (at most 5)


class NotAnEt(ValueError):
    """The bytes are not a Chakra ET; the message says where and why."""


def varint(n: int) -> bytes:
    """`n` (0 <= n < 2**64) as a base-128 varint, low group first."""
    if not 0 <= n < 1 << 64:
        raise ValueError(f"{n} does not fit a 64-bit varint")
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it."""
    n = shift = 0
    for i in range(pos, min(pos + MAX_VARINT, len(data))):
        n |= (data[i] & 0x7F) << shift
        if not data[i] & 0x80:
            return n, i + 1
        shift += 7
    if len(data) - pos < MAX_VARINT:
        raise NotAnEt(f"byte {pos:,}: a length that runs past the end of the file")
    raise NotAnEt(f"byte {pos:,}: a length of more than {MAX_VARINT} bytes")


def frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of each length-delimited message of `data`."""
    pos = 0
    while pos < len(data):
        at = pos
        size, pos = read_varint(data, pos)
        if pos + size > len(data):
            raise NotAnEt(f"byte {at:,}: a message of {size:,} bytes, {len(data) - pos:,} left in the file")
        yield at, data[pos:pos + size]
        pos += size


def field_numbers(body: bytes, at: int = 0) -> list[int]:
    """The field numbers of a message's top-level fields, read from the
    wire (tag = number << 3 | wire type) without the schema."""
    out, pos = [], 0
    while pos < len(body):
        tag, pos = read_varint(body, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = read_varint(body, pos)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        elif wire == 2:
            size, pos = read_varint(body, pos)
            pos += size
        else:  # 3 and 4 (groups) are not proto3's; 6 and 7 are nobody's
            raise NotAnEt(f"byte {at:,}: wire type {wire} of field {number} is not proto3's")
        out.append(number)
    return out


def encode(messages: Iterable[Message]) -> bytes:
    """The messages as an ET stream (each after its length)."""
    out = bytearray()
    for m in messages:
        body = m.SerializeToString()
        out += varint(len(body)) + body
    return bytes(out)


def decode(data: bytes) -> tuple[pb.GlobalMetadata, list[pb.Node]]:
    """The metadata and nodes of an ET stream; NotAnEt if it is not one."""
    if not data:
        raise NotAnEt("an empty file (an ET starts with its GlobalMetadata)")
    if data[:2] == b"\x1f\x8b":
        raise NotAnEt("a gzip file: decompress it first (gunzip)")
    parts = frames(data)
    at, body = next(parts)
    meta = _parse(pb.GlobalMetadata, body, at, "its first message, the GlobalMetadata")
    nodes = [_parse(pb.Node, body, at, "a Node") for at, body in parts]
    return meta, nodes


def _parse(kind: type[M], body: bytes, at: int, what: str) -> M:
    try:
        m = kind.FromString(body)
    except DecodeError:
        raise NotAnEt(f"byte {at:,}: {what} does not parse") from None
    unknown = sorted(set(field_numbers(body, at)) - set(kind.DESCRIPTOR.fields_by_number))
    if unknown:
        raise NotAnEt(f"byte {at:,}: {what} has field{'s' * (len(unknown) > 1)} {', '.join(map(str, unknown))}, "
                      "which Chakra's schema does not")
    return m
