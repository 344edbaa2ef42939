"""The gate's decision (docs/statistics.md, "The gate"): one pass/fail verdict on a candidate run
against its baseline over the metrics a team gates, with a non-inferiority margin per metric and
the family-wise error of the whole decision controlled across them.

For each gated metric the paired resamples (the same segment indices for both runs) give the
candidate's oriented difference d* = D* (higher is better) or -D* (lower is better), D being
candidate minus baseline. A metric's null hypothesis is "the candidate is at most its margin
worse" (d >= -margin). It fails when even the optimistic end of its one-sided interval lies
beyond the margin: the (1 - level) percentile of d* (numpy's inverted-CDF percentile) is below
-margin, the same as p = the share of d* >= -margin being below the level (ties at the level
aside). Holm's step-down sets each metric's level (alpha / K for the smallest p, alpha / (K - 1)
for the next, and so on, stopping at the first metric that holds), so that an equal-quality run
fails the whole gate at most alpha of the time; `bonferroni` tests every metric at alpha / K,
`none` each at alpha.

The number of resamples adapts: starting from the settings' n, it doubles while the Monte-Carlo
uncertainty of a metric's p (a 99.9% binomial interval) straddles the level that decides it, up
to a cap; a metric still undecided there is reported as such.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from warehouse.errors import UsageError
from warehouse.metrics.registry import CHRF, METRICS, higher_is_better, on_percent_scale
from warehouse.stats.arrays import RunArrays, align
from warehouse.stats.clusters import adjust_p_values
from warehouse.stats.limits import GATE_CORRECTIONS
from warehouse.stats.resample import (
    BootstrapSettings,
    resample_blocks,
    resampled_scores_of,
    run_scores,
)

# The decision rule, as every output states it.
GATE_RULE = (
    "a gated metric fails when its one-sided interval of the change at its corrected level lies "
    "entirely beyond its margin (a drop larger than the margin, significant after the "
    "correction); the gate fails when a gated metric fails"
)
DEFAULT_GATE_METRICS = (CHRF,)
# The most resamples a gate adds while a decision is open (16 times the default 1,000: the p-value
# is then known within +-0.006 at 0.05).
GATE_MAX_RESAMPLES = 16_000
# The Monte-Carlo interval of a p-value that must clear the level it is compared with.
_MC_Z = NormalDist().inv_cdf(1 - 0.0005)


@dataclass(frozen=True)
class GatePolicy:
    """What the gate decides on: the gated metrics, each one's margin (in the metric's units:
    chrF++ and BLEU points, TER points, exact-match share), the correction across them, the
    level of the whole decision and the most resamples it may take."""

    metrics: tuple[str, ...] = DEFAULT_GATE_METRICS
    margins: Mapping[str, float] = field(default_factory=dict)
    correction: str = "holm"
    alpha: float = 0.05
    max_resamples: int = GATE_MAX_RESAMPLES

    def __post_init__(self) -> None:
        if not self.metrics:
            raise UsageError("the gate needs at least one metric (--metric)")
        if self.correction not in GATE_CORRECTIONS:
            raise UsageError(
                f"--correction: expected one of {', '.join(GATE_CORRECTIONS)}, got "
                f"{self.correction!r}"
            )
        for name, margin in self.margins.items():
            if not math.isfinite(margin) or margin < 0:
                raise UsageError(f"--margin {name}={margin}: a margin is a number >= 0")
            if name not in self.metrics:
                raise UsageError(f"--margin {name}: {name} is not a gated metric (--metric)")

    def margin(self, metric: str) -> float:
        """The metric's non-inferiority margin (0: any significant drop fails)."""
        return float(self.margins.get(metric, 0.0))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored with each verdict)."""
        return {
            "metrics": list(self.metrics),
            "margins": {m: self.margin(m) for m in self.metrics},
            "correction": self.correction,
            "alpha": self.alpha,
            "rule": GATE_RULE,
        }


@dataclass(frozen=True)
class MetricVerdict:
    """One gated metric's test: scores, D (candidate - baseline), its margin, the one-sided
    p-value, Holm's adjusted p, the level that decided it, the bound at that level (the
    optimistic end of the drop, in D's units), and the outcome."""

    metric_name: str
    baseline_score: float
    candidate_score: float
    delta: float
    margin: float
    p_value: float
    adjusted_p: float
    level: float
    bound: float
    failed: bool
    decided: bool  # False: the p-value's Monte-Carlo interval still straddles the level
    reached: bool = True  # False: Holm stopped at an earlier metric that held
    higher_is_better: bool = True

    @property
    def outcome(self) -> str:
        """The metric's outcome in words."""
        if not self.reached:
            return "holds (Holm stopped at a metric that held)"
        if self.failed:
            return "fails: the drop is beyond the margin"
        return "holds" + ("" if self.decided else " (within Monte-Carlo error of the level)")

    def bound_text(self) -> str:
        """The one-sided interval of D at the metric's level, as `Δ ≤ x` or `Δ ≥ x`."""
        value = f"{self.bound:+.2f}" if on_percent_scale(self.metric_name) else f"{self.bound:+.4f}"
        return f"Δ {'≤' if self.higher_is_better else '≥'} {value}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**self.__dict__, "outcome": self.outcome}


