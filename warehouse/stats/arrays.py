"""One run's per-segment values as numpy arrays, keyed by segment id, and aligning two runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.errors import UsageError
from warehouse.metrics.scores import BLEU_STATS, CHRF_STATS, TER_STATS


@dataclass(frozen=True)
class RunArrays:
    """Per-segment statistics of one run, row k = segment `keys[k]`.

    `exact` is 1.0 / 0.0, NaN for errored entries; `ter` is NaN when TER was not computed;
    `difficulty` is 0 where unknown; each array of `entry_metrics` holds one per-entry metric,
    NaN where the entry has no value.
    """

    run_id: str
    label: str
    test_corpus_id: str
    keys: list[str]
    bleu: np.ndarray
    chrf: np.ndarray
    ter: np.ndarray
    exact: np.ndarray
    difficulty: np.ndarray
    entry_metrics: dict[str, np.ndarray]
    test_set: str = ""  # the test set's name (people read it; `test_corpus_id` identifies it)

    @property
    def n_segments(self) -> int:
        """Number of segments."""
        return len(self.keys)

    def take(self, rows: np.ndarray) -> RunArrays:
        """The same run restricted to (and reordered by) `rows`."""
        return replace(
            self,
            keys=[self.keys[i] for i in rows],
            bleu=self.bleu[rows],
            chrf=self.chrf[rows],
            ter=self.ter[rows],
            exact=self.exact[rows],
            difficulty=self.difficulty[rows],
            entry_metrics={k: v[rows] for k, v in self.entry_metrics.items()},
        )


def build_run_arrays(
    *,
    run_id: str,
    label: str,
    test_corpus_id: str,
    keys: Sequence[str],
    bleu: Sequence[Sequence[int]],
    chrf: Sequence[Sequence[int]],
    ter: Sequence[Sequence[float]],
    exact: Sequence[bool | None],
    difficulty: Sequence[int | None],
    entry_values: Sequence[tuple[int, str, float]],
    test_set: str = "",
) -> RunArrays:
    """Arrays from per-segment Python values; `entry_values` are (segment, metric, value)."""
    n = len(keys)
    metrics: dict[str, np.ndarray] = {}
    for idx, name, value in entry_values:
        metrics.setdefault(name, np.full(n, np.nan))[idx] = value
    return RunArrays(
        run_id=run_id,
        label=label,
        test_corpus_id=test_corpus_id,
        keys=list(keys),
        bleu=np.asarray(bleu, dtype=np.int64).reshape(n, BLEU_STATS),
        chrf=np.asarray(chrf, dtype=np.int64).reshape(n, CHRF_STATS),
        ter=np.asarray(ter, dtype=np.float64).reshape(n, TER_STATS)
        if len(ter) or not n
        else np.full((n, TER_STATS), np.nan),
        exact=np.array([np.nan if e is None else float(e) for e in exact], dtype=np.float64),
        difficulty=np.array([d or 0 for d in difficulty], dtype=np.int64),
        entry_metrics=dict(sorted(metrics.items())),
        test_set=test_set,
    )


def _matrix(
    table: pa.Table, column: str, width: int, dtype: type, *, optional: bool = False
) -> np.ndarray:
    """A list column of fixed-width statistic vectors as an (n, width) array; with `optional`,
    a column of NULLs (statistics not computed, e.g. TER turned off) gives NaN rows."""
    lists = table.column(column).combine_chunks()
    if optional and lists.null_count == len(lists):
        return np.full((len(lists), width), np.nan)
    # The lengths from the offsets in numpy: pyarrow.compute's first call imports pandas (about
    # 0.4 s of a `meta` that takes 1).
    lengths = np.diff(np.asarray(lists.offsets)) if len(lists) else np.zeros(0)
    if lists.null_count or bool((lengths != width).any()):
        raise UsageError(f"stored {column} are missing or not {width} values long; re-ingest")
    return lists.flatten().to_numpy(zero_copy_only=False).astype(dtype).reshape(-1, width)


def load_run_arrays(con: duckdb.DuckDBPyConnection, run_id: str, label: str = "") -> RunArrays:
    """Read one stored run's per-segment statistics, segment ids and per-entry metrics."""
    head = con.execute(
        "SELECT r.test_corpus_id, r.model_slug, r.condition, c.name FROM runs r "
        "JOIN corpora c ON c.corpus_id = r.test_corpus_id WHERE r.run_id = ?",
        [run_id],
    ).fetchone()
    if head is None:
        raise UsageError(f"unknown run {run_id!r}")
    table = con.execute(
        "SELECT st.seg_idx, s.seg_key, st.bleu_stats, st.chrf_stats, st.ter_stats, "
        # NULLs become NaN and 0 here: casts in pyarrow.compute would import pandas (0.4 s).
        "coalesce(CAST(st.exact_match AS DOUBLE), 'NaN'::DOUBLE) AS exact_match, "
        "coalesce(CAST(s.difficulty AS BIGINT), 0) AS difficulty FROM segment_stats st "
        "JOIN segments s ON s.corpus_id = ? AND s.seg_idx = st.seg_idx "
        "WHERE st.run_id = ? ORDER BY st.seg_idx",
        [head[0], run_id],
    ).to_arrow_table()
    seg_idx = table.column("seg_idx").to_numpy()
    values = con.execute(
        "SELECT seg_idx, metric, value FROM metric_values "
        "WHERE run_id = ? AND seg_idx IS NOT NULL ORDER BY metric, seg_idx",
        [run_id],
    ).to_arrow_table()
    metric_names = np.array(values.column("metric").to_pylist(), dtype=object)
    positions = np.searchsorted(seg_idx, values.column("seg_idx").to_numpy())
    metric_values = values.column("value").to_numpy()
    entry_metrics: dict[str, np.ndarray] = {}
    for name in sorted(set(metric_names.tolist())):
        column = np.full(len(seg_idx), np.nan)
        rows = metric_names == name
        column[positions[rows]] = metric_values[rows]
        entry_metrics[name] = column
    condition = f"/{head[2]}" if head[2] else ""
    return RunArrays(
        run_id=run_id,
        label=label or f"{run_id} ({head[1]}{condition})",
        test_corpus_id=head[0],
        keys=table.column("seg_key").to_pylist(),
        bleu=_matrix(table, "bleu_stats", BLEU_STATS, np.int64),
        chrf=_matrix(table, "chrf_stats", CHRF_STATS, np.int64),
        ter=_matrix(table, "ter_stats", TER_STATS, np.float64, optional=True),
        exact=table.column("exact_match").to_numpy(),
        difficulty=table.column("difficulty").to_numpy(),
        entry_metrics=entry_metrics,
        test_set=head[3],
    )


@dataclass(frozen=True)
class Alignment:
    """Two runs restricted to their common segment ids (in the first run's order)."""

    a: RunArrays
    b: RunArrays
    dropped_a: int
    dropped_b: int

    @property
    def n_segments(self) -> int:
        """Number of common segments."""
        return self.a.n_segments


def align(a: RunArrays, b: RunArrays) -> Alignment:
    """Restrict both runs to the segment ids they share; no common id is an error."""
    if a.keys == b.keys:
        return Alignment(a, b, 0, 0)
    position_b = {key: i for i, key in enumerate(b.keys)}
    rows_a = [i for i, key in enumerate(a.keys) if key in position_b]
    if not rows_a:
        raise UsageError(
            f"runs {a.run_id} and {b.run_id} have no segment ids in common "
            f"({a.n_segments} and {b.n_segments} segments); nothing to compare"
        )
    rows_b = [position_b[a.keys[i]] for i in rows_a]
    return Alignment(
        a.take(np.array(rows_a, dtype=np.int64)),
        b.take(np.array(rows_b, dtype=np.int64)),
        dropped_a=a.n_segments - len(rows_a),
        dropped_b=b.n_segments - len(rows_b),
    )
