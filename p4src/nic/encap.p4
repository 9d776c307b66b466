// Carrier and encapsulation, shared by transmit and the NACK path:
// transmit steps 3 and 4 of DESIGN.md section 5, the carrier of section 3.
// The destination row's template says whether the path crosses a spine;
// plane and spine come from the EV, the downlink from the destination
// address (nic_prefix::row:downlink).
#ifndef MRC_NIC_ENCAP_P4
#define MRC_NIC_ENCAP_P4

control Encap(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    action set_row(bit<1> same_row, bit<11> row) {
        meta.send.same_row = same_row;
        meta.send.dst_row = row;
    }
    // One template per destination row: O(rows), never O(NICs).
    table dest_row {
        key = { hdr.inner.dst_lo[31:16] : exact @name("row"); }
        actions = { set_row; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.UNKNOWN_ROW);
        size = ROW_TABLE_SIZE;
    }

    bit<64> plane_src_hi = 0;
    bit<64> plane_src_lo = 0;
    action set_plane(port_t port, bit<64> src_hi, bit<64> src_lo, bit<48> src_mac, bit<48> dst_mac) {
        SEND_TO(port);
        plane_src_hi = src_hi;
        plane_src_lo = src_lo;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }
    table plane_port {
        key = { EV_PLANE(meta.ev) : exact @name("plane"); }
        actions = { set_plane; @defaultonly drop; }
        const default_action = drop(nic_drop_reason_t.NO_PLANE);
        size = NUM_PLANES;
    }

    apply {
        dest_row.apply();
        if (meta.drop == 0) {
            plane_port.apply();
        }
        if (meta.drop == 0) {
            bit<3> plane = EV_PLANE(meta.ev);
            bit<16> t0_src = 2w1 ++ plane ++ meta.cfg.my_row;
            bit<16> dl = 2w3 ++ plane ++ hdr.inner.dst_lo[10:0];
            bit<64> carrier_hi;
            bit<64> carrier_lo;
            if (meta.send.same_row == 1) {
                carrier_hi = meta.cfg.block ++ t0_src ++ dl;
                carrier_lo = 0;
            } else {
                bit<16> t1 = 2w2 ++ plane ++ 3w0 ++ EV_SPINE(meta.ev);
                bit<16> t0_dst = 2w1 ++ plane ++ meta.send.dst_row;
                carrier_hi = meta.cfg.block ++ t0_src ++ t1;
                carrier_lo = t0_dst ++ dl ++ 32w0;
            }
            hdr.outer.setValid();
            hdr.outer.version = 6;
            hdr.outer.flow_label = hdr.inner.flow_label;
            hdr.outer.payload_len = hdr.inner.payload_len + 40;
            hdr.outer.next_hdr = IPPROTO_IPV6;
            hdr.outer.hop_limit = 64;
            hdr.outer.src_hi = plane_src_hi;
            hdr.outer.src_lo = plane_src_lo;
            hdr.outer.dst_hi = carrier_hi;
            hdr.outer.dst_lo = carrier_lo;
        }
    }
}

#endif
