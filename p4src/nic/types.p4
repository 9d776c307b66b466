// NIC headers, metadata and counter numbering.
#ifndef MRC_NIC_TYPES_P4
#define MRC_NIC_TYPES_P4

#include "../include/headers.p4"
#include "../include/defaults.p4"
#include "size.p4"

// Port 0 faces the host transport (nic_model); plane ports come from the
// plane_port table.
const port_t HOST_PORT = PORT_CONST(0);
const bit<32> NOTICE_SESSION = 1;   // clone session: trimmed notice to host

// Why the NIC dropped a packet: a serializable enum, so that the names and
// values are in the P4Info (type_info: the stages' drop actions take one)
// and the controller reads them from there. The value is the index into
// the nic_drops counter (docs/nic.md).
enum bit<8> nic_drop_reason_t {
    MALFORMED   = 0,  // parser error
    NOT_MRC     = 1,  // from host: not IPv6/UDP 4791/BTH
    UNKNOWN_QP  = 2,  // no qp_ev (tx) or qp_peer (nack) entry
    NO_EV       = 3,  // slot without an EV
    UNKNOWN_ROW = 4,  // destination row without a template
    NO_PLANE    = 5,  // EV's plane has no port
    NOT_ENCAP   = 6,  // from fabric: not IPv6-in-IPv6
    BAD_INNER   = 7,  // inner not UDP 4791 / BTH
    NOT_FOR_ME  = 8   // inner destination is not this NIC
}

// Events: the index into the nic_events counter.
const bit<32> NEV_TX            = 0;
const bit<32> NEV_RX            = 1;
const bit<32> NEV_NACK          = 2;
const bit<32> NEV_SACK          = 3;
const bit<32> NEV_DUPLICATE     = 4;
const bit<32> NEV_BEYOND_WINDOW = 5;
const bit<32> NEV_PROBE_ANSWER  = 6;
const bit<32> NEV_HOST_COPY     = 7;   // the copy of new data that became a SACK, to the host

// The receiver (rx_track.p4): what it is asked to do, and what it found.
const bit<2> RX_OP_NONE = 0;
const bit<2> RX_OP_DATA = 1;        // a data packet: mark, advance, coalesce
const bit<2> RX_OP_PROBE = 2;       // a probe: read the state its answer carries
const bit<2> RX_OP_SACK_SEEN = 3;   // a SACK for our data: its EV is a good reverse EV
// rx_kind 0: the receiver saw no data packet
const bit<2> RX_NEW = 1;
const bit<2> RX_DUPLICATE = 2;
const bit<2> RX_BEYOND = 3;
const bit<24> RX_WINDOW = RX_WORDS * 64;   // PSNs past the cumulative PSN accepted
const bit<24> SACK_BITS = 64;              // PSNs a SACK's bitmap shows
const bit<8> SETH_MPR = RX_WORDS / 2;      // RX_WINDOW in SETH's units of 128 PSNs
const bit<16> SACK_OFFSET = 2;             // the bitmap starts at cack_psn + 2 (docs/nic.md)

// Path health (ev_health.p4): what it is asked to do; the states and
// reasons of the EV events it reports (mrc_wire.constants EVS_*, EVR_*).
const bit<2> HEALTH_NONE = 0;
const bit<2> HEALTH_PICK = 1;    // transmit: the rotation's next usable slot
const bit<2> HEALTH_SKIP = 2;    // a congestion mark or a TRIMMED NACK: the EV's slots skip once
const bit<2> HEALTH_PORTS = 3;   // the peer's port status
const bit<8> EVS_GOOD = 0;
const bit<8> EVS_SKIP = 1;
const bit<8> EVR_CONGESTION = 1;
const bit<8> EVR_TRIMMED = 2;
const bit<8> EVR_ROTATION = 3;
const bit<8> EVR_PORT_STATUS = 4;

