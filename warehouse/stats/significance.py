"""Paired significance tests between two runs aligned on their segment ids (docs/statistics.md).

Methods:

* `sign` (the default): Δ = m(A) - m(B) on the aligned segments; for each of n resamples
  (the same indices for both runs) Δ* = m(A*) - m(B*); p is the share of resamples whose Δ* does
  not have the sign of Δ — a resample with Δ* = 0 counts against significance, like one with the
  opposite sign — and p = 1.0 when Δ = 0. Resamples where a mean metric has no value in either
  run (every drawn entry errored) are left out of that metric's p and interval.
* `paired-bs` and `paired-ar`: sacrebleu's `PairedTest` (bootstrap as in Moses'
  `bootstrap-hypothesis-difference-significance.pl`, and approximate randomisation), reproduced
  operation for operation on the stored statistics, A being sacrebleu's baseline: the same
  p-values and per-system means and 95% intervals as sacrebleu for the same inputs and seed.
  Like sacrebleu, their p-value for identical systems is 1 / (n + 1); a zero Δ is never called
  significant here. Exact match and per-entry metrics go through the same procedure as means.

For every method `mde` is the minimum detectable difference: the |Δ| this test set detects at
level alpha with 80% power, (z(1 - alpha/2) + z(0.8)) times the standard deviation of the
resampled differences Δ*; a difference below it that the test does not call significant is one
the test set cannot tell apart.

For every method `ci_lower`/`ci_upper` bound Δ: numpy's linear percentiles of Δ* at alpha/2
and 1 - alpha/2 (for paired-ar, over its confidence resamples). A winner is named only when the
result is significant, by each metric's direction (lower is better for TER, hallucination and
code-switching rates and any metric whose name ends in `_error_rate`; see
warehouse/metrics/registry.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist
from typing import Any

import duckdb
import numpy as np

from warehouse.metrics.registry import BLEU, CHRF, EXACT_MATCH, TER, higher_is_better
from warehouse.metrics.scores import bleu_scores, chrf_scores, ter_scores
from warehouse.stats.arrays import Alignment, RunArrays, align
from warehouse.stats.resample import (
    BootstrapSettings,
    bootstrap_settings,
    mean_scores,
    percentile_interval,
    resample_blocks,
    resample_indices,
    resample_sums,
    resampled_scores,
    resampled_scores_of,
    run_scores,
)

METHODS = ("sign", "paired-bs", "paired-ar")
PAIRED_AR_TRIALS = 10_000  # sacrebleu's default number of approximate-randomisation trials
FEW_ALIGNED = 10  # warn below this many aligned segments
POWER = 0.8  # the power at which the minimum detectable difference is given

_FLOAT32_EXACT = 2**24  # integers below this are exact in float32, so are sums below it


@dataclass(frozen=True)
class SignificanceResult:
    """One metric of one pair of runs (the JSON object of docs/statistics.md)."""

    metric_name: str
    system_a_score: float
    system_b_score: float
    delta: float
    p_value: float
    n_bootstrap: int
    confidence_level: float
    significant: bool
    winner: str | None
    ci_lower: float | None
    ci_upper: float | None
    seed: int
    mde: float | None = None  # minimum detectable difference (None: too few resamples)

    @property
    def below_mde(self) -> bool:
        """Whether the difference is not significant and smaller than the test set can detect."""
        return not self.significant and self.mde is not None and abs(self.delta) < self.mde

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def minimum_detectable_difference(
    deltas: np.ndarray, alpha: float, power: float = POWER
) -> float | None:
    """The smallest |Δ| a two-sided test at `alpha` detects with probability `power`, from the
    spread of the resampled differences (None with fewer than two finite ones)."""
    finite = deltas[np.isfinite(deltas)]
    if finite.size < 2:
        return None
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)
    return float(z * np.std(finite, ddof=1))


@dataclass(frozen=True)
class SystemEstimate:
    """sacrebleu's per-system result of a paired test: score, mean of the resampled scores and
    the half-width of the interval between their 2.5th and 97.5th order statistics."""

    score: float
    mean: float
    ci: float


@dataclass(frozen=True)
class PairTest:
    """Every tested metric of one pair of runs, with what was dropped to align them."""

    run_a: str
    run_b: str
    method: str
    n_segments: int
    dropped_a: int
    dropped_b: int
    results: list[SignificanceResult]
    estimates: dict[str, tuple[SystemEstimate, SystemEstimate]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def result(self, metric: str) -> SignificanceResult:
        """The result of one tested metric."""
        for found in self.results:
            if found.metric_name == metric:
                return found
        raise KeyError(metric)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the results go to the document's `significance` list)."""
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "method": self.method,
            "n_segments": self.n_segments,
            "dropped_a": self.dropped_a,
            "dropped_b": self.dropped_b,
            "warnings": self.warnings,
            "sacrebleu_estimates": {
                metric: {"a": asdict(a), "b": asdict(b)}
                for metric, (a, b) in self.estimates.items()
            },
        }


