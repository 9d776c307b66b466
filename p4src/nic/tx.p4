// Transmit (host to fabric), steps 1 and 2 of DESIGN.md section 5: data
// takes the next slot of its QP's rotation (a power-of-two slot table);
// control (ACK, SACK, NACK, probe, endpoint request and response) goes on the EV the host wrote into their inner
// headers (UDP source port and flow label): a reverse EV of the QP, or the
// EV a probe tests. The EV goes into the inner headers (step 4); Encap
// (applied once, in main.p4) builds the carrier and the outer header.
#ifndef MRC_NIC_TX_P4
#define MRC_NIC_TX_P4

control Transmit(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    REGISTER(bit<16>, QP_TABLE_SIZE) qp_rotation;   // next slot of each QP

    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    bit<16> slot_base = 0;
    bit<16> slot_mask = 0;
    action set_qp(bit<16> qp_index, bit<16> base, bit<16> mask) {
        meta.qp_index = qp_index;
        slot_base = base;
        slot_mask = mask;
    }
    table qp_ev {
        key = { hdr.bth.dqp : exact @name("qpn"); }
        actions = { set_qp; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.UNKNOWN_QP);
        size = QP_TABLE_SIZE;
    }

    // What the control plane rewrites to retire or restore an EV.
    action set_ev(bit<32> ev) { meta.ev = ev; }
    table slot_ev {
        key = { meta.slot : exact @name("slot"); }
        actions = { set_ev; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.NO_EV);
        size = SLOT_TABLE_SIZE;
    }

    apply {
        if (!hdr.bth.isValid()) {
            drop(nic_drop_reason_t.NOT_MRC);
        } else {
            qp_ev.apply();
        }
        if (meta.drop == 1) {
            // counted by the caller
        } else if (meta.is_control == 1) {
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];   // the host's EV
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
            if (hdr.meth.isValid()) {
                meta.outer_ecn = 2;   // ECT(0) on data
            }
        }
    }
}

#endif
