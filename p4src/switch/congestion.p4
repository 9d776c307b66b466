// Stage 5 of DESIGN.md section 4: ECN marking and the trim decision
// against run-time thresholds, on meta.qdepth, the data-queue depth of the
// egress port. ECN marks by the packet's class's profile (ecn_profile): a
// step, or a WRED ramp (0 up to kmin, rising linearly to pmax at kmax, 1
// above), as switch queues are configured per class; a class without an
// entry is marked from congestion_config's threshold. Where that depth comes from, and how a trimmed packet is
// cut and queued, is the top file's business (docs/switch.md): BMv2 decides
// in ingress on the depth its egress recorded; Tofino decides in egress on
// the real enqueue depth.
#ifndef MRC_SWITCH_CONGESTION_P4
#define MRC_SWITCH_CONGESTION_P4

control Congestion(inout headers_t hdr, inout metadata_t meta) {
    // Per egress port, one counter per event: Tofino lets a packet touch a
    // counter once, and a packet can be both marked and trimmed.
    COUNTER_PACKETS(NUM_PORTS) ecn_marked;
    COUNTER_PACKETS(NUM_PORTS) trimmed;
    ECN_RAMP_EXTERN

    // The comparisons are made here, as differences one bit wider than
    // their operands: a Tofino gateway compares a field with a constant,
    // never two fields, and an action's ALU computes parameter - field
    // (not field - parameter). "Room" <= 0 (sign bit set, or zero) means
    // the depth has reached the threshold.
    action set_congestion(threshold_t ecn_threshold, threshold_t trim_threshold,
                          bit<32> trim_bytes, bit<6> dscp_trimmed,
                          bit<6> dscp_trimmed_lasthop) {
        meta.ecn_room = ecn_threshold - (threshold_t)meta.qdepth;
        meta.trim_room = trim_threshold - (threshold_t)meta.qdepth;
        meta.len_room = trim_bytes[16:0] - (bit<17>)meta.pkt_len;
        meta.trim_bytes = (bit<16>)trim_bytes;
        meta.dscp_trimmed = dscp_trimmed;
        meta.dscp_trimmed_lasthop = dscp_trimmed_lasthop;
    }

    // Keyless: the control plane modifies the default action.
    table congestion_config {
        actions = { set_congestion; }
        default_action = set_congestion(DEFAULT_ECN_THRESHOLD, DEFAULT_TRIM_THRESHOLD, DEFAULT_TRIM_BYTES,
                                        DEFAULT_DSCP_TRIMMED, DEFAULT_DSCP_TRIMMED_LASTHOP);
        size = 1;
    }

    // A class's own step (the room as set_congestion's).
    action ecn_step(threshold_t threshold) {
        meta.ecn_room = threshold - (threshold_t)meta.qdepth;
    }
    // A class's WRED ramp: always marked past kmax (the room to kmax below
    // 0; at kmax itself the ramp decides), in the ramp past kmin
    // (ramp_room's sign bit). One operation per field, each on at most one
    // action parameter: a Tofino action runs in one stage (bf-p4c refused
    // kmax + 1 - qdepth and kmax - kmin). The span kmax - kmin is the
    // difference of the two rooms, taken where the ramp needs it.
    action ecn_ramp(threshold_t kmin, threshold_t kmax, bit<32> pmax) {
        meta.ecn_room = kmax - (threshold_t)meta.qdepth;
        meta.ramp_room = kmin - (threshold_t)meta.qdepth;
        meta.ramp_pmax = pmax;
        meta.ecn_ramp = 1;
    }

    table ecn_profile {
        key = { meta.cls : exact @name("cls"); }
        actions = { ecn_step; ecn_ramp; @defaultonly NoAction; }
        default_action = NoAction;   // congestion_config's threshold
        size = ECN_PROFILE_TABLE_SIZE;
    }

    apply {
        congestion_config.apply();
        ecn_profile.apply();

        if (hdr.ipv6.ecn != ECN_NOT_ECT && meta.host_facing == 0) {
            bit<1> mark = 0;
            if (meta.ecn_room[19:19] == 1 || (meta.ecn_room == 0 && meta.ecn_ramp == 0)) {
                mark = 1;
            } else if (meta.ecn_ramp == 1 && meta.ramp_room[19:19] == 1) {
                ECN_RAMP_MARK(mark, meta.qdepth, meta.cls, (bit<32>)(20w0 - meta.ramp_room),
                              (bit<32>)(meta.ecn_room - meta.ramp_room), meta.ramp_pmax)
            }
            if (mark == 1) {
                hdr.ipv6.ecn = ECN_CE;
                ecn_marked.count((bit<32>)meta.out_port);
            }
        }

        if (meta.cls != CLASS_PRIORITY &&
                (meta.trim_room[19:19] == 1 || meta.trim_room == 0)) {
            if (meta.cls == CLASS_TRIMMABLE) {
                if (meta.host_facing == 1) {
                    hdr.ipv6.dscp = meta.dscp_trimmed_lasthop;
                } else {
                    hdr.ipv6.dscp = meta.dscp_trimmed;
                }
                if (meta.len_room[16:16] == 1) {   // longer than trim_bytes
                    meta.trim = 1;
                    hdr.ipv6.payload_len =
                        meta.trim_bytes - (bit<16>)ETH_IPV6_BYTES;
                }
                meta.cls = CLASS_PRIORITY;
                trimmed.count((bit<32>)meta.out_port);
            } else {
                meta.drop = 1;
                meta.drop_reason = drop_reason_t.CONGESTION;
            }
        }
    }
}

#endif
