// Table, register and counter sizes of the NIC, in one place (as the
// switch's size.p4). The plans must fit them: mrc_wire.constants holds the
// limits (NIC_MAX_QPS, NIC_MAX_SLOTS) and tests/test_wire_constants.py
// compares them with the P4Info.
#ifndef MRC_NIC_SIZE_P4
#define MRC_NIC_SIZE_P4

#define QP_TABLE_SIZE        4096    // qp_ev, qp_peer and the qp_rotation register
#define SLOT_TABLE_SIZE      65536   // slot_ev: every 16-bit slot index
#define EV_STATS_TABLE_SIZE  65536   // ev_stats: EVs counted
#define ROW_TABLE_SIZE       2048    // dest_row: every 11-bit row
#define NUM_PLANES           8       // plane_port, plane_tx: every 3-bit plane
#define NUM_NIC_DROP_REASONS 16      // nic_drops
#define NUM_NIC_EVENTS       9       // nic_events
#define NUM_NACK_REASONS     32      // nack_reasons: every NETH reason up to UNEXP_EVENT (0x19)
// The receiver (rx_track.p4): a ring of RX_WORDS 64-bit words per QP
// (RX_WORDS = 2^RX_WORD_BITS), so RX_WORDS * 64 PSNs past the cumulative
// PSN are accepted; the reverse EV of each of 8 planes per QP.
#define RX_WORD_BITS         4
#define RX_WORDS             16
#define RX_WORD_REGISTER_SIZE    65536   // QP_TABLE_SIZE * RX_WORDS
#define RX_REVERSE_REGISTER_SIZE 32768   // QP_TABLE_SIZE * 8
// Path health (ev_health.p4): a bit per slot of a QP's rotation in 64-bit
// registers, so a QP the data plane keeps health for has at most 64 slots.
#define EV_HEALTH_SLOTS      64
#define EV_SLOTS_TABLE_SIZE  65536   // ev_slots: (QP, EV) -> its slots, one per slot at most
#define NIC_WIDE             1       // port_down: one word for the NIC
#define NUM_EV_EVENT_REASONS 8       // ev_event_reasons: every EVR_* value
#define EV_RING_SIZE         1024    // PNA (nic_pna.p4): the EV events ring the host reads back, a power of two
#define RX_REORDER_BUCKETS   25      // rx_reorder: arrivals by the bit length of their distance (the model's histogram)

#endif
