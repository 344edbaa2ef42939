"""Which metric agrees best with people: metrics ranked by an agreement statistic, each pair
tested on the bootstrap resamples every metric shares (docs/human.md, "Which metric to trust").

The statistic of two metrics is recomputed on the same resamples of segments, so their
difference is paired: the two-sided p-value is twice the smaller share of resamples on either
side of zero (at most 1). Significance clusters are formed down the ranking: a metric joins the
cluster of the metric above it unless it is significantly below (p < alpha) that cluster's
best, and then starts the next cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass
class MetricRanking:
    """One statistic's ranking of the metrics at one level, on one bin's segments."""

    level: str
    statistic: str
    bin: str
    alpha: float
    ranked: list[dict[str, object]] = field(default_factory=list)  # metric, value, cluster
    p_values: dict[str, dict[str, float]] = field(default_factory=dict)  # two-sided, by pair
    verdict: str = ""  # one line for people (set by the caller, who knows the labels)


def paired_p_value(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided bootstrap p-value of statistic a - statistic b on shared resamples (the
    resamples where either is undefined left out; 1.0 without any)."""
    keep = np.isfinite(a) & np.isfinite(b)
    if not keep.any():
        return 1.0
    difference = a[keep] - b[keep]
    below, above = float(np.mean(difference <= 0)), float(np.mean(difference >= 0))
    return min(1.0, 2.0 * min(below, above))


def rank_metrics(
    values: Mapping[str, float | None],
    samples: Mapping[str, np.ndarray],
    alpha: float,
    *,
    level: str,
    statistic: str,
    bin_name: str,
) -> MetricRanking:
    """The metrics with a value, best first, their pairwise p-values and clusters."""
    present = {m: v for m, v in values.items() if v is not None}
    order = sorted(present, key=lambda m: -present[m])
    ranking = MetricRanking(level, statistic, bin_name, alpha)
    for a in order:
        ranking.p_values[a] = {b: paired_p_value(samples[a], samples[b]) for b in order if b != a}
    cluster, leader = 0, None
    for metric in order:
        if leader is None or ranking.p_values[leader][metric] < alpha:
            cluster, leader = cluster + 1, metric
        ranking.ranked.append({"metric": metric, "value": present[metric], "cluster": cluster})
    return ranking
