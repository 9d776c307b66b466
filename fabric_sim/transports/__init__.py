"""The transports a scenario compares, side by side, as objects of one
protocol (transport.py; kinds.py builds them): MRC and single path (the
MRC endpoint, mrc_host.endpoint), and RoCE with DCQCN (roce.py,
dcqcn.py); their QPs and NIC plans in qps.py."""
