"""Statistics over stored per-segment values: run arrays, resampling, intervals, significance."""
