// MRC fabric switch (DESIGN.md section 4) on v1model (BMv2): SRv6 uSID
// forwarding with static tables, ECN marking and trimming. The stages are
// target-neutral (one file each); this top file is the only v1model code.
#include "../include/target.p4"
#include "types.p4"
#include "parser.p4"
#include "forward.p4"
#include "congestion.p4"
#include "drops.p4"

const bit<3> PRIO_DATA = 0;
const bit<3> PRIO_HIGH = 7;

// BMv2 shows queue depth only in egress: egress records each port's
// data-queue depth here and ingress decides on it, so that a trimmed stub
// can still be put in the high-priority queue, as an MMU would.
register<qdepth_t>(NUM_PORTS) port_qdepth;

parser SwitchParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t sm) {
    SwitchHeaderParser() headers;
    state start {
        meta.in_port = sm.ingress_port;
        headers.apply(pkt, hdr, meta);
        transition accept;
    }
}

control SwitchVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }   // IPv6 has no header checksum
}

control SwitchComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SwitchIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t sm) {
    SwitchForward() forward;
    Congestion() congestion;
    DropStats() drops;

    apply {
        forward.apply(hdr, meta, sm.parser_error != error.NoError,
                      (bit<32>)hdr.ipv6.payload_len + ETH_IPV6_BYTES > sm.packet_length);
        if (meta.drop == 0) {
            port_qdepth.read(meta.qdepth, (bit<32>)meta.out_port);
            meta.pkt_len = (bit<16>)sm.packet_length;
            congestion.apply(hdr, meta);
        }
        if (meta.drop == 1) {
            drops.apply(meta);
            mark_to_drop(sm);
        } else {
            sm.egress_spec = meta.out_port;
            if (meta.cls == CLASS_PRIORITY) {
                sm.priority = PRIO_HIGH;
            } else {
                sm.priority = PRIO_DATA;
            }
            if (meta.trim == 1) {
                truncate((bit<32>)meta.trim_bytes);
            }
        }
    }
}

control SwitchEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t sm) {
    COUNTER_PACKETS_BYTES(NUM_PORTS) port_tx;
    // Frames each port sent from its high-priority queue (control and
    // trimmed stubs), on the queue the traffic manager really used.
    COUNTER_PACKETS(NUM_PORTS) port_tx_high;

    apply {
        // Trimmed stubs and control use the high queue: only data-queue
        // packets tell us the depth that congestion decisions need.
        if (meta.cls != CLASS_PRIORITY) {
            port_qdepth.write((bit<32>)sm.egress_port, (qdepth_t)sm.enq_qdepth);
        }
        port_tx.count((bit<32>)sm.egress_port);
        // simple_switch enqueues on the priority queue this field names
        // (v1model exposes no qid), so in egress it is the queue used.
        if (sm.priority == PRIO_HIGH) {
            port_tx_high.count((bit<32>)sm.egress_port);
        }
    }
}

control SwitchDeparser(packet_out pkt, in headers_t hdr) {
    SwitchHeaderDeparser() headers;
    apply { headers.apply(pkt, hdr); }
}

V1Switch(SwitchParser(), SwitchVerifyChecksum(), SwitchIngress(),
         SwitchEgress(), SwitchComputeChecksum(), SwitchDeparser()) main;
