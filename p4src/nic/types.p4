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
const bit<32> NEV_TX_DONE       = 8;   // a transmit completion, to the host (its data went out too)

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

// The EV format (DESIGN.md section 5): EV[2:0] its plane, EV[10:3] its spine.
#define EV_PLANE(ev) ((ev)[2:0])
#define EV_SPINE(ev) ((ev)[10:3])
// rx_reverse: a QP's reverse EV of each plane, NUM_PLANES per QP.
#define REVERSE_AT(qp_index, plane) ((bit<32>)(qp_index) * NUM_PLANES + (bit<32>)(plane))

// What the NIC makes and sends, in bytes: a NACK built from a trimmed stub
// (Ethernet, both IPv6 headers, UDP, BTH, NETH, ICRC:
// mrc_wire.constants.NACK_BYTES); a SACK the receiver builds (SETH and
// CC_STATE in NETH's place); a transmit completion, the host's data
// packet back to it cut to its headers (Ethernet, IPv6, UDP, BTH, METH,
// TSETH, RETH and room for ImmDt).
const bit<32> NACK_BYTES = (bit<32>)(ETH_BYTES + IPV6_BYTES + IPV6_BYTES + UDP_BYTES + BTH_BYTES + NETH_BYTES +
                                     ICRC_BYTES);
const bit<32> SACK_BYTES = (bit<32>)(ETH_BYTES + IPV6_BYTES + IPV6_BYTES + UDP_BYTES + BTH_BYTES + SETH_BYTES +
                                     CC_STATE_BYTES + ICRC_BYTES);
const bit<32> TX_DONE_BYTES = (bit<32>)(ETH_BYTES + IPV6_BYTES + UDP_BYTES + BTH_BYTES + METH_BYTES + TSETH_BYTES +
                                        RETH_BYTES + IMMDT_BYTES);
// A data packet's headers from the fabric, before its payload (TSETH and
// ImmDt when there are added): Ethernet, both IPv6, UDP, BTH, METH, RETH, ICRC.
const bit<32> DATA_HEADER_BYTES = (bit<32>)(ETH_BYTES + IPV6_BYTES + IPV6_BYTES + UDP_BYTES + BTH_BYTES +
                                            METH_BYTES + RETH_BYTES + ICRC_BYTES);

// What a second pass needs of the data packet a NIC-made reply was made
// from (PNA: nic_pna.p4 sends the reply with it behind its ICRC, which the
// mirror session's cut leaves off the wire; never valid on v1model): the
// fields of its IPv6 and UDP headers the reply rewrites, as they arrived.
header kept_ip_t {
    bit<6>  outer_dscp;
    bit<2>  outer_ecn;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<4>  reserved;
    bit<20> flow_label;
    bit<16> payload_len;
    bit<8>  hop_limit;
    bit<16> udp_src;
    bit<16> udp_length;
    bit<16> udp_checksum;
}

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
    icrc_t       icrc;       // emitted only by the packets the NIC builds
    kept_ip_t    kept_ip;    // PNA's second pass: the data packet's headers (kept_ip_t)
    bth_t        kept_bth;
    meth_t       kept_meth;
    tseth_t      kept_tseth;
    reth_t       kept_reth;
    immdt_t      kept_immdt;
}

// Metadata, by the stage that fills it.
#ifndef NIC_TOP_METADATA
#define NIC_TOP_METADATA
#endif

// The NIC's identity (main.p4's nic_config).
struct cfg_meta_t {
    bit<32>  block;
    bit<11>  my_row;
    bit<64>  my_addr_hi;
    bit<64>  my_addr_lo;
    bit<6>   dscp_control;
    bit<6>   dscp_trimmed;
    bit<6>   dscp_trimmed_lasthop;
}

// Transmit and spray (tx.p4): the QP's index, its slot range's base, then the slot.
struct tx_meta_t {
    bit<16>  qp_index;
    bit<16>  slot;
}

// Encapsulation (encap.p4) and what main.p4 does with a packet on its way out.
struct send_meta_t {
    bit<1>   encap;        // encapsulate and send to a plane port
    bit<1>   same_row;     // dest_row's template
    bit<11>  dst_row;
    bit<6>   dscp;         // the outer header's
    bit<2>   ecn;
    bit<1>   gen;          // a packet the NIC made (NACK, SACK, probe answer): counted as such, not as tx
    bit<1>   is_nack;
    bit<1>   notice;       // a trimmed packet's notice goes to the host
    bit<32>  trunc;        // bytes the packet is cut to (0: not cut)
}

// The receiver: qp_peer's entry (decap.p4), what rx_track.p4 is asked and found.
struct rx_meta_t {
    bit<1>   trimmed;      // trimmed data: trim_nack.p4 answers it
    bit<1>   peer_hit;
    bit<24>  peer_qpn;
    bit<16>  index;
    bit<1>   offload;
    bit<1>   follow;
    bit<32>  ack_bytes;
    bit<1>   health;
    bit<1>   skip_on_mark;
    bit<2>   op;
    bit<2>   kind;
    bit<1>   sack;
    bit<24>  cum;
    bit<16>  ooo;
    bit<32>  rcvd;
    bit<32>  reverse_ev;
    bit<64>  bitmap;
    bit<32>  length;       // the data packet's payload bytes
}

// Path health (ev_health.p4): the QP's qp_ev words, what the stage is asked, what it found.
struct health_meta_t {
    bit<1>   health;       // the QP's slots have health (else the plain rotation)
    bit<2>   op;
    bit<16>  qp;
    bit<32>  ev;
    bit<8>   reason;
    bit<16>  mask;
    bit<8>   mask8;        // mask and turn in 8 bits: shift amounts (p4c-dpdk's limit)
    bit<8>   turn8;
    bit<8>   rest8;        // the slots from the turn to the rotation's end
    bit<64>  run;          // the slots the pick passed over, from bit 0 (first_usable's)
    bit<8>   min_active;
    bit<64>  plane0;
    bit<64>  plane1;
    bit<64>  plane2;
    bit<16>  turn;         // in: the rotation's turn; out: the next one
    bit<16>  slot;         // out: the slot within the QP
    bit<8>   down;
}

struct nic_metadata_t {
    bit<1>   drop;
    nic_drop_reason_t drop_reason;
    bit<1>   is_control;   // the parser found a control header (ACK, SACK, NACK, probe, endpoint)
    bit<1>   bad_version;  // the parser found an IP version other than 6
    // Kept by an ingress clone (field list 1): what egress makes of the copy.
    @field_list(1)
    bit<32>  ev;           // the EV the packet travels on
    @field_list(1)
    bit<1>   host_copy;    // a copy of new data goes to the host (the original became the SACK)
    @field_list(1)
    bit<1>   tx_done;      // the transmit completion: the host's data packet back to it, its EV written in
    cfg_meta_t    cfg;
    tx_meta_t     tx;
    send_meta_t   send;
    rx_meta_t     rx;
    health_meta_t h;
    bit<1>   ev_digest;
    ev_event_t ev_event;
    NIC_TOP_METADATA      // what a top file keeps of its own (nic_pna.p4: between its two passes)
}

#endif
