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

    apply {
        if (IS_I2E_CLONE) {
            if (meta.tx_done == 1) {
                // The transmit completion (pcie.Host.on_sent): the host's data packet
                // back to it, the EV the data plane picked in its UDP source port and
                // flow label, cut to its headers.
                hdr.udp.src_port = meta.ev[31:16];
                hdr.inner.flow_label = hdr.inner.flow_label[19:16] ++ meta.ev[15:0];
                hdr.udp.checksum = 0;
                TRUNCATE(TX_DONE_BYTES);
            } else if (meta.host_copy == 1) {
                // New data the receiver answered: to the host as any
                // packet received (RFC 6040: outer CE to an ECT inner header).
                if (hdr.outer.ecn == ECN_CE && hdr.inner.ecn != ECN_NOT_ECT) {
                    hdr.inner.ecn = ECN_CE;
                }
            } else {
                // Notice to the host: the trimmed packet, decapsulated, with
                // the trimmed DSCP on its inner header.
                hdr.inner.dscp = hdr.outer.dscp;
            }
            hdr.outer.setInvalid();
        }
        nic_port_tx.count((bit<32>)EG_PORT);
    }
}

V1Switch(NicParser(), NicNoChecksum(), NicIngress(), NicEgress(),
         NicNoChecksum(), NicDeparser()) main;
