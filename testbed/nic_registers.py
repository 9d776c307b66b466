"""The NIC program's registers a test bed clears between tests, by how they
are indexed (p4src/nic/rx_track.p4, ev_health.p4): one list for every
target (BMv2 resets them whole, SWX writes zeros at the planned QPs'
indices), held to the P4 by tests/test_nic_registers.py."""

from __future__ import annotations

from mrc_wire.constants import RX_WORDS

# One cell per QP index (QP_TABLE_SIZE).
PER_QP = ("qp_rotation", "rx_cum", "rx_unacked", "rx_rcvd", "rx_ooo",
          "ev_skip", "ev_bad", "ev_peer_down", "ev_plane0", "ev_plane1", "ev_plane2")
# Several cells per QP index: QP index * cells + k.
PER_QP_CELLS = {"rx_word": RX_WORDS, "rx_reverse": 8}  # rx_reverse: one per plane
# One cell for the NIC (NIC_WIDE).
NIC_WIDE = ("port_down",)
ALL = (*PER_QP, *PER_QP_CELLS, *NIC_WIDE)
