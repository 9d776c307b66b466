// MRC fabric switch on Tofino 1 (TNA) over the same stages as switch.p4.
// What Tofino does differently (docs/switch.md, "Tofino"):
//  - the queue depth is known in egress, so ECN marking and the trim
//    decision run there, on eg_intr_md.enq_qdepth of the real data queue;
//  - trimming is a truncating egress-to-egress mirror: the rewritten header
//    is mirrored through the port's trim session (max_pkt_len = trim
//    bytes, queue QID_HIGH) and the full packet is dropped;
//  - the DSCP class picks the queue (qid) and ingress CoS in ingress;
//  - ports are device ports: the controller maps topology ports through
//    the device's port_map.
#define TARGET_TNA
#include "../include/target.p4"
#include "types.p4"
#include "parser.p4"
#include "forward.p4"
#include "congestion.p4"
#include "drops.p4"

const QueueId_t QID_DATA = 0;
const QueueId_t QID_HIGH = 1;
const bit<3> COS_DATA = 0;
const bit<3> COS_HIGH = 7;
const MirrorType_t MIRROR_TRIM = 1;
// Trim sessions: one per egress port, session = TRIM_SESSION_BASE + port.
const bit<10> TRIM_SESSION_BASE = 1;

// First byte after the egress intrinsic metadata: what follows.
const bit<8> KIND_BRIDGED = 0;   // a packet from ingress
const bit<8> KIND_TRIMMED = 1;   // a trimmed stub from the mirror

// What ingress tells egress (Tofino keeps no metadata across the TM).
header bridged_t {
    bit<8>  kind;
    @padding bit<7> _pad0;
    port_t  in_port;
    bit<2>  cls;
    bit<1>  host_facing;
    @padding bit<5> _pad1;
}

header trim_mirror_t {
    bit<8> kind;
}

struct tna_headers_t {
    bridged_t     bridged;
    trim_mirror_t trim_mirror;
    headers_t     pkt;
}

struct egress_metadata_t {
    metadata_t m;
    MirrorId_t trim_session;
    bit<8>     mirror_kind;   // Tofino mirrors fields, not constants
}

// Tofino does not zero metadata: both parsers set every field of
// metadata_t here, by name (the enums need a member, not 0).
parser MetadataInit(out metadata_t meta) {
    state start {
        meta.in_port = 0;
        meta.out_port = 0;
        meta.malformed = 0;
        meta.locator = 0;
        meta.usid_mine = 0;
        meta.usid_arg_zero = 0;
        meta.unroutable = 0;
        meta.unroutable_reason = drop_reason_t.NOT_IPV6;
        meta.drop = 0;
        meta.drop_reason = drop_reason_t.NOT_IPV6;
        meta.cls = 0;
        meta.host_facing = 0;
        meta.trim = 0;
        meta.pkt_len = 0;
        meta.qdepth = 0;
        meta.ecn_room = 0;
        meta.ecn_ramp = 0;
        meta.ramp_room = 0;
        meta.ramp_pmax = 0;
        meta.trim_room = 0;
        meta.len_room = 0;
        meta.trim_bytes = 0;
        meta.dscp_trimmed = 0;
        meta.dscp_trimmed_lasthop = 0;
        transition accept;
    }
}

parser SwitchIngressParser(packet_in pkt, out tna_headers_t hdr, out metadata_t meta,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    MetadataInit() init;
    SwitchHeaderParser() headers;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        init.apply(meta);
        meta.in_port = ig_intr_md.ingress_port;   // set here: no stage spent
        headers.apply(pkt, hdr.pkt, meta);
        transition accept;
    }
}

