"""Bootstrap confidence intervals of one run (docs/statistics.md), computed at ingest and stored.

Percentile method over `n_bootstrap` resamples of the run's segments (seed and alpha kept with
every interval): corpus chrF++ and BLEU, exact match rate (errored entries out of numerator and
denominator in every resample), FST acceptance and COMET when the run has per-entry values for
them (the stored scores; nothing is re-run), and the composite, recomputed per resample from the
resampled inputs (run-level inputs held fixed). chrF++ and exact match are also given per
difficulty tier, each tier resampled on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb
import numpy as np

from warehouse.metrics.registry import (
    BLEU,
    BY_NAME,
    CHRF,
    COMPOSITE,
    EXACT_MATCH,
    INTERVAL_ENTRY_METRICS,
    TIER_METRICS,
)
from warehouse.stats.arrays import RunArrays
from warehouse.stats.resample import (
    BootstrapSettings,
    percentile_interval,
    resample_blocks,
    resampled_scores_of,
    run_scores,
)

FEW_FOR_INTERVALS = 30  # below this many segments the interval's coverage may be poor
# Stored per-entry metrics that get an interval, under the name the leaderboard uses.
ENTRY_METRICS = {name: BY_NAME[name].aliases for name in INTERVAL_ENTRY_METRICS}
_TRANSFORMS = {
    "identity": lambda v: v,
    "percent": lambda v: v / 100,
    "invert": lambda v: 1 - v,
}


@dataclass(frozen=True)
class Interval:
    """A bootstrap interval of one metric over a run or one of its difficulty tiers."""

    metric: str
    scope: str
    difficulty: int | None
    estimate: float
    ci_lower: float
    ci_upper: float
    n: int
    n_bootstrap: int
    alpha: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass
class RunConfidence:
    """A run's intervals, plus its whole-run resampled scores (for the composite interval)."""

    settings: BootstrapSettings
    n_segments: int
    intervals: list[Interval] = field(default_factory=list)
    resampled: dict[str, np.ndarray] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _interval(
    metric: str,
    estimate: float | None,
    samples: np.ndarray,
    n: int,
    settings: BootstrapSettings,
    difficulty: int | None = None,
) -> Interval | None:
    """An interval from resampled values; None without an estimate or any finite resample."""
    bounds = percentile_interval(samples, settings.alpha)
    if estimate is None or bounds is None:
        return None
    return Interval(
        metric=metric,
        scope="all" if difficulty is None else f"difficulty={difficulty}",
        difficulty=difficulty,
        estimate=estimate,
        ci_lower=bounds[0],
        ci_upper=bounds[1],
        n=n,
        n_bootstrap=settings.n_bootstrap,
        alpha=settings.alpha,
        seed=settings.seed,
    )


def compute_confidence(arrays: RunArrays, settings: BootstrapSettings) -> RunConfidence:
    """Intervals of every metric the run supports, whole run and per difficulty tier."""
    n = arrays.n_segments
    out = RunConfidence(settings, n)
    if n == 0:
        return out
    if n < FEW_FOR_INTERVALS:
        out.warnings.append(
            f"only {n} segments (fewer than {FEW_FOR_INTERVALS}): bootstrap confidence intervals "
            "may have poor coverage"
        )
    scores = run_scores(arrays)
    out.resampled = resampled_scores_of(
        [arrays], resample_blocks(n, settings.n_bootstrap, settings.seed)
    )[0]
    wanted = [(m, m) for m in (CHRF, BLEU, EXACT_MATCH)]
    for name, aliases in ENTRY_METRICS.items():
        found = next((a for a in aliases if a in arrays.entry_metrics), None)
        if found is not None:
            wanted.append((name, found))
    for name, source in wanted:
        interval = _interval(name, scores[source], out.resampled[source], n, settings)
        if interval is not None:
            out.intervals.append(interval)
    small = []
    for tier in sorted(set(arrays.difficulty.tolist()) - {0}):
        subset = arrays.take(np.flatnonzero(arrays.difficulty == tier))
        if subset.n_segments < FEW_FOR_INTERVALS:
            small.append(f"{tier} ({subset.n_segments})")
        tier_scores = run_scores(subset)
        resampled = resampled_scores_of(
            [subset], resample_blocks(subset.n_segments, settings.n_bootstrap, settings.seed)
        )[0]
        for metric in TIER_METRICS:
            interval = _interval(
                metric, tier_scores[metric], resampled[metric], subset.n_segments, settings, tier
            )
            if interval is not None:
                out.intervals.append(interval)
    if small:
        out.warnings.append(
            f"difficulty tiers with fewer than {FEW_FOR_INTERVALS} segments: {', '.join(small)}; "
            "their intervals may have poor coverage"
        )
    return out


