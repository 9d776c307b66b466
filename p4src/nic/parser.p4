// From the host: Ethernet / IPv6 (inner) / UDP / BTH / extension.
// From the fabric: Ethernet / IPv6 (outer, next header 41) / the same.
#ifndef MRC_NIC_PARSER_P4
#define MRC_NIC_PARSER_P4

parser NicParser(PARSER_PARAMS(nic_headers_t, nic_metadata_t)) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type, IN_PORT == HOST_PORT) {
            (ETHERTYPE_IPV6, true): parse_inner;
            (ETHERTYPE_IPV6, false): parse_outer;
            default: accept;
        }
    }
    state parse_outer {
        pkt.extract(hdr.outer);
        verify(hdr.outer.version == 6, error.BadIPv6Version);
        transition select(hdr.outer.next_hdr) {
            IPPROTO_IPV6: parse_inner;
            default: accept;
        }
    }
    state parse_inner {
        pkt.extract(hdr.inner);
        verify(hdr.inner.version == 6, error.BadIPv6Version);
        transition select(hdr.inner.next_hdr) {
            IPPROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            ROCE_PORT: parse_bth;
            default: accept;
        }
    }
    state parse_bth {
        pkt.extract(hdr.bth);
        transition select(hdr.bth.opcode) {
            0xC6 &&& 0xFE: parse_data;   // 0xC6, 0xC7
            0xC8 &&& 0xFC: parse_data;   // 0xC8 .. 0xCB
            OP_ACK: parse_ack;
            OP_SACK: parse_ack;
            OP_NACK: parse_nack;
            OP_PROBE: parse_probe;
            default: accept;
        }
    }
    state parse_data  { pkt.extract(hdr.data);  transition accept; }
    state parse_ack   { pkt.extract(hdr.ack);   transition accept; }
    state parse_nack  { pkt.extract(hdr.nack);  transition accept; }
    state parse_probe { pkt.extract(hdr.probe); transition accept; }
}

control NicDeparser(DEPARSER_PARAMS(nic_headers_t, nic_metadata_t)) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.outer);
        pkt.emit(hdr.inner);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.bth);
        pkt.emit(hdr.data);
        pkt.emit(hdr.ack);
        pkt.emit(hdr.nack);
        pkt.emit(hdr.probe);
    }
}

#endif