// The address check and my_usid run in the same stage only if their
// results sit in different PHV containers (a container is written once per
// stage): without this the compiler packs them and spends a stage.
@pa_solitary("ingress", "meta.unroutable")
@pa_solitary("ingress", "meta.unroutable_reason")
control SwitchIngress(inout tna_headers_t hdr, inout metadata_t meta,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    SwitchForward() forward;
    DropStats() drops;

    apply {
        // Ingress does not know the frame length on Tofino: no length check
        // here (docs/switch.md).
        forward.apply(hdr.pkt, meta, ig_prsr_md.parser_err != 0, false);
        if (meta.drop == 1) {
            drops.apply(meta);
            ig_dprsr_md.drop_ctl = 1;
        } else {
            ig_tm_md.ucast_egress_port = meta.out_port;
            if (meta.cls == CLASS_PRIORITY) {
                ig_tm_md.qid = QID_HIGH;
                ig_tm_md.ingress_cos = COS_HIGH;
            } else {
                ig_tm_md.qid = QID_DATA;
                ig_tm_md.ingress_cos = COS_DATA;
            }
            hdr.bridged.setValid();
            hdr.bridged.kind = KIND_BRIDGED;
            hdr.bridged.in_port = meta.in_port;
            hdr.bridged.cls = meta.cls;
            hdr.bridged.host_facing = meta.host_facing;
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout tna_headers_t hdr, in metadata_t meta,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    SwitchHeaderDeparser() headers;
    apply {
        pkt.emit(hdr.bridged);
        headers.apply(pkt, hdr.pkt);
    }
}

parser SwitchEgressParser(packet_in pkt, out tna_headers_t hdr, out egress_metadata_t meta,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    MetadataInit() init;
    SwitchHeaderParser() headers;
    state start {
        pkt.extract(eg_intr_md);
        init.apply(meta.m);
        meta.trim_session = 0;
        meta.mirror_kind = 0;
        transition select(pkt.lookahead<bit<8>>()) {
            KIND_TRIMMED: parse_trimmed;
            default: parse_bridged;
        }
    }
    state parse_bridged {
        pkt.extract(hdr.bridged);
        meta.m.in_port = hdr.bridged.in_port;
        meta.m.cls = hdr.bridged.cls;
        meta.m.host_facing = hdr.bridged.host_facing;
        // Set in the parser, not in a stage: congestion_config reads them
        // in egress stage 0.
        meta.m.out_port = eg_intr_md.egress_port;
        meta.m.qdepth = eg_intr_md.enq_qdepth;
        meta.m.pkt_len = eg_intr_md.pkt_length;
        headers.apply(pkt, hdr.pkt, meta.m);
        transition accept;
    }
    state parse_trimmed {
        pkt.extract(hdr.trim_mirror);
        headers.apply(pkt, hdr.pkt, meta.m);
        transition accept;
    }
}

control SwitchEgress(inout tna_headers_t hdr, inout egress_metadata_t meta,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    COUNTER_PACKETS_BYTES(NUM_PORTS) port_tx;
    // Congestion drops happen here, after the TM, so ingress's drop_stats
    // never sees them: they are counted per egress port instead.
    COUNTER_PACKETS(NUM_PORTS) congestion_drop;
    // Frames each port sent from its high-priority queue (control and
    // trimmed stubs), on the queue the traffic manager really used.
    COUNTER_PACKETS(NUM_PORTS) port_tx_high;
    Congestion() congestion;

    apply {
        if (hdr.trim_mirror.isValid()) {
            // A stub back from the trim session: already cut and rewritten.
            hdr.trim_mirror.setInvalid();
        } else {
            hdr.bridged.setInvalid();
            congestion.apply(hdr.pkt, meta.m);
            if (meta.m.drop == 1) {
                congestion_drop.count((bit<32>)eg_intr_md.egress_port);
                eg_dprsr_md.drop_ctl = 1;
            } else if (meta.m.trim == 1) {
                meta.trim_session = (MirrorId_t)(TRIM_SESSION_BASE + (bit<10>)eg_intr_md.egress_port);
                meta.mirror_kind = KIND_TRIMMED;
                eg_dprsr_md.mirror_type = MIRROR_TRIM;
                eg_dprsr_md.drop_ctl = 1;   // the original; the mirror copy goes on
            }
        }
        port_tx.count((bit<32>)eg_intr_md.egress_port);
        if (eg_intr_md.egress_qid == QID_HIGH) {
            port_tx_high.count((bit<32>)eg_intr_md.egress_port);
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout tna_headers_t hdr, in egress_metadata_t meta,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    SwitchHeaderDeparser() headers;
    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TRIM) {
            mirror.emit<trim_mirror_t>(meta.trim_session, {meta.mirror_kind});
        }
        headers.apply(pkt, hdr.pkt);
    }
}

Pipeline(SwitchIngressParser(), SwitchIngress(), SwitchIngressDeparser(),
         SwitchEgressParser(), SwitchEgress(), SwitchEgressDeparser()) pipe;
Switch(pipe) main;
