// Header parser and deparser, called by each target's top parser. The
// IPv6 version is checked by a transition, not verify() (which Tofino has
// not): a wrong version marks the packet malformed for ingress to drop.
#ifndef MRC_SWITCH_PARSER_P4
#define MRC_SWITCH_PARSER_P4

parser SwitchHeaderParser(packet_in pkt, out headers_t hdr, inout metadata_t meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition select(hdr.ipv6.version) {
            6: accept;
            default: bad_version;
        }
    }
    state bad_version {
        meta.malformed = 1;
        transition accept;
    }
}

control SwitchHeaderDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv6);
    }
}

#endif
