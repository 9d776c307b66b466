"""Running scenarios: one run's description (wiring.py), carried by the
timed fabric (run.py) or by BMv2 (on_bmv2.py), the driver that posts messages on both (driver.py), the
scenario's events applied to a fabric (faults.py), why messages were not
delivered (outcome.py), a run's memory before it starts (footprint.py),
every run as a Ray task (parallel.py) with its cache (run_cache.py) and
progress display (progress.py), and the timing of one run (timing.py)."""
