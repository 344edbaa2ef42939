"""Metric-human agreement on one test set (`tame-wh meta`, docs/human.md): which metric ranks
systems and segments as people do, overall and per exposure bin."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb
import numpy as np

from warehouse.errors import UsageError
from warehouse.exposure.config import EXPOSURE_BINS
from warehouse.exposure.summary import choose_audit
from warehouse.metrics.registry import BLEU, CHRF, CHRF_ONLY, TER, higher_is_better, label
from warehouse.metrics.scores import bleu_scores, chrf_from_stats, chrf_scores, ter_scores
from warehouse.stats.agreement import (
    kendall_tau_b,
    kendall_tau_b_rows,
    pairwise_accuracy,
    pairwise_accuracy_rows,
    pearson,
    pearson_rows,
    tie_calibrated_acc_eq,
    tie_shares,
)
from warehouse.stats.arrays import RunArrays, load_run_arrays
from warehouse.stats.metric_ranking import MetricRanking, rank_metrics
from warehouse.stats.resample import (
    BootstrapSettings,
    percentile_interval,
    resample_indices,
    resample_sums,
    resampled_scores_of,
    run_scores,
)
from warehouse.store.corpora import get_corpus

DELTA_TM = "delta_tm_chrf_plus_plus"  # the system's lead over the TM baseline, in chrF++
_WORD_ORDERS = slice(18, 24)  # chrF++ statistics of the two word orders (docs/metrics.md)
SYSTEM_STATISTICS = ("pearson", "kendall", "pairwise_accuracy")
# How each statistic is named for people (the CLI's table and the dashboard page).
STATISTIC_LABELS = {
    "pearson": "Pearson r",
    "kendall": "Kendall tau-b",
    "pairwise_accuracy": "pairwise accuracy",
    "kendall_pooled": "Kendall tau-b, pooled",
    "kendall_per_system": "Kendall tau-b, mean per system",
    "acc_eq": "acc*_eq (tie-calibrated, per segment)",
}
SEGMENT_STATISTICS = ("kendall_pooled", "kendall_per_system", "acc_eq")
# An acc*_eq within this of the share of pairs humans tie is no better than predicting a tie for
# every pair (the accuracy of that prediction is exactly the human tie share): flagged, not ranked.
DEGENERATE_MARGIN = 0.01
_MIN_SYSTEMS = 3


@dataclass(frozen=True)
class Agreement:
    """One statistic of one metric against the human scores, on one bin's segments."""

    metric: str
    level: str  # system | segment
    statistic: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0  # systems (system level) or scored items (segment level)
    bin: str = "all"
    epsilon: float | None = None  # acc_eq's tie threshold
    # acc_eq: the shares of pairs the metric calls ties at epsilon and humans tie, and whether the
    # value is no better than calling every pair a tie (DEGENERATE_MARGIN).
    metric_ties: float | None = None
    human_ties: float | None = None
    degenerate: bool = False


