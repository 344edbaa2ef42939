"""Tie groups of a board: every pair of runs tested on one shared set of resamples, p-values
corrected for multiple comparisons, and each run's rank range and cluster (docs/statistics.md).

The per-run work (resampled scores, or for approximate randomisation the sums of the statistics
each trial keeps) is done once per run; a pair then costs a comparison of two arrays, not a test
of its own. With every run on the same segments the p-value of each pair equals what
`compare_pair` (and sacrebleu's `PairedTest` with the first run as its baseline) gives.

Rules:
* run A *beats* run B when their corrected p-value is below alpha and A's score is better by
  the metric's direction;
* a run's rank range is best = 1 + the runs that beat it, worst = N - the runs it beats;
* runs in score order (best first) are cut into clusters between positions k and k + 1 exactly
  when every run above beats every run below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from warehouse.errors import UsageError
from warehouse.metrics.registry import BLEU, CHRF, EXACT_MATCH, TER, higher_is_better, label
from warehouse.stats.arrays import RunArrays
from warehouse.stats.resample import (
    BootstrapSettings,
    resample_blocks,
    resample_indices,
    resample_sums,
    resampled_scores_of,
    run_scores,
)
from warehouse.stats.significance import (
    CORPUS_METRICS,
    METHODS,
    compare_pair,
    corpus_stats,
    float32_sums,
    moses_p_value,
    sacrebleu_scores,
    sign_p_value,
)

CORRECTIONS = ("holm", "bh", "none")
DEFAULT_CORRECTION = "holm"
DEFAULT_METHOD = "paired-bs"
# Metrics with a resampled form (per-entry metrics too, by their own names).
CLUSTER_METRICS = (CHRF, BLEU, TER, EXACT_MATCH)


def adjust_p_values(p_values: Sequence[float], correction: str) -> np.ndarray:
    """p-values corrected for multiple comparisons: Holm's step-down (`holm`), Benjamini and
    Hochberg's step-up false discovery rate (`bh`) or none; each capped at 1."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if correction == "none" or m == 0:
        return p.copy()
    order = np.argsort(p, kind="mergesort")
    ranked = p[order]
    if correction == "holm":
        stepped = np.maximum.accumulate((m - np.arange(m)) * ranked)
    elif correction == "bh":
        stepped = np.minimum.accumulate((ranked / (np.arange(1, m + 1) / m))[::-1])[::-1]
    else:
        raise UsageError(
            f"--correction: expected one of {', '.join(CORRECTIONS)}, got {correction!r}"
        )
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


# Tests whose p-value is a share of resamples (it can be 0): the sign test of runs, and of
# replicate groups (stats/replicates.py).
SIGN_METHODS = ("sign", "two-level sign")


def smallest_p_value(method: str, n_resamples: int) -> float:
    """The smallest p-value a test can return: 1 / (n + 1) for sacrebleu's tests, 0 for the sign
    test (a share of resamples)."""
    return 0.0 if method in SIGN_METHODS else 1.0 / (n_resamples + 1)


def corrected_threshold(alpha: float, n_pairs: int, correction: str) -> float:
    """The p-value a single pair must beat when every other pair is far from significant."""
    return alpha if correction == "none" else alpha / max(n_pairs, 1)