def sign_p_value(delta: float, deltas: np.ndarray) -> float:
    """Share of resampled differences without the sign of `delta` (1.0 when `delta` is 0)."""
    finite = deltas[np.isfinite(deltas)]
    if delta == 0 or finite.size == 0:
        return 1.0
    return float(np.mean(np.sign(finite) != np.sign(delta)))


def _result(
    metric: str,
    score_a: float,
    score_b: float,
    p_value: float,
    deltas: np.ndarray,
    n: int,
    settings: BootstrapSettings,
) -> SignificanceResult:
    """Decide significance and the winner of one metric."""
    delta = score_a - score_b
    interval = percentile_interval(deltas, settings.alpha)
    significant = bool(p_value < settings.alpha and delta != 0)
    return SignificanceResult(
        metric_name=metric,
        system_a_score=score_a,
        system_b_score=score_b,
        delta=delta,
        p_value=p_value,
        n_bootstrap=n,
        confidence_level=settings.confidence_level,
        significant=significant,
        winner=None,  # named by `compare_pair`, which knows the metrics' directions
        ci_lower=None if interval is None else interval[0],
        ci_upper=None if interval is None else interval[1],
        seed=settings.seed,
        mde=minimum_detectable_difference(deltas, settings.alpha),
    )


# --- sacrebleu's arithmetic -------------------------------------------------------------------


