// Stages 2 to 4 of DESIGN.md section 4: static /48 neighbour table, hop
// limit, Ethernet rewrite.
#ifndef MRC_SWITCH_ROUTING_P4
#define MRC_SWITCH_ROUTING_P4

control Routing(inout headers_t hdr, inout metadata_t meta) {
    action set_port(port_t port) { meta.out_port = port; }
    action route_miss() {
        meta.drop = 1;
        meta.drop_reason = drop_reason_t.NO_ROUTE;
    }

    table usid_route {
        key = { meta.locator : exact @name("locator"); }
        actions = { set_port; @defaultonly route_miss; }
        const default_action = route_miss;
        size = ROUTE_TABLE_SIZE;
    }

    action set_neighbour(bit<48> src_mac, bit<48> dst_mac, bit<1> host_facing) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        meta.host_facing = host_facing;
    }
    action neighbour_miss() {
        meta.drop = 1;
        meta.drop_reason = drop_reason_t.NO_NEIGHBOUR;
    }

    table port_neighbour {
        key = { meta.out_port : exact @name("port"); }
        actions = { set_neighbour; @defaultonly neighbour_miss; }
        const default_action = neighbour_miss;
        size = NEIGHBOUR_TABLE_SIZE;
    }

    apply {
        usid_route.apply();
        if (meta.drop == 0) {
            if (hdr.ipv6.hop_limit <= 1) {
                meta.drop = 1;
                meta.drop_reason = drop_reason_t.HOP_LIMIT;
            } else {
                hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
                port_neighbour.apply();
            }
        }
    }
}

#endif