@dataclass(frozen=True)
class GateVerdict:
    """The gate's verdict over its metrics, with the policy, resamples and seed it used."""

    policy: GatePolicy
    metrics: list[MetricVerdict]
    n_bootstrap: int
    seed: int
    n_segments: int
    informational: list[str] = field(default_factory=list)  # metrics shown, never gating

    @property
    def passed(self) -> bool:
        """Whether no gated metric failed."""
        return not any(m.failed for m in self.metrics)

    @property
    def undecided(self) -> list[str]:
        """Gated metrics whose outcome the resample cap left open."""
        return [m.metric_name for m in self.metrics if not m.decided]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "passed": self.passed,
            "policy": self.policy.to_dict(),
            "n_bootstrap": self.n_bootstrap,
            "seed": self.seed,
            "n_segments": self.n_segments,
            "metrics": [m.to_dict() for m in self.metrics],
            "undecided": self.undecided,
        }


def _oriented_deltas(
    candidate: RunArrays,
    baseline: RunArrays,
    metrics: Sequence[str],
    n: int,
    seed: int,
    directions: Mapping[str, bool],
) -> dict[str, np.ndarray]:
    """Each metric's resampled candidate - baseline difference, turned so that negative is
    worse (resamples without a value on either side left out)."""
    blocks = resample_blocks(candidate.n_segments, n, seed)
    res_c, res_b = resampled_scores_of([candidate, baseline], blocks)
    out = {}
    for metric in metrics:
        d = res_c[metric] - res_b[metric]
        d = d[np.isfinite(d)]
        out[metric] = d if higher_is_better(metric, directions) else -d
    return out


def _levels(p_values: Sequence[float], alpha: float, correction: str) -> list[float]:
    """The level each metric is tested at: Holm's alpha / (K - rank) by ascending p (ties keep
    their order), Bonferroni's alpha / K, or alpha."""
    k = len(p_values)
    if correction == "none":
        return [alpha] * k
    if correction == "bonferroni":
        return [alpha / k] * k
    order = np.argsort(np.asarray(p_values), kind="mergesort")
    levels = [0.0] * k
    for rank, at in enumerate(order):
        levels[int(at)] = alpha / (k - rank)
    return levels


def _mc_straddles(p: float, n: int, level: float) -> bool:
    """Whether the Monte-Carlo interval of a p-value estimated from n resamples contains the
    level (its decision could flip with more resamples)."""
    half = _MC_Z * math.sqrt(max(p * (1 - p), 1.0 / n) / n)
    return p - half < level < p + half


def _bound(d: np.ndarray, level: float) -> float:
    """The upper one-sided bound of the oriented difference at `level`: its (1 - level)
    inverted-CDF percentile (+inf for no resample: nothing is bounded)."""
    if d.size == 0:
        return math.inf
    return float(np.quantile(d, 1.0 - level, method="inverted_cdf"))


