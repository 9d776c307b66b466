"""MRC offload control plane: topology, address plan, table planning and
P4Runtime installation (finsy) for the switches and NICs of the fabric."""
