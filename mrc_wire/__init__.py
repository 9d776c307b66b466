"""What every part of the project agrees on about the wire: constants of
DESIGN.md (opcodes, DSCP classes, drop reasons, header sizes), the table
entries the planners produce and the models and P4Runtime consume, uSID
arithmetic, device ids, and a fast codec for MRC packets.

This package imports nothing else of the project, so the control plane,
the reference models, the simulator and the test harness all build on it
without importing each other. tests/test_wire_constants.py checks it
against the P4 sources and the committed P4Info.
"""
