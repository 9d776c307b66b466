// The NIC under PNA, as DPDK's SWX pipeline runs it (p4c-dpdk; docs/nic.md,
// "The NIC on SWX"): the stage files and main control of the v1model top,
// with target.p4's PNA names, and what SWX needs around them.
//
// - SWX keeps a thread's metadata from one packet to the next (BMv2 zeroes
//   it): a packet's first pass starts from zero (`fresh_meta`, a table's
//   action: p4c-dpdk 1.2.5.16 carried a `meta = {...}` written in the
//   parser or the control past the table actions that set those fields).
// - SWX copies a packet only as it leaves a pass (a mirror session, which
//   can cut the copy) and cannot cut the packet itself. What v1model clones
//   in ingress and cuts is made over two passes:
//   * a packet the NIC made (NACK, SACK, probe answer) leaves through the
//     mirror session that cuts it to its size on its plane's port. If the
//     host gets a copy beside it (a trimmed packet's notice, new data's
//     copy), the reply recirculates, the data's payload still behind its
//     headers: the second pass puts back the data packet's headers (kept
//     before the first) and sends the host its copy (main.p4's HostCopy).
//     The reply comes first because its encapsulation can drop it, and
//     then v1model sends the host nothing either;
//   * data from the host leaves whole through its plane's mirror session
//     and recirculates; the second pass makes its transmit completion (the
//     host's Ethernet header back, the outer header off) and sends it
//     through the session that cuts it to TX_DONE_BYTES.
// - No digests (p4c-dpdk has no Digest extern): each EV event goes into a
//   ring of registers the host reads back (`ev_ring_*`), and is counted by
//   reason (ev_event_reasons) as on every target.
// - `swx_frames` counts the frames whose first pass ended and the frames
//   they owe the ports, so a test bed waits on the device, not on time.
#define TARGET_PNA
#include "../include/target.p4"

// What this top keeps in the metadata: a counter index base (target.p4's
// COUNT_AT), the kind of second pass (and what kept the data packet had),
// the Ethernet addresses the first pass rewrote. (A reply's data packet
// headers travel in the packet itself, types.p4's kept_*: SWX addresses
// only the first 256 bytes of the metadata, testbed/swx_spec.py.)
struct pna_meta_t {
    bit<8>   index_base;
    bit<8>   kind;
    bit<48>  eth_dst;
    bit<48>  eth_src;
}
#define NIC_TOP_METADATA pna_meta_t pna;
const bit<8> SECOND_COPY = 1;         // the reply back: the host's copy of the data it was made from
const bit<8> SECOND_COMPLETION = 2;   // the host's data as it left: its transmit completion

#include "types.p4"
#include "parser.p4"
#include "encap.p4"
#include "ev_health.p4"
#include "tx.p4"
#include "reply.p4"
#include "decap.p4"
#include "trim_nack.p4"
#include "rx_track.p4"

// A data packet from the fabric, as it arrived (main.p4's hook, before the
// reply rewrites it): what its reply rewrites, kept in headers of its own.
// Statements in NicIngress itself: p4c-dpdk 1.2.5.16 lost the validity and
// the header copies of a top-level action taking the headers inout. A
// header copied only when valid: p4c-dpdk copies the fields of an invalid
// one too, and SWX writes them wherever that header last pointed (another
// packet's buffer).
#define NIC_BEFORE_REPLY \
    if (hdr.meth.isValid()) { \
        hdr.kept_ip.setValid(); \
        hdr.kept_ip.outer_dscp = hdr.outer.dscp; \
        hdr.kept_ip.outer_ecn = hdr.outer.ecn; \
        hdr.kept_ip.dscp = hdr.inner.dscp; \
        hdr.kept_ip.ecn = hdr.inner.ecn; \
        hdr.kept_ip.reserved = 0; \
        hdr.kept_ip.flow_label = hdr.inner.flow_label; \
        hdr.kept_ip.payload_len = hdr.inner.payload_len; \
        hdr.kept_ip.hop_limit = hdr.inner.hop_limit; \
        hdr.kept_ip.udp_src = hdr.udp.src_port; \
        hdr.kept_ip.udp_length = hdr.udp.length; \
        hdr.kept_ip.udp_checksum = hdr.udp.checksum; \
        hdr.kept_bth = hdr.bth; \
        hdr.kept_meth = hdr.meth; \
        hdr.kept_reth = hdr.reth; \
        if (hdr.tseth.isValid()) { hdr.kept_tseth = hdr.tseth; } \
        if (hdr.immdt.isValid()) { hdr.kept_immdt = hdr.immdt; } \
    }
