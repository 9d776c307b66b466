// What the switch and the NIC run before the controller writes their
// configuration tables (the keyless congestion_config and nic_config):
// the default actions' values, written once for both programs. The models
// take the same values from mrc_wire.constants (CONGESTION_DEFAULTS,
// DSCP_DEFAULTS); tests/test_p4_defaults.py holds the two equal.
#ifndef MRC_DEFAULTS_P4
#define MRC_DEFAULTS_P4

// DSCP classes (DESIGN.md section 6): control packets, trimmed data, data
// trimmed on the last hop.
#define DEFAULT_DSCP_CONTROL         46
#define DEFAULT_DSCP_TRIMMED         16
#define DEFAULT_DSCP_TRIMMED_LASTHOP 18

// Switch congestion (DESIGN.md section 4, step 5): queue depths in packets,
// and the bytes a trimmed packet keeps.
#define DEFAULT_ECN_THRESHOLD  64
#define DEFAULT_TRIM_THRESHOLD 128
#define DEFAULT_TRIM_BYTES     256

#endif
