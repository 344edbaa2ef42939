"""HTML pages over the analysis layer: a report file per run and a static dashboard."""
