"""Paired significance: the sign test of docs/statistics.md, sacrebleu's paired-bs / paired-ar."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest

from tests.conftest import VOCABULARY as _WORDS
from warehouse.errors import UsageError
from warehouse.metrics.registry import higher_is_better
from warehouse.metrics.surface import compute_segment_stats
from warehouse.stats.arrays import build_run_arrays
from warehouse.stats.resample import BootstrapSettings, resample_indices
from warehouse.stats.significance import SignificanceResult, compare_pair


def _references(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10))) for _ in range(n)]


def _noisy(refs: list[str], seed: int, drop: float) -> list[str]:
    """Each reference with words dropped at rate `drop` (generated systems of varying quality)."""
    rng = random.Random(seed)
    return [" ".join(w for w in r.split() if rng.random() > drop) for r in refs]


def _run(
    run_id: str,
    refs: list[str],
    hyps: list[str],
    *,
    keys: list[str] | None = None,
    errored: list[bool] | None = None,
    entry_values: list[tuple[int, str, float]] = (),
):
    errored = errored or [False] * len(hyps)
    stats = compute_segment_stats(hyps, [[r] for r in refs], errored)
    return build_run_arrays(
        run_id=run_id,
        label=run_id,
        test_corpus_id="t",
        keys=keys or [f"s{i}" for i in range(len(hyps))],
        bleu=stats.bleu,
        chrf=stats.chrf,
        ter=stats.ter,
        exact=stats.exact_match,
        difficulty=[None] * len(hyps),
        entry_values=list(entry_values),
    )


def _by_metric(results: list[SignificanceResult]) -> dict[str, SignificanceResult]:
    return {r.metric_name: r for r in results}


SMALL = BootstrapSettings(n_bootstrap=300, alpha=0.05, seed=12345)


def test_identical_runs_have_p_one_and_no_winner():
    refs = _references(40)
    hyps = _noisy(refs, 1, 0.3)
    values = [(i, "comet", 0.5 + i / 100) for i in range(40)]
    a = _run("a", refs, hyps, entry_values=values)
    b = _run("b", refs, hyps, entry_values=values)
    test = compare_pair(a, b, settings=SMALL)
    assert [r.metric_name for r in test.results] == [
        "chrf_plus_plus",
        "bleu",
        "ter",
        "exact_match_rate",
        "comet",
    ]
    for result in test.results:
        assert result.delta == 0.0 and result.p_value == 1.0
        assert not result.significant and result.winner is None
        assert result.ci_lower == result.ci_upper == 0.0


def test_all_correct_against_all_wrong_is_significant_with_the_right_winner():
    refs = _references(30)
    wrong = ["zzz qqq" for _ in refs]
    good, bad = _run("good", refs, refs), _run("bad", refs, wrong)
    forward = _by_metric(compare_pair(good, bad, settings=SMALL).results)
    backward = _by_metric(compare_pair(bad, good, settings=SMALL).results)
    for metric in ("chrf_plus_plus", "bleu", "exact_match_rate"):
        assert forward[metric].p_value == 0.0 and forward[metric].significant
        assert forward[metric].winner == "A"
        assert backward[metric].winner == "B"
        assert forward[metric].ci_lower > 0
    assert forward["exact_match_rate"].delta == 1.0


def test_lower_is_better_metrics_name_the_lower_run_the_winner():
    refs = _references(30)
    hyps = _noisy(refs, 2, 0.2)
    a = _run("a", refs, hyps, entry_values=[(i, "hallucination_rate", 0.9) for i in range(30)])
    b = _run("b", refs, hyps, entry_values=[(i, "hallucination_rate", 0.1) for i in range(30)])
    result = _by_metric(compare_pair(a, b, settings=SMALL).results)["hallucination_rate"]
    assert result.delta == pytest.approx(0.8) and result.significant
    assert result.winner == "B"
    assert not higher_is_better("ter") and not higher_is_better("plugin_metrics.x.parse_error_rate")
    assert not higher_is_better("plugin_metrics.safety.code_switching_rate")
    assert higher_is_better("comet") and higher_is_better("plugin_metrics.fst.valid")


def test_resamples_without_the_differing_segment_count_against_significance():
    refs = _references(50)
    hyps = list(refs)
    other = list(refs)
    other[17] = "something else entirely"
    a, b = _run("a", refs, hyps), _run("b", refs, other)
    result = _by_metric(compare_pair(a, b, settings=SMALL).results)["exact_match_rate"]
    indices = resample_indices(50, SMALL.n_bootstrap, SMALL.seed)
    missing = float(np.mean(~(indices == 17).any(axis=1)))  # Δ* = 0 in these resamples
    assert result.delta == pytest.approx(0.02)
    assert result.p_value == missing
    assert not result.significant and result.winner is None


def test_same_seed_gives_identical_results_and_another_seed_other_resamples():
    refs = _references(60)
    a, b = _run("a", refs, _noisy(refs, 3, 0.3)), _run("b", refs, _noisy(refs, 4, 0.35))
    first = compare_pair(a, b, settings=SMALL)
    again = compare_pair(a, b, settings=SMALL)
    other = compare_pair(a, b, settings=BootstrapSettings(300, 0.05, seed=99))
    assert first.results == again.results
    assert [r.seed for r in other.results] == [99] * len(other.results)
    assert [(r.ci_lower, r.ci_upper) for r in first.results] != [
        (r.ci_lower, r.ci_upper) for r in other.results
    ]
    for method in ("paired-bs", "paired-ar"):
        assert compare_pair(a, b, method=method, settings=SMALL) == compare_pair(
            a, b, method=method, settings=SMALL
        )


@pytest.mark.parametrize(("method", "test_type"), [("paired-bs", "bs"), ("paired-ar", "ar")])
@pytest.mark.parametrize("seed", [12345, 2024])
def test_sacrebleu_paired_tests_are_reproduced_to_full_precision(
    monkeypatch, method, test_type, seed
):
    refs = _references(120, seed=seed)
    hyps_a, hyps_b = _noisy(refs, seed + 1, 0.25), _noisy(refs, seed + 2, 0.3)
    n = 200
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    paired = PairedTest(
        [("a", hyps_a), ("b", hyps_b)],
        {"BLEU": BLEU(tokenize="13a"), "chrF2++": CHRF(word_order=2), "TER": TER()},
        [refs],
        test_type=test_type,
        n_samples=n,
        n_ar_confidence=n,
    )
    _signatures, expected = paired()
    ours = compare_pair(
        _run("a", refs, hyps_a),
        _run("b", refs, hyps_b),
        method=method,
        settings=BootstrapSettings(n, 0.05, seed),
    )
    results = _by_metric(ours.results)
    for sacre_name, name in (("BLEU", "bleu"), ("chrF2++", "chrf_plus_plus"), ("TER", "ter")):
        baseline, system = expected[sacre_name]
        est_a, est_b = ours.estimates[name]
        assert results[name].p_value == system.p_value
        assert (est_b.score, est_b.mean, est_b.ci) == (system.score, system.mean, system.ci)
        assert (est_a.score, est_a.mean, est_a.ci) == (baseline.score, baseline.mean, baseline.ci)
        assert results[name].system_a_score == baseline.score
        assert results[name].system_b_score == system.score


def test_sacrebleu_methods_never_call_identical_runs_significant(monkeypatch):
    refs = _references(30)
    hyps = _noisy(refs, 5, 0.3)
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    _sigs, expected = PairedTest(
        [("a", hyps), ("b", hyps)], {"BLEU": BLEU(tokenize="13a")}, [refs], "bs", 100
    )()
    ours = compare_pair(
        _run("a", refs, hyps),
        _run("b", refs, hyps),
        method="paired-bs",
        settings=BootstrapSettings(100),
    )
    bleu = _by_metric(ours.results)["bleu"]
    assert bleu.p_value == expected["BLEU"][1].p_value == 1 / 101  # sacrebleu's own value
    assert not bleu.significant and bleu.winner is None


def test_mismatched_ids_test_the_intersection_and_say_what_was_dropped():
    refs = _references(20)
    a = _run("a", refs, refs, keys=[f"s{i}" for i in range(20)])
    b = _run("b", refs[5:], refs[5:], keys=[f"s{i}" for i in range(5, 20)])
    b_extra = _run("b", [*refs[5:], "x"], [*refs[5:], "x"], keys=[*b.keys, "new"])
    test = compare_pair(a, b_extra, settings=SMALL)
    assert test.n_segments == 15 and (test.dropped_a, test.dropped_b) == (5, 1)
    assert any("dropping 5 of A (a) and 1 of B (b)" in w for w in test.warnings)


def test_few_aligned_segments_warn_but_run():
    refs = _references(6)
    test = compare_pair(_run("a", refs, refs), _run("b", refs, refs), settings=SMALL)
    assert any("only 6 aligned segments" in w for w in test.warnings)
    assert len(test.results) == 4  # chrF++, BLEU, TER, exact match


def test_runs_without_common_ids_are_an_error():
    refs = _references(4)
    a = _run("a", refs, refs, keys=["a1", "a2", "a3", "a4"])
    b = _run("b", refs, refs, keys=["b1", "b2", "b3", "b4"])
    with pytest.raises(UsageError, match="no segment ids in common"):
        compare_pair(a, b)


def test_metrics_in_one_run_only_are_named_as_untested():
    refs = _references(12)
    a = _run("a", refs, refs, entry_values=[(0, "comet", 0.3)])
    b = _run("b", refs, refs)
    test = compare_pair(a, b, settings=SMALL)
    assert "comet" not in _by_metric(test.results)
    assert any("not tested" in w and "comet" in w for w in test.warnings)


def test_result_objects_carry_exactly_the_spec_fields():
    refs = _references(12)
    result = compare_pair(_run("a", refs, refs), _run("b", refs, refs)).results[0]
    assert set(result.to_dict()) == {
        "metric_name",
        "system_a_score",
        "system_b_score",
        "delta",
        "p_value",
        "n_bootstrap",
        "confidence_level",
        "significant",
        "winner",
        "ci_lower",
        "ci_upper",
        "seed",
        "mde",
    }
    assert result.n_bootstrap == 1000 and result.seed == 12345
    assert result.confidence_level == pytest.approx(0.95)


@pytest.mark.parametrize("scale", [100, 10**6])
def test_float32_resample_sums_equal_numpys_float32_sums(scale):
    from warehouse.stats.significance import float32_sums

    stats = np.random.default_rng(1).integers(0, scale, size=(40, 10), dtype=np.int64)
    indices = resample_indices(40, 25, seed=7)
    expected = np.stack([stats.astype(np.float32)[row].sum(0) for row in indices])
    assert np.array_equal(float32_sums(stats, indices), expected)


def test_minimum_detectable_difference_is_the_spread_of_the_differences_times_z():
    from warehouse.stats.significance import minimum_detectable_difference

    z = 1.959963984540054 + 0.8416212335729143
    assert minimum_detectable_difference(np.array([-1.0, 1.0, np.nan]), 0.05) == pytest.approx(
        z * np.sqrt(2.0)
    )
    assert minimum_detectable_difference(np.array([1.0]), 0.05) is None


def test_the_detectable_difference_halves_with_four_times_the_segments():
    refs = _references(60)
    hyps_a, hyps_b = _noisy(refs, 21, 0.25), _noisy(refs, 22, 0.3)
    small = compare_pair(_run("a", refs, hyps_a), _run("b", refs, hyps_b), settings=SMALL)
    refs4, a4, b4 = refs * 4, hyps_a * 4, hyps_b * 4
    keys = [f"s{i}" for i in range(240)]
    large = compare_pair(
        _run("a", refs4, a4, keys=keys), _run("b", refs4, b4, keys=keys), settings=SMALL
    )
    ratio = large.result("chrf_plus_plus").mde / small.result("chrf_plus_plus").mde
    assert 0.4 < ratio < 0.6


def test_a_small_insignificant_difference_is_below_what_the_test_set_can_detect():
    refs = _references(50)
    other = list(refs)
    other[3] = "something else entirely"
    tiny = compare_pair(_run("a", refs, refs), _run("b", refs, other), settings=SMALL)
    result = tiny.result("exact_match_rate")
    assert not result.significant and result.mde is not None
    assert abs(result.delta) < result.mde and result.below_mde
    wrong = ["zzz qqq" for _ in refs]
    clear = compare_pair(_run("a", refs, refs), _run("b", refs, wrong), settings=SMALL)
    assert not clear.result("chrf_plus_plus").below_mde
