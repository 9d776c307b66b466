// The NIC's main control, shared by every target's top file, stage for
// stage as nic_model/nic_pipeline.py: transmit (tx.p4) or receive
// (decap.p4, the receiver rx_track.p4, path health's evidence, trim_nack.p4,
// the receiver's answers), the rotation and path health (ev_health.p4),
// spray, encapsulation (encap.p4); then what leaves: a packet the NIC made
// counted by kind, the host's counted per EV and plane (transmit step 5
// of DESIGN.md section 5) with its transmit completion cloned to the host.
// `HostCopy` makes what the host gets beside what the NIC sends (each top
// its own way: v1model in egress from an ingress clone, PNA in a second pass).
#ifndef MRC_NIC_MAIN_P4
#define MRC_NIC_MAIN_P4

// A top's hook: what it keeps of a packet from the fabric before the NIC's
// reply (trim_nack.p4, rx_track.p4's RxAnswer) rewrites it (nic_pna.p4: the
// data packet's headers, for its second pass).
#ifndef NIC_BEFORE_REPLY
#define NIC_BEFORE_REPLY
#endif

control NicIngress(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    COUNTER_PACKETS(NUM_NIC_DROP_REASONS) nic_drops;
    COUNTER_PACKETS(NUM_NIC_EVENTS) nic_events;

    action set_nic(bit<32> block, bit<11> my_row, bit<64> my_addr_hi, bit<64> my_addr_lo, bit<6> dscp_control,
                   bit<6> dscp_trimmed, bit<6> dscp_trimmed_lasthop) {
        meta.cfg.block = block;
        meta.cfg.my_row = my_row;
        meta.cfg.my_addr_hi = my_addr_hi;
        meta.cfg.my_addr_lo = my_addr_lo;
        meta.cfg.dscp_control = dscp_control;
        meta.cfg.dscp_trimmed = dscp_trimmed;
        meta.cfg.dscp_trimmed_lasthop = dscp_trimmed_lasthop;
    }
    // Keyless: the control plane sets the NIC's identity as the default.
    table nic_config {
        actions = { set_nic; }
        default_action = set_nic(0, 0, 0, 0, DEFAULT_DSCP_CONTROL, DEFAULT_DSCP_TRIMMED,
                                 DEFAULT_DSCP_TRIMMED_LASTHOP);
        size = 1;
    }

    COUNTER_PACKETS_BYTES(NUM_PLANES) plane_tx;
    COUNTER_PACKETS(NUM_NACK_REASONS) nack_reasons;
    COUNTER_PACKETS(NUM_EV_EVENT_REASONS) ev_event_reasons;   // EV events by reason (EVR_*)
    DIRECT_COUNTER_PACKETS_BYTES ev_tx;

    action count_ev() { COUNT_FRAME_DIRECT(ev_tx); }
    table ev_stats {
        key = { meta.ev : exact @name("ev"); }
        actions = { count_ev; @defaultonly NoAction; }
        default_action = NoAction;
        DIRECT_COUNTERS = ev_tx;
        size = EV_STATS_TABLE_SIZE;
    }

    Transmit() tx;
    EvHealth() health;
    Spray() spray;
    Decap() decap;
    RxTrack() track;
    Evidence() evidence;
    TrimNack() trim_nack;
    RxAnswer() answer;
    ToHost() to_host;
    Encap() encap;

    action malformed() {
        meta.drop = 1;
        meta.drop_reason = nic_drop_reason_t.MALFORMED;
    }

    apply {
        nic_config.apply();
        if (PARSER_ERR != error.NoError) {
            malformed();
        } else if (meta.bad_version == 1) {
            malformed();
        } else if (IN_PORT == HOST_PORT) {
            tx.apply(hdr, meta, STD_META);
        } else {
            decap.apply(hdr, meta, STD_META);
            if (meta.drop == 0) {
                if (meta.rx.op != RX_OP_NONE) {
                    track.apply(hdr, meta, STD_META);
                }
                evidence.apply(hdr, meta, STD_META);
                NIC_BEFORE_REPLY
                trim_nack.apply(hdr, meta, STD_META);
                answer.apply(hdr, meta, STD_META);
                if (meta.send.encap == 0) {
                    to_host.apply(hdr, meta, STD_META);
                }
            }
        }
        if (meta.h.op != HEALTH_NONE) {
            health.apply(hdr, meta, STD_META);   // the rotation's pick, or a packet's evidence
        }
        if (meta.drop == 0 && IN_PORT == HOST_PORT) {
            spray.apply(hdr, meta, STD_META);
        }
        if (meta.drop == 0 && meta.send.encap == 1) {
            encap.apply(hdr, meta, STD_META);
        }
        if (meta.drop == 0 && meta.send.encap == 1) {
            hdr.outer.dscp = meta.send.dscp;
            hdr.outer.ecn = meta.send.ecn;
            if (meta.send.gen == 1) {
                // A packet this NIC made (NACK, SACK, probe answer): cut to
                // its headers, counted by kind, not as the host's traffic.
                TRUNCATE(meta.send.trunc);
                if (meta.send.is_nack == 1) {
                    nack_reasons.count((bit<32>)hdr.neth.nack_reason);
                    COUNT_AT(nic_events, NEV_NACK);
                } else if (hdr.seth.pr == 1) {
                    COUNT_AT(nic_events, NEV_PROBE_ANSWER);
                } else {
                    COUNT_AT(nic_events, NEV_SACK);
                }
                if (meta.send.notice == 1) {
                    MIRROR_TO(NOTICE_SESSION);   // a trimmed packet's notice to the host
                }
                if (meta.host_copy == 1) {
                    MIRROR_KEEP(NOTICE_SESSION);   // the new data, to the host (decapsulated in egress)
                    COUNT_AT(nic_events, NEV_HOST_COPY);
                }
            } else {
                ev_stats.apply();
                COUNT_FRAME(plane_tx, (bit<32>)EV_PLANE(meta.ev));
                COUNT_AT(nic_events, NEV_TX);
                if (hdr.meth.isValid()) {
                    meta.tx_done = 1;   // the transmit completion: the EV this data took, to the host
                    MIRROR_KEEP(NOTICE_SESSION);
                    COUNT_AT(nic_events, NEV_TX_DONE);
                }
            }
        } else if (meta.drop == 0) {
            COUNT_AT(nic_events, NEV_RX);
        }
        if (meta.rx.kind == RX_DUPLICATE) {
            COUNT_AT(nic_events, NEV_DUPLICATE);
        } else if (meta.rx.kind == RX_BEYOND) {
            COUNT_AT(nic_events, NEV_BEYOND_WINDOW);
        }
        if (meta.ev_digest == 1) {
            SEND_DIGEST(ev_event_t, meta.ev_event);   // an EV event, to the control plane
            ev_event_reasons.count((bit<32>)meta.ev_event.reason);
        }
        if (meta.drop == 1) {
            nic_drops.count((bit<32>)(bit<8>)meta.drop_reason);
            DROP();
        }
    }
}

// What the host gets beside what the NIC sends, decapsulated: the transmit
// completion (the host's data packet, the EV the data plane picked written
// in; the top cuts it to TX_DONE_BYTES), the copy of new data whose
// original became a SACK (RFC 6040: outer CE to an ECT inner header), or a
// trimmed packet's notice (its trimmed DSCP on the inner header).
control HostCopy(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    apply {
        if (meta.tx_done == 1) {
            hdr.udp.src_port = meta.ev[31:16];
            hdr.inner.flow_label = hdr.inner.flow_label[19:16] ++ meta.ev[15:0];
            hdr.udp.checksum = 0;
        } else if (meta.host_copy == 1) {
            if (hdr.outer.ecn == ECN_CE && hdr.inner.ecn != ECN_NOT_ECT) {
                hdr.inner.ecn = ECN_CE;
            }
        } else {
            hdr.inner.dscp = hdr.outer.dscp;
        }
        hdr.outer.setInvalid();
    }
}

#endif