@dataclass
class MetaReport:
    """Every agreement statistic of a test set's judged runs, with the systems' scores."""

    test_set: str
    set_id: str
    set_name: str
    scheme: str
    human: str  # what the human score is: "-MQM", "ESA", "DA z"
    n_systems: int
    n_segments: int
    bootstrap: dict[str, Any]
    audit_id: str | None
    systems: list[dict[str, Any]] = field(default_factory=list)
    rows: list[Agreement] = field(default_factory=list)
    rankings: list[MetricRanking] = field(default_factory=list)  # system level, with intervals

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (NaN as null)."""
        out = asdict(self)
        out["rows"] = [
            {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
            for r in out["rows"]
        ]
        return out


def _pick_set(
    con: duckdb.DuckDBPyConnection, corpus_id: str, test_set: str, wanted: str | None
) -> tuple[str, str, str]:
    """The judgment set: by id, name or scheme; the only one when not named."""
    rows = con.execute(
        "SELECT set_id, name, scheme FROM human_sets WHERE test_corpus_id = ? ORDER BY added_at",
        [corpus_id],
    ).fetchall()
    if not rows:
        raise UsageError(f"test set {test_set!r} has no human judgments (tame-wh human add)")
    matches = [r for r in rows if wanted is None or wanted in (r[0], r[1], r[2])]
    if len(matches) != 1:
        known = ", ".join(f"{n} ({s}, {i})" for i, n, s in rows)
        what = "names none" if not matches else "is ambiguous"
        raise UsageError(
            f"--human {wanted} {what} of the judgment sets of {test_set!r}: {known}"
            if wanted is not None
            else f"test set {test_set!r} has several judgment sets ({known}); choose one with "
            "--human"
        )
    set_id, name, scheme = matches[0]
    return str(set_id), str(name), str(scheme)


def _human_matrix(
    con: duckdb.DuckDBPyConnection, set_id: str, scheme: str
) -> tuple[list[str], list[str], np.ndarray]:
    """Runs, segment ids, and the human score per run and segment (NaN where not judged),
    oriented so that higher is better."""
    column = "z" if scheme == "da" else "score"
    rows = con.execute(
        f"SELECT g.run_id, s.seg_key, g.{column} FROM human_segment_scores g "
        "JOIN runs r USING (run_id) JOIN segments s ON s.corpus_id = r.test_corpus_id "
        "AND s.seg_idx = g.seg_idx WHERE g.set_id = ? ORDER BY g.run_id, g.seg_idx",
        [set_id],
    ).fetchall()
    runs = sorted({r for r, _k, _v in rows})
    keys = list(dict.fromkeys(k for _r, k, _v in rows))
    where = {k: i for i, k in enumerate(keys)}
    matrix = np.full((len(runs), len(keys)), np.nan)
    for r, k, v in rows:
        if v is not None:
            matrix[runs.index(r), where[k]] = -v if scheme == "mqm" else v
    return runs, keys, matrix


def _char_only(chrf: np.ndarray) -> np.ndarray:
    """chrF++ statistics without their word orders: what chrF (word_order=0) is computed from."""
    out = chrf.copy()
    out[:, _WORD_ORDERS] = 0
    return out


def _segment_metrics(arrays: RunArrays, tm: np.ndarray | None) -> dict[str, np.ndarray]:
    """Per-segment scores of each metric (sentence BLEU and TER as corpus formulas on one
    segment, sentence chrF++ and chrF, and the lead over the TM baseline's sentence chrF++ when
    `tm` holds its statistics), oriented higher-is-better, plus each per-entry metric."""
    chrf = chrf_scores(arrays.chrf)
    out = {
        BLEU: bleu_scores(arrays.bleu),
        CHRF: chrf,
        CHRF_ONLY: chrf_scores(_char_only(arrays.chrf)),
    }
    if tm is not None:
        out[DELTA_TM] = chrf - chrf_scores(tm)
    if np.isfinite(arrays.ter).all():
        out[TER] = -ter_scores(arrays.ter)
    for name, values in arrays.entry_metrics.items():
        out[name] = values if higher_is_better(name) else -values
    return out


def _system_scores(
    runs: Sequence[RunArrays], tm: np.ndarray | None
) -> list[dict[str, float | None]]:
    """Each run's whole scores (`run_scores`), with chrF and the lead over the TM baseline."""
    out = []
    tm_chrf = chrf_from_stats(tm.sum(axis=0)) if tm is not None else None
    for run in runs:
        scores = run_scores(run)
        scores[CHRF_ONLY] = chrf_from_stats(_char_only(run.chrf).sum(axis=0))
        chrf = scores[CHRF]
        if tm_chrf is not None and chrf is not None:
            scores[DELTA_TM] = chrf - tm_chrf
        out.append(scores)
    return out


