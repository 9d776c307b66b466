// For stage 5 of DESIGN.md section 4: the DSCP class (normal, trimmable,
// priority) that congestion acts on. Ingress needs it on every target: it
// picks the queue there.
#ifndef MRC_SWITCH_CLASSIFY_P4
#define MRC_SWITCH_CLASSIFY_P4

control Classify(inout headers_t hdr, inout metadata_t meta) {
    action set_class(bit<2> cls) { meta.cls = cls; }

    table dscp_class {
        key = { hdr.ipv6.dscp : exact @name("dscp"); }
        actions = { set_class; @defaultonly NoAction; }
        default_action = NoAction;   // unknown DSCP: CLASS_NORMAL
        size = DSCP_TABLE_SIZE;
    }

    apply { dscp_class.apply(); }
}

#endif
