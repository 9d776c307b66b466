// Table and counter sizes of the switch, in one place (as fabric-tna's
// size.p4). The Tofino figures in bench/results/ are for these sizes, which
// hold a full-radix T0 (512 routes, 512 port neighbours, 64 DSCP classes).
// ROUTE_TABLE_SIZE can be set with -D to measure other sizes.
#ifndef MRC_SWITCH_SIZE_P4
#define MRC_SWITCH_SIZE_P4

#define MY_USID_TABLE_SIZE   4      // this switch's own /48 locators
#ifndef ROUTE_TABLE_SIZE
#define ROUTE_TABLE_SIZE     1024   // /48 neighbour routes (512 for a full-radix T0)
#endif
#define NEIGHBOUR_TABLE_SIZE NUM_PORTS
#define DSCP_TABLE_SIZE      64     // every DSCP value
#define ECN_PROFILE_TABLE_SIZE 4    // a marking profile per class (2 bits)
#define NUM_DROP_REASONS     16

#endif
