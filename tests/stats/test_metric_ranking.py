"""Metrics ranked by agreement with people (warehouse/stats/metric_ranking.py): paired bootstrap
p-values and significance clusters, on worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from warehouse.stats.metric_ranking import paired_p_value, rank_metrics


def test_the_paired_p_value_is_twice_the_smaller_tail_of_the_differences():
    a = np.array([0.9, 0.8, 0.7, 0.6, np.nan])
    b = np.array([0.5, 0.85, 0.4, 0.3, 0.2])  # the NaN resample is left out
    # Differences 0.4, -0.05, 0.3, 0.3: one of four at or below 0.
    assert paired_p_value(a, b) == pytest.approx(2 * 0.25)
    assert paired_p_value(b, a) == pytest.approx(0.5)
    assert paired_p_value(a, a) == 1.0  # every difference is 0: on both sides
    assert paired_p_value(np.array([np.nan]), np.array([1.0])) == 1.0


def test_clusters_break_where_a_metric_is_significantly_below_its_clusters_best():
    rng = np.random.default_rng(1)
    base = rng.normal(size=1000)
    samples = {
        "x": 0.90 + 0.01 * base,
        "y": 0.899 + 0.01 * base + 0.001 * rng.normal(size=1000),  # tied with x
        "z": 0.80 + 0.01 * base,  # below x in every resample
        "w": 0.799 + 0.01 * base + 0.001 * rng.normal(size=1000),  # tied with z
    }
    values = {"x": 0.9, "y": 0.899, "z": 0.8, "w": 0.799, "none": None}
    ranking = rank_metrics(values, samples, 0.05, level="system", statistic="pearson",
                           bin_name="all")  # fmt: skip
    assert [(r["metric"], r["cluster"]) for r in ranking.ranked] == [
        ("x", 1), ("y", 1), ("z", 2), ("w", 2)
    ]  # fmt: skip
    assert ranking.p_values["x"]["z"] == 0.0 and ranking.p_values["x"]["y"] > 0.05
