"""The BMv2 targets' wait (testbed/settle.py) on scripted counters: it
returns exactly when every frame sent is done (ingress counted it, egress
sent what it owed, ptf received that), never before; a lost frame fails
after the timeout naming the counts, and counting starts afresh."""

import pytest

from testbed.settle import Progress, Settler


class Device:
    """Counters that advance one step per read, as a busy BMv2 would."""

    def __init__(self, steps: list[tuple[Progress, int]]):
        self.steps, self.reads = steps, 0

    def now(self) -> tuple[Progress, int]:
        return self.steps[min(self.reads - 1, len(self.steps) - 1)]

    def progress(self) -> Progress:
        self.reads += 1  # a read of the counters, then of ptf's
        return self.now()[0]

    def received(self) -> int:
        return self.now()[1]


def settler(dev: Device, timeout: float = 5.0) -> Settler:
    s = Settler("sw", dev.progress, dev.received, timeout=timeout)
    s.sent = 2
    return s


def test_waits_for_ingress_then_egress_then_ptf():
    dev = Device([
        (Progress(0, 0, 0), 0),  # baseline
        (Progress(1, 0, 1), 0),  # one of two frames through ingress
        (Progress(2, 1, 2), 1),  # both in, egress owes one more
        (Progress(2, 2, 2), 1),  # egress done, ptf has one
        (Progress(2, 2, 2), 2),  # done
        (Progress(9, 9, 9), 9),  # never read
    ])
    s = settler(dev)
    s.wait()
    assert dev.reads == 5


def test_a_dropped_frame_is_done_without_egress():
    dev = Device([(Progress(0, 0, 0), 0), (Progress(2, 1, 1), 1)])
    s = settler(dev)
    s.wait()
    assert dev.reads == 2


def test_a_lost_frame_fails_naming_the_counts_and_counting_restarts():
    dev = Device([(Progress(0, 0, 0), 0), (Progress(2, 2, 2), 1)])
    s = settler(dev, timeout=0.05)
    with pytest.raises(AssertionError, match=r"sw: frames still unaccounted for after 0.05 s: ingress finished 2 "
                                             r"of 2 sent, egress sent 2 of 2, ptf received 1"):
        s.wait()
    assert s.sent == 0 and s.done()  # the next test is not held up by the lost frame


def test_not_strict_returns_after_the_timeout():
    dev = Device([(Progress(0, 0, 0), 0), (Progress(1, 0, 0), 0)])
    s = settler(dev, timeout=0.05)
    s.wait(strict=False)
    assert s.sent == 0


def test_wait_ingress_needs_only_ingress():
    dev = Device([(Progress(0, 0, 0), 0), (Progress(1, 0, 1), 0), (Progress(2, 0, 2), 0), (Progress(2, 2, 2), 2)])
    s = settler(dev)
    s.wait_ingress()
    assert dev.reads == 3  # egress owes two frames: not waited for


def test_wait_ingress_fails_naming_the_counts():
    dev = Device([(Progress(0, 0, 0), 0), (Progress(1, 0, 1), 0)])
    s = settler(dev, timeout=0.05)
    with pytest.raises(AssertionError, match=r"sw: ingress finished 1 of 2 frames sent after 0.05 s"):
        s.wait_ingress()
