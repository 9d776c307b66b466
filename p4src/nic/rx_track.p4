// The MRC receiver (receive step 3 of DESIGN.md section 5), stage for
// stage as nic_model/rx_track.py: per QP, in registers, the cumulative PSN
// (the first not received), a circular bitmap of RX_WORDS 64-bit words
// (PSN p is bit p % 64 of word (p / 64) % RX_WORDS; every bit below the
// cumulative PSN is 0, so the ring is reused as it moves), payload bytes
// since the last SACK and in all, the PSNs held out of order, and each
// plane's reverse EV. A data packet is new, a duplicate or beyond the
// window; the cumulative PSN then moves over the received PSNs, one word
// per step, RX_ADVANCE_STEPS steps (no loops: each step one access to the
// bitmap and one lookup of a trailing-ones table). `RxAnswer` then turns
// the packet into its SACK (or a probe into its answer) on the QP's
// reverse EV of its plane; trim_nack.p4 a packet beyond the window into
// its NACK.
#ifndef MRC_NIC_RX_TRACK_P4
#define MRC_NIC_RX_TRACK_P4

control RxTrack(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
    REGISTER(bit<24>, QP_TABLE_SIZE) rx_cum;
    REGISTER(bit<64>, RX_WORD_REGISTER_SIZE) rx_word;
    REGISTER(bit<32>, QP_TABLE_SIZE) rx_unacked;
    REGISTER(bit<32>, QP_TABLE_SIZE) rx_rcvd;
    REGISTER(bit<16>, QP_TABLE_SIZE) rx_ooo;
    REGISTER(bit<32>, RX_REVERSE_REGISTER_SIZE) rx_reverse;
    // New arrivals by how far past the cumulative PSN: index the bit length
    // of the distance (0: in order), as the model's histogram, for any window.
    // Counted in the table's action: p4c-dpdk 1.2.5.16 folded a variable the
    // action set into the value it had before the table (always bucket 0).
    COUNTER_PACKETS(RX_REORDER_BUCKETS) rx_reorder;
    bit<24> distance = 0;
    action bucket(bit<32> b) { rx_reorder.count(b); }
    table reorder_bucket {
        key = { distance : ternary @name("distance"); }
        actions = { bucket; }
        const entries = {
#define BUCKET(b) bucket(b)
#include "reorder_buckets.inc"
#undef BUCKET
        }
    }

    // Trailing ones of a word shifted to the cumulative PSN: one table per
    // advance step (a table is applied once per packet).
    bit<64> x0 = 0;
    bit<64> x1 = 0;
    bit<7> t0 = 0;
    bit<7> t1 = 0;
    action ones0(bit<7> t) { t0 = t; }
    action ones1(bit<7> t) { t1 = t; }
    table trailing_ones0 {
        key = { x0 : ternary @name("word"); }
        actions = { ones0; }
        const entries = {
#define ONES(t) ones0(t)
#include "trailing_ones.inc"
#undef ONES
        }
    }
    table trailing_ones1 {
        key = { x1 : ternary @name("word"); }
        actions = { ones1; }
        const entries = {
#define ONES(t) ones1(t)
#include "trailing_ones.inc"
#undef ONES
        }
    }

    apply {
        bit<32> base = (bit<32>)meta.rx.index * RX_WORDS;
        bit<32> ri = REVERSE_AT(meta.rx.index, EV_PLANE(meta.ev));
        if (meta.rx.op == RX_OP_SACK_SEEN) {
            // A SACK for our data came back on meta.ev: the reverse EV of its plane.
            REG_WRITE(rx_reverse, ri, meta.ev);
        } else {
            bit<24> cum;
            REG_READ(rx_cum, cum, (bit<32>)meta.rx.index);
            bit<16> ooo;
            REG_READ(rx_ooo, ooo, (bit<32>)meta.rx.index);
            bit<32> rcvd;
            REG_READ(rx_rcvd, rcvd, (bit<32>)meta.rx.index);
            if (meta.rx.op == RX_OP_DATA) {
                bit<16> held = ooo;
                bit<24> psn = hdr.bth.psn;
                bit<24> d = psn - cum;

                // Mark: new, duplicate (its bit set, or behind cum), beyond the window.
                if (d[23:23] == 1) {
                    meta.rx.kind = RX_DUPLICATE;
                } else if (d >= RX_WINDOW) {
                    meta.rx.kind = RX_BEYOND;
                } else {
                    bit<32> wi = base + (bit<32>)psn[RX_WORD_BITS + 5:6];
                    bit<64> word;
                    REG_READ(rx_word, word, wi);
                    bit<64> mask = (bit<64>)1 << psn[5:0];
                    if ((word & mask) != 0) {
                        meta.rx.kind = RX_DUPLICATE;
                    } else {
                        REG_WRITE(rx_word, wi, word | mask);
                        ooo = ooo + 1;
                        meta.rx.kind = RX_NEW;
                    }
                }

                // Advance, step 0: the word holding cum.
                bit<32> w0 = base + (bit<32>)cum[RX_WORD_BITS + 5:6];
                bit<64> word0;
                REG_READ(rx_word, word0, w0);
                bit<6> o0 = cum[5:0];
                x0 = word0 >> o0;
                trailing_ones0.apply();
                bit<7> end0 = (bit<7>)o0 + t0;
                bool more = false;
                if (t0 != 0) {
                    cum = cum + (bit<24>)t0;
                    ooo = ooo - (bit<16>)t0;
                    if (end0 == 64) {
                        REG_WRITE(rx_word, w0, 0);   // the whole word passed: the ring's next turn starts clean
                        more = true;
                    } else {
                        REG_WRITE(rx_word, w0, word0 & (64w0xFFFFFFFFFFFFFFFF << end0));   // the PSNs passed: 0
                    }
                }
                // Step 1: the next word, when step 0 passed the whole of its own.
                if (more) {
                    bit<32> w1 = base + (bit<32>)cum[RX_WORD_BITS + 5:6];
                    bit<64> word1;
                    REG_READ(rx_word, word1, w1);
                    x1 = word1;   // cum is at the word's start
                    trailing_ones1.apply();
                    if (t1 != 0) {
                        cum = cum + (bit<24>)t1;
                        ooo = ooo - (bit<16>)t1;
                        if (t1 == 64) {
                            REG_WRITE(rx_word, w1, 0);
                        } else {
                            REG_WRITE(rx_word, w1, word1 & (64w0xFFFFFFFFFFFFFFFF << t1));
                        }
                    }
                }
                REG_WRITE(rx_cum, (bit<32>)meta.rx.index, cum);
                REG_WRITE(rx_ooo, (bit<32>)meta.rx.index, ooo);

                // Coalescing: at once on a duplicate, CE, the ack-request bit,
                // a hole opening (past the bitmap) or closing; else every ack_bytes.
                bool sack = false;
                if (meta.rx.kind == RX_DUPLICATE || hdr.inner.ecn == ECN_CE || hdr.bth.a == 1 || d > SACK_BITS) {
                    sack = true;
                } else if (d == 0 && held != 0) {
                    sack = true;
                }
                bit<32> unacked;
                REG_READ(rx_unacked, unacked, (bit<32>)meta.rx.index);
                if (meta.rx.kind == RX_NEW) {
                    rcvd = rcvd + meta.rx.length;
                    REG_WRITE(rx_rcvd, (bit<32>)meta.rx.index, rcvd);
                    distance = d;
                    reorder_bucket.apply();   // counts the arrival in its bucket
                    if (!sack) {
                        unacked = unacked + meta.rx.length;
                        if (unacked >= meta.rx.ack_bytes) {
                            sack = true;
                        }
                    }
                }
                if (sack) {
                    unacked = 0;
                    meta.rx.sack = 1;
                }
                REG_WRITE(rx_unacked, (bit<32>)meta.rx.index, unacked);
            }
            meta.rx.cum = cum;
            meta.rx.ooo = ooo;
            meta.rx.rcvd = rcvd;

            // The reverse EV of the plane the packet came on; data that got
            // through on an EV makes it that plane's (EV state on).
            REG_READ(rx_reverse, meta.rx.reverse_ev, ri);
            if (meta.rx.op == RX_OP_DATA && meta.rx.follow == 1 && meta.rx.kind != RX_BEYOND) {
                REG_WRITE(rx_reverse, ri, meta.ev);
            }

            // The SACK's bitmap: PSNs cum+1 .. cum+64, from two words of the ring.
            bit<RX_WORD_BITS> wc = cum[RX_WORD_BITS + 5:6];
            bit<RX_WORD_BITS> wn = wc + 1;
            bit<64> lo;
            REG_READ(rx_word, lo, base + (bit<32>)wc);
            bit<64> hi;
            REG_READ(rx_word, hi, base + (bit<32>)wn);
            bit<6> o = cum[5:0];
            if (o == 63) {
                meta.rx.bitmap = hi;
            } else {
                meta.rx.bitmap = (lo >> (o + 1)) | (hi << (6w63 - o));
            }
        }
    }
}