def float32_sums(stats: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The float32 resample sums sacrebleu forms (`stats.astype(float32)[idx].sum(0)`): the exact
    integer sums when every value is a whole number and every partial sum an exact float32
    integer, else numpy's own float32 sum."""
    whole = stats.dtype == np.int64 or bool(np.all(stats == np.round(stats)))
    if stats.size == 0 or (whole and stats.shape[0] * int(stats.max()) < _FLOAT32_EXACT):
        return resample_sums(stats, indices).astype(np.float32)
    stats32 = stats.astype(np.float32)
    return np.stack([stats32[row].sum(0) for row in indices])


def sacrebleu_scores(metric: str, sums: np.ndarray) -> np.ndarray:
    """The corpus score of each row of summed statistics (float32 sums scored in float32 where
    sacrebleu's paired tests are)."""
    scorer = {CHRF: chrf_scores, BLEU: bleu_scores, TER: ter_scores}[metric]
    return scorer(sums)


def _estimate(score: float, samples: np.ndarray) -> SystemEstimate:
    """sacrebleu's `estimate_ci`: mean of the sorted samples and half the spread between the
    (n // 40)-th smallest and largest."""
    ordered = np.sort(samples)
    lower = len(ordered) // 40
    upper = len(ordered) - lower - 1
    return SystemEstimate(
        score, float(ordered.mean()), float(0.5 * (ordered[upper] - ordered[lower]))
    )


def moses_p_value(sample_stats: np.ndarray, real_difference: float) -> float:
    """sacrebleu's `_compute_p_value`: (samples above the real difference + 1) / (n + 1)."""
    count = np.sum(sample_stats > real_difference).item()
    return (count + 1) / (len(sample_stats) + 1)


# Metrics whose score is a formula on summed sufficient statistics (the rest are means).
CORPUS_METRICS = (CHRF, BLEU, TER)


def corpus_stats(arrays: RunArrays, metric: str) -> np.ndarray:
    """The statistics sacrebleu sums for a corpus metric (int64 for BLEU and chrF++, float64
    for TER)."""
    return {CHRF: arrays.chrf, BLEU: arrays.bleu, TER: arrays.ter}[metric]


def mean_columns(arrays: RunArrays, metric: str) -> np.ndarray:
    """[value (0 where absent), 1.0 where present] of a mean metric."""
    values = arrays.exact if metric == EXACT_MATCH else arrays.entry_metrics[metric]
    present = np.isfinite(values)
    return np.column_stack([np.where(present, values, 0.0), present.astype(np.float64)])


def _finite_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Resamples where both runs have a value."""
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]


# --- the three methods ------------------------------------------------------------------------

Scores = dict[str, float | None]
Estimates = dict[str, tuple[SystemEstimate, SystemEstimate]]
Outcome = tuple[list[SignificanceResult], Estimates]


def _sign(
    al: Alignment, metrics: list[str], scores: tuple[Scores, Scores], s: BootstrapSettings
) -> Outcome:
    """The paired bootstrap sign test (docs/statistics.md)."""
    blocks = resample_blocks(al.n_segments, s.n_bootstrap, s.seed)
    res_a, res_b = resampled_scores_of([al.a, al.b], blocks)
    results: list[SignificanceResult] = []
    for metric in metrics:
        a, b = scores[0][metric], scores[1][metric]
        assert a is not None and b is not None
        deltas = res_a[metric] - res_b[metric]
        p_value = sign_p_value(a - b, deltas)
        results.append(_result(metric, a, b, p_value, deltas, s.n_bootstrap, s))
    return results, {}


def _paired_bs(
    al: Alignment, metrics: list[str], scores: tuple[Scores, Scores], s: BootstrapSettings
) -> Outcome:
    """sacrebleu's paired bootstrap resampling test (`_paired_bs_test`)."""
    indices = resample_indices(al.n_segments, s.n_bootstrap, s.seed)
    res_a, res_b = resampled_scores_of([al.a, al.b], indices)
    results: list[SignificanceResult] = []
    estimates: Estimates = {}
    for metric in metrics:
        a, b = scores[0][metric], scores[1][metric]
        assert a is not None and b is not None
        if metric in CORPUS_METRICS:
            scores_bl = sacrebleu_scores(metric, float32_sums(corpus_stats(al.a, metric), indices))
            scores_sys = sacrebleu_scores(metric, float32_sums(corpus_stats(al.b, metric), indices))
        else:
            scores_bl, scores_sys = _finite_pairs(res_a[metric], res_b[metric])
        sample_diffs = np.abs(scores_sys - scores_bl)
        p_value = moses_p_value(sample_diffs - sample_diffs.mean(), abs(a - b))
        estimates[metric] = (_estimate(a, scores_bl), _estimate(b, scores_sys))
        results.append(_result(metric, a, b, p_value, scores_bl - scores_sys, s.n_bootstrap, s))
    return results, estimates


def shuffled_sums(
    a: np.ndarray, b: np.ndarray, selection: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sums of the approximate-randomisation pseudo-systems: row r of the first takes A's
    statistics where `selection[r]` is set and B's elsewhere, the second the other way round."""
    if a.dtype != np.int64:
        # Float statistics (TER): sacrebleu's own matrix products, whose rounding we share.
        return selection @ a + ~selection @ b, ~selection @ a + selection @ b
    n_rows = a.shape[0]
    picks = np.where(selection, np.arange(n_rows), n_rows)  # n_rows = an all-zero row
    diff = np.vstack([a - b, np.zeros((1, a.shape[1]), dtype=a.dtype)])
    moved = resample_sums(diff, picks)
    return b.sum(axis=0) + moved, a.sum(axis=0) - moved


def _paired_ar(
    al: Alignment, metrics: list[str], scores: tuple[Scores, Scores], s: BootstrapSettings
) -> Outcome:
    """sacrebleu's paired approximate randomisation test (`_paired_ar_test`) with as many
    confidence resamples as trials."""
    n, n_seg = s.n_bootstrap, al.n_segments
    rng = np.random.default_rng(s.seed)
    selection = rng.integers(2, size=(n, n_seg), dtype=bool)
    sys_indices = rng.choice(n_seg, size=(n, n_seg), replace=True).astype(np.int64)
    baseline_indices = resample_indices(n_seg, n, s.seed)  # sacrebleu's `_bootstrap_resample`
    res_a_bl = resampled_scores(al.a, baseline_indices)
    res_a, res_b = resampled_scores_of([al.a, al.b], sys_indices)
    results: list[SignificanceResult] = []
    estimates: Estimates = {}
    for metric in metrics:
        a, b = scores[0][metric], scores[1][metric]
        assert a is not None and b is not None
        if metric in CORPUS_METRICS:
            stats_a, stats_b = corpus_stats(al.a, metric), corpus_stats(al.b, metric)
            shuf_a, shuf_b = shuffled_sums(stats_a, stats_b, selection)
            scores_a = sacrebleu_scores(metric, shuf_a)
            scores_b = sacrebleu_scores(metric, shuf_b)
            sys_scores = sacrebleu_scores(metric, float32_sums(stats_b, sys_indices))
            bl_scores = sacrebleu_scores(metric, float32_sums(stats_a, baseline_indices))
            paired_a = sacrebleu_scores(metric, float32_sums(stats_a, sys_indices))
            deltas = paired_a - sys_scores
        else:
            shuf_a, shuf_b = shuffled_sums(
                mean_columns(al.a, metric), mean_columns(al.b, metric), selection
            )
            scores_a, scores_b = _finite_pairs(
                mean_scores(shuf_a[:, 0], shuf_a[:, 1]), mean_scores(shuf_b[:, 0], shuf_b[:, 1])
            )
            sys_scores = res_b[metric][np.isfinite(res_b[metric])]
            bl_scores = res_a_bl[metric][np.isfinite(res_a_bl[metric])]
            deltas = res_a[metric] - res_b[metric]
        p_value = moses_p_value(np.abs(scores_a - scores_b), abs(a - b))
        estimates[metric] = (_estimate(a, bl_scores), _estimate(b, sys_scores))
        results.append(_result(metric, a, b, p_value, deltas, n, s))
    return results, estimates


_METHODS: dict[str, Callable[..., Outcome]] = {
    "sign": _sign,
    "paired-bs": _paired_bs,
    "paired-ar": _paired_ar,
}


def shared_metrics(scores_a: Scores, scores_b: Scores) -> list[str]:
    """chrF++, BLEU, TER, exact match, then every per-entry metric, where both runs have a
    value."""
    fixed = [CHRF, BLEU, TER, EXACT_MATCH]
    entry = sorted((set(scores_a) & set(scores_b)) - set(fixed))
    return [m for m in [*fixed, *entry] if scores_a[m] is not None and scores_b[m] is not None]


def method_settings(
    con: duckdb.DuckDBPyConnection | None,
    method: str,
    n_bootstrap: int | None = None,
    alpha: float | None = None,
    seed: int | None = None,
) -> BootstrapSettings:
    """Resampling settings of a paired test: explicit values, else the warehouse's settings
    rows, else the defaults — except that paired-ar runs sacrebleu's 10,000 trials unless
    `n_bootstrap` is given."""
    if method == "paired-ar" and n_bootstrap is None:
        n_bootstrap = PAIRED_AR_TRIALS
    return bootstrap_settings(con, n_bootstrap, alpha, seed)


def _with_winner(result: SignificanceResult, directions: Mapping[str, bool]) -> SignificanceResult:
    """The result with its winner: none unless significant, else by the metric's direction."""
    if not result.significant:
        return result
    higher = higher_is_better(result.metric_name, directions)
    return replace(result, winner="A" if (result.delta > 0) == higher else "B")


def compare_pair(
    a: RunArrays,
    b: RunArrays,
    *,
    method: str = "sign",
    settings: BootstrapSettings | None = None,
    directions: Mapping[str, bool] | None = None,
) -> PairTest:
    """Align two runs by segment id and test every shared metric with `method`; winners follow
    each metric's direction (`directions` overrides the registry's, as the warehouse's
    `direction.<metric>` settings do)."""
    if method not in _METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    s = settings or BootstrapSettings()
    al = align(a, b)
    warnings = []
    if al.dropped_a or al.dropped_b:
        warnings.append(
            f"segment ids differ: tested the {al.n_segments} shared segments, dropping "
            f"{al.dropped_a} of A ({a.run_id}) and {al.dropped_b} of B ({b.run_id})"
        )
    if a.test_corpus_id != b.test_corpus_id:
        warnings.append(
            f"the runs are on different test sets ({a.test_corpus_id}, {b.test_corpus_id}); "
            "segments were matched by id"
        )
    if al.n_segments < FEW_ALIGNED:
        warnings.append(
            f"only {al.n_segments} aligned segments (fewer than {FEW_ALIGNED}): "
            "the test has little power"
        )
    scores_a, scores_b = run_scores(al.a), run_scores(al.b)
    metrics = shared_metrics(scores_a, scores_b)
    untested = sorted((set(scores_a) | set(scores_b)) - set(metrics))
    if untested:
        warnings.append(f"not tested (no value in one of the runs): {', '.join(untested)}")
    results, estimates = _METHODS[method](al, metrics, (scores_a, scores_b), s)
    results = [_with_winner(r, directions or {}) for r in results]
    return PairTest(
        run_a=a.run_id,
        run_b=b.run_id,
        method=method,
        n_segments=al.n_segments,
        dropped_a=al.dropped_a,
        dropped_b=al.dropped_b,
        results=results,
        estimates=estimates,
        warnings=warnings,
    )
