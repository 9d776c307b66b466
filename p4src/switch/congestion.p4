// Stage 5: ECN marking and trimming against run-time thresholds.
// BMv2 shows queue depth only in egress, so egress records each port's
// data-queue depth in port_qdepth and ingress decides on that value; this
// lets a trimmed stub be put in the high-priority queue, as an MMU would.
control Congestion(inout headers_t hdr, inout metadata_t meta,
                   inout STD_META_T STD_META) {
    counter(2, CounterType.packets) congestion_events;

    action set_congestion(qdepth_t ecn_threshold, qdepth_t trim_threshold,
                          bit<32> trim_bytes, bit<6> dscp_trimmed,
                          bit<6> dscp_trimmed_lasthop) {
        meta.ecn_threshold = ecn_threshold;
        meta.trim_threshold = trim_threshold;
        meta.trim_bytes = trim_bytes;
        meta.dscp_trimmed = dscp_trimmed;
        meta.dscp_trimmed_lasthop = dscp_trimmed_lasthop;
    }

    // Keyless: the control plane modifies the default action.
    table congestion_config {
        actions = { set_congestion; }
        default_action = set_congestion(64, 128, 256, 16, 18);
        size = 1;
    }

    action set_class(bit<2> cls) { meta.cls = cls; }

    table dscp_class {
        key = { hdr.ipv6.dscp : exact @name("dscp"); }
        actions = { set_class; @defaultonly NoAction; }
        default_action = NoAction;   // unknown DSCP: CLASS_NORMAL
        size = 64;
    }

    apply {
        congestion_config.apply();
        dscp_class.apply();
        port_qdepth.read(meta.qdepth, (bit<32>)OUT_PORT);

        if (hdr.ipv6.ecn != ECN_NOT_ECT && meta.host_facing == 0 &&
                meta.qdepth >= meta.ecn_threshold) {
            hdr.ipv6.ecn = ECN_CE;
            congestion_events.count(EVENT_ECN_MARKED);
        }

        if (meta.cls == CLASS_PRIORITY) {
            SET_PRIORITY(PRIO_HIGH);
        } else if (meta.qdepth >= meta.trim_threshold) {
            if (meta.cls == CLASS_TRIMMABLE) {
                if (meta.host_facing == 1) {
                    hdr.ipv6.dscp = meta.dscp_trimmed_lasthop;
                } else {
                    hdr.ipv6.dscp = meta.dscp_trimmed;
                }
                if (PKT_LEN > meta.trim_bytes) {
                    TRUNCATE(meta.trim_bytes);
                    hdr.ipv6.payload_len =
                        (bit<16>)(meta.trim_bytes - ETH_IPV6_BYTES);
                }
                SET_PRIORITY(PRIO_HIGH);
                meta.cls = CLASS_PRIORITY;
                congestion_events.count(EVENT_TRIMMED);
            } else {
                meta.drop = 1;
                meta.drop_reason = DROP_CONGESTION;
            }
        } else {
            SET_PRIORITY(PRIO_DATA);
        }
    }
}
