"""Tie groups of stored runs: the runs of each test set tested pair by pair on one metric, with
clusters and rank ranges (`leaderboard --clusters`; the rule is in docs/statistics.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb
import numpy as np

from warehouse.basics import utc_now
from warehouse.errors import UsageError
from warehouse.metrics.registry import (
    BLEU,
    CHRF,
    COMPOSITE,
    EXACT_MATCH,
    HUMAN_METRICS,
    TER,
    label,
)
from warehouse.stats.arrays import RunArrays, load_run_arrays
from warehouse.stats.clusters import (
    BOARD_MAX_RESAMPLES,
    DEFAULT_CORRECTION,
    DEFAULT_METHOD,
    Board,
    PairP,
    board_from_p_values,
    resamples_to_resolve,
    sample_p_values,
    tie_groups,
)
from warehouse.stats.intervals import composite_samples
from warehouse.stats.resample import BootstrapSettings, resample_indices, resampled_scores_of
from warehouse.stats.significance import method_settings
from warehouse.store.connection import transaction
from warehouse.store.settings import metric_directions

# Leaderboard sort keys whose metric has a resampled form, and that metric.
CLUSTER_SORT_KEYS = {
    "composite": COMPOSITE,
    "chrf": CHRF,
    "bleu": BLEU,
    "ter": TER,
    "exact_match": EXACT_MATCH,
    **HUMAN_METRICS,
}


@dataclass(frozen=True)
class ClusterRequest:
    """How to form tie groups: the metric (a leaderboard sort key or a per-entry metric), the
    test, the correction, and resampling settings (None: the warehouse's settings)."""

    metric: str = "chrf"
    method: str = DEFAULT_METHOD
    correction: str = DEFAULT_CORRECTION
    n_bootstrap: int | None = None
    alpha: float | None = None
    seed: int | None = None

    @property
    def metric_name(self) -> str:
        """The metric's registered name (`chrf` → `chrf_plus_plus`)."""
        return CLUSTER_SORT_KEYS.get(self.metric, self.metric)


def _by_test_set(runs: Sequence[RunArrays]) -> list[list[RunArrays]]:
    """The runs grouped by test set, in order of first appearance."""
    groups: dict[str, list[RunArrays]] = {}
    for run in runs:
        groups.setdefault(run.test_corpus_id, []).append(run)
    return list(groups.values())


def board_clusters(
    con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], request: ClusterRequest
) -> list[Board]:
    """One board per test set among `run_ids` (test sets with one run are left out), each with
    every run's cluster and rank range. The resample count starts at the one asked for (else at
    the fewest that can reach the corrected threshold) and doubles while a pair's corrected
    decision is within Monte-Carlo error of its level, up to a cap; the board's notes say the
    count, the pairs left open and, for a board of one cluster, the closest pair."""
    if len(set(run_ids)) < 2:
        raise UsageError("clusters need at least two runs; the board holds fewer")
    runs = [load_run_arrays(con, run_id) for run_id in dict.fromkeys(run_ids)]
    if request.metric_name in HUMAN_METRICS.values():
        runs = _with_human_scores(con, runs, request.metric_name)
    groups = [g for g in _by_test_set(runs) if len(g) > 1]
    if not groups:
        raise UsageError("clusters need at least two runs on one test set; each has one here")
    settings = method_settings(
        con, request.method, request.n_bootstrap, request.alpha, request.seed
    )
    directions = metric_directions(con)
    boards = []
    for group in groups:
        n_pairs = len(group) * (len(group) - 1) // 2
        # Without a count given, at least the fewest resamples whose smallest p-value can reach
        # the corrected threshold; either way more while a decision is open.
        floor = resamples_to_resolve(request.method, settings.alpha, n_pairs, request.correction)
        n = (
            settings.n_bootstrap
            if request.n_bootstrap is not None
            else max(settings.n_bootstrap, floor)
        )
        while True:
            chosen = replace(settings, n_bootstrap=n)
            if request.metric_name == COMPOSITE:
                board = _composite_board(con, group, request, chosen)
            else:
                board = tie_groups(
                    group,
                    request.metric_name,
                    method=request.method,
                    correction=request.correction,
                    settings=chosen,
                    directions=directions,
                )
            open_pairs = board.open_pairs()
            if not open_pairs or n >= BOARD_MAX_RESAMPLES:
                break
            n = min(2 * n, BOARD_MAX_RESAMPLES)
        board.notes[:0] = _resample_notes(board, settings.n_bootstrap, open_pairs)
        boards.append(board)
    return boards