#include "main.p4"


// Mirror sessions (the test bed writes them: testbed/swx.py), by what they
// carry; a plane's session is its base + the plane, on the plane's port.
const MirrorSessionIdUint_t TX_DONE_SESSION = 2;    // the host port, cut to TX_DONE_BYTES
const MirrorSessionIdUint_t PLANE_SESSIONS = 8;     // the plane's port, whole
const MirrorSessionIdUint_t NACK_SESSIONS = 16;     // the plane's port, cut to NACK_BYTES
const MirrorSessionIdUint_t SACK_SESSIONS = 24;     // the plane's port, cut to SACK_BYTES
// Beyond every port the pipeline has: SWX hands the packet to its drop port,
// after the mirror sessions have taken their copies.
const port_t DISCARD_PORT = PORT_CONST(0xFFFF);

// A copy of the packet as it leaves this pass, through session `s` (a
// constant: PNA's mirror_packet takes no other), or its plane's of `base`.
#define COPY_TO(s) mirror_packet((MirrorSlotId_t)8w0, (MirrorSessionId_t)(s))
#define COPY_ON_PLANE(base, plane) \
    if (plane == 0) { COPY_TO(base); } \
    else if (plane == 1) { COPY_TO(base + 1); } \
    else if (plane == 2) { COPY_TO(base + 2); } \
    else if (plane == 3) { COPY_TO(base + 3); } \
    else if (plane == 4) { COPY_TO(base + 4); } \
    else if (plane == 5) { COPY_TO(base + 5); } \
    else if (plane == 6) { COPY_TO(base + 6); } \
    else { COPY_TO(base + 7); }

const bit<32> FRAMES_DONE = 0;   // swx_frames: frames whose first pass ended
const bit<32> FRAMES_OWED = 1;   // ... and the frames they owe the ports

control NicPre(in nic_headers_t hdr, inout nic_metadata_t meta,
               in pna_pre_input_metadata_t istd, inout pna_pre_output_metadata_t ostd) {
    apply { }
}