def resamples_to_resolve(method: str, alpha: float, n_pairs: int, correction: str) -> int:
    """The fewest resamples, rounded up to a thousand, whose smallest p-value is below the
    corrected threshold (1,000 when that is enough)."""
    if method in SIGN_METHODS:
        return 1000
    threshold = corrected_threshold(alpha, n_pairs, correction)
    needed = math.floor(1.0 / threshold - 1.0) + 1  # 1 / (n + 1) < threshold
    return max(1000, -(-needed // 1000) * 1000)


# The most resamples a board adds while a pair's corrected decision is within Monte-Carlo error
# of its level (32 times the default 1,000).
BOARD_MAX_RESAMPLES = 32_000
# The Monte-Carlo interval of a p-value that must clear the level it is compared with (99.9%).
_MC_Z = 3.2905


def pair_levels(p_values: Sequence[float], alpha: float, correction: str) -> np.ndarray:
    """The level each raw p-value is compared with by the correction: Holm's alpha / (m - rank)
    by ascending p, Benjamini and Hochberg's alpha * (rank + 1) / m, or alpha."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    levels = np.full(m, alpha)
    if correction == "none" or m == 0:
        return levels
    order = np.argsort(p, kind="mergesort")
    ranks = np.arange(m)
    levels[order] = alpha / (m - ranks) if correction == "holm" else alpha * (ranks + 1) / m
    return levels


def within_mc_error(p_value: float, n: int, level: float) -> bool:
    """Whether a p-value estimated from n resamples is within Monte-Carlo error of a level (its
    99.9% interval holds it): more resamples could decide the other way."""
    half = _MC_Z * math.sqrt(max(p_value * (1 - p_value), 1.0 / n) / n)
    return p_value - half < level < p_value + half


@dataclass(frozen=True)
class RunRank:
    """One run's place on a board: score, cluster (1 = best) and rank range."""

    run_id: str
    score: float
    cluster: int
    best_rank: int
    worst_rank: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "run_id": self.run_id,
            "score": self.score,
            "cluster": self.cluster,
            "rank_range": [self.best_rank, self.worst_rank],
        }


@dataclass(frozen=True)
class PairP:
    """The test of one pair: raw and corrected p-value, and who beats whom (None: neither)."""

    run_a: str
    run_b: str
    p_value: float
    adjusted: float
    winner: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "p_value": self.p_value,
            "adjusted_p_value": self.adjusted,
            "winner": self.winner,
        }


@dataclass(frozen=True)
class Board:
    """The tie groups of the runs of one test set on one metric."""

    test_corpus_id: str
    test_set: str
    metric: str
    method: str
    correction: str
    settings: BootstrapSettings
    n_segments: int
    ranks: list[RunRank]  # best first
    pairs: list[PairP]
    notes: list[str]

    def open_pairs(self) -> list[PairP]:
        """The pairs whose corrected decision is within Monte-Carlo error of its level."""
        levels = pair_levels([q.p_value for q in self.pairs], self.settings.alpha,
                             self.correction)  # fmt: skip
        n = self.settings.n_bootstrap
        return [q for q, lv in zip(self.pairs, levels, strict=True)
                if within_mc_error(q.p_value, n, float(lv))]  # fmt: skip

    def closest_pair(self) -> PairP | None:
        """The pair nearest to being told apart: the smallest adjusted p-value."""
        return min(self.pairs, key=lambda q: (q.adjusted, q.p_value), default=None)

    @property
    def resolvable(self) -> bool:
        """Whether the smallest attainable p-value is below the corrected threshold."""
        threshold = corrected_threshold(self.settings.alpha, len(self.pairs), self.correction)
        return smallest_p_value(self.method, self.settings.n_bootstrap) < threshold

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "test_set": self.test_set,
            "test_corpus_id": self.test_corpus_id,
            "metric": self.metric,
            "method": self.method,
            "correction": self.correction,
            "n_bootstrap": self.settings.n_bootstrap,
            "alpha": self.settings.alpha,
            "seed": self.settings.seed,
            "n_segments": self.n_segments,
            "ranks": [r.to_dict() for r in self.ranks],
            "pairs": [p.to_dict() for p in self.pairs],
            "notes": self.notes,
        }


def _metric_scores(runs: Sequence[RunArrays], metric: str) -> list[float]:
    """Each run's whole-run score of `metric`; a run without one is a usage error."""
    scores = []
    for run in runs:
        value = run_scores(run).get(metric)
        if value is None:
            raise UsageError(
                f"run {run.run_id} has no {label(metric)} (not stored for it): clusters need "
                "the metric on every run; choose another metric"
            )
        scores.append(value)
    return scores


def _sign_p_values(
    runs: Sequence[RunArrays], metric: str, scores: list[float], s: BootstrapSettings
) -> dict[tuple[int, int], float]:
    """The sign test of every pair, from each run's resampled scores."""
    blocks = resample_blocks(runs[0].n_segments, s.n_bootstrap, s.seed)
    samples = [r[metric] for r in resampled_scores_of(runs, blocks)]
    return {
        (i, j): sign_p_value(scores[i] - scores[j], samples[i] - samples[j])
        for i, j in combinations(range(len(runs)), 2)
    }


