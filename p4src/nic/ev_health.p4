// Per-EV path health (docs/nic.md, "Path health in the pipeline"), stage
// for stage as nic_model/ev_health.py. Per QP, one bit per slot of its
// rotation (at most EV_HEALTH_SLOTS): skip once (set by a SACK's
// congestion mark or a TRIMMED NACK for the slot's EV, cleared when the
// rotation passes over it), assumed bad (the host's word), and the planes
// the peer's port status says are down; NIC-wide, this NIC's own ports
// down (the host's). Transmit picks the next usable slot from the QP's
// turn: the usable bits rotated to the turn, then a ternary first-one
// lookup (no loops). Skips are passed over only while min_active slots
// stay usable; with none usable the turn's slot is taken as configured.
// What a packet for our sender says of its paths is this stage's too
// (`Evidence`): a SACK's congestion mark or a TRIMMED NACK skips its EV
// once, the peer's port status (ERTH) says which of its planes are down;
// a plane it says is back restores that plane's slots assumed bad at once
// (evidence its paths work again: the host's word cleared for them, before
// the host writes it), on the plane-bit words of the QP's last pick.
// Every change this stage makes is an EV event to the control plane
// (meta.ev_event, sent as a digest by main.p4).
#ifndef MRC_NIC_EV_HEALTH_P4
#define MRC_NIC_EV_HEALTH_P4

