"""The timed fabric: every switch and NIC of a topology as its reference
model, MRC endpoints on the hosts, links with rates, delays and queues,
workloads, transports, faults, metrics and plots (docs/simulator.md)."""
