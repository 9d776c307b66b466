"""The transports a scenario compares, side by side: MRC and single path
(the MRC endpoint, nic_model.endpoint), and RoCE with DCQCN (roce.py,
dcqcn.py); their QPs and NIC plans in qps.py."""
