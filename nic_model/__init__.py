"""The MRC NIC's data plane, stage for stage as p4src/nic/."""
