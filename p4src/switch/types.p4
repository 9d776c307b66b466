// Switch headers, metadata and the numbering of its counters.
#ifndef MRC_SWITCH_TYPES_P4
#define MRC_SWITCH_TYPES_P4

#include "../include/headers.p4"

// Drop reasons: the index into the drop_reasons counter (docs/switch.md).
const bit<32> DROP_NOT_IPV6     = 0;  // EtherType is not IPv6
const bit<32> DROP_MALFORMED    = 1;  // truncated IPv6 header or version != 6
const bit<32> DROP_FOR_ME       = 2;  // my uSID with a zero argument
const bit<32> DROP_NO_ROUTE     = 3;  // no /48 neighbour entry
const bit<32> DROP_HOP_LIMIT    = 4;  // hop limit <= 1
const bit<32> DROP_NO_NEIGHBOUR = 5;  // egress port has no neighbour entry
const bit<32> DROP_CONGESTION   = 6;  // non-trimmable over the trim threshold
const bit<32> NUM_DROP_REASONS  = 8;

// Congestion events: the index into the congestion_events counter.
const bit<32> EVENT_TRIMMED    = 0;
const bit<32> EVENT_ECN_MARKED = 1;

// Traffic classes, from the packet's DSCP via the dscp_class table.
const bit<2> CLASS_NORMAL    = 0;  // not trimmable: dropped over the limit
const bit<2> CLASS_TRIMMABLE = 1;  // trimmed over the limit
const bit<2> CLASS_PRIORITY  = 2;  // control and trimmed stubs: high queue

const bit<3> PRIO_DATA = 0;
const bit<3> PRIO_HIGH = 7;

struct headers_t {
    ethernet_t ethernet;
    ipv6_t     ipv6;
}

struct metadata_t {
    bit<1>   drop;
    bit<32>  drop_reason;
    bit<2>   cls;
    bit<1>   host_facing;
    qdepth_t qdepth;
    qdepth_t ecn_threshold;
    qdepth_t trim_threshold;
    bit<32>  trim_bytes;
    bit<6>   dscp_trimmed;
    bit<6>   dscp_trimmed_lasthop;
}

#endif
