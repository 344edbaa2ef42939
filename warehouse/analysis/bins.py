"""Intervals of a stored run's exposure bins and GenGap, computed on demand from its per-segment
statistics, its audit's bins and the audit's TM statistics, when it has a TM baseline
(docs/statistics.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb
import numpy as np

from warehouse.basics import grouped
from warehouse.metrics.registry import BLEU, CHRF
from warehouse.metrics.scores import BLEU_STATS, CHRF_STATS, bleu_scores, chrf_scores
from warehouse.stats.bins import BinIntervals, Sides, bin_intervals
from warehouse.stats.resample import BootstrapSettings


def run_bin_intervals(
    con: duckdb.DuckDBPyConnection, run_id: str, audit_id: str, settings: BootstrapSettings
) -> BinIntervals | None:
    """BLEU and chrF++ intervals of every bin and of GenGap for one run against one audit of
    its test set, on the segments its bin sums count (None when there are none)."""
    return runs_bin_intervals(con, {run_id: audit_id}, settings)[run_id]


def runs_bin_intervals(
    con: duckdb.DuckDBPyConnection, audit_of: Mapping[str, str], settings: BootstrapSettings
) -> dict[str, BinIntervals | None]:
    """`run_bin_intervals` of each run against the audit `audit_of` names for it, the
    statistics of all of them read in one query."""
    rows = con.execute(
        "WITH pairs AS (SELECT unnest(?) AS run_id, unnest(?) AS audit_id) "
        "SELECT p.run_id, e.bin, st.bleu_stats, st.chrf_stats, t.bleu_stats, t.chrf_stats "
        "FROM pairs p "
        "JOIN segment_stats st ON st.run_id = p.run_id "
        "JOIN exposures e ON e.audit_id = p.audit_id AND e.seg_idx = st.seg_idx "
        "LEFT JOIN tm_segment_stats t ON t.audit_id = p.audit_id AND t.seg_idx = st.seg_idx "
        "WHERE st.bleu_stats IS NOT NULL AND st.chrf_stats IS NOT NULL "
        "ORDER BY p.run_id, st.seg_idx",
        [list(audit_of), list(audit_of.values())],
    ).fetchall()
    by_run = grouped(rows, lambda r: r[0])
    return {run_id: _intervals(by_run.get(run_id, []), settings) for run_id in audit_of}


def _intervals(rows: list[tuple[Any, ...]], settings: BootstrapSettings) -> BinIntervals | None:
    """The intervals of one run from its rows (run, bin, its BLEU and chrF++ statistics, the
    TM's), None without rows."""
    if not rows:
        return None
    bins = [r[1] for r in rows]

    def matrix(column: int, width: int) -> np.ndarray:
        return np.asarray([r[column] for r in rows], dtype=np.int64).reshape(len(rows), width)

    if any(r[4] is None for r in rows):  # an audit without a TM baseline (the target side)
        return bin_intervals(
            bins,
            {
                BLEU: Sides(matrix(2, BLEU_STATS), None, bleu_scores),
                CHRF: Sides(matrix(3, CHRF_STATS), None, chrf_scores),
            },
            settings,
        )
    metrics = {
        BLEU: Sides(matrix(2, BLEU_STATS), matrix(4, BLEU_STATS), bleu_scores),
        CHRF: Sides(matrix(3, CHRF_STATS), matrix(5, CHRF_STATS), chrf_scores),
    }
    return bin_intervals(bins, metrics, settings)