def _resample_notes(board: Board, asked: int, open_pairs: list[PairP]) -> list[str]:
    """What the board's resample count rests on, which pairs it left open, and, for a board of
    one cluster, why."""
    n = board.settings.n_bootstrap
    notes = []
    if open_pairs:
        shown = ", ".join(f"{q.run_a} vs {q.run_b} (p {q.p_value:.5f})" for q in open_pairs[:3]) + (
            f" and {len(open_pairs) - 3} more" if len(open_pairs) > 3 else ""
        )
        notes.append(
            f"{board.test_set}: {len(open_pairs)} pair(s) still within Monte-Carlo error of "
            f"their corrected level after {n:,} resamples (the cap): {shown}; their verdict "
            "is the estimate's"
        )
    elif n != asked:
        notes.append(
            f"{board.test_set}: {n:,} resamples instead of {asked:,}: every pair's "
            f"{board.correction}-corrected decision clear of its level by Monte-Carlo error "
            "(the verdict no longer depends on the count)"
        )
    closest = board.closest_pair()
    if board.ranks and len({r.cluster for r in board.ranks}) == 1 and closest is not None:
        notes.append(
            f"{board.test_set}: one cluster: no pair separable at {board.settings.alpha:g} after "
            f"{board.correction}; the closest pair is {closest.run_a} vs {closest.run_b} with "
            f"adjusted p {closest.adjusted:.4f} (raw {closest.p_value:.5f})"
        )
    return notes


def _composite_board(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[RunArrays],
    request: ClusterRequest,
    settings: BootstrapSettings,
) -> Board:
    """Tie groups on the composite: each resample recombines every run's resampled inputs with
    its profile weights (as its stored composite interval does), the same segment draws for
    all runs; the sign test or sacrebleu's paired bootstrap formula on those samples."""
    if request.method not in ("sign", "paired-bs"):
        raise UsageError(
            "tie groups on the composite use --method sign or paired-bs (a randomisation of "
            "segments has no composite of its own)"
        )
    if any(r.keys != runs[0].keys for r in runs):
        raise UsageError("tie groups on the composite need runs on the same segments")
    rows = dict(
        (run_id, (composite, inputs))
        for run_id, composite, inputs in con.execute(
            "SELECT run_id, composite, inputs FROM run_composite "
            "WHERE run_id IN (SELECT unnest(?))",
            [[r.run_id for r in runs]],
        ).fetchall()
    )
    missing = [r.run_id for r in runs if rows.get(r.run_id, (None, None))[0] is None]
    if missing:
        raise UsageError(
            f"run {missing[0]} has no composite: clusters need the metric on every run; choose "
            "another metric"
        )
    indices = resample_indices(runs[0].n_segments, settings.n_bootstrap, settings.seed)
    resampled = resampled_scores_of(runs, indices)
    scores = [float(rows[r.run_id][0]) for r in runs]
    samples = [
        composite_samples(rows[r.run_id][1], found, settings.n_bootstrap)
        for r, found in zip(runs, resampled, strict=True)
    ]
    raw = sample_p_values(request.method, scores, samples)
    return board_from_p_values(
        runs[0].test_corpus_id, runs[0].test_set, COMPOSITE, request.method, request.correction,
        settings, runs[0].n_segments, [r.run_id for r in runs], scores, raw, True,
    )  # fmt: skip


