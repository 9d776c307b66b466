"""Domain-level test helpers shared by the PTF suites (fabric-tna style)."""
