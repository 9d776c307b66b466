"""`make bench`: speed and scale figures, written to bench/results/."""
