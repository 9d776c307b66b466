"""Python models of MRC: the endpoint (NIC) and the fabric's switches."""
