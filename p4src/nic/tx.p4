// Transmit (host to fabric): data takes the next slot of its QP's rotation
// (a power-of-two slot table); ACK, SACK, NACK and probes go on the EV the
// host wrote into their inner headers (UDP source port and flow label): a
// reverse EV of the QP, or the EV a probe tests.
// The EV goes into the inner headers; Encap (applied once, in nic.p4)
// builds the carrier and the outer header.
control Transmit(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    REGISTER(bit<16>, 4096) qp_rotation;   // next slot of each QP

    bit<16> slot_base = 0;
    bit<16> slot_mask = 0;
    action set_qp(bit<16> qp_index, bit<16> base, bit<16> mask) {
        meta.qp_index = qp_index;
        slot_base = base;
        slot_mask = mask;
    }
    action qp_miss() {
        meta.drop = 1;
        meta.drop_reason = NDROP_UNKNOWN_QP;
    }
    table qp_ev {
        key = { hdr.bth.dqpn : exact @name("qpn"); }
        actions = { set_qp; @defaultonly qp_miss; }
        const default_action = qp_miss;
        size = 4096;
    }

    // What the control plane rewrites to retire or restore an EV.
    action set_ev(bit<32> ev) { meta.ev = ev; }
    action slot_miss() {
        meta.drop = 1;
        meta.drop_reason = NDROP_NO_EV;
    }
    table slot_ev {
        key = { meta.slot : exact @name("slot"); }
        actions = { set_ev; @defaultonly slot_miss; }
        const default_action = slot_miss;
        size = 65536;
    }

    apply {
        if (!hdr.bth.isValid()) {
            meta.drop = 1;
            meta.drop_reason = NDROP_NOT_MRC;
        } else {
            qp_ev.apply();
        }
        if (meta.drop == 1) {
            // counted by the caller
        } else if (hdr.ack.isValid()) {
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        } else if (hdr.nack.isValid()) {
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        } else if (hdr.probe.isValid()) {
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        } else {
            bit<16> turn;
            REG_READ(qp_rotation, turn, (bit<32>)meta.qp_index);
            REG_WRITE(qp_rotation, (bit<32>)meta.qp_index, turn + 1);
            meta.slot = slot_base + (turn & slot_mask);
            slot_ev.apply();
        }
        if (meta.drop == 0) {
            // The EV travels in the inner UDP source port and flow label.
            hdr.udp.src_port = meta.ev[31:16];
            hdr.inner.flow_label = hdr.inner.flow_label[19:16] ++ meta.ev[15:0];
            hdr.udp.checksum = 0;   // not recomputed; MRC relies on the ICRC
            meta.encap = 1;
            meta.outer_dscp = hdr.inner.dscp;   // the host sets the class
            meta.outer_ecn = 0;
            if (hdr.data.isValid()) {
                meta.outer_ecn = 2;   // ECT(0) on data
            }
        }
    }
}
