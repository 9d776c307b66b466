// The ingress stages every target runs: sanity checks, uN, routing and the
// DSCP class. Decisions go to metadata; the top file acts on them.
#ifndef MRC_SWITCH_FORWARD_P4
#define MRC_SWITCH_FORWARD_P4

#include "sanity.p4"
#include "usid.p4"
#include "routing.p4"
#include "classify.p4"

// parser_error: the target's parser reported an error (a truncated frame).
// frame_short: the IPv6 payload length runs past the end of the frame
// (the top file knows the frame length; Tofino ingress does not: false).
control SwitchForward(inout headers_t hdr, inout metadata_t meta, in bool parser_error,
                      in bool frame_short) {
    COUNTER_PACKETS_BYTES(NUM_PORTS) port_rx;

    Sanity() sanity;
    UsidEnd() usid;
    Routing() routing;
    Classify() classify;

    apply {
        port_rx.count((bit<32>)meta.in_port);
        if (parser_error || meta.malformed == 1) {
            meta.drop = 1;
            meta.drop_reason = drop_reason_t.MALFORMED;
        } else if (!hdr.ipv6.isValid()) {
            meta.drop = 1;
            meta.drop_reason = drop_reason_t.NOT_IPV6;
        } else {
            sanity.apply(hdr, meta);
            usid.apply(hdr, meta);
            if (meta.unroutable == 1) {
                meta.drop = 1;
                meta.drop_reason = meta.unroutable_reason;
            } else if (frame_short) {
                meta.drop = 1;
                meta.drop_reason = drop_reason_t.BAD_LENGTH;
            } else if (meta.usid_mine == 1 && meta.usid_arg_zero == 1) {
                meta.drop = 1;
                meta.drop_reason = drop_reason_t.FOR_ME;
            } else {
                routing.apply(hdr, meta);
            }
            classify.apply(hdr, meta);
        }
    }
}

#endif
