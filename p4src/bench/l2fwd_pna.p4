// Bare L2 forwarding under PNA (l2fwd.p4's, for DPDK's SWX pipeline): the
// baseline `make bench` compares the NIC program's SWX packet rate against.
#define TARGET_PNA
#include "../include/target.p4"
#include "../include/headers.p4"

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser L2Parser(PARSER_PARAMS(headers_t, metadata_t)) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}

control L2Pre(in headers_t hdr, inout metadata_t meta, in pna_pre_input_metadata_t istd,
              inout pna_pre_output_metadata_t ostd) {
    apply { }
}

control L2Main(CONTROL_PARAMS(headers_t, metadata_t), inout pna_main_output_metadata_t ostd) {
    action forward(port_t port) { SEND_TO(port); }
    action drop() { drop_packet(); }
    table port_forward {
        key = { IN_PORT : exact @name("port"); }
        actions = { forward; drop; }
        const default_action = drop;
        size = NUM_PORTS;
    }
    apply { port_forward.apply(); }
}

control L2Deparser(DEPARSER_PARAMS(headers_t, metadata_t)) {
    apply { pkt.emit(hdr.ethernet); }
}

PNA_NIC(L2Parser(), L2Pre(), L2Main(), L2Deparser()) main;
