// Transmit (host to fabric), steps 1 and 2 of DESIGN.md section 5, in two
// controls around the rotation (ev_health.p4, which owns each QP's turn):
// Transmit finds the QP (qp_ev) and asks the rotation for data's slot;
// Spray reads the slot's EV (a power-of-two slot table per QP) or, for
// control (ACK, SACK, NACK, probe, endpoint request and response), takes
// the EV the host wrote into its inner headers (UDP source port and flow
// label): a reverse EV of the QP, or the EV a probe tests. The EV goes into
// the inner headers (step 4); Encap (applied once, in main.p4) builds the
// carrier and the outer header.
#ifndef MRC_NIC_TX_P4
#define MRC_NIC_TX_P4

control Transmit(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    // health: the data plane passes over slots that are not usable (ev_health.p4),
    // keeping min_active; plane_bit0..2: which slot is on which plane.
    action set_qp(bit<16> qp_index, bit<16> base, bit<16> mask, bit<1> health, bit<8> min_active,
                  bit<64> plane_bit0, bit<64> plane_bit1, bit<64> plane_bit2) {
        meta.tx.qp_index = qp_index;
        meta.tx.slot = base;
        meta.h.mask = mask;
        meta.h.mask8 = mask[7:0];
        meta.h.health = health;
        meta.h.min_active = min_active;
        meta.h.plane0 = plane_bit0;
        meta.h.plane1 = plane_bit1;
        meta.h.plane2 = plane_bit2;
    }
    table qp_ev {
        key = { hdr.bth.dqp : exact @name("qpn"); }
        actions = { set_qp; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.UNKNOWN_QP);
        size = QP_TABLE_SIZE;
    }

    apply {
        if (!hdr.bth.isValid()) {
            drop(nic_drop_reason_t.NOT_MRC);
        } else {
            qp_ev.apply();
        }
        if (meta.drop == 0 && meta.is_control == 0) {
            meta.h.op = HEALTH_PICK;   // data: the rotation picks its slot
            meta.h.qp = meta.tx.qp_index;
        }
    }
}

control Spray(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    // What the control plane rewrites to retire or restore an EV.
    action set_ev(bit<32> ev) { meta.ev = ev; }
    table slot_ev {
        key = { meta.tx.slot : exact @name("slot"); }
        actions = { set_ev; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.NO_EV);
        size = SLOT_TABLE_SIZE;
    }

    apply {
        if (meta.is_control == 1) {
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];   // the host's EV
        } else {
            meta.tx.slot = meta.tx.slot + meta.h.slot;   // the QP's base + the rotation's pick
            slot_ev.apply();
        }
        if (meta.drop == 0) {
            // The EV travels in the inner UDP source port and flow label.
            hdr.udp.src_port = meta.ev[31:16];
            hdr.inner.flow_label = hdr.inner.flow_label[19:16] ++ meta.ev[15:0];
            hdr.udp.checksum = 0;   // not recomputed; MRC relies on the ICRC
            meta.send.encap = 1;
            meta.send.dscp = hdr.inner.dscp;   // the host sets the class
            meta.send.ecn = 0;
            if (hdr.meth.isValid()) {
                meta.send.ecn = 2;   // ECT(0) on data
            }
        }
    }
}

#endif
