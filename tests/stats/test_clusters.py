"""Tie groups: all-pairs p-values as sacrebleu gives them, corrections as statsmodels gives them,
clusters and rank ranges by the rule of docs/statistics.md."""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest
from statsmodels.stats.multitest import multipletests

from tests.stats.test_significance import _noisy, _references, _run
from warehouse.errors import UsageError
from warehouse.stats.clusters import (
    adjust_p_values,
    rank_runs,
    resamples_to_resolve,
    tie_groups,
)
from warehouse.stats.resample import BootstrapSettings
from warehouse.stats.significance import compare_pair

DROPS = (0.15, 0.2, 0.22, 0.3, 0.45)  # five systems of decreasing quality


def _systems(n_segments: int = 80, seed: int = 11) -> tuple[list[str], dict[str, list[str]]]:
    refs = _references(n_segments, seed=seed)
    return refs, {f"sys{k}": _noisy(refs, seed + k, drop) for k, drop in enumerate(DROPS)}


def _p(board, a: str, b: str) -> float:
    for pair in board.pairs:
        if {pair.run_a, pair.run_b} == {a, b}:
            return pair.p_value
    raise KeyError((a, b))


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_corrections_equal_statsmodels(correction):
    rng = np.random.default_rng(3)
    for size in (1, 2, 7, 78):
        p = rng.choice([0.0009990009990009, 0.01, 0.03, 0.2, 0.5, 1.0], size=size)
        p = np.where(rng.random(size) < 0.5, p, rng.random(size))
        name = {"holm": "holm", "bh": "fdr_bh"}[correction]
        expected = multipletests(p, alpha=0.05, method=name)[1]
        assert np.array_equal(adjust_p_values(p, correction), expected)
    assert np.array_equal(adjust_p_values([0.2, 0.01], "none"), [0.2, 0.01])


@pytest.mark.parametrize(("method", "test_type"), [("paired-bs", "bs"), ("paired-ar", "ar")])
def test_all_pairs_equal_sacrebleus_paired_test_run_once_per_baseline(
    monkeypatch, method, test_type
):
    refs, systems = _systems()
    names = list(systems)
    runs = [_run(name, refs, systems[name]) for name in names]
    n, seed = 200, 2024
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    settings = BootstrapSettings(n, 0.05, seed)
    metrics = {"BLEU": BLEU(tokenize="13a"), "chrF2++": CHRF(word_order=2), "TER": TER()}
    ours = {
        name: tie_groups(runs, name, method=method, settings=settings)
        for name in ("bleu", "chrf_plus_plus", "ter")
    }
    for i, baseline in enumerate(names[:-1]):
        others = names[i + 1 :]
        _sigs, expected = PairedTest(
            [(baseline, systems[baseline]), *((o, systems[o]) for o in others)],
            metrics,
            [refs],
            test_type=test_type,
            n_samples=n,
            n_ar_confidence=n,
        )()
        for sacre_name, name in (("BLEU", "bleu"), ("chrF2++", "chrf_plus_plus"), ("TER", "ter")):
            for k, other in enumerate(others, start=1):
                assert _p(ours[name], baseline, other) == expected[sacre_name][k].p_value


@pytest.mark.parametrize("method", ["sign", "paired-bs", "paired-ar"])
def test_all_pairs_equal_compare_pair_on_every_metric_kind(method):
    refs, systems = _systems(50)
    values = {
        name: [(i, "comet", 0.3 + 0.01 * ((i * (k + 3)) % 40)) for i in range(50)]
        for k, name in enumerate(systems)
    }
    runs = [_run(name, refs, hyps, entry_values=values[name]) for name, hyps in systems.items()]
    settings = BootstrapSettings(150, 0.05, 7)
    for metric in ("chrf_plus_plus", "ter", "exact_match_rate", "comet"):
        board = tie_groups(runs, metric, method=method, correction="none", settings=settings)
        for pair in board.pairs:
            a = next(r for r in runs if r.run_id == pair.run_a)
            b = next(r for r in runs if r.run_id == pair.run_b)
            expected = compare_pair(a, b, method=method, settings=settings).result(metric)
            assert pair.p_value == expected.p_value
            assert pair.adjusted == pair.p_value


def test_runs_on_different_segments_are_tested_pair_by_pair_on_common_ones():
    refs, systems = _systems(40)
    runs = [_run(name, refs, hyps) for name, hyps in systems.items()]
    runs[2] = runs[2].take(np.arange(5, 40))
    settings = BootstrapSettings(100, 0.05, 1)
    board = tie_groups(runs, "bleu", method="paired-bs", correction="none", settings=settings)
    expected = compare_pair(runs[0], runs[2], method="paired-bs", settings=settings)
    assert _p(board, "sys0", "sys2") == expected.result("bleu").p_value
    assert board.n_segments == 35