control RxAnswer(CONTROL_PARAMS(nic_headers_t, nic_metadata_t)) {
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
        hdr.seth.dpdcid = meta.rx.peer_qpn[15:0];
        hdr.seth.reserved3 = 0;
        hdr.seth.cack_psn = meta.rx.cum - 1;
        hdr.seth.cc_type = 0;
        hdr.seth.cc_fl = 0;
        hdr.seth.mpr = SETH_MPR;
        hdr.seth.sack_offset = SACK_OFFSET;
        hdr.seth.sack_bitmap = meta.rx.bitmap;
        hdr.cc_state.setValid();
        hdr.cc_state.tx_timestamp = ts;
        hdr.cc_state.reserved = 0;
        hdr.cc_state.ooo_count = meta.rx.ooo[14:0];
        hdr.cc_state.r_c = 0;
        hdr.cc_state.rcv_cwnd_pen = 0;
        hdr.cc_state.rcvd_bytes = meta.rx.rcvd[31:8];
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
        hdr.bth.dqp = meta.rx.peer_qpn;
        hdr.bth.a = 0;
        hdr.bth.reserved2 = 0;
        hdr.bth.rtx = 0;
        hdr.bth.ts = 0;
        hdr.bth.reserved3 = 0;
        hdr.bth.psn = meta.rx.cum - 1;
        meta.send.trunc = SACK_BYTES;
        to_sender(hdr, meta, UDP_BYTES + BTH_BYTES + SETH_BYTES + CC_STATE_BYTES + ICRC_BYTES);
    }

    apply {
        bit<16> ts = 0;
        if (hdr.tseth.isValid()) {
            ts = hdr.tseth.tx_timestamp;
        }
        bit<32> arrival = meta.ev;
        if (meta.rx.op == RX_OP_DATA && meta.rx.kind != RX_BEYOND && meta.rx.sack == 1) {
            // ack_psn_offset: the arrival's PSN less cack_psn, clamped to 16 bits.
            // It fits when its bits 23..15 are all 0 or all 1. (Not `off > 0x7FFF`:
            // p4c-dpdk 1.2.5.16 dropped that comparison of an expression after `&&`.)
            bit<24> off = hdr.bth.psn - (meta.rx.cum - 1);
            bit<9> high = off[23:15];
            bit<16> off16 = off[15:0];
            if (high != 0 && high != 0x1FF) {
                if (off[23:23] == 0) {
                    off16 = 0x7FFF;
                } else {
                    off16 = 0x8000;
                }
            }
            bit<2> mark = SETH_M_NONE;
            if (hdr.inner.ecn == ECN_CE) {
                mark = SETH_M_SKIP_ONCE;
            }
            if (meta.rx.kind == RX_NEW) {
                meta.host_copy = 1;   // the original becomes the SACK; a copy goes to the host
            }
            build_sack(mark, 0, off16, arrival, ts);
            on_ev(hdr, meta, meta.rx.reverse_ev);
        } else if (meta.rx.op == RX_OP_PROBE) {
            build_sack(SETH_M_NONE, 1, hdr.peth.probe_id, arrival, 0);
            on_ev(hdr, meta, meta.rx.reverse_ev);
        }
    }
}

#endif