def _with_human_scores(
    con: duckdb.DuckDBPyConnection, runs: list[RunArrays], metric: str
) -> list[RunArrays]:
    """The runs with their per-segment human scores of `metric`'s scheme (from each run's newest
    set; NaN where a segment was not judged) as a per-entry metric."""
    scheme = next(k for k, v in HUMAN_METRICS.items() if v == metric)
    rows = con.execute(
        "SELECT g.run_id, s.seg_key, CASE WHEN n.scheme = 'da' THEN g.z ELSE g.score END "
        "FROM human_newest_sets n JOIN human_segment_scores g USING (set_id, run_id) "
        "JOIN runs r USING (run_id) JOIN segments s ON s.corpus_id = r.test_corpus_id "
        "AND s.seg_idx = g.seg_idx WHERE n.scheme = ? AND n.run_id IN (SELECT unnest(?))",
        [scheme, [r.run_id for r in runs]],
    ).fetchall()
    found: dict[str, dict[str, float]] = {}
    for run_id, key, value in rows:
        if value is not None:
            found.setdefault(run_id, {})[key] = value
    out = []
    for run in runs:
        if run.run_id not in found:
            raise UsageError(
                f"run {run.run_id} has no {label(metric)} judgments: clusters need the metric on "
                "every run; choose another metric, or --testset a judged test set"
            )
        scores = found[run.run_id]
        values = np.array([scores.get(k, np.nan) for k in run.keys], dtype=np.float64)
        out.append(replace(run, entry_metrics={**run.entry_metrics, metric: values}))
    return out


def runs_digest(run_ids: Sequence[str]) -> str:
    """sha256 of the run ids, sorted and joined by commas (as the `run_tie_groups` view
    computes it for a test set's current runs)."""
    return hashlib.sha256(",".join(sorted(run_ids)).encode()).hexdigest()


# The key of a metric's sacrebleu signature in a run's `metric_settings.signatures`.
_SIGNATURE_KEYS = {CHRF: "chrf", BLEU: "bleu", TER: "ter"}


def board_signature(con: duckdb.DuckDBPyConnection, board: Board) -> str:
    """The signatures the board's metric was computed under on its runs, sorted and joined by
    ` ; ` (one when the runs agree; '' for a metric without one)."""
    key = _SIGNATURE_KEYS.get(board.metric, board.metric)  # a plugin's is under its name
    found = con.execute(
        "SELECT DISTINCT json_extract_string(metric_settings, ?) FROM runs "
        "WHERE run_id IN (SELECT unnest(?))",
        [f"$.signatures.{key}", [r.run_id for r in board.ranks]],
    ).fetchall()
    return " ; ".join(sorted(str(s) for (s,) in found if s is not None))


def store_boards(con: duckdb.DuckDBPyConnection, boards: Sequence[Board]) -> int:
    """Store the boards in `run_clusters` with the signature their metric was computed under,
    each replacing the stored board of the same test set, metric, method, correction and
    signature, in one transaction; the rows written."""
    now = utc_now()
    rows = []
    for b in boards:  # the signature and the digest are the board's: read and computed once
        signature, digest = board_signature(con, b), runs_digest([x.run_id for x in b.ranks])
        rows += [
            (b.test_corpus_id, b.metric, b.method, b.correction, signature, r.run_id, r.score,
             r.cluster, r.best_rank, r.worst_rank, len(b.ranks), digest, b.settings.n_bootstrap,
             b.settings.alpha, b.settings.seed, now)
            for r in b.ranks
        ]  # fmt: skip
    with transaction(con):
        for row in {r[:5] for r in rows}:
            con.execute(
                "DELETE FROM run_clusters WHERE test_corpus_id = ? AND metric = ? AND method = ? "
                "AND correction = ? AND signature = ?",
                list(row),
            )
        if rows:
            con.executemany(
                "INSERT INTO run_clusters VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
    return len(rows)


def cluster_metric_label(request: ClusterRequest) -> str:
    """The clustered metric as people read it."""
    return label(request.metric_name)
