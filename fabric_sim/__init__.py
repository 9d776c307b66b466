"""The timed fabric: every switch and NIC of a topology as its reference
model, MRC endpoints on the hosts, links with rates, delays and queues
(docs/simulator.md). One sub-package per job: net/ the timed network,
transports/ what runs on the hosts, scenario/ the scenario format, its
events, sweeps and workloads, runner/ running them (one run, Ray, the
cache), report/ tables and plots; cli.py is `mrc-sim`. The MRC paper's
experiments are a package of their own beside it (mrc_paper/)."""
