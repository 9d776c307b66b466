"""The discrete-event core every timed layer runs on: `Sim` (simulated
µs) and `RealClock` (the same scheduler on the wall clock, for BMv2)."""
