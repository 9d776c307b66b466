// Every difference between P4 targets lives here (DASH style). The stage
// files use only these names, so a PNA (or, later, TNA) build swaps this
// header and the top file, not the pipeline. Select with -DTARGET_V1MODEL
// (BMv2, the default), -DTARGET_PNA (the NIC on DPDK's SWX pipeline) or
// -DTARGET_TNA (the switch on Tofino 1, p4src/switch/switch_tna.p4).
#ifndef MRC_TARGET_P4
#define MRC_TARGET_P4

#include <core.p4>

#if defined(TARGET_TNA)
#include <tna.p4>

// Tofino: the switch top file (switch_tna.p4) owns the intrinsic metadata;
// the stage files see ports, depths and counters only through these names.
typedef PortId_t port_t;
typedef bit<19>  qdepth_t;       // eg_intr_md.enq_qdepth width (cells)
#define PORT_CONST(n)     ((port_t)(n))
#define COUNTER_PACKETS(N)       Counter<bit<64>, bit<32>>(N, CounterType_t.PACKETS)
#define COUNTER_PACKETS_BYTES(N) Counter<bit<64>, bit<32>>(N, CounterType_t.PACKETS_AND_BYTES)
#define DIRECT_COUNTER_PACKETS   DirectCounter<bit<64>>(CounterType_t.PACKETS)
#define DIRECT_COUNTERS   counters
#define NUM_PORTS  512
// WRED marking (the switch's ecn_profile, DESIGN.md section 4): Tofino has
// no multiplier in its ALUs; its Wred extern, one configuration per class
// (min and max thresholds, maximum probability, set by the control plane),
// decides on the queue depth. 1: mark.
#define ECN_RAMP_EXTERN   Wred<qdepth_t, bit<2>>(4, 1, 0) ecn_wred;
#define ECN_RAMP_MARK(mark, depth, cls, over_kmin, span, pmax)  mark = (bit<1>)ecn_wred.execute(depth, cls);

#elif defined(TARGET_PNA)
#include <pna.p4>

// PNA, run on DPDK's SWX pipeline (p4c-dpdk; docs/nic.md "The NIC on SWX").
// SWX sends a packet once per pass and copies it only as it leaves (a
// mirror session, which may cut it): nic_pna.p4 makes the host's copies and
// cuts what the NIC builds that way, over two passes where v1model clones
// in ingress and truncates; so here truncate, mirror and digest record
// nothing (the top reads meta.send, meta.host_copy, meta.tx_done and
// meta.ev_digest) and drop leaves the packet to the top, which drops it
// after its own accounting.
typedef PortId_t port_t;
#define PORT_CONST(n)     ((port_t)(PortIdUint_t)(n))
#define PARSER_PARAMS(H, M)   packet_in pkt, out H hdr, inout M meta, in pna_main_parser_input_metadata_t istd
#define CONTROL_PARAMS(H, M)  inout H hdr, inout M meta, in pna_main_input_metadata_t istd
#define DEPARSER_PARAMS(H, M) packet_out pkt, in H hdr, in M meta, in pna_main_output_metadata_t ostd
#define STD_META   istd
#define IN_PORT    istd.input_port
// The parser's side: PNA's direction (the test bed writes each port's:
// p4c-dpdk 1.2.5.16 never sets the parser's input_port); a packet back for
// its second pass left the first with its outer header on.
#define FIRST_PASS         ((PassNumberUint_t)istd.pass == 0)
#define FROM_HOST_SIDE     (istd.direction == PNA_Direction_t.HOST_TO_NET && FIRST_PASS)
#define SECOND_PASS        ((PassNumberUint_t)istd.pass != 0)
#define PARSER_ERR istd.parser_error
#define SEND_TO(p)        send_to_port(p)
#define DROP()
#define TRUNCATE(n)
#define MIRROR_TO(s)
#define MIRROR_KEEP(s)
#define SEND_DIGEST(T, v)
// PNA gives no frame length: a data packet's payload is counted from its
// outer IPv6 payload length, a host's frame from its IPv6 payload length.
#define FRAME_BYTES       ((bit<32>)hdr.outer.payload_len + 14 + 40)
#define COUNT_FRAME(c, i)      c.count(i, (bit<32>)hdr.inner.payload_len + 14 + 40)
// DPDK 24.11 drops the register array of a regadd whose index and value are
// both immediates (lib/pipeline: REGADD_RII and REGWR_RII never set
// regarray_id: the count lands in the first array): a counter's constant
// index is offset by meta.pna.index_base (0, set only by nic_pna.p4's
// fresh_meta action, so p4c-dpdk cannot fold it into an immediate).
#define COUNT_AT(c, i)         c.count((i) + (bit<32>)meta.pna.index_base)
#define COUNT_FRAME_DIRECT(c)  c.count((bit<32>)hdr.inner.payload_len + 14 + 40)
#define REGISTER(T, N)    Register<T, bit<32>>(N)
#define REG_READ(r, dst, i)  dst = r.read(i)
#define REG_WRITE(r, i, v)   r.write(i, v)
#define COUNTER_PACKETS(N)       Counter<bit<64>, bit<32>>(N, PNA_CounterType_t.PACKETS)
#define COUNTER_PACKETS_BYTES(N) Counter<bit<64>, bit<32>>(N, PNA_CounterType_t.PACKETS_AND_BYTES)
#define DIRECT_COUNTER_PACKETS_BYTES DirectCounter<bit<64>>(PNA_CounterType_t.PACKETS_AND_BYTES)
#define DIRECT_COUNTER_PACKETS       DirectCounter<bit<64>>(PNA_CounterType_t.PACKETS)
#define DIRECT_COUNTERS   pna_direct_counter
#define NUM_PORTS  512

