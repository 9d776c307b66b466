// Stage 5 of DESIGN.md section 4: ECN marking and the trim decision
// against run-time thresholds, on meta.qdepth, the data-queue depth of the
// egress port. Where that depth comes from, and how a trimmed packet is
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

    apply {
        congestion_config.apply();

        if (hdr.ipv6.ecn != ECN_NOT_ECT && meta.host_facing == 0 &&
                (meta.ecn_room[19:19] == 1 || meta.ecn_room == 0)) {
            hdr.ipv6.ecn = ECN_CE;
            ecn_marked.count((bit<32>)meta.out_port);
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
