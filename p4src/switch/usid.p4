// Stage 1 of DESIGN.md section 4: uN on the node's own /48 (RFC 9800 NEXT-C-SID, F3216 format,
// no SRH). Argument zero means the packet is for the switch itself.
// my_usid also picks the locator routing looks up (meta.locator): the
// block with the next uSID, read before the shift, so that the route
// lookup does not wait for the 128-bit shift (one stage less on Tofino).
#ifndef MRC_SWITCH_USID_P4
#define MRC_SWITCH_USID_P4

// It only finds: meta.usid_mine and meta.usid_arg_zero go to
// SwitchForward, which drops FOR_ME or routes in one step, so that the
// drop and the route lookup are exclusive branches of one condition.
control UsidEnd(inout headers_t hdr, inout metadata_t meta) {
    action usid_end() {
        meta.usid_mine = 1;
        meta.locator = hdr.ipv6.dst_addr[127:96] ++ hdr.ipv6.dst_addr[79:64];
    }
    action usid_transit() { meta.locator = hdr.ipv6.dst_addr[127:80]; }

    table my_usid {
        key = { hdr.ipv6.dst_addr[127:80] : exact @name("locator"); }
        actions = { usid_end; @defaultonly usid_transit; }
        const default_action = usid_transit;
        size = MY_USID_TABLE_SIZE;
    }

    // The 80-bit argument tested by an exact match, not a comparison: a
    // Tofino gateway compares at most 44 bits, a table key has no limit.
    action argument_zero() { meta.usid_arg_zero = 1; }

    table usid_argument {
        key = { hdr.ipv6.dst_addr[79:0] : exact @name("argument"); }
        actions = { argument_zero; @defaultonly NoAction; }
        const default_action = NoAction;
        const entries = { 0 : argument_zero(); }
        size = 1;
    }

    apply {
        my_usid.apply();
        usid_argument.apply();
        if (meta.usid_mine == 1 && meta.usid_arg_zero == 0) {
            // Keep the 32-bit block, drop our uSID, shift the rest up.
            hdr.ipv6.dst_addr = hdr.ipv6.dst_addr[127:96] ++
                                hdr.ipv6.dst_addr[79:0] ++ 16w0;
        }
    }
}

#endif
