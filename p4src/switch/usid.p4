// Stage 1: uN on the node's own /48 (RFC 9800 NEXT-C-SID, F3216 format,
// no SRH). Argument zero means the packet is for the switch itself.
control UsidEnd(inout headers_t hdr, inout metadata_t meta) {
    bit<1> mine = 0;

    action usid_end() { mine = 1; }

    table my_usid {
        key = { hdr.ipv6.dst_addr[127:80] : exact @name("locator"); }
        actions = { usid_end; @defaultonly NoAction; }
        const default_action = NoAction;
        size = 4;
    }

    apply {
        my_usid.apply();
        if (mine == 1) {
            if (hdr.ipv6.dst_addr[79:0] == 0) {
                meta.drop = 1;
                meta.drop_reason = DROP_FOR_ME;
            } else {
                // Keep the 32-bit block, drop our uSID, shift the rest up.
                hdr.ipv6.dst_addr = hdr.ipv6.dst_addr[127:96] ++
                                    hdr.ipv6.dst_addr[79:0] ++ 16w0;
            }
        }
    }
}
