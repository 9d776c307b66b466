"""The test bed: finding the P4 toolchain, compiling, starting BMv2
simple_switch_grpc on veth pairs, targets (reference model or BMv2) with
one interface for the PTF suites, and the single-switch BMv2 demo.

Tests, benchmarks and `make run` import it; the control plane does not.
"""
