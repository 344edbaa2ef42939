"""Replicate groups: stored runs that repeat one configuration (model, condition, test set)
under one replicate label, each group summarised by `stats.replicates` (docs/statistics.md,
"Replicates").

A run's label is its `replicate` tag (`ingest --replicate-of RUN` sets it), else its run card's
`replicate` field, else — when its run card gives a `seed` — the label `(seed)`: runs of one
configuration that only differ by seed form one group. A run without a label is a group alone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from warehouse.basics import grouped
from warehouse.errors import UsageError
from warehouse.stats.arrays import load_run_arrays
from warehouse.stats.clusters import Board
from warehouse.stats.replicates import ReplicateScore, group_tie_groups, replicate_scores
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.corpora import get_corpus
from warehouse.store.replicates import LABELLED_RUNS, REPLICATE_TAG, SEED_LABEL
from warehouse.store.run_refs import resolve_run
from warehouse.store.settings import metric_directions


@dataclass(frozen=True)
class ReplicateGroup:
    """The runs of one configuration under one replicate label (or one unlabelled run), with
    their scores over the replicates."""

    model_slug: str
    condition: str | None
    test_set: str
    test_corpus_id: str
    label: str | None
    run_ids: list[str]
    scores: dict[str, ReplicateScore]
    settings: BootstrapSettings

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "model_slug": self.model_slug,
            "condition": self.condition,
            "test_set": self.test_set,
            "test_corpus_id": self.test_corpus_id,
            "replicate": self.label,
            "n_replicates": len(self.run_ids),
            "run_ids": self.run_ids,
            "scores": {m: s.to_dict() for m, s in self.scores.items()},
            "n_bootstrap": self.settings.n_bootstrap,
            "alpha": self.settings.alpha,
            "seed": self.settings.seed,
        }


def replicate_groups(
    con: duckdb.DuckDBPyConnection,
    settings: BootstrapSettings,
    *,
    testset: str | None = None,
    min_runs: int = 1,
) -> list[ReplicateGroup]:
    """Every configuration's replicate groups (and unlabelled runs, alone), on one test set or
    all, best mean chrF++ first within each test set; only groups of `min_runs` runs or more
    are scored and listed."""
    if testset is not None:
        get_corpus(con, testset, "test")
    rows = con.execute(
        LABELLED_RUNS + "WHERE (? IS NULL OR c.name = ?) "
        "ORDER BY c.name, r.model_slug, r.condition NULLS FIRST, r.created_at, r.run_id",
        [SEED_LABEL, REPLICATE_TAG, testset, testset],
    ).fetchall()
    by_key: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        run_id, model, condition, corpus_id, _name, label = row
        key = (corpus_id, model, condition, label if label is not None else ("run", run_id))
        by_key[key].append(row)
    groups = []
    for members in by_key.values():
        if len(members) < min_runs:
            continue
        _run, model, condition, corpus_id, name, label = members[0]
        ids = [m[0] for m in members]
        arrays = [load_run_arrays(con, run_id) for run_id in ids]
        groups.append(
            ReplicateGroup(
                model, condition, name, corpus_id, label, ids, replicate_scores(arrays, settings),
                settings,
            )
        )  # fmt: skip

    def rank(group: ReplicateGroup) -> tuple[str, float]:
        chrf = group.scores.get("chrf_plus_plus")
        mean = chrf.mean if chrf is not None and chrf.mean is not None else float("-inf")
        return (group.test_set, -mean)

    return sorted(groups, key=rank)


def replicate_clusters(
    con: duckdb.DuckDBPyConnection,
    groups: Sequence[ReplicateGroup],
    metric: str,
    *,
    correction: str,
    settings: BootstrapSettings,
) -> list[Board]:
    """Tie groups of the replicate groups of each test set (test sets with one group are left
    out); each board names a group by its first run."""
    directions = metric_directions(con)
    boards = []
    by_test = grouped(list(groups), lambda g: g.test_corpus_id)
    for members in by_test.values():
        if len(members) < 2:
            continue
        arrays = [[load_run_arrays(con, run_id) for run_id in g.run_ids] for g in members]
        boards.append(
            group_tie_groups(arrays, metric, correction=correction, settings=settings,
                             directions=directions)
        )  # fmt: skip
    if not boards:
        raise UsageError("clusters need at least two replicate groups on one test set")
    return boards


@dataclass(frozen=True)
class GroupComparison:
    """Two replicate groups of one test set side by side, each metric tested by the two-level
    sign test (segments and replicates resampled)."""

    a: ReplicateGroup
    b: ReplicateGroup
    tests: list[dict[str, Any]]  # metric, delta (A - B), p_value, winner ("A", "B" or None)
    settings: BootstrapSettings

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "method": "two-level sign",
            "tests": self.tests,
            "n_bootstrap": self.settings.n_bootstrap,
            "alpha": self.settings.alpha,
            "seed": self.settings.seed,
        }


def _group_of(
    con: duckdb.DuckDBPyConnection, ref: str, settings: BootstrapSettings
) -> ReplicateGroup:
    """The replicate group of a run (the run alone when it is not a replicate)."""
    run_id = resolve_run(con, ref)
    row = con.execute(
        "SELECT c.name FROM runs r JOIN corpora c ON c.corpus_id = r.test_corpus_id "
        "WHERE r.run_id = ?",
        [run_id],
    ).fetchone()
    assert row is not None
    return next(g for g in replicate_groups(con, settings, testset=row[0]) if run_id in g.run_ids)


def compare_groups(
    con: duckdb.DuckDBPyConnection, ref_a: str, ref_b: str, settings: BootstrapSettings
) -> GroupComparison:
    """The replicate groups of two runs of one test set compared metric by metric."""
    a, b = _group_of(con, ref_a, settings), _group_of(con, ref_b, settings)
    if a.test_corpus_id != b.test_corpus_id:
        raise UsageError(
            f"{ref_a} and {ref_b} are on different test sets ({a.test_set!r}, {b.test_set!r}): "
            "replicate groups are compared on one test set"
        )
    if a.run_ids == b.run_ids:
        raise UsageError(f"{ref_a} and {ref_b} are in the same replicate group; name two groups")
    arrays = [[load_run_arrays(con, run_id) for run_id in g.run_ids] for g in (a, b)]
    directions = metric_directions(con)
    tests = []
    for metric in (m for m in a.scores if m in b.scores):
        board = group_tie_groups(arrays, metric, correction="none", settings=settings,
                                 directions=directions)  # fmt: skip
        [pair] = board.pairs
        mean_a, mean_b = a.scores[metric].mean, b.scores[metric].mean
        winner = None if pair.winner is None else ("A" if pair.winner == a.run_ids[0] else "B")
        tests.append({
            "metric": metric,
            "delta": None if mean_a is None or mean_b is None else mean_a - mean_b,
            "p_value": pair.p_value,
            "winner": winner,
        })  # fmt: skip
    return GroupComparison(a, b, tests, settings)
