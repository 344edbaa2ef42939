"""Bootstrap resampling over stored per-segment statistics, and metrics from summed statistics.

A resample is a row of segment indices drawn with replacement by numpy's `default_rng(seed)`
(`choice(n, size=(n_resamples, n))`, the draws sacrebleu makes for the same seed). Its statistics
are sums of the indexed statistic rows, computed by the native kernel in int64 (BLEU, chrF++) or
float64 (per-entry values, in index order); a corpus score is the metric's formula on the sums.
Nothing is re-tokenised and sacrebleu is never called per resample here. The vectorised formulas
repeat sacrebleu's operations in sacrebleu's order (equal to `corpus_score` to ~1e-12; the
logarithm and exponential are numpy's rather than the math module's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from warehouse.errors import UsageError
from warehouse.metrics.registry import BLEU, CHRF, EXACT_MATCH, TER
from warehouse.metrics.scores import (
    bleu_from_stats,
    bleu_scores,
    chrf_from_stats,
    chrf_scores,
    ordered_sum,
    ter_from_stats,
    ter_scores,
)
from warehouse.native import native
from warehouse.stats.arrays import RunArrays
from warehouse.stats.limits import MAX_RESAMPLES
from warehouse.store.settings import read_settings

DEFAULT_N_BOOTSTRAP = 1000
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 12345

_BLOCK_INDICES = 1 << 22  # resample indices held at once (32 MiB)


@dataclass(frozen=True)
class BootstrapSettings:
    """Number of resamples, significance level (CI width 1 - alpha) and seed."""

    n_bootstrap: int = DEFAULT_N_BOOTSTRAP
    alpha: float = DEFAULT_ALPHA
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.n_bootstrap < 1:
            raise UsageError(f"the number of resamples must be at least 1, got {self.n_bootstrap}")
        if self.n_bootstrap > MAX_RESAMPLES:
            raise UsageError(
                f"the number of resamples must be at most {MAX_RESAMPLES:,}, "
                f"got {self.n_bootstrap:,}"
            )
        if not 0 < self.alpha < 1:
            raise UsageError(f"alpha must be between 0 and 1 (exclusive), got {self.alpha}")
        if self.seed < 0:
            raise UsageError(f"the seed must be a non-negative integer, got {self.seed}")

    @property
    def confidence_level(self) -> float:
        """1 - alpha."""
        return 1.0 - self.alpha


def bootstrap_settings(
    con: duckdb.DuckDBPyConnection | None,
    n_bootstrap: int | None = None,
    alpha: float | None = None,
    seed: int | None = None,
) -> BootstrapSettings:
    """Explicit values where given; else the warehouse's `settings` rows bootstrap.n,
    bootstrap.alpha and bootstrap.seed; else (no row, no warehouse) the defaults of
    docs/statistics.md."""
    stored = read_settings(con) if con is not None and None in (n_bootstrap, alpha, seed) else {}

    def setting(key: str, whole: bool, valid: Callable[[float], bool], rule: str) -> float | None:
        value = stored.get(key)
        if value is not None and (not valid(value) or (whole and value != int(value))):
            raise UsageError(f"settings {key} must be {rule}, got {value:g}")
        return value

    if n_bootstrap is None:
        n = setting("bootstrap.n", True, lambda v: v >= 1, "a whole number of at least 1")
        n_bootstrap = DEFAULT_N_BOOTSTRAP if n is None else int(n)
    if alpha is None:
        a = setting("bootstrap.alpha", False, lambda v: 0 < v < 1, "between 0 and 1 (exclusive)")
        alpha = DEFAULT_ALPHA if a is None else a
    if seed is None:
        s = setting("bootstrap.seed", True, lambda v: v >= 0, "a whole number of at least 0")
        seed = DEFAULT_SEED if s is None else int(s)
    return BootstrapSettings(n_bootstrap, alpha, seed)


def resample_indices(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """`n_resamples` rows of `n_items` indices drawn with replacement (int64)."""
    rng = np.random.default_rng(seed)
    return rng.choice(n_items, size=(n_resamples, n_items), replace=True).astype(
        np.int64, copy=False
    )


def resample_blocks(n_items: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The rows of `resample_indices` in consecutive blocks of at most ~4M indices: the same
    draws (numpy's generator continues its stream across calls) in bounded memory."""
    rng = np.random.default_rng(seed)
    per_block = max(1, _BLOCK_INDICES // max(n_items, 1))
    for start in range(0, n_resamples, per_block):
        rows = min(per_block, n_resamples - start)
        yield rng.choice(n_items, size=(rows, n_items), replace=True).astype(np.int64, copy=False)


def resample_sums(stats: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Per-resample column sums of `stats` rows: int64 stays int64, anything else is float64."""
    if stats.ndim != 2 or indices.ndim != 2:
        raise ValueError("stats and indices must be two-dimensional")
    shape = (indices.shape[0], stats.shape[1])
    # The kernel reads both arrays in place and writes the sums into the array allocated here:
    # nothing is copied but what ascontiguousarray converts (an array that is not C-contiguous
    # or not of the dtype).
    picks = np.ascontiguousarray(indices, dtype=np.int64)
    if stats.dtype == np.int64:
        counts = np.empty(shape, dtype=np.int64)
        if counts.size:
            native.resample_sums_i64(np.ascontiguousarray(stats), picks, counts)
        return counts
    sums = np.empty(shape, dtype=np.float64)
    if sums.size:
        native.resample_sums_f64(np.ascontiguousarray(stats, dtype=np.float64), picks, sums)
    return sums


def mean_scores(value_sums: np.ndarray, count_sums: np.ndarray) -> np.ndarray:
    """Means from summed values and counts; NaN where a resample has nothing to average."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count_sums > 0, value_sums / count_sums, np.nan)


def percentile_interval(samples: np.ndarray, alpha: float) -> tuple[float, float] | None:
    """Percentile-method interval (numpy's linear quantiles at alpha/2 and 1 - alpha/2) over the
    finite samples; None when there are none."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    lower, upper = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(lower), float(upper)


def _distinct_column_sums(stats: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """`resample_sums`, summing each distinct column once (paired runs share many, such as
    reference-side counts) and copying the sums to its duplicates."""
    first: dict[bytes, int] = {}
    position = [first.setdefault(stats[:, j].tobytes(), len(first)) for j in range(stats.shape[1])]
    if len(first) == stats.shape[1]:
        return resample_sums(stats, indices)
    keep = [position.index(k) for k in range(len(first))]
    return resample_sums(np.ascontiguousarray(stats[:, keep]), indices)[:, position]


def _present_columns(values: np.ndarray) -> np.ndarray:
    """[value (0 where NaN), 1.0 where present] as two float64 columns."""
    present = np.isfinite(values)
    return np.column_stack([np.where(present, values, 0.0), present.astype(np.float64)])


def run_scores(arrays: RunArrays) -> dict[str, float | None]:
    """Whole-run scores: corpus chrF++, BLEU and TER (sacrebleu's formulas on the summed
    statistics; TER None for a run stored without it), exact match rate over evaluated entries,
    and the mean of each per-entry metric."""
    scores: dict[str, float | None] = {
        CHRF: chrf_from_stats(arrays.chrf.sum(axis=0)),
        BLEU: bleu_from_stats(arrays.bleu.sum(axis=0)),
        TER: _corpus_ter(arrays.ter),
    }
    for name, values in ((EXACT_MATCH, arrays.exact), *arrays.entry_metrics.items()):
        present = values[np.isfinite(values)]
        scores[name] = float(present.sum() / present.size) if present.size else None
    return scores


def _corpus_ter(ter: np.ndarray) -> float | None:
    """Corpus TER of per-segment statistics summed in segment order; None when any segment has
    no TER statistics."""
    return ter_from_stats(ordered_sum(ter)) if np.isfinite(ter).all() else None


def resampled_scores(arrays: RunArrays, indices: np.ndarray) -> dict[str, np.ndarray]:
    """Every metric of `run_scores` for each resample (row of `indices`); means are NaN in a
    resample without any value (errored entries leave exact match's numerator and denominator)."""
    return resampled_scores_of([arrays], indices)[0]


def resampled_scores_of(
    runs: Sequence[RunArrays], indices: np.ndarray | Iterable[np.ndarray]
) -> list[dict[str, np.ndarray]]:
    """`resampled_scores` of several runs over the same segments and resamples, summing all of
    their statistics in one pass over the indices (int64 counts, float64 per-entry values).
    `indices` is one array of resamples or an iterable of consecutive blocks of them."""
    blocks = [indices] if isinstance(indices, np.ndarray) else indices
    parts = [_resampled_block(runs, block) for block in blocks]
    return [
        {name: np.concatenate([p[k][name] for p in parts]) for name in parts[0][k]}
        for k in range(len(runs))
    ]


def _resampled_block(runs: Sequence[RunArrays], indices: np.ndarray) -> list[dict[str, np.ndarray]]:
    """`resampled_scores_of` for one block of resamples."""
    counts, values, layout = [], [], []
    for run in runs:
        evaluated = np.isfinite(run.exact)
        hits = np.where(evaluated, run.exact, 0).astype(np.int64)
        counts.append(np.column_stack([run.bleu, run.chrf, hits, evaluated.astype(np.int64)]))
        values += [_present_columns(v) for v in run.entry_metrics.values()]
        if np.isfinite(run.ter).all():
            values.append(run.ter)
        layout.append(list(run.entry_metrics))
    count_sums = _distinct_column_sums(np.hstack(counts), indices)
    value_sums = resample_sums(np.hstack(values), indices) if values else None
    out = []
    col, value_col = 0, 0
    for run, names in zip(runs, layout, strict=True):
        n_bleu, n_chrf = run.bleu.shape[1], run.chrf.shape[1]
        bleu = count_sums[:, col : col + n_bleu]
        chrf = count_sums[:, col + n_bleu : col + n_bleu + n_chrf]
        hits, evaluated = (
            count_sums[:, col + n_bleu + n_chrf],
            count_sums[:, col + n_bleu + n_chrf + 1],
        )
        col += n_bleu + n_chrf + 2
        scores = {
            CHRF: chrf_scores(chrf),
            BLEU: bleu_scores(bleu),
            EXACT_MATCH: mean_scores(hits.astype(np.float64), evaluated),
        }
        for name in names:
            assert value_sums is not None
            scores[name] = mean_scores(value_sums[:, value_col], value_sums[:, value_col + 1])
            value_col += 2
        if np.isfinite(run.ter).all():
            assert value_sums is not None
            scores[TER] = ter_scores(value_sums[:, value_col : value_col + run.ter.shape[1]])
            value_col += run.ter.shape[1]
        out.append(scores)
    return out
