// Every difference between P4 targets lives here (DASH style). The stage
// files use only these names, so a TNA or PNA build replaces this header,
// not the pipeline.
#ifndef MRC_TARGET_P4
#define MRC_TARGET_P4

#include <core.p4>

#if defined(TARGET_V1MODEL) || !defined(TARGET_TNA)
#include <v1model.p4>

typedef bit<9>  port_t;          // v1model egress_spec / ingress_port width
typedef bit<19> qdepth_t;        // v1model enq_qdepth width
#define STD_META_T standard_metadata_t
#define STD_META   sm
#define IN_PORT    sm.ingress_port
#define OUT_PORT   sm.egress_spec
#define EG_PORT    sm.egress_port
#define PKT_LEN    sm.packet_length
#define PARSER_ERR sm.parser_error
#define SET_PRIORITY(p)   sm.priority = (p)
#define DROP()            mark_to_drop(sm)
#define TRUNCATE(n)       truncate(n)
#define ENQ_QDEPTH        ((qdepth_t)sm.enq_qdepth)
#define IS_I2E_CLONE      (sm.instance_type == 1)
#define NUM_PORTS  512
#endif

#endif
