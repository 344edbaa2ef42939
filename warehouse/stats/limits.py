"""Bounds on the work a statistics request may ask for (kept apart from the numeric code, so the
command line can check options without importing it)."""

# The most bootstrap resamples / randomisation trials accepted, from an option or a settings row
# (100 times the default; more would run for hours without changing any reported digit).
MAX_RESAMPLES = 100_000

# How a gate's metrics may share the error of its decision (warehouse/stats/gate.py).
GATE_CORRECTIONS = ("holm", "bonferroni", "none")
