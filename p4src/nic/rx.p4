// Receive (fabric to host), steps 1 to 3 of DESIGN.md section 5:
// decapsulate what is for this NIC, copy CE to the inner header, and turn
// trimmed data into a NACK to the sender over the reverse of the same path
// (same plane and spine), with a notice to the host (an ingress clone,
// decapsulated in egress).
#ifndef MRC_NIC_RX_P4
#define MRC_NIC_RX_P4

control Receive(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    bit<24> peer_qpn = 0;
    action set_peer(bit<24> qpn) { peer_qpn = qpn; }
    table qp_peer {
        key = { hdr.bth.dqp : exact @name("qpn"); }
        actions = { set_peer; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.UNKNOWN_QP);
        size = QP_TABLE_SIZE;
    }

    // The NETH of a trimmed data packet (every field set: setValid leaves
    // them undefined), echoing its EV, PSN and TSETH timestamp; the data
    // headers go, the ICRC (zero) comes.
    action build_neth(bit<8> reason, bit<24> peer) {
        hdr.neth.setValid();
        hdr.neth.htype = 0;
        hdr.neth.nxt = 0;
        hdr.neth.reserved = 0;
        hdr.neth.nack_reason = reason;
        hdr.neth.vendor_info = 0;
        hdr.neth.entropy = meta.ev;
        hdr.neth.spdcid = hdr.bth.dqp[15:0];
        hdr.neth.dpdcid = peer[15:0];
        hdr.neth.reserved2 = 0;
        hdr.neth.nack_psn = hdr.bth.psn;
        hdr.neth.cc_type = NETH_CC_TYPE;
        hdr.neth.cc_fl = 0;
        hdr.neth.reserved3 = 0;
        hdr.neth.tx_timestamp = 0;
        hdr.icrc.setValid();
        hdr.icrc.icrc = 0;
        hdr.meth.setInvalid();
        hdr.reth.setInvalid();
        hdr.immdt.setInvalid();
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
        } else if (hdr.inner.dst_hi != meta.my_addr_hi || hdr.inner.dst_lo != meta.my_addr_lo) {
            drop(nic_drop_reason_t.NOT_FOR_ME);
        }
        if (meta.drop == 1) {
            // counted by the caller
        } else if (hdr.meth.isValid() && (hdr.outer.dscp == meta.dscp_trimmed ||
                                          hdr.outer.dscp == meta.dscp_trimmed_lasthop)) {
            qp_peer.apply();
            if (meta.drop == 0) {
                bit<8> reason = NACK_TRIMMED_LASTHOP;
                if (hdr.outer.dscp == meta.dscp_trimmed) {
                    reason = NACK_TRIMMED;
                }
                meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
                build_neth(reason, peer_qpn);
                if (hdr.tseth.isValid()) {
                    hdr.neth.tx_timestamp = hdr.tseth.tx_timestamp;
                    hdr.tseth.setInvalid();
                }
                hdr.bth.opcode = OP_NACK;
                hdr.bth.dqp = peer_qpn;
                hdr.bth.a = 0;      // byte 8: no flag of the data packet's
                hdr.bth.reserved2 = 0;
                hdr.bth.rtx = 0;
                hdr.bth.ts = 0;
                hdr.bth.reserved3 = 0;
                bit<64> sender_hi = hdr.inner.src_hi;
                bit<64> sender_lo = hdr.inner.src_lo;
                hdr.inner.src_hi = hdr.inner.dst_hi;
                hdr.inner.src_lo = hdr.inner.dst_lo;
                hdr.inner.dst_hi = sender_hi;
                hdr.inner.dst_lo = sender_lo;
                hdr.inner.dscp = meta.dscp_control;
                hdr.inner.ecn = 0;
                hdr.inner.payload_len = UDP_BYTES + BTH_BYTES + NETH_BYTES + ICRC_BYTES;
                hdr.inner.hop_limit = 64;
                hdr.udp.length = UDP_BYTES + BTH_BYTES + NETH_BYTES + ICRC_BYTES;
                hdr.udp.checksum = 0;
                meta.encap = 1;     // reverse path: the EV's plane and spine
                meta.is_nack = 1;
                meta.outer_dscp = meta.dscp_control;
                meta.outer_ecn = 0;
            }
        } else {
            // RFC 6040: CE on the outer header reaches an ECT inner one.
            if (hdr.outer.ecn == ECN_CE && hdr.inner.ecn != ECN_NOT_ECT) {
                hdr.inner.ecn = ECN_CE;
            }
            hdr.outer.setInvalid();
            SEND_TO(HOST_PORT);
        }
    }
}

#endif
