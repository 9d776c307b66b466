// From the host: Ethernet / IPv6 (inner) / UDP / BTH / MRC 1.0 headers.
// From the fabric: Ethernet / IPv6 (outer, next header 41) / the same.
// The headers each opcode carries are DESIGN.md section 6's; a data
// packet's TSETH is there when the BTH's TS flag says so. An IP version
// other than 6 is flagged for the main control to drop as malformed (not a
// parser error: p4c-dpdk writes that where the main control does not read
// it); the flags the parser sets start at 0 for every packet (SWX keeps
// metadata from one packet to the next).
#ifndef MRC_NIC_PARSER_P4
#define MRC_NIC_PARSER_P4

parser NicParser(PARSER_PARAMS(nic_headers_t, nic_metadata_t)) {
    state start {
        meta.is_control = 0;
        meta.bad_version = 0;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type, FROM_HOST_SIDE) {
            (ETHERTYPE_IPV6, true): parse_inner;
            (ETHERTYPE_IPV6, false): parse_outer;
            default: accept;
        }
    }
    state parse_outer {
        pkt.extract(hdr.outer);
        transition select(hdr.outer.version, hdr.outer.next_hdr) {
            (6, IPPROTO_IPV6): parse_inner;
            (6, _): accept;
            default: bad_version;
        }
    }
    state parse_inner {
        pkt.extract(hdr.inner);
        transition select(hdr.inner.version, hdr.inner.next_hdr) {
            (6, IPPROTO_UDP): parse_udp;
            (6, _): accept;
            default: bad_version;
        }
    }
    state bad_version { meta.bad_version = 1; transition accept; }
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
            0xC6 &&& 0xFE: parse_meth;   // write first, middle
            0xC8 &&& 0xFC: parse_meth;   // write last, last with immediate, only, only with immediate
            OP_ACK: parse_aeth;
            OP_SACK: parse_seth;
            OP_NACK: parse_neth;
            OP_PROBE: parse_peth;
            OP_EP_REQUEST: parse_erth;
            OP_EP_RESPONSE: parse_eeth;
            default: accept;
        }
    }
    state parse_meth {
        pkt.extract(hdr.meth);
        transition select(hdr.bth.ts) {
            1: parse_tseth;
            default: parse_reth;
        }
    }
    state parse_tseth { pkt.extract(hdr.tseth); transition parse_reth; }
    state parse_reth {
        pkt.extract(hdr.reth);
        transition select(hdr.bth.opcode) {
            0xC9 &&& 0xFD: parse_immdt;   // 0xC9, 0xCB: the two *_IMM opcodes
            default: accept;
        }
    }
    state parse_immdt { pkt.extract(hdr.immdt); transition accept; }
    state parse_aeth  { pkt.extract(hdr.aeth); meta.is_control = 1; transition accept; }
    state parse_seth  { pkt.extract(hdr.seth); pkt.extract(hdr.cc_state); meta.is_control = 1; transition made; }
    state parse_neth  { pkt.extract(hdr.neth); meta.is_control = 1; transition made; }
    // A second pass (PNA) parses a SACK or NACK the NIC made: its ICRC, then the
    // data packet's headers it was made from, kept behind it (nic_pna.p4).
    state made {
        transition select(SECOND_PASS) {
            true: parse_kept;
            default: accept;
        }
    }
    state parse_kept {
        pkt.extract(hdr.icrc);
        pkt.extract(hdr.kept_ip);
        pkt.extract(hdr.kept_bth);
        pkt.extract(hdr.kept_meth);
        transition select(hdr.kept_bth.ts) {
            1: parse_kept_tseth;
            default: parse_kept_reth;
        }
    }
    state parse_kept_tseth { pkt.extract(hdr.kept_tseth); transition parse_kept_reth; }
    state parse_kept_reth {
        pkt.extract(hdr.kept_reth);
        transition select(hdr.kept_bth.opcode) {
            0xC9 &&& 0xFD: parse_kept_immdt;
            default: accept;
        }
    }
    state parse_kept_immdt { pkt.extract(hdr.kept_immdt); transition accept; }
    state parse_peth  { pkt.extract(hdr.peth); meta.is_control = 1; transition accept; }
    state parse_erth  { pkt.extract(hdr.erth); meta.is_control = 1; transition accept; }
    state parse_eeth  { pkt.extract(hdr.eeth); meta.is_control = 1; transition accept; }
}

control NicDeparser(DEPARSER_PARAMS(nic_headers_t, nic_metadata_t)) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.outer);
        pkt.emit(hdr.inner);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.bth);
        pkt.emit(hdr.meth);
        pkt.emit(hdr.tseth);
        pkt.emit(hdr.reth);
        pkt.emit(hdr.immdt);
        pkt.emit(hdr.aeth);
        pkt.emit(hdr.seth);
        pkt.emit(hdr.cc_state);
        pkt.emit(hdr.neth);
        pkt.emit(hdr.peth);
        pkt.emit(hdr.erth);
        pkt.emit(hdr.eeth);
        pkt.emit(hdr.icrc);
        pkt.emit(hdr.kept_ip);
        pkt.emit(hdr.kept_bth);
        pkt.emit(hdr.kept_meth);
        pkt.emit(hdr.kept_tseth);
        pkt.emit(hdr.kept_reth);
        pkt.emit(hdr.kept_immdt);
    }
}

#endif
