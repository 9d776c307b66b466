// Trimmed data to NACK (receive step 2 of DESIGN.md section 5), stage for
// stage as nic_model/trim_nack.py: a data packet that arrives with a
// trimmed DSCP on its outer header becomes a NACK back to its sender
// (TRIMMED, or TRIMMED_LASTHOP for a cut at the last hop; its EV and PSN
// echoed) over the reverse of the same path, and the host is told (the
// notice: main.p4 clones it, egress takes its outer header off). A data
// packet beyond the receiver's window turns round the same way
// (PSN_OOR_WINDOW), on the QP's reverse EV of its plane.
#ifndef MRC_NIC_TRIM_NACK_P4
#define MRC_NIC_TRIM_NACK_P4

control TrimNack(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    // The NETH of a data packet (every field set: setValid leaves them
    // undefined), echoing its EV and PSN; the data headers go, the ICRC
    // (zero) comes. The BTH keeps the data's but for opcode, QP and flags.
    action build_neth(bit<8> reason) {
        bit<16> ts = 0;
        if (hdr.tseth.isValid()) {
            ts = hdr.tseth.tx_timestamp;
        }
        hdr.neth.setValid();
        hdr.neth.htype = 0;
        hdr.neth.nxt = 0;
        hdr.neth.reserved = 0;
        hdr.neth.nack_reason = reason;
        hdr.neth.vendor_info = 0;
        hdr.neth.entropy = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        hdr.neth.spdcid = hdr.bth.dqp[15:0];
        hdr.neth.dpdcid = meta.rx.peer_qpn[15:0];
        hdr.neth.reserved2 = 0;
        hdr.neth.nack_psn = hdr.bth.psn;
        hdr.neth.cc_type = NETH_CC_TYPE;
        hdr.neth.cc_fl = 0;
        hdr.neth.reserved3 = 0;
        hdr.neth.tx_timestamp = ts;
        hdr.icrc.setValid();
        hdr.icrc.icrc = 0;
        hdr.meth.setInvalid();
        hdr.tseth.setInvalid();
        hdr.reth.setInvalid();
        hdr.immdt.setInvalid();
        hdr.bth.opcode = OP_NACK;
        hdr.bth.dqp = meta.rx.peer_qpn;
        hdr.bth.a = 0;      // byte 8: no flag of the data packet's
        hdr.bth.reserved2 = 0;
        hdr.bth.rtx = 0;
        hdr.bth.ts = 0;
        hdr.bth.reserved3 = 0;
        meta.send.is_nack = 1;
        meta.send.trunc = NACK_BYTES;
        to_sender(hdr, meta, UDP_BYTES + BTH_BYTES + NETH_BYTES + ICRC_BYTES);
    }

    apply {
        if (meta.rx.trimmed == 1) {
            bit<8> reason = NACK_TRIMMED_LASTHOP;
            if (hdr.outer.dscp == meta.cfg.dscp_trimmed) {
                reason = NACK_TRIMMED;
            }
            build_neth(reason);   // over the reverse of the same path: the EV it came on
            meta.send.notice = 1;
        } else if (meta.rx.op == RX_OP_DATA && meta.rx.kind == RX_BEYOND) {
            build_neth(NACK_PSN_OOR_WINDOW);
            on_ev(hdr, meta, meta.rx.reverse_ev);
        }
    }
}

#endif
