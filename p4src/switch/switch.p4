// MRC fabric switch (DESIGN.md section 4): SRv6 uSID forwarding with
// static tables, ECN marking and trimming. One file per stage.
#include "../include/target.p4"
#include "types.p4"
#include "parser.p4"
#include "usid.p4"
#include "routing.p4"

// Data-queue depth per egress port, written by egress, read by ingress.
register<qdepth_t>(NUM_PORTS) port_qdepth;

#include "congestion.p4"

control SwitchVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }   // IPv6 has no header checksum
}

control SwitchComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SwitchIngress(inout headers_t hdr, inout metadata_t meta,
                      inout STD_META_T STD_META) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_rx;
    counter(NUM_PORTS, CounterType.packets) port_drop;
    counter(NUM_DROP_REASONS, CounterType.packets) drop_reasons;

    UsidEnd() usid;
    Routing() routing;
    Congestion() congestion;

    apply {
        port_rx.count((bit<32>)IN_PORT);
        if (PARSER_ERR != error.NoError) {
            meta.drop = 1;
            meta.drop_reason = DROP_MALFORMED;
        } else if (!hdr.ipv6.isValid()) {
            meta.drop = 1;
            meta.drop_reason = DROP_NOT_IPV6;
        } else {
            usid.apply(hdr, meta);
            if (meta.drop == 0) {
                routing.apply(hdr, meta, STD_META);
            }
            if (meta.drop == 0) {
                congestion.apply(hdr, meta, STD_META);
            }
        }
        if (meta.drop == 1) {
            drop_reasons.count(meta.drop_reason);
            port_drop.count((bit<32>)IN_PORT);
            DROP();
        }
    }
}

control SwitchEgress(inout headers_t hdr, inout metadata_t meta,
                     inout STD_META_T STD_META) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_tx;

    apply {
        // Trimmed stubs and control use the high queue: only data-queue
        // packets tell us the depth that congestion decisions need.
        if (meta.cls != CLASS_PRIORITY) {
            port_qdepth.write((bit<32>)EG_PORT, ENQ_QDEPTH);
        }
        port_tx.count((bit<32>)EG_PORT);
    }
}

V1Switch(SwitchParser(), SwitchVerifyChecksum(), SwitchIngress(),
         SwitchEgress(), SwitchComputeChecksum(), SwitchDeparser()) main;
