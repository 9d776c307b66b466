// Before stage 1 of DESIGN.md section 4 (which has no sanity checks):
// addresses a router must not forward (RFC 4291; SAI's ingress
// drop reasons SIP_UNSPECIFIED, SIP_LOOPBACK, SIP_LINK_LOCAL, SIP_MC,
// DIP_LOOPBACK, DIP_LINK_LOCAL and multicast/unspecified destinations;
// docs/switch.md). No route can cover a bad destination: the topology
// keeps the uSID block and NIC prefix out of these ranges. One table with
// both addresses as keys, source entries first: one lookup, one result,
// and the source wins when both are bad.
#ifndef MRC_SWITCH_SANITY_P4
#define MRC_SWITCH_SANITY_P4

#define UNSPECIFIED 0 &&& 0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF
#define LOOPBACK 1 &&& 0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF
#define LINK_LOCAL 0xFE80 << 112 &&& 0xFFC0 << 112
#define MULTICAST 0xFF00 << 112 &&& 0xFF00 << 112

control Sanity(inout headers_t hdr, inout metadata_t meta) {
    action unroutable(drop_reason_t reason) {
        meta.unroutable = 1;
        meta.unroutable_reason = reason;
    }

    table address_class {
        key = {
            hdr.ipv6.src_addr : ternary @name("src");
            hdr.ipv6.dst_addr : ternary @name("dst");
        }
        actions = { unroutable; @defaultonly NoAction; }
        const default_action = NoAction;
        const entries = {
            (UNSPECIFIED, _) : unroutable(drop_reason_t.BAD_SOURCE);
            (LOOPBACK, _) : unroutable(drop_reason_t.BAD_SOURCE);
            (LINK_LOCAL, _) : unroutable(drop_reason_t.BAD_SOURCE);
            (MULTICAST, _) : unroutable(drop_reason_t.BAD_SOURCE);
            (_, UNSPECIFIED) : unroutable(drop_reason_t.BAD_DESTINATION);
            (_, LOOPBACK) : unroutable(drop_reason_t.BAD_DESTINATION);
            (_, LINK_LOCAL) : unroutable(drop_reason_t.BAD_DESTINATION);
            (_, MULTICAST) : unroutable(drop_reason_t.BAD_DESTINATION);
        }
        size = 8;
    }

    apply { address_class.apply(); }
}

#endif