def composite_interval(
    con: duckdb.DuckDBPyConnection, run_id: str, confidence: RunConfidence
) -> Interval | None:
    """The composite's interval for a stored run: each resample recombines the resampled inputs
    with the run's profile weights (missing inputs redistribute their weight, as in the view)."""
    # One read of the view: the composite and its present inputs (each with its transform and
    # source), in metric order.
    row = con.execute(
        "SELECT composite, inputs FROM run_composite WHERE run_id = ?", [run_id]
    ).fetchone()
    if row is None or row[0] is None or not confidence.resampled:
        return None
    samples = composite_samples(row[1], confidence.resampled, confidence.settings.n_bootstrap)
    return _interval(COMPOSITE, float(row[0]), samples, confidence.n_segments, confidence.settings)


def composite_samples(
    inputs: Sequence[dict[str, Any]], resampled: dict[str, np.ndarray], n_resamples: int
) -> np.ndarray:
    """The composite of each resample: its present inputs (`run_composite.inputs`: metric,
    weight, transform, source, value) recombined with their weights, each surface or per-entry
    input from its resampled values and any other at its stored value; missing inputs
    redistribute their weight, as in the view (NaN where no input is present)."""
    weighted = np.zeros(n_resamples)
    weights = np.zeros(n_resamples)
    for item in inputs:
        metric, weight, source = item["metric"], item["weight"], item["source"]
        if source in ("surface", "entries") and metric in resampled:
            values = _TRANSFORMS[item["transform"]](resampled[metric])
        else:
            values = np.full(n_resamples, item["value"])
        present = np.isfinite(values)
        weighted += np.where(present, weight * values, 0.0)
        weights += np.where(present, weight, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(weights > 0, weighted / weights, np.nan)


def write_intervals(
    con: duckdb.DuckDBPyConnection, run_id: str, intervals: Sequence[Interval]
) -> None:
    """Store the intervals of a run just written (it has none yet: deleting a run deletes its
    intervals) in one INSERT: on a lake each statement costs catalog round trips."""
    import pyarrow as pa

    if not intervals:
        return
    rows = pa.Table.from_pylist(
        [{"run_id": run_id, **asdict(i)} for i in intervals],
        schema=pa.schema(
            [
                ("run_id", pa.string()),
                ("metric", pa.string()),
                ("scope", pa.string()),
                ("difficulty", pa.int8()),
                ("estimate", pa.float64()),
                ("ci_lower", pa.float64()),
                ("ci_upper", pa.float64()),
                ("n", pa.int64()),
                ("n_bootstrap", pa.int32()),
                ("alpha", pa.float64()),
                ("seed", pa.int64()),
            ]
        ),
    )
    con.register("_tame_intervals", rows)
    try:
        con.execute("INSERT INTO run_intervals BY NAME SELECT * FROM _tame_intervals")
    finally:
        con.unregister("_tame_intervals")


def load_intervals(con: duckdb.DuckDBPyConnection, run_id: str) -> list[Interval]:
    """A stored run's intervals: whole run first, then by tier, metrics in name order."""
    rows = con.execute(
        "SELECT metric, scope, difficulty, estimate, ci_lower, ci_upper, n, n_bootstrap, alpha, "
        "seed FROM run_intervals WHERE run_id = ? ORDER BY difficulty NULLS FIRST, metric",
        [run_id],
    ).fetchall()
    return [Interval(*row) for row in rows]
