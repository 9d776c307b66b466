// The NIC under PNA (compile-only, checked with p4test): the same stage
// files, with target.p4's PNA names. Differences from the v1model build:
// PNA has no truncate (a NACK keeps the stub's payload) and no egress
// block (the host's notice is the mirrored stub as it arrived); no EV event
// digests (p4c-dpdk 1.2.5.16 knows no Digest extern: "Unknown extern
// function"), only their count by reason (ev_event_reasons, every target).
#define TARGET_PNA
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

control NicPre(in nic_headers_t hdr, inout nic_metadata_t meta,
               in pna_pre_input_metadata_t istd, inout pna_pre_output_metadata_t ostd) {
    apply { }
}

control NicPnaMain(inout nic_headers_t hdr, inout nic_metadata_t meta,
                   in pna_main_input_metadata_t istd, inout pna_main_output_metadata_t ostd) {
    NicIngress() nic;
    apply { nic.apply(hdr, meta, istd); }
}

PNA_NIC(NicParser(), NicPre(), NicPnaMain(), NicDeparser()) main;