def test_hand_worked_clusters_and_rank_ranges():
    ids, scores = ["a", "b", "c", "d"], [40.0, 39.0, 30.0, 20.0]
    beats = np.zeros((4, 4), dtype=bool)
    for winner, loser in (("a", "c"), ("a", "d"), ("b", "d")):
        beats[ids.index(winner), ids.index(loser)] = True
    ranks = rank_runs(ids, scores, beats, higher=True)
    assert [(r.run_id, r.cluster, r.best_rank, r.worst_rank) for r in ranks] == [
        ("a", 1, 1, 2),
        ("b", 1, 1, 3),
        ("c", 1, 2, 4),
        ("d", 1, 3, 4),
    ]
    beats[ids.index("c"), ids.index("d")] = True  # now everything above d beats d
    ranks = rank_runs(ids, scores, beats, higher=True)
    assert [(r.cluster, r.best_rank, r.worst_rank) for r in ranks] == [
        (1, 1, 2),
        (1, 1, 3),
        (1, 2, 3),
        (2, 4, 4),
    ]
    # Lower is better: the lowest score comes first.
    assert [r.run_id for r in rank_runs(ids, scores, beats.T, higher=False)] == [
        "d",
        "c",
        "b",
        "a",
    ]


def _check_rule(board) -> None:
    """Every boundary between clusters is one where each run above beats each run below, and
    every other position is not; rank ranges count the wins and losses."""
    order = [r.run_id for r in board.ranks]
    beats = {
        (p.winner, p.run_b if p.winner == p.run_a else p.run_a) for p in board.pairs if p.winner
    }
    for k in range(1, len(order)):
        separated = all((a, b) in beats for a in order[:k] for b in order[k:])
        assert (board.ranks[k].cluster > board.ranks[k - 1].cluster) == separated
    for rank in board.ranks:
        losses = sum(1 for _w, loser in beats if loser == rank.run_id)
        wins = sum(1 for w, _l in beats if w == rank.run_id)
        assert (rank.best_rank, rank.worst_rank) == (1 + losses, len(order) - wins)


def test_a_clear_board_splits_into_clusters_by_the_rule():
    refs, systems = _systems(150)
    runs = [_run(name, refs, hyps) for name, hyps in systems.items()]
    for metric in ("chrf_plus_plus", "bleu", "ter"):
        board = tie_groups(runs, metric, settings=BootstrapSettings(1000, 0.05, 12345))
        _check_rule(board)
        assert board.ranks[0].run_id == "sys0" and board.ranks[-1].run_id == "sys4"
        assert board.ranks[-1].cluster > 1  # the worst system is separated from the rest
        assert board.notes == []


def test_too_few_resamples_for_the_correction_are_said_with_the_count_that_works():
    assert resamples_to_resolve("paired-bs", 0.05, 78, "holm") == 2000
    assert resamples_to_resolve("paired-bs", 0.05, 105, "holm") == 3000
    assert resamples_to_resolve("paired-bs", 0.05, 10, "holm") == 1000
    assert resamples_to_resolve("sign", 0.05, 78, "holm") == 1000
    refs, systems = _systems(30)
    runs = [_run(name, refs, hyps) for name, hyps in systems.items()]
    board = tie_groups(runs, "bleu", settings=BootstrapSettings(100, 0.05, 1))  # 10 pairs
    assert not board.resolvable
    assert "use at least 1,000 resamples" in board.notes[0]
    assert all(p.winner is None for p in board.pairs)
    assert {r.cluster for r in board.ranks} == {1}


def test_bad_boards_are_usage_errors():
    refs, systems = _systems(20)
    runs = [_run(name, refs, hyps) for name, hyps in systems.items()]
    with pytest.raises(UsageError, match="at least two runs"):
        tie_groups(runs[:1], "bleu")
    with pytest.raises(UsageError, match="one test set"):
        tie_groups(
            [runs[0], runs[1].__class__(**{**runs[1].__dict__, "test_corpus_id": "u"})], "bleu"
        )
    with pytest.raises(UsageError, match="has no comet"):
        tie_groups(runs, "comet")
    with pytest.raises(UsageError, match="--correction"):
        tie_groups(runs, "bleu", correction="bonferroni")
