// Receive (fabric to host), steps 1 to 3 of DESIGN.md section 5:
// decapsulate what is for this NIC, copy CE to the inner header, turn
// trimmed data into a NACK to the sender over the reverse of the same path
// (same plane and spine), with a notice to the host (an ingress clone,
// decapsulated in egress); and, for a QP whose receiver the NIC runs
// (qp_peer's `offload`), the receiver (rx_track.p4): a data packet becomes
// the SACK when one is due (a copy of a new packet goes to the host), a
// duplicate is answered and dropped, a packet beyond the window becomes a
// NACK (PSN_OOR_WINDOW), a probe becomes its answer (a SACK with pr set),
// and a SACK for our data moves the reverse EV of its plane.
#ifndef MRC_NIC_RX_P4
#define MRC_NIC_RX_P4

control Receive(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    RxTrack() track;

    action drop(nic_drop_reason_t reason) {
        meta.drop = 1;
        meta.drop_reason = reason;
    }

    bit<24> peer_qpn = 0;
    bit<1> peer_hit = 0;
    action set_peer(bit<24> qpn, bit<16> qp_index, bit<1> offload, bit<1> follow, bit<32> ack_bytes,
                    bit<1> health, bit<1> skip_on_mark) {
        meta.rx_health = health;
        meta.rx_skip_on_mark = skip_on_mark;
        peer_qpn = qpn;
        peer_hit = 1;
        meta.rx_index = qp_index;
        meta.rx_offload = offload;
        meta.rx_follow = follow;
        meta.ack_bytes = ack_bytes;
    }
    action no_peer() { peer_hit = 0; }
    table qp_peer {
        key = { hdr.bth.dqp : exact @name("qpn"); }
        actions = { set_peer; @defaultonly no_peer; }
        const default_action = no_peer();
        size = QP_TABLE_SIZE;
    }

    // Back to the sender: addresses swapped, the control class, a fresh
    // hop limit, the UDP and IPv6 lengths of `bytes` after the IPv6 header.
    action to_sender(bit<16> bytes) {
        bit<64> sender_hi = hdr.inner.src_hi;
        bit<64> sender_lo = hdr.inner.src_lo;
        hdr.inner.src_hi = hdr.inner.dst_hi;
        hdr.inner.src_lo = hdr.inner.dst_lo;
        hdr.inner.dst_hi = sender_hi;
        hdr.inner.dst_lo = sender_lo;
        hdr.inner.dscp = meta.dscp_control;
        hdr.inner.ecn = 0;
        hdr.inner.payload_len = bytes;
        hdr.inner.hop_limit = 64;
        hdr.udp.length = bytes;
        hdr.udp.checksum = 0;
        meta.encap = 1;
        meta.gen = 1;
        meta.outer_dscp = meta.dscp_control;
        meta.outer_ecn = 0;
    }

    // The NETH of a data packet (every field set: setValid leaves them
    // undefined), echoing its EV and PSN; the data headers go, the ICRC
    // (zero) comes. The BTH keeps the data's but for opcode, QP and flags.
    action build_neth(bit<8> reason, bit<24> peer) {
        hdr.neth.setValid();
        hdr.neth.htype = 0;
        hdr.neth.nxt = 0;
        hdr.neth.reserved = 0;
        hdr.neth.nack_reason = reason;
        hdr.neth.vendor_info = 0;
        hdr.neth.entropy = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        hdr.neth.spdcid = hdr.bth.dqp[15:0];
        hdr.neth.dpdcid = peer[15:0];
        hdr.neth.reserved2 = 0;
        hdr.neth.nack_psn = hdr.bth.psn;
        hdr.neth.cc_type = NETH_CC_TYPE;
        hdr.neth.cc_fl = 0;
        hdr.neth.reserved3 = 0;
        hdr.neth.tx_timestamp = 0;
        hdr.icrc.setValid();
        hdr.icrc.icrc = 0;
        hdr.meth.setInvalid();
        hdr.reth.setInvalid();
        hdr.immdt.setInvalid();
        hdr.bth.opcode = OP_NACK;
        hdr.bth.dqp = peer;
        hdr.bth.a = 0;      // byte 8: no flag of the data packet's
        hdr.bth.reserved2 = 0;
        hdr.bth.rtx = 0;
        hdr.bth.ts = 0;
        hdr.bth.reserved3 = 0;
        meta.is_nack = 1;
        meta.trunc = NACK_BYTES;
        to_sender(UDP_BYTES + BTH_BYTES + NETH_BYTES + ICRC_BYTES);
    }

    // The SACK the receiver sends (a data packet's, or a probe's answer
    // with pr set): SETH and CC_STATE from the QP's registers (rx_track.p4),
    // a fresh BTH, on the reverse EV of the plane the packet came on.
    action build_sack(bit<2> mark, bit<1> pr, bit<16> ack_psn_offset, bit<32> entropy, bit<16> ts) {
        hdr.seth.setValid();
        hdr.seth.htype = 0;
        hdr.seth.nxt = 0;
        hdr.seth.m = mark;
        hdr.seth.reserved = 0;
        hdr.seth.pr = pr;
        hdr.seth.reserved2 = 0;
        hdr.seth.ack_psn_offset = ack_psn_offset;
        hdr.seth.entropy = entropy;
        hdr.seth.spdcid = hdr.bth.dqp[15:0];
        hdr.seth.dpdcid = peer_qpn[15:0];
        hdr.seth.reserved3 = 0;
        hdr.seth.cack_psn = meta.rx_cum - 1;
        hdr.seth.cc_type = 0;
        hdr.seth.cc_fl = 0;
        hdr.seth.mpr = SETH_MPR;
        hdr.seth.sack_offset = SACK_OFFSET;
        hdr.seth.sack_bitmap = meta.rx_bitmap;
        hdr.cc_state.setValid();
        hdr.cc_state.tx_timestamp = ts;
        hdr.cc_state.reserved = 0;
        hdr.cc_state.ooo_count = meta.rx_ooo[14:0];
        hdr.cc_state.r_c = 0;
        hdr.cc_state.rcv_cwnd_pen = 0;
        hdr.cc_state.rcvd_bytes = meta.rx_rcvd[31:8];
        hdr.icrc.setValid();
        hdr.icrc.icrc = 0;
        hdr.meth.setInvalid();
        hdr.tseth.setInvalid();
        hdr.reth.setInvalid();
        hdr.immdt.setInvalid();
        hdr.peth.setInvalid();
        hdr.bth.opcode = OP_SACK;
        hdr.bth.se = 0;
        hdr.bth.m = 0;
        hdr.bth.padcnt = 0;
        hdr.bth.tver = 0;
        hdr.bth.pkey = 0xFFFF;
        hdr.bth.fecn = 0;
        hdr.bth.becn = 0;
        hdr.bth.reserved = 0;
        hdr.bth.dqp = peer_qpn;
        hdr.bth.a = 0;
        hdr.bth.reserved2 = 0;
        hdr.bth.rtx = 0;
        hdr.bth.ts = 0;
        hdr.bth.reserved3 = 0;
        hdr.bth.psn = meta.rx_cum - 1;
        meta.trunc = SACK_BYTES;
        to_sender(UDP_BYTES + BTH_BYTES + SETH_BYTES + CC_STATE_BYTES + ICRC_BYTES);
    }

    // The EV a packet the NIC made travels on (inner UDP source port and
    // flow label), and Encap's path.
    action on_ev(bit<32> ev) {
        meta.ev = ev;
        hdr.udp.src_port = ev[31:16];
        hdr.inner.flow_label = 4w0 ++ ev[15:0];
    }

    apply {
        // One validity test per branch: p4c-dpdk cannot unroll `!a || !b`.
        if (!hdr.outer.isValid()) {
            drop(nic_drop_reason_t.NOT_ENCAP);
        } else if (!hdr.inner.isValid()) {
            drop(nic_drop_reason_t.NOT_ENCAP);
        } else if (!hdr.udp.isValid()) {
            drop(nic_drop_reason_t.BAD_INNER);
        } else if (!hdr.bth.isValid()) {
            drop(nic_drop_reason_t.BAD_INNER);
        } else if (hdr.inner.dst_hi != meta.my_addr_hi || hdr.inner.dst_lo != meta.my_addr_lo) {
            drop(nic_drop_reason_t.NOT_FOR_ME);
        }
        if (meta.drop == 0 && meta.is_control == 0) {
            if (!hdr.meth.isValid()) {
                drop(nic_drop_reason_t.BAD_INNER);   // an opcode MRC does not define
            }
        }
        if (meta.drop == 0) {
            qp_peer.apply();
            meta.ev = hdr.udp.src_port ++ hdr.inner.flow_label[15:0];
        }
        if (meta.drop == 1) {
            // counted by the caller
        } else if (hdr.meth.isValid() && (hdr.outer.dscp == meta.dscp_trimmed ||
                                          hdr.outer.dscp == meta.dscp_trimmed_lasthop)) {
            if (peer_hit == 0) {
                drop(nic_drop_reason_t.UNKNOWN_QP);
            } else {
                bit<8> reason = NACK_TRIMMED_LASTHOP;
                if (hdr.outer.dscp == meta.dscp_trimmed) {
                    reason = NACK_TRIMMED;
                }
                bit<16> ts = 0;
                if (hdr.tseth.isValid()) {
                    ts = hdr.tseth.tx_timestamp;
                }
                build_neth(reason, peer_qpn);   // over the reverse of the same path
                hdr.neth.tx_timestamp = ts;
                hdr.tseth.setInvalid();
                meta.notice = 1;
            }
        } else {
            // RFC 6040: CE on the outer header reaches an ECT inner one.
            if (hdr.outer.ecn == ECN_CE && hdr.inner.ecn != ECN_NOT_ECT) {
                hdr.inner.ecn = ECN_CE;
            }
            if (peer_hit == 1 && meta.rx_offload == 1) {
                if (hdr.meth.isValid()) {
                    meta.rx_op = RX_OP_DATA;
                } else if (hdr.peth.isValid()) {
                    meta.rx_op = RX_OP_PROBE;
                } else if (hdr.seth.isValid() && meta.rx_follow == 1 && hdr.seth.pr == 0) {
                    meta.rx_op = RX_OP_SACK_SEEN;
                    meta.ev = hdr.seth.entropy;
                }
            }
            if (meta.rx_op == RX_OP_DATA) {
                // Payload bytes: the frame less its headers (Ethernet, both IPv6,
                // UDP, BTH, METH, RETH, ICRC; TSETH and ImmDt when there), 0 if shorter.
                bit<32> headers = 14 + 40 + 40 + 8 + 12 + 4 + 16 + 4;
                if (hdr.tseth.isValid()) {
                    headers = headers + 4;
                }
                if (hdr.immdt.isValid()) {
                    headers = headers + 4;
                }
                if (FRAME_BYTES > headers) {
                    meta.rx_length = FRAME_BYTES - headers;
                }
            }
            if (meta.rx_op != RX_OP_NONE) {
                track.apply(hdr, meta, STD_META);
            }
            // Path health (ev_health.p4, applied by main.p4): what this
            // packet says of our sender's paths.
            meta.h_qp = meta.rx_index;
            if (peer_hit == 0 || meta.rx_health == 0) {
                // no health kept for the QP
            } else if (hdr.seth.isValid()) {
                if (meta.rx_skip_on_mark == 1 && hdr.seth.pr == 0 && hdr.seth.m == SETH_M_SKIP_ONCE) {
                    meta.h_op = HEALTH_SKIP;
                    meta.h_ev = hdr.seth.entropy;
                    meta.h_reason = EVR_CONGESTION;
                }
            } else if (hdr.neth.isValid()) {
                if (hdr.neth.nack_reason == NACK_TRIMMED) {
                    meta.h_op = HEALTH_SKIP;
                    meta.h_ev = hdr.neth.entropy;
                    meta.h_reason = EVR_TRIMMED;
                }
            } else if (hdr.erth.isValid()) {
                if (hdr.erth.op == EP_PORT_STATUS) {
                    meta.h_op = HEALTH_PORTS;
                    meta.h_down = hdr.erth.port_status_mask[7:0];
                }
            }
            bit<16> ts = 0;
            if (hdr.tseth.isValid()) {
                ts = hdr.tseth.tx_timestamp;
            }
            bit<32> arrival = meta.ev;
            if (meta.rx_op == RX_OP_DATA && meta.rx_kind == RX_BEYOND) {
                build_neth(NACK_PSN_OOR_WINDOW, peer_qpn);
                hdr.neth.tx_timestamp = ts;
                hdr.tseth.setInvalid();
                on_ev(meta.rx_reverse_ev);
            } else if (meta.rx_op == RX_OP_DATA && meta.rx_sack == 1) {
                // ack_psn_offset: the arrival's PSN less cack_psn, clamped to 16 bits.
                bit<24> off = hdr.bth.psn - (meta.rx_cum - 1);
                bit<16> off16 = off[15:0];
                if (off[23:23] == 0 && off > 0x7FFF) {
                    off16 = 0x7FFF;
                } else if (off[23:23] == 1 && off < 0xFF8000) {
                    off16 = 0x8000;
                }
                bit<2> mark = SETH_M_NONE;
                if (hdr.inner.ecn == ECN_CE) {
                    mark = SETH_M_SKIP_ONCE;
                }
                if (meta.rx_kind == RX_NEW) {
                    meta.host_copy = 1;   // the original becomes the SACK; a copy goes to the host
                }
                build_sack(mark, 0, off16, arrival, ts);
                on_ev(meta.rx_reverse_ev);
            } else if (meta.rx_op == RX_OP_PROBE) {
                build_sack(SETH_M_NONE, 1, hdr.peth.probe_id, arrival, 0);
                on_ev(meta.rx_reverse_ev);
            } else {
                hdr.outer.setInvalid();
                SEND_TO(HOST_PORT);
            }
        }
    }
}

#endif
