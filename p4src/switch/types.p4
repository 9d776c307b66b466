// Switch headers, metadata and the numbering of its counters.
#ifndef MRC_SWITCH_TYPES_P4
#define MRC_SWITCH_TYPES_P4

#include "../include/headers.p4"
#include "../include/defaults.p4"
#include "size.p4"

// Why a packet was dropped: a serializable enum, so the names and values
// are in the P4Info (type_info) and the controller reads them from there.
enum bit<8> drop_reason_t {
    NOT_IPV6     = 0,   // EtherType is not IPv6
    MALFORMED    = 1,   // truncated IPv6 header or version != 6
    FOR_ME       = 2,   // my uSID with a zero argument
    NO_ROUTE     = 3,   // no /48 neighbour entry
    HOP_LIMIT    = 4,   // hop limit <= 1
    NO_NEIGHBOUR = 5,   // egress port has no neighbour entry
    CONGESTION   = 6,   // non-trimmable over the trim threshold
    BAD_SOURCE   = 7,   // source unspecified, loopback, link-local or multicast
    BAD_DESTINATION = 8, // destination unspecified, loopback, link-local or multicast
    BAD_LENGTH   = 9    // IPv6 payload length runs past the end of the frame
}

// A queue-depth threshold: one bit wider than a depth, so that threshold
// minus depth has a sign bit.
typedef bit<20> threshold_t;

// Traffic classes, from the packet's DSCP via the dscp_class table.
const bit<2> CLASS_NORMAL    = 0;  // not trimmable: dropped over the limit
const bit<2> CLASS_TRIMMABLE = 1;  // trimmed over the limit
const bit<2> CLASS_PRIORITY  = 2;  // control and trimmed stubs: high queue

struct headers_t {
    ethernet_t ethernet;
    ipv6_t     ipv6;
}

// Everything the stages decide is written here; each top file moves it to
// its target's intrinsic metadata (egress port, queue, truncation, drop).
struct metadata_t {
    port_t   in_port;
    port_t   out_port;
    bit<1>   malformed;      // IPv6 version != 6 (the parser's finding)
    bit<48>  locator;        // block and uSID routing looks up
    bit<1>   usid_mine;      // the active uSID is this switch's
    bit<1>   usid_arg_zero;  // nothing follows it: the packet is for us
    bit<1>   unroutable;     // an address class a router must not forward
    drop_reason_t unroutable_reason;  // BAD_SOURCE or BAD_DESTINATION
    bit<1>   drop;
    drop_reason_t drop_reason;
    bit<2>   cls;
    bit<1>   host_facing;
    bit<1>   trim;           // the packet is to be cut to trim_bytes
    bit<16>  pkt_len;        // bytes on the wire (the top file sets it)
    qdepth_t qdepth;         // data-queue depth of out_port
    threshold_t ecn_room;    // ECN threshold - qdepth: <= 0 means mark
    bit<1>   ecn_ramp;       // the class's profile is a WRED ramp (ecn_profile's ecn_ramp)
    threshold_t ramp_room;   // kmin - qdepth: < 0 means past kmin, in the ramp (or past kmax)
    bit<32>  ramp_pmax;      // the probability at kmax, in 1/65536
    threshold_t trim_room;   // trim threshold - qdepth: <= 0 means trim
    bit<17>  len_room;       // trim_bytes - pkt_len: bit 16 set if longer
    bit<16>  trim_bytes;
    bit<6>   dscp_trimmed;
    bit<6>   dscp_trimmed_lasthop;
}

#endif
