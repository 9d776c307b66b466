// Decapsulation (receive steps 1 and 4 of DESIGN.md section 5), stage for
// stage as nic_model/decap.py: what arrives from the fabric must be
// IPv6-in-IPv6 with an MRC packet inside for this NIC (else dropped and
// counted); the host's QP it names is found (qp_peer: its number, the
// receiver's and path health's settings); an outer CE reaches an ECT
// inner header (RFC 6040); trimmed data is marked for trim_nack.p4; the
// receiver (rx_track.p4) is asked what its packet needs. What nothing
// answers goes to the host, its outer header off (`to_host`).
#ifndef MRC_NIC_DECAP_P4
#define MRC_NIC_DECAP_P4

control Decap(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    action set_peer(bit<24> qpn, bit<16> qp_index, bit<1> offload, bit<1> follow, bit<32> ack_bytes,
                    bit<1> health, bit<1> skip_on_mark) {
        meta.rx.peer_hit = 1;
        meta.rx.peer_qpn = qpn;
        meta.rx.index = qp_index;
        meta.rx.offload = offload;
        meta.rx.follow = follow;
        meta.rx.ack_bytes = ack_bytes;
        meta.rx.health = health;
        meta.rx.skip_on_mark = skip_on_mark;
    }
    action no_peer() { meta.rx.peer_hit = 0; }
    table qp_peer {
        key = { hdr.bth.dqp : exact @name("qpn"); }
        actions = { set_peer; @defaultonly no_peer; }
        const default_action = no_peer();
        size = QP_TABLE_SIZE;
    }

    apply {
        // One validity test per branch: p4c-dpdk cannot unroll `!a || !b`.
        if (!hdr.outer.isValid()) {
            drop(nic_drop_reason_t.NOT_ENCAP);
        } else if (!hdr.inner.isValid()) {
            drop(nic_drop_reason_t.NOT_ENCAP);
        } else if (!hdr.udp.isValid()) {
            drop(nic_drop_reason_t.BAD_INNER);
        } else if (!hdr.bth.isValid()) {
            drop(nic_drop_reason_t.BAD_INNER);
        } else if (hdr.inner.dst_hi != meta.cfg.my_addr_hi || hdr.inner.dst_lo != meta.cfg.my_addr_lo) {
            drop(nic_drop_reason_t.NOT_FOR_ME);
        }
        if (meta.drop == 0 && meta.is_control == 0) {
            if (!hdr.meth.isValid()) {
                drop(nic_drop_reason_t.BAD_INNER);   // an opcode MRC does not define
            }
        }
        if (meta.drop == 0) {
            qp_peer.apply();
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        }
        if (meta.drop == 1) {
            // counted by main.p4
        } else if (hdr.meth.isValid() && (hdr.outer.dscp == meta.cfg.dscp_trimmed ||
                                          hdr.outer.dscp == meta.cfg.dscp_trimmed_lasthop)) {
            if (meta.rx.peer_hit == 0) {
                drop(nic_drop_reason_t.UNKNOWN_QP);
            } else {
                meta.rx.trimmed = 1;   // trim_nack.p4 answers it
            }
        } else {
            // RFC 6040: CE on the outer header reaches an ECT inner one.
            if (hdr.outer.ecn == ECN_CE && hdr.inner.ecn != ECN_NOT_ECT) {
                hdr.inner.ecn = ECN_CE;
            }
            if (meta.rx.peer_hit == 1 && meta.rx.offload == 1) {
                if (hdr.meth.isValid()) {
                    meta.rx.op = RX_OP_DATA;
                } else if (hdr.peth.isValid()) {
                    meta.rx.op = RX_OP_PROBE;
                } else if (hdr.seth.isValid() && meta.rx.follow == 1 && hdr.seth.pr == 0) {
                    meta.rx.op = RX_OP_SACK_SEEN;
                    meta.ev = hdr.seth.entropy;
                }
            }
            if (meta.rx.op == RX_OP_DATA) {
                // Payload bytes: the frame less its headers (TSETH and ImmDt when there), 0 if shorter.
                bit<32> headers = DATA_HEADER_BYTES;
                if (hdr.tseth.isValid()) {
                    headers = headers + (bit<32>)TSETH_BYTES;
                }
                if (hdr.immdt.isValid()) {
                    headers = headers + (bit<32>)IMMDT_BYTES;
                }
                if (FRAME_BYTES > headers) {
                    meta.rx.length = FRAME_BYTES - headers;
                }
            }
        }
    }
}

// What arrived, its outer header off, to the host port.
control ToHost(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    apply {
        hdr.outer.setInvalid();
        SEND_TO(HOST_PORT);
    }
}

#endif