def decide_gate(
    candidate: RunArrays,
    baseline: RunArrays,
    policy: GatePolicy,
    settings: BootstrapSettings,
    directions: Mapping[str, bool] | None = None,
) -> GateVerdict:
    """The gate's verdict on `candidate` against `baseline` (aligned by segment id) under
    `policy`, resampling as `settings` says (more resamples while a decision is open)."""
    directions = directions or {}
    al = align(candidate, baseline)
    scores_c, scores_b = run_scores(al.a), run_scores(al.b)
    missing = [m for m in policy.metrics if scores_c.get(m) is None or scores_b.get(m) is None]
    if missing:
        raise UsageError(
            f"gated metric(s) {', '.join(missing)} have no value in the candidate or the "
            "baseline run (--gate-metric names the metrics both runs carry)"
        )
    metrics = list(policy.metrics)
    n = settings.n_bootstrap
    while True:
        d = _oriented_deltas(al.a, al.b, metrics, n, settings.seed, directions)
        p = [float(np.mean(d[m] >= -policy.margin(m))) if d[m].size else 1.0 for m in metrics]
        levels = _levels(p, policy.alpha, policy.correction)
        open_ = [
            _mc_straddles(p_m, max(d[m].size, 1), lv)
            for m, p_m, lv in zip(metrics, p, levels, strict=True)
        ]
        if not any(open_) or n >= policy.max_resamples:
            break
        n = min(2 * n, policy.max_resamples)
    if policy.correction == "holm":
        adjusted = [float(x) for x in adjust_p_values(p, "holm")]
    elif policy.correction == "bonferroni":
        adjusted = [min(1.0, len(p) * x) for x in p]
    else:
        adjusted = list(p)
    failed = {
        m: _bound(d[m], lv) < -policy.margin(m) for m, lv in zip(metrics, levels, strict=True)
    }
    reached = dict.fromkeys(metrics, True)
    if policy.correction == "holm":
        stopped = False
        for at in np.argsort(np.asarray(p), kind="mergesort"):
            m = metrics[int(at)]
            if stopped:
                failed[m], reached[m] = False, False
            elif not failed[m]:
                stopped = True
    out = []
    for m, p_m, adj, lv, still_open in zip(metrics, p, adjusted, levels, open_, strict=True):
        up = _bound(d[m], lv)
        sign = 1.0 if higher_is_better(m, directions) else -1.0
        a, b = scores_c[m], scores_b[m]
        assert a is not None and b is not None
        out.append(
            MetricVerdict(
                metric_name=m,
                baseline_score=b,
                candidate_score=a,
                delta=a - b,
                margin=policy.margin(m),
                p_value=p_m,
                adjusted_p=adj,
                level=lv,
                bound=sign * up,
                failed=failed[m],
                decided=not still_open,
                reached=reached[m],
                higher_is_better=sign > 0,
            )
        )
    return GateVerdict(policy, out, n, settings.seed, al.n_segments)


# Settings rows of the gate (docs/statistics.md, "The gate"): `gate.metric.<name>` = 1 gates a
# metric beside chrF++, `gate.margin.<name>` its margin, `gate.require_baseline` (1, the default)
# whether `ingest --gate` fails a run with no baseline.
METRIC_SETTING = "gate.metric."
MARGIN_SETTING = "gate.margin."
REQUIRE_BASELINE_SETTING = "gate.require_baseline"


def gate_metric_name(text: str) -> str:
    """A gated metric as an option names it: a leaderboard sort key (`chrf`, `bleu`, `ter`,
    `exact_match`), a registered metric's name, or a per-entry metric's own name."""
    name = text.strip()
    if not name:
        raise UsageError("--gate-metric: empty metric name")
    for found in METRICS:
        if name in (found.sort_key, found.name, found.label):
            return found.name
    return name


def resolve_gate_policy(
    settings: Mapping[str, float],
    metrics: Sequence[str] = (),
    margins: Sequence[str] = (),
    correction: str | None = None,
    alpha: float | None = None,
) -> GatePolicy:
    """The gate's policy: the metrics and `METRIC=MARGIN` margins given (comma-separated lists
    allowed), else chrF++ plus the metrics the settings gate, with the settings' margins; the
    correction given (default Holm) and the level (default settings `bootstrap.alpha`)."""
    named = [gate_metric_name(m) for text in metrics for m in text.split(",") if m.strip()]
    if not named:
        added = [k.removeprefix(METRIC_SETTING) for k, v in settings.items()
                 if k.startswith(METRIC_SETTING) and v]  # fmt: skip
        named = [CHRF, *sorted(added)]
    chosen = tuple(dict.fromkeys(named))
    found: dict[str, float] = {
        key.removeprefix(MARGIN_SETTING): float(value)
        for key, value in settings.items()
        if key.startswith(MARGIN_SETTING) and key.removeprefix(MARGIN_SETTING) in chosen
    }
    for text in margins:
        for item in text.split(","):
            metric, sep, value = item.partition("=")
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if not sep or not metric.strip() or not math.isfinite(number):
                raise UsageError(f"--margin {item!r}: expected METRIC=NUMBER, e.g. chrf=0.5")
            found[gate_metric_name(metric)] = number
    level = alpha if alpha is not None else float(settings.get("bootstrap.alpha", 0.05))
    return GatePolicy(chosen, found, correction or "holm", level)
