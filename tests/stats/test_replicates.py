"""Replicates summarised: mean and spread across seeds, and an interval that counts segment and
seed noise — exactly a single run's interval when the replicates are identical, wider than
every single run's when the seeds differ."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.conftest import VOCABULARY
from warehouse.errors import UsageError
from warehouse.metrics.surface import compute_segment_stats
from warehouse.stats.arrays import build_run_arrays
from warehouse.stats.intervals import compute_confidence
from warehouse.stats.replicates import replicate_scores
from warehouse.stats.resample import BootstrapSettings

SETTINGS = BootstrapSettings(n_bootstrap=1000, alpha=0.05, seed=7)
N = 120


def _references() -> list[str]:
    rng = random.Random(2)
    return [" ".join(rng.choice(VOCABULARY) for _ in range(8)) for _ in range(N)]


def _run(refs: list[str], quality: float, seed: int, run_id: str, test: str = "t"):
    """A system keeping each reference word with probability `quality` (draws by `seed`)."""
    keep = random.Random(seed)
    hyps = [" ".join(w for w in r.split() if keep.random() < quality) for r in refs]
    stats = compute_segment_stats(hyps, [[r] for r in refs], [False] * N)
    return build_run_arrays(
        run_id=run_id, label=run_id, test_corpus_id=test, keys=[str(i) for i in range(N)],
        bleu=stats.bleu, chrf=stats.chrf, ter=stats.ter, exact=stats.exact_match,
        difficulty=[None] * N, entry_values=[],
    )  # fmt: skip


def _single(arrays, metric: str) -> tuple[float, float]:
    found = next(i for i in compute_confidence(arrays, SETTINGS).intervals if i.metric == metric)
    return found.ci_lower, found.ci_upper


def test_identical_replicates_have_exactly_the_single_runs_interval_and_no_spread():
    refs = _references()
    run = _run(refs, 0.7, 1, "a")
    scores = replicate_scores([run, run, run], SETTINGS)
    for metric in ("chrf_plus_plus", "bleu"):
        s = scores[metric]
        assert s.n_replicates == 3 and s.sd == 0.0
        assert (s.ci_lower, s.ci_upper) == _single(run, metric)
        assert s.values == [s.mean] * 3


def test_replicates_that_differ_by_seed_have_a_wider_interval_than_any_single_run():
    refs = _references()
    runs = [_run(refs, q, seed, f"r{seed}") for seed, q in enumerate((0.55, 0.65, 0.75, 0.85))]
    scores = replicate_scores(runs, SETTINGS)
    for metric in ("chrf_plus_plus", "bleu"):
        s = scores[metric]
        width = s.ci_upper - s.ci_lower
        singles = [_single(r, metric) for r in runs]
        assert all(width > hi - lo for lo, hi in singles), (width, singles)
        assert s.mean == pytest.approx(np.mean(s.values)) and s.sd > 0
        assert s.ci_lower < s.mean < s.ci_upper


def test_one_replicate_is_a_single_run_and_runs_of_two_test_sets_are_refused():
    refs = _references()
    run = _run(refs, 0.7, 1, "a")
    alone = replicate_scores([run], SETTINGS)["chrf_plus_plus"]
    assert alone.sd is None and (alone.ci_lower, alone.ci_upper) == _single(run, "chrf_plus_plus")
    with pytest.raises(UsageError, match="one test set"):
        replicate_scores([run, _run(refs, 0.7, 2, "b", test="other")], SETTINGS)
