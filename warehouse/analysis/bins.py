"""Intervals of a stored run's exposure bins and GenGap, computed on demand from its per-segment
statistics, its audit's bins and the audit's TM statistics, when it has a TM baseline
(docs/statistics.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

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
    # As Arrow: two million rows of statistics lists as Python tuples took most of a
    # 1,000-run dashboard's build.
    table = con.execute(
        "WITH pairs AS (SELECT unnest(?) AS run_id, unnest(?) AS audit_id) "
        "SELECT p.run_id, p.audit_id, st.seg_idx, e.bin, st.bleu_stats, st.chrf_stats, "
        "t.bleu_stats AS tm_bleu, t.chrf_stats AS tm_chrf "
        "FROM pairs p "
        "JOIN segment_stats st ON st.run_id = p.run_id "
        "JOIN exposures e ON e.audit_id = p.audit_id AND e.seg_idx = st.seg_idx "
        "LEFT JOIN tm_segment_stats t ON t.audit_id = p.audit_id AND t.seg_idx = st.seg_idx "
        "WHERE st.bleu_stats IS NOT NULL AND st.chrf_stats IS NOT NULL "
        "ORDER BY p.run_id, st.seg_idx",
        [list(audit_of), list(audit_of.values())],
    ).to_arrow_table()
    run_ids = table.column("run_id").to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, run_ids[1:] != run_ids[:-1]]) if len(run_ids) else ()
    ends = [*starts[1:], len(run_ids)] if len(run_ids) else []
    bounds = dict(zip(run_ids[list(starts)], zip(starts, ends, strict=True), strict=True))
    # Runs of one audit whose statistics cover the same segments share their draws and TM.
    shared: dict[tuple[str, bytes], dict[Any, Any]] = {}
    found: dict[str, BinIntervals | None] = {}
    for run_id in audit_of:
        if run_id not in bounds:
            found[run_id] = None
            continue
        start, stop = bounds[run_id]
        rows = table.slice(start, stop - start)
        segments = rows.column("seg_idx").to_numpy()
        key = (audit_of[run_id], segments.tobytes())
        found[run_id] = _intervals(rows, settings, shared.setdefault(key, {}))
    return found


def _matrix(rows: pa.Table, column: str, width: int) -> np.ndarray | None:
    """A column of fixed-width statistics lists as a (rows, width) matrix, None when a row has
    none (an audit without a TM baseline)."""
    values = rows.column(column).combine_chunks()
    if values.null_count:
        return None
    return values.flatten().to_numpy().astype(np.int64, copy=False).reshape(len(rows), width)


def _intervals(rows: pa.Table, settings: BootstrapSettings, shared: dict[Any, Any]) -> BinIntervals:
    """The intervals of one run from its rows (bin, its BLEU and chrF++ statistics, the TM's),
    with the draws and TM scores `shared` with the other runs of its audit."""
    bins = rows.column("bin").to_pylist()
    tm_bleu, tm_chrf = _matrix(rows, "tm_bleu", BLEU_STATS), _matrix(rows, "tm_chrf", CHRF_STATS)
    with_tm = tm_bleu is not None and tm_chrf is not None
    bleu, chrf = _matrix(rows, "bleu_stats", BLEU_STATS), _matrix(rows, "chrf_stats", CHRF_STATS)
    assert bleu is not None and chrf is not None  # the query keeps rows with both
    metrics = {
        BLEU: Sides(bleu, tm_bleu if with_tm else None, bleu_scores),
        CHRF: Sides(chrf, tm_chrf if with_tm else None, chrf_scores),
    }
    return bin_intervals(bins, metrics, settings, shared)
