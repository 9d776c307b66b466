// MRC SmartNIC pipeline (DESIGN.md section 5): spraying over EVs,
// encapsulation, decapsulation, trimmed data to NACK. One file per stage.
#include "../include/target.p4"
#include "types.p4"
#include "parser.p4"
#include "encap.p4"
#include "tx.p4"
#include "rx.p4"

control NicNoChecksum(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    apply { }
}

control NicIngress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                   inout STD_META_T STD_META) {
    counter(NUM_NDROPS, CounterType.packets) nic_drops;
    counter(8, CounterType.packets) nic_events;

    action set_nic(bit<32> block, bit<11> my_row, bit<128> my_addr, bit<6> dscp_control,
                   bit<6> dscp_trimmed, bit<6> dscp_trimmed_lasthop) {
        meta.block = block;
        meta.my_row = my_row;
        meta.my_addr = my_addr;
        meta.dscp_control = dscp_control;
        meta.dscp_trimmed = dscp_trimmed;
        meta.dscp_trimmed_lasthop = dscp_trimmed_lasthop;
    }
    // Keyless: the control plane sets the NIC's identity as the default.
    table nic_config {
        actions = { set_nic; }
        default_action = set_nic(0, 0, 0, 46, 16, 18);
        size = 1;
    }

    counter(8, CounterType.packets_and_bytes) plane_tx;
    counter(8, CounterType.packets) nack_reasons;
    direct_counter(CounterType.packets_and_bytes) ev_tx;

    action count_ev() { ev_tx.count(); }
    table ev_stats {
        key = { meta.ev : exact @name("ev"); }
        actions = { count_ev; @defaultonly NoAction; }
        default_action = NoAction;
        counters = ev_tx;
        size = 65536;
    }

    Transmit() tx;
    Receive() rx;
    Encap() encap;

    apply {
        nic_config.apply();
        if (PARSER_ERR != error.NoError) {
            meta.drop = 1;
            meta.drop_reason = NDROP_MALFORMED;
        } else if (IN_PORT == HOST_PORT) {
            tx.apply(hdr, meta, STD_META);
        } else {
            rx.apply(hdr, meta, STD_META);
        }
        if (meta.drop == 0 && meta.encap == 1) {
            encap.apply(hdr, meta, STD_META);
        }
        if (meta.drop == 0 && meta.encap == 1) {
            hdr.outer.dscp = meta.outer_dscp;
            hdr.outer.ecn = meta.outer_ecn;
            if (meta.is_nack == 1) {
                TRUNCATE(NACK_BYTES);
                clone(CloneType.I2E, NOTICE_SESSION);   // notice to the host
                nack_reasons.count((bit<32>)hdr.nack.reason);
                nic_events.count(NEV_NACK);
            } else {
                ev_stats.apply();
                plane_tx.count((bit<32>)meta.ev[2:0]);
                nic_events.count(NEV_TX);
            }
        } else if (meta.drop == 0) {
            nic_events.count(NEV_RX);
        }
        if (meta.drop == 1) {
            nic_drops.count(meta.drop_reason);
            DROP();
        }
    }
}

control NicEgress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                  inout STD_META_T STD_META) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) nic_port_tx;

    apply {
        if (IS_I2E_CLONE) {
            // Notice to the host: the trimmed packet, decapsulated, with
            // the trimmed DSCP on its inner header.
            hdr.inner.dscp = hdr.outer.dscp;
            hdr.outer.setInvalid();
        }
        nic_port_tx.count((bit<32>)EG_PORT);
    }
}

V1Switch(NicParser(), NicNoChecksum(), NicIngress(), NicEgress(),
         NicNoChecksum(), NicDeparser()) main;
