// MRC SmartNIC pipeline (DESIGN.md section 5): spraying over EVs,
// encapsulation, decapsulation, trimmed data to NACK, the receiver, path
// health. One file per stage; this is the v1model top (BMv2). nic_pna.p4
// is the PNA top.
#include "../include/target.p4"
#include "types.p4"
#include "parser.p4"
#include "encap.p4"
#include "ev_health.p4"
#include "tx.p4"
#include "reply.p4"
#include "decap.p4"
#include "trim_nack.p4"
#include "rx_track.p4"
#include "main.p4"

control NicNoChecksum(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    apply { }
}

control NicEgress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                  inout STD_META_T STD_META) {
    COUNTER_PACKETS_BYTES(NUM_PORTS) nic_port_tx;
    HostCopy() host_copy;

    apply {
        if (IS_I2E_CLONE) {
            // The copy for the host that ingress cloned (main.p4's HostCopy).
            host_copy.apply(hdr, meta);
            if (meta.tx_done == 1) {
                TRUNCATE(TX_DONE_BYTES);
            }
        }
        nic_port_tx.count((bit<32>)EG_PORT);
    }
}

V1Switch(NicParser(), NicNoChecksum(), NicIngress(), NicEgress(),
         NicNoChecksum(), NicDeparser()) main;
