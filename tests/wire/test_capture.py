"""The capture of testbed.capture: a transfer with a trim, a loss and a
probe, every frame of which mrc_wire.dissect reads as MRC 1.0."""

from __future__ import annotations

import json

from mrc_wire import dissect, pcap
from mrc_wire.constants import NACK_TRIMMED, OP_NACK, OP_PROBE, OP_SACK
from testbed.capture import A_NIC, TRIM_PSN, Capture


def test_the_capture_holds_a_trim_nack_resends_and_answered_probes(tmp_path):
    cap = Capture()
    cap.run()
    path = tmp_path / "c.pcap"
    pcap.write(path, cap.frames)
    got = [json.loads(line) for line in dissect.lines(path.read_bytes())]
    assert got and not [g for g in got if "error" in g]
    wire = [g for g in got if "outer" in g]
    nacks = [g["neth"] for g in wire if g["bth"]["opcode"] == OP_NACK]
    assert [(n["nack_reason"], n["nack_psn"]) for n in nacks] == [(NACK_TRIMMED, TRIM_PSN)]
    probes = [g for g in wire if g["bth"]["opcode"] == OP_PROBE]
    answers = [g for g in wire if g["bth"]["opcode"] == OP_SACK and g["seth"]["pr"]]
    assert probes and answers and {a["seth"]["entropy"] for a in answers} == {cap.bad}
    stats = cap.eps[A_NIC].stats
    assert stats.retransmits >= 2 and stats.nacks == 1 and stats.delivered == 0  # A sends; B delivers
    assert cap.eps[3].stats.delivered == 1
