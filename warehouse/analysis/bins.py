"""Intervals of a stored run's exposure bins and GenGap, computed on demand from its per-segment
statistics, its audit's bins and the audit's TM statistics (docs/statistics.md)."""

from __future__ import annotations

import duckdb
import numpy as np

from warehouse.metrics.registry import BLEU, CHRF
from warehouse.metrics.scores import BLEU_STATS, CHRF_STATS, bleu_scores, chrf_scores
from warehouse.stats.bins import BinIntervals, Sides, bin_intervals
from warehouse.stats.resample import BootstrapSettings


def run_bin_intervals(
    con: duckdb.DuckDBPyConnection, run_id: str, audit_id: str, settings: BootstrapSettings
) -> BinIntervals | None:
    """BLEU and chrF++ intervals of every bin and of GenGap for one run against one audit of
    its test set, on the segments its bin sums count (None when there are none)."""
    rows = con.execute(
        "SELECT e.bin, st.bleu_stats, st.chrf_stats, t.bleu_stats, t.chrf_stats "
        "FROM segment_stats st "
        "JOIN exposures e ON e.audit_id = ? AND e.seg_idx = st.seg_idx "
        "JOIN tm_segment_stats t ON t.audit_id = ? AND t.seg_idx = st.seg_idx "
        "WHERE st.run_id = ? AND st.bleu_stats IS NOT NULL AND st.chrf_stats IS NOT NULL "
        "ORDER BY st.seg_idx",
        [audit_id, audit_id, run_id],
    ).fetchall()
    if not rows:
        return None
    bins = [r[0] for r in rows]

    def matrix(column: int, width: int) -> np.ndarray:
        return np.asarray([r[column] for r in rows], dtype=np.int64).reshape(len(rows), width)

    metrics = {
        BLEU: Sides(matrix(1, BLEU_STATS), matrix(3, BLEU_STATS), bleu_scores),
        CHRF: Sides(matrix(2, CHRF_STATS), matrix(4, CHRF_STATS), chrf_scores),
    }
    return bin_intervals(bins, metrics, settings)
