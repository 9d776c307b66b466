"""An exactly-once check that trusts neither the driver's nor the
endpoint's counters: what was posted, by (receiving QP, message id), and
every byte range the receiving endpoint placed (its `on_place` hook, called
where the payload is written). At the end, every posted byte must have been
placed exactly once, and nothing placed that was not posted.

A message's placed ranges are kept joined where one ends exactly where the
next begins (`Placed`): a message placed once, in any order, ends as one
range instead of one per packet. Joining two touching ranges changes none
of what `check` counts (bytes placed, covered more than once, outside the
message, covered at all), so the verdict is the one the ranges themselves
would give."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Verdict:
    """Bytes placed twice or more (`duplicate`), posted but never placed
    (`missing`), placed outside anything posted (`stray`); `problems`
    names the first few."""

    posted: int = 0
    placed: int = 0
    duplicate: int = 0
    missing: int = 0
    stray: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def exactly_once(self) -> bool:
        return not (self.duplicate or self.missing or self.stray)


class Placed:
    """One message's placed byte ranges, touching ones joined: a range
    that ends where another begins becomes one with it. Ranges that
    overlap are kept apart (they are what `check` counts as duplicates)."""

    def __init__(self) -> None:
        self.end_of: dict[int, int] = {}  # start -> end, of every joined range
        self.start_of: dict[int, int] = {}  # end -> start, of the same ranges
        self.apart: list[tuple[int, int]] = []  # (offset, length) that could not be keyed by both ends

    def add(self, offset: int, length: int) -> None:
        if length <= 0:
            self.apart.append((offset, length))
            return
        lo, hi = offset, offset + length
        before = self.start_of.pop(lo, None)  # a range ending where this one starts
        if before is not None:
            del self.end_of[before]
            lo = before
        after = self.end_of.pop(hi, None)  # a range starting where this one ends
        if after is not None:
            del self.start_of[after]
            hi = after
        if lo in self.end_of or hi in self.start_of:  # another range with the same start or end: overlaps
            self.apart.append((lo, hi - lo))
            return
        self.end_of[lo] = hi
        self.start_of[hi] = lo

    def ranges(self) -> list[tuple[int, int]]:
        """Every range as (offset, length)."""
        return [(lo, hi - lo) for lo, hi in self.end_of.items()] + self.apart


class Ledger:
    def __init__(self) -> None:
        self.posted: dict[tuple[int, int], int] = {}  # (receiver QP, msg id) -> bytes
        self.placed: dict[tuple[int, int], Placed] = {}  # -> the ranges placed

    def post(self, qpn: int, msg_id: int, size: int) -> None:
        key = (qpn, msg_id)
        if key in self.posted:
            raise ValueError(f"QP {qpn} message {msg_id} posted twice")
        self.posted[key] = size

    def place(self, qpn: int, msg_id: int, offset: int, length: int) -> None:
        key = (qpn, msg_id)
        p = self.placed.get(key)
        if p is None:
            p = self.placed[key] = Placed()
        p.add(offset, length)

    def check(self, limit: int = 5) -> Verdict:
        v = Verdict(posted=sum(self.posted.values()))
        for key, p in self.placed.items():
            ranges = p.ranges()
            v.placed += sum(n for _, n in ranges)
            size = self.posted.get(key)
            if size is None:
                v.stray += sum(n for _, n in ranges)
                _note(v, limit, f"QP {key[0]} message {key[1]}: placed but never posted")
                continue
            twice, outside = _overlaps(ranges, size)
            v.duplicate += twice
            v.stray += outside
            if twice or outside:
                _note(v, limit, f"QP {key[0]} message {key[1]}: {twice} B placed twice, {outside} B past its {size} B")
        for key, size in self.posted.items():
            got = self.placed.get(key)
            covered = _covered(got.ranges() if got is not None else [], size)
            if covered < size:
                v.missing += size - covered
                _note(v, limit, f"QP {key[0]} message {key[1]}: {size - covered} of {size} B never placed")
        return v


def _note(v: Verdict, limit: int, line: str) -> None:
    if len(v.problems) < limit:
        v.problems.append(line)


def _overlaps(ranges: list[tuple[int, int]], size: int) -> tuple[int, int]:
    """(bytes covered more than once, bytes outside [0, size))."""
    twice = outside = 0
    reach = 0  # end of the union so far, ranges sorted by offset
    for off, n in sorted(ranges):
        end = off + n
        outside += max(0, min(end, 0) - off) + max(0, end - max(off, size))
        twice += max(0, min(end, reach) - off)
        reach = max(reach, end)
    return twice, outside


def _covered(ranges: list[tuple[int, int]], size: int) -> int:
    """Bytes of [0, size) covered at least once."""
    total = reach = 0
    for off, n in sorted(ranges):
        lo, hi = max(off, reach, 0), min(off + n, size)
        if hi > lo:
            total += hi - lo
        reach = max(reach, off + n)
    return total
