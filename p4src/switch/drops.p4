// Drop accounting: one direct counter per reason, in a table keyed by the
// drop_reason_t enum (so the P4Info names every reason), and per port.
#ifndef MRC_SWITCH_DROPS_P4
#define MRC_SWITCH_DROPS_P4

control DropStats(in metadata_t meta) {
    DIRECT_COUNTER_PACKETS drop_counter;
    COUNTER_PACKETS(NUM_PORTS) port_drop;

    action count_drop() { drop_counter.count(); }

    table drop_stats {
        key = { meta.drop_reason : exact @name("reason"); }
        actions = { count_drop; @defaultonly NoAction; }
        const default_action = NoAction;
        DIRECT_COUNTERS = drop_counter;
        const entries = {
            drop_reason_t.NOT_IPV6     : count_drop();
            drop_reason_t.MALFORMED    : count_drop();
            drop_reason_t.FOR_ME       : count_drop();
            drop_reason_t.NO_ROUTE     : count_drop();
            drop_reason_t.HOP_LIMIT    : count_drop();
            drop_reason_t.NO_NEIGHBOUR : count_drop();
            drop_reason_t.CONGESTION   : count_drop();
            drop_reason_t.BAD_SOURCE   : count_drop();
            drop_reason_t.BAD_DESTINATION : count_drop();
            drop_reason_t.BAD_LENGTH   : count_drop();
        }
        size = NUM_DROP_REASONS;
    }

    apply {
        drop_stats.apply();
        port_drop.count((bit<32>)meta.in_port);
    }
}

#endif