def _paired_bs_p_values(
    runs: Sequence[RunArrays], metric: str, scores: list[float], s: BootstrapSettings
) -> dict[tuple[int, int], float]:
    """sacrebleu's paired bootstrap of every pair, from each run's resampled scores."""
    indices = resample_indices(runs[0].n_segments, s.n_bootstrap, s.seed)
    if metric in CORPUS_METRICS:
        samples = [
            sacrebleu_scores(metric, float32_sums(corpus_stats(r, metric), indices)) for r in runs
        ]
    else:
        samples = [r[metric] for r in resampled_scores_of(runs, indices)]
    out = {}
    for i, j in combinations(range(len(runs)), 2):
        baseline, system = samples[i], samples[j]
        keep = np.isfinite(baseline) & np.isfinite(system)
        diffs = np.abs(system[keep] - baseline[keep])
        out[i, j] = moses_p_value(diffs - diffs.mean(), abs(scores[i] - scores[j]))
    return out


def _whole(stats: np.ndarray) -> bool:
    """Whether sums of these statistics are exact in any order (integers, or whole floats)."""
    return stats.dtype == np.int64 or bool(np.all(stats == np.round(stats)))


def _paired_ar_p_values(
    runs: Sequence[RunArrays], metric: str, scores: list[float], s: BootstrapSettings
) -> dict[tuple[int, int], float]:
    """sacrebleu's approximate randomisation of every pair. A trial swaps each segment's
    statistics between the two runs by one shared coin per segment; for whole-number statistics
    a pair's swapped sums come from each run's sums over the kept segments, computed once."""
    n_seg = runs[0].n_segments
    rng = np.random.default_rng(s.seed)
    selection = rng.integers(2, size=(s.n_bootstrap, n_seg), dtype=bool)
    pairs = list(combinations(range(len(runs)), 2))
    out = {}
    if metric in CORPUS_METRICS and all(_whole(corpus_stats(r, metric)) for r in runs):
        picks = np.where(selection, np.arange(n_seg), n_seg)  # n_seg = an all-zero row
        kept, totals = [], []
        for run in runs:
            stats = corpus_stats(run, metric)
            padded = np.vstack([stats, np.zeros((1, stats.shape[1]), dtype=stats.dtype)])
            kept.append(resample_sums(padded, picks))
            totals.append(stats.sum(axis=0))
        for i, j in pairs:
            shuffled_a = totals[j] + kept[i] - kept[j]
            shuffled_b = totals[i] - kept[i] + kept[j]
            if shuffled_a.dtype != np.int64:
                shuffled_a, shuffled_b = (
                    shuffled_a.astype(np.float64),
                    shuffled_b.astype(np.float64),
                )
            scores_a = sacrebleu_scores(metric, shuffled_a)
            scores_b = sacrebleu_scores(metric, shuffled_b)
            out[i, j] = moses_p_value(np.abs(scores_a - scores_b), abs(scores[i] - scores[j]))
        return out
    for i, j in pairs:
        # Fractional statistics and means: the pair's own sums, rounded as sacrebleu rounds.
        out[i, j] = (
            compare_pair(runs[i], runs[j], method="paired-ar", settings=s).result(metric).p_value
        )
    return out


_ALL_PAIRS = {
    "sign": _sign_p_values,
    "paired-bs": _paired_bs_p_values,
    "paired-ar": _paired_ar_p_values,
}


def _pairwise_p_values(
    runs: Sequence[RunArrays], metric: str, scores: list[float], method: str, s: BootstrapSettings
) -> dict[tuple[int, int], float]:
    """The p-value of every pair (i < j): in one pass when all runs share their segments, else
    pair by pair on each pair's common segments."""
    if all(r.keys == runs[0].keys for r in runs):
        return _ALL_PAIRS[method](runs, metric, scores, s)
    return {
        (i, j): compare_pair(runs[i], runs[j], method=method, settings=s).result(metric).p_value
        for i, j in combinations(range(len(runs)), 2)
    }


def rank_runs(
    run_ids: Sequence[str], scores: Sequence[float], beats: np.ndarray, higher: bool
) -> list[RunRank]:
    """Rank ranges and clusters from the matrix `beats[i, j]` (run i beats run j)."""
    n = len(run_ids)
    order = sorted(range(n), key=lambda i: (-scores[i] if higher else scores[i], run_ids[i]))
    ranked = beats[np.ix_(order, order)]
    cluster, out = 1, []
    for position, i in enumerate(order):
        if position and ranked[:position, position:].all():
            cluster += 1
        out.append(
            RunRank(
                run_id=run_ids[i],
                score=scores[i],
                cluster=cluster,
                best_rank=1 + int(beats[:, i].sum()),
                worst_rank=n - int(beats[i, :].sum()),
            )
        )
    return out


