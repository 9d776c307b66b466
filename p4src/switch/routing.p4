// Stage 2-4: static /48 neighbour table, hop limit, Ethernet rewrite.
control Routing(inout headers_t hdr, inout metadata_t meta,
                inout STD_META_T STD_META) {
    action set_port(port_t port) { OUT_PORT = port; }
    action route_miss() {
        meta.drop = 1;
        meta.drop_reason = DROP_NO_ROUTE;
    }

    table usid_route {
        key = { hdr.ipv6.dst_addr[127:80] : exact @name("locator"); }
        actions = { set_port; @defaultonly route_miss; }
        const default_action = route_miss;
        size = 1024;
    }

    action set_neighbour(bit<48> src_mac, bit<48> dst_mac, bit<1> host_facing) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        meta.host_facing = host_facing;
    }
    action neighbour_miss() {
        meta.drop = 1;
        meta.drop_reason = DROP_NO_NEIGHBOUR;
    }

    table port_neighbour {
        key = { OUT_PORT : exact @name("port"); }
        actions = { set_neighbour; @defaultonly neighbour_miss; }
        const default_action = neighbour_miss;
        size = NUM_PORTS;
    }

    apply {
        usid_route.apply();
        if (meta.drop == 0) {
            if (hdr.ipv6.hop_limit <= 1) {
                meta.drop = 1;
                meta.drop_reason = DROP_HOP_LIMIT;
            } else {
                hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
                port_neighbour.apply();
            }
        }
    }
}