control NicPnaMain(inout nic_headers_t hdr, inout nic_metadata_t meta,
                   in pna_main_input_metadata_t istd, inout pna_main_output_metadata_t ostd) {
    NicIngress() nic;
    HostCopy() host_copy;
    Counter<bit<64>, bit<32>>(2, PNA_CounterType_t.PACKETS) swx_frames;
    Register<bit<32>, bit<32>>(1) ev_ring_head;
    Register<bit<64>, bit<32>>(EV_RING_SIZE) ev_ring_state;
    Register<bit<32>, bit<32>>(EV_RING_SIZE) ev_ring_ev;
    Register<bit<64>, bit<32>>(EV_RING_SIZE) ev_ring_slots;

    // Zero, but for what the parser set.
    action fresh() {
        bit<1> ctl = meta.is_control;
        bit<1> bad = meta.bad_version;
        meta = {...};
        meta.is_control = ctl;
        meta.bad_version = bad;
    }
    table fresh_meta {
        actions = { fresh; }
        const default_action = fresh();
        size = 1;
    }


    // The data packet's headers back over its reply's (to_sender swapped the addresses).
    action put_back() {
        hdr.ethernet.dst_addr = meta.pna.eth_dst;
        hdr.ethernet.src_addr = meta.pna.eth_src;
        bit<64> hi = hdr.inner.src_hi;
        bit<64> lo = hdr.inner.src_lo;
        hdr.inner.src_hi = hdr.inner.dst_hi;
        hdr.inner.src_lo = hdr.inner.dst_lo;
        hdr.inner.dst_hi = hi;
        hdr.inner.dst_lo = lo;
        hdr.outer.dscp = hdr.kept_ip.outer_dscp;
        hdr.outer.ecn = hdr.kept_ip.outer_ecn;
        hdr.inner.dscp = hdr.kept_ip.dscp;
        hdr.inner.ecn = hdr.kept_ip.ecn;
        hdr.inner.flow_label = hdr.kept_ip.flow_label;
        hdr.inner.payload_len = hdr.kept_ip.payload_len;
        hdr.inner.hop_limit = hdr.kept_ip.hop_limit;
        hdr.udp.src_port = hdr.kept_ip.udp_src;
        hdr.udp.length = hdr.kept_ip.udp_length;
        hdr.udp.checksum = hdr.kept_ip.udp_checksum;
        hdr.bth = hdr.kept_bth;
        hdr.meth = hdr.kept_meth;
        hdr.reth = hdr.kept_reth;
        hdr.seth.setInvalid();
        hdr.cc_state.setInvalid();
        hdr.neth.setInvalid();
        hdr.icrc.setInvalid();
    }

    // What only a second pass reads: never on the wire otherwise.
    action drop_kept() {
        hdr.kept_ip.setInvalid();
        hdr.kept_bth.setInvalid();
        hdr.kept_meth.setInvalid();
        hdr.kept_tseth.setInvalid();
        hdr.kept_reth.setInvalid();
        hdr.kept_immdt.setInvalid();
    }

    apply {
        if (FIRST_PASS) {
            fresh_meta.apply();
            meta.pna.eth_dst = hdr.ethernet.dst_addr;
            meta.pna.eth_src = hdr.ethernet.src_addr;
            nic.apply(hdr, meta, istd);
            if (meta.ev_digest == 1) {
                // An EV event, into the ring the host reads back.
                bit<32> head = ev_ring_head.read(0);
                bit<32> at = head & (EV_RING_SIZE - 1);
                ev_ring_state.write(at, 8w0 ++ meta.ev_event.qp_index ++ meta.ev_event.reason ++
                                    meta.ev_event.old_state ++ meta.ev_event.new_state ++
                                    meta.ev_event.planes_down ++ meta.ev_event.planes_up);
                ev_ring_ev.write(at, meta.ev_event.ev);
                ev_ring_slots.write(at, meta.ev_event.slots);
                ev_ring_head.write(0, head + 1);
            }
            bit<3> plane = EV_PLANE(meta.ev);
            if (meta.drop == 1) {
                COUNT_AT(swx_frames, FRAMES_DONE);
                drop_packet();
            } else if (meta.send.gen == 1) {
                // A packet the NIC made, cut to its size as it leaves.
                if (meta.send.is_nack == 1) {
                    COPY_ON_PLANE(NACK_SESSIONS, plane)
                } else {
                    COPY_ON_PLANE(SACK_SESSIONS, plane)
                }
                COUNT_AT(swx_frames, FRAMES_OWED);
                if (meta.send.notice == 1 || meta.host_copy == 1) {
                    meta.pna.kind = SECOND_COPY;
                    COUNT_AT(swx_frames, FRAMES_OWED);
                    COUNT_AT(swx_frames, FRAMES_DONE);
                    recirculate();   // last: nothing may write metadata after it (testbed/swx_spec.py)
                } else {
                    COUNT_AT(swx_frames, FRAMES_DONE);
                    send_to_port(DISCARD_PORT);
                }
            } else if (meta.tx_done == 1) {
                // The data, whole, to its plane; its completion next pass.
                COPY_ON_PLANE(PLANE_SESSIONS, plane)
                meta.pna.kind = SECOND_COMPLETION;
                COUNT_AT(swx_frames, FRAMES_OWED);
                COUNT_AT(swx_frames, FRAMES_OWED);
                COUNT_AT(swx_frames, FRAMES_DONE);
                recirculate();
            } else {
                // As NicIngress sent it: to a plane port, or the host port.
                drop_kept();
                COUNT_AT(swx_frames, FRAMES_OWED);
                COUNT_AT(swx_frames, FRAMES_DONE);
            }
        } else if (meta.pna.kind == SECOND_COMPLETION) {
            hdr.ethernet.dst_addr = meta.pna.eth_dst;
            hdr.ethernet.src_addr = meta.pna.eth_src;
            host_copy.apply(hdr, meta);
            COPY_TO(TX_DONE_SESSION);
            send_to_port(DISCARD_PORT);
        } else {
            put_back();
            if (hdr.kept_tseth.isValid()) {
                hdr.tseth = hdr.kept_tseth;
            }
            if (hdr.kept_immdt.isValid()) {
                hdr.immdt = hdr.kept_immdt;
            }
            drop_kept();
            host_copy.apply(hdr, meta);
            send_to_port(HOST_PORT);
        }
    }
}

PNA_NIC(NicParser(), NicPre(), NicPnaMain(), NicDeparser()) main;