control EvHealth(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    REGISTER(bit<16>, QP_TABLE_SIZE) qp_rotation;   // each QP's turn: its next slot
    REGISTER(bit<64>, QP_TABLE_SIZE) ev_skip;
    REGISTER(bit<64>, QP_TABLE_SIZE) ev_bad;        // the host's word; a plane back clears its slots
    REGISTER(bit<8>, QP_TABLE_SIZE) ev_peer_down;
    REGISTER(bit<8>, NIC_WIDE) port_down;          // written by the host only
    // The QP's plane-bit words as its last pick saw them (qp_ev's): which
    // slots a plane the peer's port status names holds, on receive.
    REGISTER(bit<64>, QP_TABLE_SIZE) ev_plane0;
    REGISTER(bit<64>, QP_TABLE_SIZE) ev_plane1;
    REGISTER(bit<64>, QP_TABLE_SIZE) ev_plane2;

    // The slots whose plane is in `planes`: bit k of slot s's plane is bit
    // s of plane word k; plane p's term is kept by a mask of all ones when
    // bit p of `planes` is set (0 - bit: no conditional in the action).
    bit<64> on = 0;
    action slots_on(bit<8> planes, bit<64> b0, bit<64> b1, bit<64> b2) {
        on = ((64w0 - (bit<64>)planes[0:0]) & ~b0 & ~b1 & ~b2)
           | ((64w0 - (bit<64>)planes[1:1]) & b0 & ~b1 & ~b2)
           | ((64w0 - (bit<64>)planes[2:2]) & ~b0 & b1 & ~b2)
           | ((64w0 - (bit<64>)planes[3:3]) & b0 & b1 & ~b2)
           | ((64w0 - (bit<64>)planes[4:4]) & ~b0 & ~b1 & b2)
           | ((64w0 - (bit<64>)planes[5:5]) & b0 & ~b1 & b2)
           | ((64w0 - (bit<64>)planes[6:6]) & ~b0 & b1 & b2)
           | ((64w0 - (bit<64>)planes[7:7]) & b0 & b1 & b2);
    }

    // The slots of a QP that hold an EV: kept by the control plane beside slot_ev.
    bit<64> ev_slot_bits = 0;
    action set_slots(bit<64> slots) { ev_slot_bits = slots; }
    action no_slots() { ev_slot_bits = 0; }
    table ev_slots {
        key = {
            meta.h.qp : exact @name("qp_index");
            meta.h.ev : exact @name("ev");
        }
        actions = { set_slots; @defaultonly no_slots; }
        const default_action = no_slots();
        size = EV_SLOTS_TABLE_SIZE;
    }

    // Trailing zeros of the rotated usable bits: trailing ones of their
    // complement; and as many bits from bit 0, the slots passed over (from
    // the table: p4c-dpdk 1.2.5.16 miswired the second use of a computed run).
    bit<64> y = 0;
    bit<7> k = 0;
    action ones(bit<7> t, bit<64> run) { k = t; meta.h.run = run; }
    table first_usable {
        key = { y : ternary @name("word"); }
        actions = { ones; }
        const entries = {
#define ONES(t) ones(t, (64w1 << t) - 1)
#include "trailing_ones.inc"
#undef ONES
        }
    }

    action report(bit<8> reason, bit<32> ev, bit<64> slots, bit<8> old_state, bit<8> new_state) {
        meta.ev_digest = 1;
        meta.ev_event.qp_index = meta.h.qp;
        meta.ev_event.reason = reason;
        meta.ev_event.ev = ev;
        meta.ev_event.slots = slots;
        meta.ev_event.old_state = old_state;
        meta.ev_event.new_state = new_state;
        meta.ev_event.planes_down = 0;
        meta.ev_event.planes_up = 0;
    }

    apply {
        bit<32> q = (bit<32>)meta.h.qp;
        if (meta.h.op == HEALTH_PICK) {
            REG_READ(qp_rotation, meta.h.turn, q);
            meta.h.turn8 = meta.h.turn[7:0];
        }
        if (meta.h.op == HEALTH_PICK && meta.h.health == 0) {
            meta.h.slot = meta.h.turn & meta.h.mask;   // the plain rotation
            REG_WRITE(qp_rotation, q, meta.h.turn + 1);
        } else if (meta.h.op == HEALTH_PICK) {
            // Shift amounts in 8 bits (p4c-dpdk's limit), sliced from the metadata.
            bit<8> m8 = meta.h.mask8;
            bit<8> n = m8 + 1;
            bit<64> valid = 64w0xFFFFFFFFFFFFFFFF >> (8w64 - n);
            bit<64> skip;
            REG_READ(ev_skip, skip, q);
            bit<64> hard;
            REG_READ(ev_bad, hard, q);
            bit<8> peer;
            REG_READ(ev_peer_down, peer, q);
            bit<8> mine;
            REG_READ(port_down, mine, 0);
            bit<8> down = peer | mine;
            REG_WRITE(ev_plane0, q, meta.h.plane0);
            REG_WRITE(ev_plane1, q, meta.h.plane1);
            REG_WRITE(ev_plane2, q, meta.h.plane2);
            if (down != 0) {
                slots_on(down, meta.h.plane0, meta.h.plane1, meta.h.plane2);
                hard = hard | on;
            }
            hard = hard & valid;
            bit<64> usable = ~(skip | hard) & valid;
            // The floor: count the usable slots (SWAR: constant shifts and masks).
            bit<64> c = usable - ((usable >> 1) & 0x5555555555555555);
            c = (c & 0x3333333333333333) + ((c >> 2) & 0x3333333333333333);
            c = (c + (c >> 4)) & 0x0F0F0F0F0F0F0F0F;
            c = c + (c >> 8);
            c = c + (c >> 16);
            c = c + (c >> 32);
            if (c[7:0] & 0x7F < meta.h.min_active) {
                usable = ~hard & valid;   // skips are not passed over below the floor
            }
            // The turn and the rest in metadata: p4c-dpdk 1.2.5.16 lowered
            // n - (turn8 & m8) as n - (n & n).
            meta.h.turn8 = meta.h.turn8 & m8;
            meta.h.rest8 = n - meta.h.turn8;
            bit<8> t = meta.h.turn8;
            bit<8> rest = meta.h.rest8;
            bit<64> x = ((usable >> t) | (usable << rest)) & valid;
            k = 0;
            meta.h.run = 0;
            if (x != 0) {
                y = ~x;
                first_usable.apply();
            }
            // The slots passed over: turn .. turn + k - 1, wrapping at n.
            bit<64> passed = ((meta.h.run << t) | (meta.h.run >> rest)) & valid;
            bit<64> consumed = skip & passed;
            if (consumed != 0) {
                REG_WRITE(ev_skip, q, skip & ~consumed);
                report(EVR_ROTATION, 0, consumed, EVS_SKIP, EVS_GOOD);
            }
            bit<8> k8 = 1w0 ++ k;
            bit<8> pick = t + k8;
            meta.h.slot = 8w0 ++ (pick & m8);
            REG_WRITE(qp_rotation, q, meta.h.turn + (8w0 ++ k8) + 1);
        } else if (meta.h.op == HEALTH_SKIP) {
            ev_slots.apply();
            bit<64> skip;
            REG_READ(ev_skip, skip, q);
            bit<64> fresh = ev_slot_bits & ~skip;
            if (fresh != 0) {
                REG_WRITE(ev_skip, q, skip | fresh);
                report(meta.h.reason, meta.h.ev, fresh, EVS_GOOD, EVS_SKIP);
            }
        } else if (meta.h.op == HEALTH_PORTS) {
            bit<8> old;
            REG_READ(ev_peer_down, old, q);
            if (old != meta.h.down) {
                REG_WRITE(ev_peer_down, q, meta.h.down);
                bit<8> up = old & ~meta.h.down;
                if (up != 0) {
                    bit<64> b0;
                    bit<64> b1;
                    bit<64> b2;
                    REG_READ(ev_plane0, b0, q);
                    REG_READ(ev_plane1, b1, q);
                    REG_READ(ev_plane2, b2, q);
                    slots_on(up, b0, b1, b2);
                    bit<64> bad;
                    REG_READ(ev_bad, bad, q);
                    REG_WRITE(ev_bad, q, bad & ~on);
                }
                report(EVR_PORT_STATUS, 0, 0, 0, 0);
                meta.ev_event.planes_down = meta.h.down & ~old;
                meta.ev_event.planes_up = up;
            }
        }
    }
}

// What a packet for one of our QPs with health says of its sender's paths:
// the operation EvHealth carries out on the QP's registers.
control Evidence(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    apply {
        meta.h.qp = meta.rx.index;
        if (meta.rx.peer_hit == 0 || meta.rx.health == 0) {
            // no health kept for the QP
        } else if (hdr.seth.isValid()) {
            if (meta.rx.skip_on_mark == 1 && hdr.seth.pr == 0 && hdr.seth.m == SETH_M_SKIP_ONCE) {
                meta.h.op = HEALTH_SKIP;
                meta.h.ev = hdr.seth.entropy;
                meta.h.reason = EVR_CONGESTION;
            }
        } else if (hdr.neth.isValid()) {
            if (hdr.neth.nack_reason == NACK_TRIMMED) {
                meta.h.op = HEALTH_SKIP;
                meta.h.ev = hdr.neth.entropy;
                meta.h.reason = EVR_TRIMMED;
            }
        } else if (hdr.erth.isValid()) {
            if (hdr.erth.op == EP_PORT_STATUS) {
                meta.h.op = HEALTH_PORTS;
                meta.h.down = hdr.erth.port_status_mask[7:0];
            }
        }
    }
}

#endif
