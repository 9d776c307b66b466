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

error { BadIPv6Version }

#endif
