"""Regressions: each run against the previous run of the same model, condition and test set.

Runs are ordered by `created_at` (then ingest time and id); every run is tested against its
predecessor with the paired sign test (docs/statistics.md); a metric regressed when the change is
significant and the previous run is the better one (by the metric's direction). This is the check
a CI job runs after ingesting a new run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import duckdb

from warehouse.metrics.registry import higher_is_better
from warehouse.stats.arrays import RunArrays, load_run_arrays
from warehouse.stats.resample import BootstrapSettings
from warehouse.stats.significance import SignificanceResult, compare_pair
from warehouse.store.corpora import get_corpus
from warehouse.store.settings import metric_directions


@dataclass(frozen=True)
class RunStep:
    """A run and the run of the same model, condition and test set before it."""

    model_slug: str
    condition: str | None
    test_set: str
    run_id: str
    created_at: str
    previous_run_id: str
    previous_created_at: str

    @property
    def group(self) -> tuple[str, str | None, str]:
        """Model, condition and test set."""
        return (self.model_slug, self.condition, self.test_set)


@dataclass(frozen=True)
class Regression:
    """A significant drop of one metric from the previous run to this one (A = new, B = old)."""

    step: RunStep
    result: SignificanceResult

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**self.step.__dict__, **self.result.to_dict()}


@dataclass
class RegressionReport:
    """Every consecutive pair checked and the significant drops found."""

    settings: BootstrapSettings
    checked: list[RunStep] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)
    # Drops too small for the test set to detect (not significant, |Δ| below the MDE).
    undetectable: list[Regression] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    nothing_checked: str | None = None  # why no run had a predecessor to compare with

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "method": "sign",
            "n_bootstrap": self.settings.n_bootstrap,
            "alpha": self.settings.alpha,
            "seed": self.settings.seed,
            "checked": [step.__dict__ for step in self.checked],
            "regressions": [r.to_dict() for r in self.regressions],
            "undetectable_drops": [r.to_dict() for r in self.undetectable],
            "warnings": self.warnings,
            "nothing_checked": self.nothing_checked,
        }


def _steps(
    con: duckdb.DuckDBPyConnection, testset: str | None, model_slug: str | None, latest: bool
) -> list[RunStep]:
    """Consecutive runs of each (model, condition, test set), oldest first."""
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    rows = con.execute(
        "SELECT r.model_slug, r.condition, c.name, r.run_id, "
        "strftime(r.created_at, '%Y-%m-%dT%H:%M:%SZ') FROM runs r "
        "JOIN corpora c ON c.corpus_id = r.test_corpus_id "
        "WHERE (? IS NULL OR c.name = ?) AND (? IS NULL OR r.model_slug = ?) "
        "ORDER BY r.model_slug, r.condition NULLS FIRST, c.name, r.created_at, r.ingested_at, "
        "r.run_id",
        [testset, testset, model_slug, model_slug],
    ).fetchall()
    steps: list[RunStep] = []
    for previous, current in pairwise(rows):
        if previous[:3] != current[:3]:
            continue
        model_slug, condition, test_set, run_id, created_at = current
        step = RunStep(
            model_slug, condition, test_set, run_id, created_at, previous[3], previous[4]
        )
        if latest and steps and steps[-1].group == step.group:
            steps.pop()
        steps.append(step)
    return steps


def _why_nothing_checked(
    con: duckdb.DuckDBPyConnection, testset: str | None, model_slug: str | None
) -> str:
    """Why no run has a predecessor: no runs at all, none matching the filters, or one run
    per (model, condition, test set)."""
    total = con.execute("SELECT count(*) FROM runs").fetchone()
    if not total or total[0] == 0:
        return "the warehouse has no runs yet"
    rows = con.execute(
        "SELECT count(*), count(DISTINCT (r.model_slug, r.condition, c.name)) FROM runs r "
        "JOIN corpora c ON c.corpus_id = r.test_corpus_id "
        "WHERE (? IS NULL OR c.name = ?) AND (? IS NULL OR r.model_slug = ?)",
        [testset, testset, model_slug, model_slug],
    ).fetchone()
    n_runs, n_groups = rows if rows else (0, 0)
    if n_runs == 0:
        wanted = " and ".join(
            part
            for part in (
                f"model {model_slug!r}" if model_slug is not None else "",
                f"test set {testset!r}" if testset is not None else "",
            )
            if part
        )
        known = [
            m for (m,) in con.execute("SELECT DISTINCT model_slug FROM runs ORDER BY 1").fetchall()
        ]
        return f"no runs of {wanted} (models with runs: {', '.join(known)})"
    return (
        f"each of the {n_groups} (model, condition, test set) group(s) has a single run "
        f"({n_runs} run(s) in all): there is no previous run to compare with"
    )


def find_regressions(
    con: duckdb.DuckDBPyConnection,
    *,
    testset: str | None = None,
    model_slug: str | None = None,
    latest: bool = False,
    settings: BootstrapSettings | None = None,
) -> RegressionReport:
    """Test every run against its predecessor (only each group's newest run when `latest`)."""
    report = RegressionReport(settings or BootstrapSettings())
    report.checked = _steps(con, testset, model_slug, latest)
    directions = metric_directions(con)
    cache: dict[str, RunArrays] = {}

    def arrays(run_id: str) -> RunArrays:
        if run_id not in cache:
            cache[run_id] = load_run_arrays(con, run_id)
        return cache[run_id]

    for step in report.checked:
        test = compare_pair(
            arrays(step.run_id),
            arrays(step.previous_run_id),
            settings=report.settings,
            directions=directions,
        )
        report.warnings += [f"{step.run_id} vs {step.previous_run_id}: {w}" for w in test.warnings]
        report.regressions += [Regression(step, r) for r in test.results if r.winner == "B"]
        report.undetectable += [
            Regression(step, r)
            for r in test.results
            if r.below_mde
            and r.delta != 0
            and (r.delta > 0) != higher_is_better(r.metric_name, directions)
        ]
    if not report.checked:
        report.nothing_checked = _why_nothing_checked(con, testset, model_slug)
    return report
