// Parser and deparser: Ethernet, then IPv6. A bad header is left to
// ingress (parser_error), which drops and counts it.
parser SwitchParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                    inout STD_META_T STD_META) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        verify(hdr.ipv6.version == 6, error.BadIPv6Version);
        transition accept;
    }
}

control SwitchDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv6);
    }
}