def _resampled(
    runs: Sequence[RunArrays], tm: np.ndarray | None, indices: np.ndarray, names: Sequence[str]
) -> dict[str, np.ndarray]:
    """`_system_scores` of every resample (rows) and run (columns), oriented higher-is-better."""
    per_run = resampled_scores_of(runs, indices)
    tm_chrf = chrf_scores(resample_sums(tm, indices)) if tm is not None else None
    for run, scores in zip(runs, per_run, strict=True):
        scores[CHRF_ONLY] = chrf_scores(resample_sums(_char_only(run.chrf), indices))
        if tm_chrf is not None:
            scores[DELTA_TM] = scores[CHRF] - tm_chrf
    out = {}
    for name in names:
        if all(name in r for r in per_run):
            stacked = np.column_stack([r[name] for r in per_run])
            out[name] = stacked if higher_is_better(name) else -stacked
    return out


def _tm_stats(
    con: duckdb.DuckDBPyConnection, corpus_id: str, audit_id: str | None, keys: Sequence[str]
) -> np.ndarray | None:
    """The TM baseline's chrF++ statistics of the audit, one row per segment of `keys`."""
    if audit_id is None:
        return None
    rows = dict(
        con.execute(
            "SELECT s.seg_key, tm.chrf_stats FROM tm_segment_stats tm JOIN segments s "
            "ON s.corpus_id = ? AND s.seg_idx = tm.seg_idx WHERE tm.audit_id = ?",
            [corpus_id, audit_id],
        ).fetchall()
    )
    if any(k not in rows for k in keys):
        return None
    return np.array([rows[k] for k in keys], dtype=np.int64)


def _oriented(name: str, value: float | None) -> float:
    """A system score with higher meaning better."""
    if value is None:
        return float("nan")
    return value if higher_is_better(name) else -value


def _system_rows(
    metric: str,
    scores: np.ndarray,
    human: np.ndarray,
    resampled_metric: np.ndarray | None,
    resampled_human: np.ndarray | None,
    alpha: float,
    bin_name: str,
    samples_out: dict[str, dict[str, np.ndarray]] | None = None,
) -> list[Agreement]:
    """Pearson, Kendall and pairwise accuracy of system scores, with percentile intervals when
    resamples are given (rows: resamples, columns: systems); each statistic's resampled values
    go to `samples_out[statistic][metric]` when given."""
    out = []
    for statistic, fn, by_row in (
        ("pearson", pearson, pearson_rows),
        ("kendall", kendall_tau_b, kendall_tau_b_rows),
        ("pairwise_accuracy", pairwise_accuracy, pairwise_accuracy_rows),
    ):
        value = fn(scores, human)
        low = high = None
        if resampled_metric is not None and resampled_human is not None:
            samples = by_row(resampled_metric, resampled_human)
            if samples_out is not None:
                samples_out.setdefault(statistic, {})[metric] = samples
            interval = percentile_interval(samples[np.isfinite(samples)], alpha)
            if interval is not None:
                low, high = interval
        out.append(Agreement(metric, "system", statistic, value if np.isfinite(value) else None,
                             low, high, int(scores.size), bin_name))  # fmt: skip
    return out


def _segment_rows(
    metric: str, values: np.ndarray, human: np.ndarray, bin_name: str
) -> list[Agreement]:
    """Kendall pooled over every (system, segment), Kendall per system averaged, and acc*_eq
    over the systems' pairs within each segment (values, human: systems by segments)."""
    present = np.isfinite(values) & np.isfinite(human)
    if present.sum() < 2:
        return []
    pooled = kendall_tau_b(values[present], human[present])
    per_system = [
        kendall_tau_b(v[p], h[p])
        for v, h, p in zip(values, human, present, strict=True)
        if p.sum() >= 2
    ]
    per_system = [t for t in per_system if np.isfinite(t)]
    columns = np.broadcast_to(np.arange(values.shape[1]), values.shape)
    acc, epsilon = tie_calibrated_acc_eq(values[present], human[present], columns[present])
    metric_ties, human_ties = tie_shares(values[present], human[present], columns[present], epsilon)

    def finite(x: float) -> float | None:
        return x if np.isfinite(x) else None

    n = int(present.sum())
    return [
        Agreement(metric, "segment", "kendall_pooled", finite(pooled), n=n, bin=bin_name),
        Agreement(metric, "segment", "kendall_per_system",
                  finite(float(np.mean(per_system))) if per_system else None, n=len(per_system),
                  bin=bin_name),
        Agreement(metric, "segment", "acc_eq", finite(acc), n=n, bin=bin_name, epsilon=epsilon,
                  metric_ties=finite(metric_ties), human_ties=finite(human_ties),
                  degenerate=bool(acc <= human_ties + DEGENERATE_MARGIN)),
    ]  # fmt: skip