// An EV event: one state change the data plane made, to the control
// plane as a digest (control_plane/ev_events.py turns it into mrc_ctl's
// per-EV events: the QP's slots and planes name the EVs).
struct ev_event_t {
    bit<16> qp_index;
    bit<8>  reason;
    bit<32> ev;          // the EV it names (0: the slots or planes say)
    bit<64> slots;       // the QP's slots it changed
    bit<8>  old_state;
    bit<8>  new_state;
    bit<8>  planes_down; // port status: planes down at the peer now, not before
    bit<8>  planes_up;   // ... and back
}

// A NACK built from a trimmed stub: Ethernet, both IPv6 headers, UDP, BTH,
// NETH and the ICRC (mrc_wire.constants.NACK_BYTES).
const bit<32> NACK_BYTES = 14 + 40 + 40 + 8 + 12 + 20 + 4;
// A SACK the receiver builds: the same with SETH and CC_STATE instead of NETH.
const bit<32> SACK_BYTES = 14 + 40 + 40 + 8 + 12 + 28 + 8 + 4;

struct nic_headers_t {
    ethernet_t   ethernet;
    ipv6_split_t outer;
    ipv6_split_t inner;
    udp_t        udp;
    bth_t        bth;
    meth_t       meth;       // data: METH, TSETH, RETH, ImmDt
    tseth_t      tseth;
    reth_t       reth;
    immdt_t      immdt;
    aeth_t       aeth;       // control: one of these
    seth_t       seth;
    cc_state_t   cc_state;
    neth_t       neth;
    peth_t       peth;
    erth_t       erth;
    eeth_t       eeth;
    icrc_t       icrc;       // emitted only by the NACK the NIC builds
}

struct nic_metadata_t {
    bit<1>   drop;
    nic_drop_reason_t drop_reason;
    bit<32>  block;
    bit<11>  my_row;
    bit<64>  my_addr_hi;
    bit<64>  my_addr_lo;
    bit<6>   dscp_control;
    bit<6>   dscp_trimmed;
    bit<6>   dscp_trimmed_lasthop;
    bit<16>  qp_index;
    bit<16>  slot;
    bit<32>  ev;
    bit<1>   same_row;
    bit<11>  dst_row;
    bit<1>   encap;        // set by transmit or the NACK path
    bit<1>   is_nack;
    bit<1>   is_control;     // the parser found a control header (ACK, SACK, NACK, probe, endpoint)
    bit<1>   gen;          // a packet the NIC made (NACK, SACK, probe answer): counted as such, not as tx
    bit<1>   notice;       // a trimmed packet's notice goes to the host
    bit<32>  trunc;        // bytes the packet is cut to (0: not cut)
    @field_list(1)
    bit<1>   host_copy;    // a copy of the data goes to the host (the original became the SACK)
    // The receiver (rx_track.p4): the QP's qp_peer entry, and what the stage found.
    bit<16>  rx_index;
    bit<1>   rx_offload;
    bit<1>   rx_follow;
    bit<32>  ack_bytes;
    bit<2>   rx_op;
    bit<2>   rx_kind;
    bit<1>   rx_sack;
    bit<24>  rx_cum;
    bit<16>  rx_ooo;
    bit<32>  rx_rcvd;
    bit<32>  rx_reverse_ev;
    bit<64>  rx_bitmap;
    bit<32>  rx_length;    // the data packet's payload bytes
    bit<6>   outer_dscp;
    bit<2>   outer_ecn;
    // Path health (ev_health.p4): the QP's entries, what the stage is asked, what it found.
    bit<1>   rx_health;
    bit<1>   rx_skip_on_mark;
    bit<1>   h_health;     // the QP's slots have health (else the plain rotation)
    bit<2>   h_op;
    bit<16>  h_qp;
    bit<32>  h_ev;
    bit<8>   h_reason;
    bit<16>  h_mask;
    bit<8>   h_mask8;      // h_mask and h_turn in 8 bits: shift amounts (p4c-dpdk's limit)
    bit<8>   h_turn8;
    bit<8>   h_min_active;
    bit<64>  h_plane0;
    bit<64>  h_plane1;
    bit<64>  h_plane2;
    bit<16>  h_turn;       // in: the rotation's turn; out: the next one
    bit<16>  h_slot;       // out: the slot within the QP
    bit<8>   h_down;
    bit<1>   ev_digest;
    ev_event_t ev_event;
}

#endif
