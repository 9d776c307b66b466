"""The host side of MRC: the transport that runs on a NIC's host (QPs,
loss recovery, probes, congestion control, EV profiles) and the host's MRC
API as OCP's mrc.h and mrc_ctl.h name it. It reaches its NIC only through
the PCIe boundary (mrc_wire/pcie.py)."""