def _bins(
    con: duckdb.DuckDBPyConnection, corpus_id: str, keys: Sequence[str], train: str | None
) -> tuple[str | None, dict[str, np.ndarray]]:
    """The columns of `keys` in each exposure bin of the test set's audit (the one the
    leaderboard's bins use, or the one against `train`)."""
    audit_id = choose_audit(con, corpus_id, train)
    if audit_id is None:
        return None, {}
    rows = con.execute(
        "SELECT s.seg_key, x.bin FROM exposures x JOIN segments s ON s.corpus_id = ? "
        "AND s.seg_idx = x.seg_idx WHERE x.audit_id = ?",
        [corpus_id, audit_id],
    ).fetchall()
    bin_of = dict(rows)
    labels = np.array([bin_of.get(k, "") for k in keys], dtype=object)
    return audit_id, {b: np.flatnonzero(labels == b) for b in EXPOSURE_BINS if (labels == b).any()}


def metric_human_agreement(
    con: duckdb.DuckDBPyConnection,
    test_set: str,
    *,
    human: str | None = None,
    metrics: Sequence[str] = (),
    train: str | None = None,
    only_bin: str | None = None,
    settings: BootstrapSettings | None = None,
) -> MetaReport:
    """System- and segment-level agreement of each metric with one judgment set, with bootstrap
    intervals at system level (segments resampled, the same draws for every system), and per
    exposure bin when the test set is audited (`only_bin`: that bin alone, with intervals)."""
    settings = settings or BootstrapSettings()
    corpus = get_corpus(con, test_set, "test")
    set_id, set_name, scheme = _pick_set(con, corpus.corpus_id, test_set, human)
    run_ids, keys, human_matrix = _human_matrix(con, set_id, scheme)
    if len(run_ids) < _MIN_SYSTEMS:
        raise UsageError(
            f"judgment set {set_name!r} covers {len(run_ids)} runs; agreement needs at least "
            f"{_MIN_SYSTEMS}"
        )
    arrays = []
    for run_id in run_ids:
        full = load_run_arrays(con, run_id)
        where = {k: i for i, k in enumerate(full.keys)}
        arrays.append(full.take(np.array([where[k] for k in keys], dtype=np.int64)))
    judged_by_all = np.isfinite(human_matrix).all(axis=0)
    common = np.flatnonzero(judged_by_all)
    audit_id, bins = _bins(con, corpus.corpus_id, keys, train)
    tm = _tm_stats(con, corpus.corpus_id, audit_id, keys)
    seg_values = [_segment_metrics(a, tm) for a in arrays]
    names = [n for n in seg_values[0] if all(n in v for v in seg_values)]
    if metrics:
        unknown = sorted(set(metrics) - set(names))
        if unknown:
            raise UsageError(
                f"--metric: {', '.join(unknown)} not scored on every judged run "
                f"(available: {', '.join(names)})"
            )
        names = [n for n in names if n in metrics]
    if only_bin is not None and only_bin not in bins:
        known = ", ".join(bins) or "none: the test set has no audit"
        raise UsageError(f"--bin: no segment of the test set is in bin {only_bin!r} ({known})")
    report = MetaReport(
        test_set=corpus.name, set_id=set_id, set_name=set_name, scheme=scheme,
        human={"mqm": "-MQM", "esa": "ESA", "da": "DA z"}[scheme],
        n_systems=len(run_ids), n_segments=int(common.size),
        bootstrap={"n": settings.n_bootstrap, "alpha": settings.alpha, "seed": settings.seed},
        audit_id=audit_id,
    )  # fmt: skip
    chosen = [("all", np.arange(len(keys))), *bins.items()]
    if only_bin is not None:
        chosen = [(only_bin, bins[only_bin])]
    for bin_name, columns in chosen:
        in_common = np.intersect1d(columns, common)
        if in_common.size == 0:
            continue
        subset = [a.take(in_common) for a in arrays]
        tm_subset = tm[in_common] if tm is not None else None
        human_scores = human_matrix[:, in_common].mean(axis=1)
        system_scores = _system_scores(subset, tm_subset)
        resampled_m: dict[str, np.ndarray] = {}
        resampled_h = None
        if bin_name == chosen[0][0]:  # intervals for the first group: all, or the one bin
            indices = resample_indices(in_common.size, settings.n_bootstrap, settings.seed)
            resampled_m = _resampled(subset, tm_subset, indices, names)
            judged = human_matrix[:, in_common]
            resampled_h = np.stack([judged[:, row].mean(axis=1) for row in indices])
            report.systems = [
                {"run_id": a.run_id, "label": a.label, "human": float(-h if scheme == "mqm" else h),
                 **{n: s.get(n) for n in names}}
                for a, h, s in zip(arrays, human_scores, system_scores, strict=True)
            ]  # fmt: skip
        samples: dict[str, dict[str, np.ndarray]] = {}
        for name in names:
            scores = np.array([_oriented(name, s.get(name)) for s in system_scores])
            report.rows += _system_rows(name, scores, human_scores, resampled_m.get(name),
                                        resampled_h, settings.alpha, bin_name,
                                        samples)  # fmt: skip
            values = np.stack([v[name][columns] for v in seg_values])
            report.rows += _segment_rows(name, values, human_matrix[:, columns], bin_name)
        report.rankings += _rankings(report, samples, settings.alpha, bin_name)
    return report


