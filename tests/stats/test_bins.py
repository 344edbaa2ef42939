"""Intervals per exposure bin and for GenGap: a stratified bootstrap whose intervals cover the
known answer about 95% of the time."""

from __future__ import annotations

import numpy as np

from warehouse.stats.bins import Sides, bin_intervals
from warehouse.stats.resample import BootstrapSettings, percentile_interval, resample_sums


def _mean(sums: np.ndarray) -> np.ndarray:
    return sums[:, 0] / sums[:, 1]


def _columns(values: np.ndarray) -> np.ndarray:
    return np.column_stack([values, np.ones_like(values)])


SYSTEM = {"source_exact": 0.9, "near": 0.8, "medium": 0.6, "far": 0.4}
TM = {"source_exact": 0.95, "near": 0.5, "medium": 0.2, "far": 0.1}


def _simulated(rng: np.random.Generator, per_bin: int = 120) -> tuple[list[str], Sides]:
    """Per-segment values around known means per bin, the TM's paired with the system's."""
    labels, system, tm = [], [], []
    for name in SYSTEM:  # in the order of the exposure bins
        shared = rng.normal(0, 0.2, per_bin)  # segment difficulty both sides feel
        system.append(SYSTEM[name] + shared + rng.normal(0, 0.1, per_bin))
        tm.append(TM[name] + shared + rng.normal(0, 0.1, per_bin))
        labels += [name] * per_bin
    return labels, Sides(_columns(np.concatenate(system)), _columns(np.concatenate(tm)), _mean)


def _covers(interval, truth: float) -> bool:
    return interval[0] <= truth <= interval[1]


def test_intervals_cover_the_known_answer_about_95_percent_of_the_time():
    rng = np.random.default_rng(2026)
    hits = {"near": 0, "delta": 0, "gengap": 0, "difference": 0}
    runs = 500
    for k in range(runs):
        labels, sides = _simulated(rng)
        found = bin_intervals(labels, {"m": sides}, BootstrapSettings(400, 0.05, k))
        near = found.bins["near"]["m"]
        gap = found.gengap["m"]
        hits["near"] += _covers(near["system"], SYSTEM["near"])
        hits["delta"] += _covers(near["delta"], SYSTEM["near"] - TM["near"])
        hits["gengap"] += _covers(gap["system"], SYSTEM["near"] - SYSTEM["far"])
        truth = (SYSTEM["near"] - SYSTEM["far"]) - (TM["near"] - TM["far"])
        hits["difference"] += _covers(gap["difference"], truth)
    for what, count in hits.items():
        assert 0.92 <= count / runs <= 0.975, (what, count / runs)


def test_a_system_whose_gengap_is_larger_than_the_tms_is_called_so():
    rng = np.random.default_rng(5)
    labels, sides = _simulated(rng)  # system GenGap 0.4, TM GenGap 0.4: no difference
    same = bin_intervals(labels, {"m": sides}, BootstrapSettings(1000, 0.05, 1)).gengap["m"]
    assert not same["exceeds_tm"]
    near = np.array([name == "near" for name in labels])
    boosted = Sides(sides.system + np.column_stack([near * 0.3, 0 * near]), sides.tm, _mean)
    more = bin_intervals(labels, {"m": boosted}, BootstrapSettings(1000, 0.05, 1)).gengap["m"]
    assert more["exceeds_tm"] and more["p_exceeds"] < 0.05
    assert more["difference"][0] > 0


def test_empty_bins_have_no_intervals_and_gengap_needs_near_and_far():
    rng = np.random.default_rng(9)
    labels, sides = _simulated(rng, per_bin=10)
    keep = np.array([name != "far" for name in labels])
    found = bin_intervals(
        [name for name in labels if name != "far"],
        {"m": Sides(sides.system[keep], sides.tm[keep], _mean)},
        BootstrapSettings(200, 0.05, 3),
    )
    assert set(found.bins) == {"source_exact", "near", "medium"}
    assert found.gengap == {}
    doc = found.to_dict()
    assert doc["n_bootstrap"] == 200 and len(doc["bins"]["near"]["m"]["system"]) == 2


def test_the_same_seed_gives_the_same_intervals():
    rng = np.random.default_rng(4)
    labels, sides = _simulated(rng, per_bin=30)
    first = bin_intervals(labels, {"m": sides}, BootstrapSettings(300, 0.05, 8))
    again = bin_intervals(labels, {"m": sides}, BootstrapSettings(300, 0.05, 8))
    other = bin_intervals(labels, {"m": sides}, BootstrapSettings(300, 0.05, 9))
    assert first.to_dict() == again.to_dict() != other.to_dict()


def test_runs_sharing_their_draws_get_what_each_alone_gets_to_the_bit():
    # Integer statistics (BLEU's and chrF's) summed through the draws' counts, shared by the
    # runs of one audit: the numbers of summing each run's drawn rows on its own.
    rng = np.random.default_rng(5)
    labels = [name for name in SYSTEM for _ in range(40)]
    settings = BootstrapSettings(200, 0.05, 9)
    tm = rng.integers(0, 30, size=(len(labels), 2)).astype(np.int64) + np.array([0, 1])
    shared: dict = {}
    for _run in range(3):
        system = rng.integers(0, 30, size=(len(labels), 2)).astype(np.int64) + np.array([0, 1])
        alone = bin_intervals(labels, {"m": Sides(system, tm, _mean)}, settings)
        together = bin_intervals(labels, {"m": Sides(system, tm, _mean)}, settings, shared)
        picks = np.random.default_rng(9)  # the draws of the first bin, summed row by row
        rows = np.flatnonzero(np.asarray(labels) == "source_exact")
        drawn = rows[picks.integers(0, rows.size, size=(200, rows.size))]
        first = resample_sums(system, drawn)
        assert together.to_dict() == alone.to_dict()
        assert alone.bins["source_exact"]["m"]["system"] == percentile_interval(_mean(first), 0.05)
