"""Metrics: the metric registry, surface statistics and corpus scores, cyzil kernels."""