def tie_groups(
    runs: Sequence[RunArrays],
    metric: str,
    *,
    method: str = DEFAULT_METHOD,
    correction: str = DEFAULT_CORRECTION,
    settings: BootstrapSettings | None = None,
    directions: Mapping[str, bool] | None = None,
) -> Board:
    """Test every pair of `runs` (one test set) on `metric`, correct the p-values and place each
    run: its cluster and rank range."""
    if method not in METHODS:
        raise UsageError(f"--method: expected one of {', '.join(METHODS)}, got {method!r}")
    if correction not in CORRECTIONS:
        raise UsageError(
            f"--correction: expected one of {', '.join(CORRECTIONS)}, got {correction!r}"
        )
    if len(runs) < 2:
        raise UsageError("clusters need at least two runs on the test set")
    if len({r.test_corpus_id for r in runs}) > 1:
        raise UsageError("clusters compare runs of one test set; these runs are on several")
    if len({r.run_id for r in runs}) < len(runs):
        raise UsageError("a run is named twice")
    s = settings or BootstrapSettings()
    scores = _metric_scores(runs, metric)
    raw = _pairwise_p_values(runs, metric, scores, method, s)
    return board_from_p_values(
        runs[0].test_corpus_id, runs[0].test_set, metric, method, correction, s,
        min(r.n_segments for r in runs), [r.run_id for r in runs], scores, raw,
        higher_is_better(metric, directions),
    )  # fmt: skip


def sample_p_values(
    method: str, scores: Sequence[float], samples: Sequence[np.ndarray]
) -> dict[tuple[int, int], float]:
    """Every pair's p-value from each run's score on the same resamples (`samples[i]`, one
    value per resample): the sign test, or sacrebleu's paired bootstrap formula."""
    out = {}
    for i, j in combinations(range(len(scores)), 2):
        if method == "sign":
            out[i, j] = sign_p_value(scores[i] - scores[j], samples[i] - samples[j])
            continue
        keep = np.isfinite(samples[i]) & np.isfinite(samples[j])
        diffs = np.abs(samples[j][keep] - samples[i][keep])
        out[i, j] = moses_p_value(diffs - diffs.mean(), abs(scores[i] - scores[j]))
    return out


def board_from_p_values(
    test_corpus_id: str,
    test_set: str,
    metric: str,
    method: str,
    correction: str,
    s: BootstrapSettings,
    n_segments: int,
    run_ids: Sequence[str],
    scores: Sequence[float],
    raw: dict[tuple[int, int], float],
    higher: bool,
) -> Board:
    """The board of runs from every pair's raw p-value: corrected, who beats whom, each run's
    cluster and rank range, and a note when no pair can be separated."""
    keys = sorted(raw)
    adjusted = dict(zip(keys, adjust_p_values([raw[k] for k in keys], correction), strict=True))
    n = len(run_ids)
    beats = np.zeros((n, n), dtype=bool)
    pairs = []
    for i, j in keys:
        winner = None
        if adjusted[i, j] < s.alpha and scores[i] != scores[j]:
            first_better = (scores[i] > scores[j]) == higher
            winner = run_ids[i] if first_better else run_ids[j]
            beats[(i, j) if first_better else (j, i)] = True
        pairs.append(PairP(run_ids[i], run_ids[j], raw[i, j], adjusted[i, j], winner))
    board = Board(
        test_corpus_id=test_corpus_id,
        test_set=test_set,
        metric=metric,
        method=method,
        correction=correction,
        settings=s,
        n_segments=n_segments,
        ranks=rank_runs(list(run_ids), list(scores), beats, higher),
        pairs=pairs,
        notes=[],
    )
    if not board.resolvable:
        threshold = corrected_threshold(s.alpha, len(pairs), correction)
        board.notes.append(
            f"with {s.n_bootstrap:,} resamples the smallest p-value is 1/{s.n_bootstrap + 1:,} "
            f"= {1 / (s.n_bootstrap + 1):.6f}, above the corrected threshold "
            f"{s.alpha:g}/{len(pairs)} = {threshold:.6f}: no pair can be separated; use at least "
            f"{resamples_to_resolve(method, s.alpha, len(pairs), correction):,} resamples"
        )
    return board
