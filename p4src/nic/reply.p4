// A packet the NIC makes in answer to one that arrived (a NACK, a SACK, a
// probe's answer: trim_nack.p4, rx_track.p4), sent back to its sender:
// addresses swapped, the control class, a fresh hop limit, its lengths,
// and the EV it travels on. Stage for stage as nic_model/reply.py.
#ifndef MRC_NIC_REPLY_P4
#define MRC_NIC_REPLY_P4

// Back to the sender: `bytes` after the IPv6 header; encapsulated (encap.p4),
// counted as a packet the NIC made (main.p4).
action to_sender(inout nic_headers_t hdr, inout nic_metadata_t meta, in bit<16> bytes) {
    bit<64> sender_hi = hdr.inner.src_hi;
    bit<64> sender_lo = hdr.inner.src_lo;
    hdr.inner.src_hi = hdr.inner.dst_hi;
    hdr.inner.src_lo = hdr.inner.dst_lo;
    hdr.inner.dst_hi = sender_hi;
    hdr.inner.dst_lo = sender_lo;
    hdr.inner.dscp = meta.cfg.dscp_control;
    hdr.inner.ecn = 0;
    hdr.inner.payload_len = bytes;
    hdr.inner.hop_limit = 64;
    hdr.udp.length = bytes;
    hdr.udp.checksum = 0;
    meta.send.encap = 1;
    meta.send.gen = 1;
    meta.send.dscp = meta.cfg.dscp_control;
    meta.send.ecn = 0;
}

// The EV a packet the NIC made travels on (inner UDP source port and flow
// label, the flow label's top bits cleared), and Encap's path.
action on_ev(inout nic_headers_t hdr, inout nic_metadata_t meta, in bit<32> ev) {
    meta.ev = ev;
    hdr.udp.src_port = ev[31:16];
    hdr.inner.flow_label = 4w0 ++ ev[15:0];
}

#endif
