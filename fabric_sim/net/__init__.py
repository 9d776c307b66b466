"""The timed network: links and their queues (links.py), the fabric of
switch and NIC nodes built from a topology (fabric.py), PFC (pfc.py), the
NIC's QP scheduler (qp_scheduler.py), the exactly-once ledger (ledger.py)
and the packet totals (tally.py). The modules a packet hop runs through;
setup.py compiles most of them with mypyc."""
