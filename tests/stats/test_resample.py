"""The bootstrap engine: resample sums, vectorised BLEU/chrF++ against sacrebleu, determinism."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from warehouse.errors import UsageError
from warehouse.metrics.surface import compute_segment_stats
from warehouse.stats.arrays import build_run_arrays
from warehouse.stats.resample import (
    BootstrapSettings,
    percentile_interval,
    resample_indices,
    resample_sums,
    resampled_scores,
)

_WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "hill",
    "big",
    "small",
    "red",
    "blue",
    ".",
    ",",
    "and",
]


def _system(seed: int, n: int) -> tuple[list[str], list[str]]:
    """Random references and a noisy hypothesis for each (some empty, some one word long)."""
    rng = random.Random(seed)
    refs, hyps = [], []
    for _ in range(n):
        ref = [rng.choice(_WORDS) for _ in range(rng.randint(1, 12))]
        hyp = [w for w in ref if rng.random() > 0.3]
        if rng.random() < 0.2:
            hyp.append(rng.choice(_WORDS))
        if rng.random() < 0.05:
            hyp = []
        refs.append(" ".join(ref))
        hyps.append(" ".join(hyp))
    return refs, hyps


def _arrays(refs: list[str], hyps: list[str], errored: list[bool] | None = None):
    errored = errored or [False] * len(hyps)
    stats = compute_segment_stats(hyps, [[r] for r in refs], errored)
    return build_run_arrays(
        run_id="r",
        label="r",
        test_corpus_id="t",
        keys=[str(i) for i in range(len(hyps))],
        bleu=stats.bleu,
        chrf=stats.chrf,
        ter=stats.ter,
        exact=stats.exact_match,
        difficulty=[None] * len(hyps),
        entry_values=[],
    )


def test_resample_sums_are_exact_int64_sums_of_the_indexed_rows():
    rng = np.random.default_rng(0)
    stats = rng.integers(0, 2**40, size=(50, 34), dtype=np.int64)
    indices = resample_indices(50, 20, seed=3)
    sums = resample_sums(stats, indices)
    assert sums.dtype == np.int64
    assert np.array_equal(sums, stats[indices].sum(axis=1))
    for width in (1, 10, 24):
        part = np.ascontiguousarray(stats[:, :width])
        assert np.array_equal(resample_sums(part, indices), part[indices].sum(axis=1))


def test_float_resample_sums_add_in_index_order():
    values = np.array([[0.1], [0.2], [0.7]])
    indices = np.array([[2, 1, 0], [0, 0, 0]])
    sums = resample_sums(values, indices)
    assert sums[0, 0] == 0.7 + 0.2 + 0.1
    assert sums[1, 0] == 0.1 + 0.1 + 0.1


def test_resample_sums_reject_indices_outside_the_rows():
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        resample_sums(np.ones((2, 3), dtype=np.int64), np.array([[0, 2]]))


def test_resampled_bleu_and_chrf_equal_sacrebleu_on_the_resampled_segment_lists():
    refs, hyps = _system(seed=1, n=60)
    arrays = _arrays(refs, hyps)
    indices = resample_indices(len(hyps), 8, seed=12345)
    scores = resampled_scores(arrays, indices)
    for k, row in enumerate(indices):
        picked_hyps = [hyps[i] for i in row]
        picked_refs = [[refs[i] for i in row]]
        bleu = BLEU(tokenize="13a").corpus_score(picked_hyps, picked_refs).score
        chrf = CHRF(word_order=2).corpus_score(picked_hyps, picked_refs).score
        assert scores["bleu"][k] == pytest.approx(bleu, abs=1e-9)
        assert scores["chrf_plus_plus"][k] == pytest.approx(chrf, abs=1e-9)


def test_exact_match_resamples_leave_errored_entries_out_of_both_counts():
    refs = ["a", "b", "c", "d"]
    hyps = ["a", "x", "", "d"]
    arrays = _arrays(refs, hyps, errored=[False, False, True, False])
    indices = np.array([[0, 1, 2, 2], [2, 2, 2, 2], [0, 3, 2, 1]])
    exact = resampled_scores(arrays, indices)["exact_match_rate"]
    assert exact[0] == pytest.approx(1 / 2)  # segment 2 errored: 1 match of 2 evaluated
    assert np.isnan(exact[1])  # nothing evaluated
    assert exact[2] == pytest.approx(2 / 3)


def test_same_seed_draws_the_same_resamples_and_another_seed_does_not():
    first = resample_indices(100, 50, seed=12345)
    assert np.array_equal(first, resample_indices(100, 50, seed=12345))
    assert not np.array_equal(first, resample_indices(100, 50, seed=54321))
    expected = np.random.default_rng(12345).choice(100, size=(50, 100), replace=True)
    assert np.array_equal(first, expected)  # numpy's draws, as sacrebleu makes them


def test_percentile_interval_uses_linear_quantiles_of_finite_samples():
    samples = np.array([np.nan, *range(101)], dtype=float)
    assert percentile_interval(samples, 0.05) == (2.5, 97.5)
    assert percentile_interval(np.array([np.nan]), 0.05) is None


def test_settings_reject_impossible_values():
    with pytest.raises(UsageError, match="at least 1"):
        BootstrapSettings(n_bootstrap=0)
    with pytest.raises(UsageError, match="alpha"):
        BootstrapSettings(alpha=1.0)
    with pytest.raises(UsageError, match="seed"):
        BootstrapSettings(seed=-1)
    assert BootstrapSettings().confidence_level == pytest.approx(0.95)


def test_resample_blocks_draw_the_same_resamples_in_bounded_blocks(monkeypatch):
    import warehouse.stats.resample as bootstrap

    monkeypatch.setattr(bootstrap, "_BLOCK_INDICES", 7 * 3)
    blocks = list(bootstrap.resample_blocks(7, 10, seed=12345))
    assert [len(b) for b in blocks] == [3, 3, 3, 1]
    assert np.array_equal(np.vstack(blocks), resample_indices(7, 10, seed=12345))
    refs, hyps = _system(seed=4, n=7)
    arrays = _arrays(refs, hyps)
    whole = resampled_scores(arrays, resample_indices(7, 10, seed=12345))
    [blocked] = bootstrap.resampled_scores_of([arrays], blocks)
    for name, values in whole.items():
        assert np.array_equal(values, blocked[name], equal_nan=True)