#else  // v1model on BMv2 simple_switch_grpc
#include <v1model.p4>

typedef bit<9>  port_t;          // v1model egress_spec / ingress_port width
typedef bit<19> qdepth_t;        // v1model enq_qdepth width
#define PORT_CONST(n)     ((port_t)(n))
#define PARSER_PARAMS(H, M)   packet_in pkt, out H hdr, inout M meta, inout standard_metadata_t sm
#define CONTROL_PARAMS(H, M)  inout H hdr, inout M meta, inout standard_metadata_t sm
#define DEPARSER_PARAMS(H, M) packet_out pkt, in H hdr
#define STD_META_T standard_metadata_t
#define STD_META   sm
#define IN_PORT    sm.ingress_port
#define FROM_HOST_SIDE     (sm.ingress_port == HOST_PORT)
#define SECOND_PASS        false
#define OUT_PORT   sm.egress_spec
#define EG_PORT    sm.egress_port
#define PARSER_ERR sm.parser_error
#define SEND_TO(p)        sm.egress_spec = (p)
#define DROP()            mark_to_drop(sm)
#define TRUNCATE(n)       truncate(n)
#define MIRROR_TO(s)      clone(CloneType.I2E, s)
#define MIRROR_KEEP(s)    clone_preserving_field_list(CloneType.I2E, s, 1)
#define FRAME_BYTES       sm.packet_length
#define COUNT_FRAME(c, i)      c.count(i)
#define COUNT_FRAME_DIRECT(c)  c.count()
#define COUNT_AT(c, i)         c.count(i)
#define REGISTER(T, N)    register<T>(N)
#define SEND_DIGEST(T, v)    digest<T>(1, v)
#define REG_READ(r, dst, i)  r.read(dst, i)
#define REG_WRITE(r, i, v)   r.write(i, v)
#define COUNTER_PACKETS(N)       counter(N, CounterType.packets)
#define COUNTER_PACKETS_BYTES(N) counter(N, CounterType.packets_and_bytes)
#define DIRECT_COUNTER_PACKETS_BYTES direct_counter(CounterType.packets_and_bytes)
#define DIRECT_COUNTER_PACKETS       direct_counter(CounterType.packets)
#define DIRECT_COUNTERS   counters
#define IS_I2E_CLONE      (sm.instance_type == 1)
#define NUM_PORTS  512
// WRED marking (the switch's ecn_profile, DESIGN.md section 4): a 16-bit
// draw r per packet in the ramp, marked when r * (kmax - kmin) < pmax *
// (depth - kmin): probability pmax/65536 * (depth - kmin)/(kmax - kmin).
#define ECN_RAMP_EXTERN
#define ECN_RAMP_MARK(mark, depth, cls, over_kmin, span, pmax)  { \
        bit<32> r_; \
        random(r_, 32w0, 32w0xFFFF); \
        if (r_ * (span) < (pmax) * (over_kmin)) { mark = 1; } \
    }
#endif

#endif
