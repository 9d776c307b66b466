// Headers and constants shared by the switch and NIC programs
// (DESIGN.md sections 3 to 6).
#ifndef MRC_HEADERS_P4
#define MRC_HEADERS_P4

const bit<16> ETHERTYPE_IPV6 = 0x86dd;
const bit<8>  IPPROTO_IPV6   = 41;    // IPv6-in-IPv6 encapsulation
const bit<8>  IPPROTO_UDP    = 17;
const bit<2>  ECN_NOT_ECT    = 0;
const bit<2>  ECN_CE         = 3;

// Header lengths, named once (bytes).
const bit<16> ETH_BYTES  = 14;
const bit<16> IPV6_BYTES = 40;
const bit<16> UDP_BYTES  = 8;
const bit<16> BTH_BYTES  = 12;
const bit<16> METH_BYTES = 4;
const bit<16> TSETH_BYTES = 4;
const bit<16> RETH_BYTES = 16;
const bit<16> IMMDT_BYTES = 4;
const bit<16> NETH_BYTES = 20;
const bit<16> SETH_BYTES = 28;
const bit<16> CC_STATE_BYTES = 8;
const bit<16> ICRC_BYTES = 4;
// Ethernet + IPv6: a trimmed frame keeps at least these.
const bit<32> ETH_IPV6_BYTES = (bit<32>)(ETH_BYTES + IPV6_BYTES);

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv6_t {
    bit<4>   version;
    bit<6>   dscp;
    bit<2>   ecn;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    bit<128> src_addr;
    bit<128> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// Base Transport Header. MRC 1.0 as the two public readings agree, and
// where they differ this project's choice (docs/nic.md, "Choices"): byte 1
// as IBTA; byte 4 IBTA's FECN/BECN (reserved in MRC); byte 8 A, reserved,
// RTX, TS.
header bth_t {
    bit<8>  opcode;
    bit<1>  se;
    bit<1>  m;
    bit<2>  padcnt;
    bit<4>  tver;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  reserved;
    bit<24> dqp;
    bit<1>  a;
    bit<1>  reserved2;
    bit<1>  rtx;
    bit<1>  ts;
    bit<4>  reserved3;
    bit<24> psn;
}

// MRC 1.0 headers (DESIGN.md section 6). The field lists equal
// mrc_wire/headers.py's LAYOUTS (tests/wire/test_layouts.py); reserved
// fields are zero. Data: METH, TSETH (when bth.ts), RETH, ImmDt (*_IMM).
header meth_t {
    bit<16> rqmsn;
    bit<16> msn;
}

header tseth_t {
    bit<16> tx_timestamp;
    bit<1>  tsr;
    bit<11> reserved;
    bit<4>  ftype;
}

header reth_t {
    bit<64> va;
    bit<32> r_key;
    bit<32> dmalen;
}

header immdt_t {
    bit<32> imm;
}

// SACK: SETH, then CC_STATE.
header seth_t {
    bit<4>  htype;
    bit<5>  nxt;
    bit<2>  m;
    bit<3>  reserved;
    bit<1>  pr;
    bit<1>  reserved2;
    bit<16> ack_psn_offset;  // signed
    bit<32> entropy;
    bit<16> spdcid;
    bit<16> dpdcid;
    bit<8>  reserved3;
    bit<24> cack_psn;
    bit<4>  cc_type;
    bit<4>  cc_fl;
    bit<8>  mpr;
    bit<16> sack_offset;  // signed
    bit<64> sack_bitmap;
}

header cc_state_t {
    bit<16> tx_timestamp;
    bit<1>  reserved;
    bit<15> ooo_count;
    bit<1>  r_c;
    bit<7>  rcv_cwnd_pen;
    bit<24> rcvd_bytes;
}

// NACK.
header neth_t {
    bit<4>  htype;
    bit<5>  nxt;
    bit<7>  reserved;
    bit<8>  nack_reason;
    bit<8>  vendor_info;
    bit<32> entropy;
    bit<16> spdcid;
    bit<16> dpdcid;
    bit<8>  reserved2;
    bit<24> nack_psn;
    bit<4>  cc_type;
    bit<4>  cc_fl;
    bit<8>  reserved3;
    bit<16> tx_timestamp;
}

// Probe request (its answer is a SACK with seth.pr set).
header peth_t {
    bit<4>  htype;
    bit<5>  nxt;
    bit<7>  reserved;
    bit<8>  reserved2;
    bit<8>  vendor_info;
    bit<16> probe_id;
    bit<16> reserved3;
    bit<16> spdcid;
    bit<16> dpdcid;
    bit<16> tx_timestamp;
    bit<1>  tsr;
    bit<11> reserved4;
    bit<4>  ftype;
}

// ACK (IBTA's AETH: the RoCE baseline's ACK and NAK).
header aeth_t {
    bit<8>  syndrome;
    bit<24> msn;
}

// Endpoint request and response (port status, EV probe).
header erth_t {
    bit<4>  htype;
    bit<5>  nxt;
    bit<5>  reserved;
    bit<2>  op;
    bit<8>  reserved2;
    bit<8>  vendor_info;
    bit<32> port_status_mask;
    bit<32> reserved3;
    bit<16> tx_timestamp;
    bit<1>  tsr;
    bit<11> reserved4;
    bit<4>  ftype;
}

header eeth_t {
    bit<4>  htype;
    bit<5>  nxt;
    bit<1>  reserved;
    bit<2>  op;
    bit<1>  reserved2;
    bit<19> reserved3;
    bit<64> reserved4;
    bit<64> reserved5;
    bit<64> reserved6;
    bit<16> tx_timestamp;
    bit<16> reserved7;
    bit<32> reserved8;
}

// Every packet's trailer: zero in this model (its links do not corrupt).
header icrc_t {
    bit<32> icrc;
}

const bit<16> ROCE_PORT = 4791;
const bit<8> OP_ACK         = 0xD1;
const bit<8> OP_EP_REQUEST  = 0xD8;
const bit<8> OP_EP_RESPONSE = 0xD9;
const bit<8> OP_SACK        = 0xDC;
const bit<8> OP_NACK        = 0xDD;
const bit<8> OP_PROBE       = 0xDE;
const bit<8> NACK_TRIMMED         = 0x01;
const bit<8> NACK_TRIMMED_LASTHOP = 0x02;
const bit<8> NACK_PSN_OOR_WINDOW  = 0x0B;
const bit<4> NETH_CC_TYPE = 2;    // as both readings fill it
const bit<2> SETH_M_NONE = 0;     // SETH m: the congestion mark
const bit<2> SETH_M_SKIP_ONCE = 1;
const bit<2> EP_PORT_STATUS = 0;  // ERTH op: the sender's port status

// IPv6 with its addresses as 64-bit halves: the NIC uses it so that no
// target needs arithmetic on 128-bit values (p4c-dpdk has none).
header ipv6_split_t {
    bit<4>   version;
    bit<6>   dscp;
    bit<2>   ecn;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    bit<64>  src_hi;
    bit<64>  src_lo;
    bit<64>  dst_hi;
    bit<64>  dst_lo;
}

error { BadIPv6Version }

#endif