def _rankings(
    report: MetaReport, samples: dict[str, dict[str, np.ndarray]], alpha: float, bin_name: str
) -> list[MetricRanking]:
    """The metrics ranked by each system-level statistic that has resamples, with a verdict."""
    out = []
    for statistic, by_metric in samples.items():
        if len(by_metric) < 2:
            continue
        values = {
            r.metric: r.value
            for r in report.rows
            if (r.level, r.statistic, r.bin) == ("system", statistic, bin_name)
            and r.metric in by_metric
        }
        ranking = rank_metrics(values, by_metric, alpha, level="system", statistic=statistic,
                               bin_name=bin_name)  # fmt: skip
        ranking.verdict = _verdict(ranking, report.scheme.upper(), report.bootstrap["n"])
        out.append(ranking)
    return out


def _verdict(ranking: MetricRanking, human: str, n_bootstrap: int) -> str:
    """One line: the metrics of the first cluster, and how far below the others are."""
    if not ranking.ranked:
        return "no metric has a value"

    def p_text(p: float) -> str:
        return f"p < {1 / n_bootstrap:.2g}" if p == 0 else f"p {p:.3f}"

    first = [str(r["metric"]) for r in ranking.ranked if r["cluster"] == 1]
    best = first[0]
    what = f"{STATISTIC_LABELS[ranking.statistic]}, system level"
    shown = [label(m) for m in first]
    names = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    if len(first) == len(ranking.ranked):
        closest = min(p for by in ranking.p_values.values() for p in by.values())
        return (
            f"{names} agree with {human} alike ({what}): no metric is significantly better than "
            f"another at alpha = {ranking.alpha:g} (the closest pair: {p_text(closest)})"
        )
    below = [
        f"{label(str(r['metric']))} ({p_text(ranking.p_values[best][str(r['metric'])])})"
        for r in ranking.ranked
        if r["cluster"] != 1
    ]
    verb = "agrees" if len(first) == 1 else "agree"
    return (
        f"{names} {verb} best with {human} ({what}); significantly below {label(best)}: "
        + ", ".join(below)
    )
