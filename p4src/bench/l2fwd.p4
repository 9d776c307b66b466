// Bare L2 forwarding: the baseline that `make bench` compares the switch
// program's BMv2 packet rate against.
#include "../include/target.p4"
#include "../include/headers.p4"

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser L2Parser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout STD_META_T STD_META) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}

control L2NoChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control L2Ingress(inout headers_t hdr, inout metadata_t meta,
                  inout STD_META_T STD_META) {
    action forward(port_t port) { OUT_PORT = port; }
    action drop() { DROP(); }
    table port_forward {
        key = { IN_PORT : exact @name("port"); }
        actions = { forward; drop; }
        const default_action = drop;
        size = NUM_PORTS;
    }
    apply { port_forward.apply(); }
}

control L2Egress(inout headers_t hdr, inout metadata_t meta,
                 inout STD_META_T STD_META) { apply { } }

control L2Deparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(L2Parser(), L2NoChecksum(), L2Ingress(), L2Egress(), L2NoChecksum(),
         L2Deparser()) main;
