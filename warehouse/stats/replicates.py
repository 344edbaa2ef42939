"""Replicates: runs that repeat one configuration with different seeds, summarised as one
entry: the mean of their corpus scores, the standard deviation across them, and an interval that
counts both segment and seed noise (docs/statistics.md, "Replicates").

The interval is a two-level bootstrap: each resample draws the segments with replacement (the
same draws as a single run's interval, so identical replicates give exactly its interval) and,
independently, the replicates with replacement, and averages the drawn replicates' corpus scores
on the drawn segments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from warehouse.errors import UsageError
from warehouse.metrics.registry import BLEU, CHRF, EXACT_MATCH, TER, higher_is_better
from warehouse.stats.arrays import RunArrays
from warehouse.stats.clusters import (
    CORRECTIONS,
    DEFAULT_CORRECTION,
    Board,
    board_from_p_values,
    sample_p_values,
)
from warehouse.stats.resample import (
    BootstrapSettings,
    percentile_interval,
    resample_blocks,
    resampled_scores_of,
    run_scores,
)

REPLICATE_METRICS = (CHRF, BLEU, TER, EXACT_MATCH)
# The replicate draws use their own stream, so that the segment draws stay those of one run.
_REPLICATE_STREAM = 1


@dataclass(frozen=True)
class ReplicateScore:
    """One metric over the replicates of a configuration."""

    metric: str
    n_replicates: int
    mean: float | None
    sd: float | None  # across replicates (n - 1 in the denominator); None for one replicate
    ci_lower: float | None
    ci_upper: float | None
    values: list[float | None]  # each replicate's corpus score, in run order

    def text(self, digits: int) -> str:
        """`82.28 ± 2.35 [77.64, 86.06]` (± with two or more replicates; n/a without a mean)."""
        if self.mean is None:
            return "n/a"
        out = f"{self.mean:.{digits}f}"
        if self.sd is not None:
            out += f" ± {self.sd:.{digits}f}"
        if self.ci_lower is not None and self.ci_upper is not None:
            out += f" [{self.ci_lower:.{digits}f}, {self.ci_upper:.{digits}f}]"
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def replicate_scores(
    runs: Sequence[RunArrays], settings: BootstrapSettings
) -> dict[str, ReplicateScore]:
    """Mean, spread and segment-and-seed interval of chrF++, BLEU, TER and exact match over `runs`
    (replicates of one configuration on one test set, segments in the same order)."""
    if not runs:
        raise UsageError("no runs to summarise")
    n = runs[0].n_segments
    if any(r.test_corpus_id != runs[0].test_corpus_id or r.n_segments != n for r in runs):
        raise UsageError("replicates must be runs on one test set")
    k = len(runs)
    singles = [run_scores(r) for r in runs]
    resampled = resampled_scores_of(runs, resample_blocks(n, settings.n_bootstrap, settings.seed))
    picks = np.random.default_rng([settings.seed, _REPLICATE_STREAM]).integers(
        0, k, size=(settings.n_bootstrap, k)
    )
    out: dict[str, ReplicateScore] = {}
    for metric in REPLICATE_METRICS:
        values = [s.get(metric) for s in singles]
        finite = [v for v in values if v is not None and np.isfinite(v)]
        if len(finite) != k:
            continue
        matrix = np.column_stack([r[metric] for r in resampled])  # resamples x replicates
        samples = np.take_along_axis(matrix, picks, axis=1).mean(axis=1)
        bounds = percentile_interval(samples, settings.alpha)
        out[metric] = ReplicateScore(
            metric=metric,
            n_replicates=k,
            mean=float(np.mean(finite)),
            sd=float(np.std(finite, ddof=1)) if k > 1 else None,
            ci_lower=bounds[0] if bounds else None,
            ci_upper=bounds[1] if bounds else None,
            values=values,
        )
    return out


def group_tie_groups(
    groups: Sequence[Sequence[RunArrays]],
    metric: str,
    *,
    correction: str = DEFAULT_CORRECTION,
    settings: BootstrapSettings | None = None,
    directions: Mapping[str, bool] | None = None,
) -> Board:
    """Tie groups of replicate groups (one test set): every pair compared on the mean of its
    replicates' scores, resampling the segments (the same draws for all) and, within each
    group, its replicates; the sign test's p-value, corrected; then clusters and rank ranges
    by the rule of `tie_groups`. Each group is named by its first run."""
    if correction not in CORRECTIONS:
        raise UsageError(
            f"--correction: expected one of {', '.join(CORRECTIONS)}, got {correction!r}"
        )
    if len(groups) < 2:
        raise UsageError("clusters need at least two replicate groups on the test set")
    runs = [run for group in groups for run in group]
    if any(r.keys != runs[0].keys for r in runs):
        raise UsageError("replicate groups to cluster must be runs on the same segments")
    s = settings or BootstrapSettings()
    singles = [run_scores(r) for r in runs]
    if any(x.get(metric) is None for x in singles):
        raise UsageError(f"a run has no {metric}: clusters need the metric on every run")
    resampled = resampled_scores_of(
        runs, resample_blocks(runs[0].n_segments, s.n_bootstrap, s.seed)
    )
    rng = np.random.default_rng([s.seed, _REPLICATE_STREAM])
    means, samples, start = [], [], 0
    for group in groups:
        k = len(group)
        matrix = np.column_stack([resampled[start + i][metric] for i in range(k)])
        picks = rng.integers(0, k, size=(s.n_bootstrap, k))
        samples.append(np.take_along_axis(matrix, picks, axis=1).mean(axis=1))
        means.append(float(np.mean([singles[start + i][metric] for i in range(k)])))
        start += k
    raw = sample_p_values("sign", means, samples)
    return board_from_p_values(
        runs[0].test_corpus_id, runs[0].test_set, metric, "two-level sign", correction, s,
        runs[0].n_segments, [group[0].run_id for group in groups], means, raw,
        higher_is_better(metric, directions),
    )  # fmt: skip
