// Headers and constants shared by the switch and NIC programs
// (DESIGN.md sections 3 to 6).
#ifndef MRC_HEADERS_P4
#define MRC_HEADERS_P4

const bit<16> ETHERTYPE_IPV6 = 0x86dd;
const bit<8>  IPPROTO_IPV6   = 41;    // IPv6-in-IPv6 encapsulation
const bit<8>  IPPROTO_UDP    = 17;
const bit<2>  ECN_NOT_ECT    = 0;
const bit<2>  ECN_CE         = 3;

// Bytes of Ethernet + IPv6: a trimmed frame keeps at least these.
const bit<32> ETH_IPV6_BYTES = 54;

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

// InfiniBand Base Transport Header (DESIGN.md section 6).
header bth_t {
    bit<8>  opcode;
    bit<1>  se;
    bit<1>  migreq;
    bit<2>  padcnt;
    bit<4>  tver;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  resv6;
    bit<24> dqpn;
    bit<1>  ackreq;
    bit<7>  resv7;
    bit<24> psn;
}

// MRC extensions (byte layouts in docs/nic.md).
header mrc_data_t {   // RDMA write family, 16 bytes
    bit<32> msg_id;
    bit<32> offset;
    bit<32> msg_len;
    bit<32> reserved;
}

header mrc_ack_t {    // ACK and SACK, 20 bytes
    bit<32> ev;
    bit<1>  ecn_seen;
    bit<7>  resv;
    bit<24> cum_psn;
    bit<8>  resv2;
    bit<24> ack_psn;
    bit<64> bitmap;
}

header mrc_nack_t {   // NACK, 8 bytes
    bit<32> ev;
    bit<8>  reason;
    bit<24> psn;
}

header mrc_probe_t {  // probe and probe reply, 8 bytes
    bit<32> ev;
    bit<1>  reply;
    bit<7>  resv;
    bit<24> probe_id;
}

const bit<16> ROCE_PORT = 4791;
const bit<8> OP_ACK   = 0xD1;
const bit<8> OP_SACK  = 0xDC;
const bit<8> OP_NACK  = 0xDD;
const bit<8> OP_PROBE = 0xDE;
const bit<8> NACK_TRIMMED = 1;
const bit<8> NACK_TRIMMED_LASTHOP = 2;

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
