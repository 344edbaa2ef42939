"""Regressions: each run against the previous run of the same model, condition and test set,
or one run (a CI job's) against a pinned baseline: the gate.

Runs are ordered by `created_at` (then ingest time and id); every run is tested against its
predecessor with the paired sign test (docs/statistics.md); a metric regressed when the change is
significant and the previous run is the better one (by the metric's direction): raw per-metric
p-values, as reports keep them. The gate (`gate_run`) judges one run against the baseline
`--against` names by its policy (`warehouse.stats.gate`): the gated metrics, their margins and
the correction across them decide; every other shared metric is tested as information.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import duckdb

from warehouse.analysis.runs import resolve_run
from warehouse.basics import grouped
from warehouse.errors import UsageError
from warehouse.metrics.registry import CHRF, higher_is_better
from warehouse.stats.arrays import RunArrays, load_run_arrays
from warehouse.stats.gate import GatePolicy, GateVerdict, decide_gate
from warehouse.stats.replicates import replicate_scores
from warehouse.stats.resample import BootstrapSettings
from warehouse.stats.significance import SignificanceResult, compare_pair
from warehouse.store.corpora import get_corpus
from warehouse.store.replicates import LABELLED_RUNS, REPLICATE_TAG, SEED_LABEL, replicate_label
from warehouse.store.run_refs import known_model
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


# How the gate's baseline is chosen when `--against` is not given.
DEFAULT_AGAINST = "previous"


@dataclass(frozen=True)
class Baseline:
    """The run a gated run is judged against, how it was chosen, and why there is none."""

    rule: str  # previous | best | tag:KEY=VALUE | the run reference given
    run_id: str | None
    missing: str | None = None  # why no run fits the rule


@dataclass
class RegressionReport:
    """Every pair checked and the significant drops found (for the gate: the one run against
    its baseline)."""

    settings: BootstrapSettings
    method: str = "sign"
    gated_run: str | None = None  # the run the gate judged
    baseline: Baseline | None = None
    checked: list[RunStep] = field(default_factory=list)
    tested: list[Regression] = field(default_factory=list)  # every metric of every pair
    regressions: list[Regression] = field(default_factory=list)
    # Drops too small for the test set to detect (not significant, |Δ| below the MDE).
    undetectable: list[Regression] = field(default_factory=list)
    # Significant on segments, but within the seed noise of the baseline's replicates.
    within_seed_noise: list[Regression] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    nothing_checked: str | None = None  # why no run had a predecessor to compare with
    policy: GatePolicy | None = None  # the gate's (None: a scan)
    verdict: GateVerdict | None = None  # the gate's decision over its metrics

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        gate = None
        if self.gated_run is not None and self.baseline is not None:
            gate = {
                "run_id": self.gated_run,
                "against": self.baseline.rule,
                "baseline_run_id": self.baseline.run_id,
                "no_baseline": self.baseline.missing,
                "passed": not self.regressions,
                "policy": self.policy.to_dict() if self.policy is not None else None,
                "verdict": self.verdict.to_dict() if self.verdict is not None else None,
            }
        return {
            "method": self.method,
            "gate": gate,
            "n_bootstrap": self.settings.n_bootstrap,
            "alpha": self.settings.alpha,
            "seed": self.settings.seed,
            "checked": [step.__dict__ for step in self.checked],
            "tested": [r.to_dict() for r in self.tested],
            "regressions": [r.to_dict() for r in self.regressions],
            "undetectable_drops": [r.to_dict() for r in self.undetectable],
            "within_seed_noise": [r.to_dict() for r in self.within_seed_noise],
            "warnings": self.warnings,
            "nothing_checked": self.nothing_checked,
        }


def _steps(
    con: duckdb.DuckDBPyConnection,
    testset: str | None,
    model_slug: str | None,
    recent: int | None,
) -> list[RunStep]:
    """Consecutive runs of each (model, condition, test set), oldest first (only each group's
    `recent` newest steps when given)."""
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    known_model(con, model_slug)
    rows = con.execute(
        "SELECT r.model_slug, r.condition, c.name, r.run_id, "
        "strftime(r.created_at, '%Y-%m-%dT%H:%M:%SZ') FROM ingested_runs r "
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
        steps.append(step)
    if recent is None:
        return steps
    kept: list[RunStep] = []
    for _group, members in grouped(steps, lambda s: s.group).items():
        kept += members[-recent:]
    return kept


def _why_nothing_checked(
    con: duckdb.DuckDBPyConnection, testset: str | None, model_slug: str | None
) -> str:
    """Why no run has a predecessor: no runs at all, none matching the filters, or one run
    per (model, condition, test set)."""
    total = con.execute("SELECT count(*) FROM ingested_runs").fetchone()
    if not total or total[0] == 0:
        return "the warehouse has no runs yet"
    rows = con.execute(
        "SELECT count(*), count(DISTINCT (r.model_slug, r.condition, c.name)) FROM ingested_runs r "
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
        models = con.execute("SELECT DISTINCT model_slug FROM ingested_runs ORDER BY 1")
        known = [m for (m,) in models.fetchall()]
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
    recent: int | None = None,
    method: str = "sign",
    settings: BootstrapSettings | None = None,
) -> RegressionReport:
    """Test every run against its predecessor with the paired test `method` (only each group's
    newest run when `latest`, its `recent` newest runs when given)."""
    report = RegressionReport(settings or BootstrapSettings(), method=method)
    report.checked = _steps(con, testset, model_slug, 1 if latest else recent)
    _test_steps(con, report)
    if not report.checked:
        report.nothing_checked = _why_nothing_checked(con, testset, model_slug)
    return report


def _test_steps(con: duckdb.DuckDBPyConnection, report: RegressionReport) -> None:
    """Test every checked step of `report` with its method; record drops and warnings."""
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
            method=report.method,
            settings=report.settings,
            directions=directions,
        )
        report.warnings += [f"{step.run_id} vs {step.previous_run_id}: {w}" for w in test.warnings]
        report.tested += [Regression(step, r) for r in test.results]
        drops = [Regression(step, r) for r in test.results if r.winner == "B"]
        noise = _seed_noise(con, step, report.settings, arrays) if drops else {}
        for drop in drops:
            band = noise.get(drop.result.metric_name)
            inside = band is not None and band[0] <= drop.result.system_a_score <= band[1]
            (report.within_seed_noise if inside else report.regressions).append(drop)
        report.undetectable += [
            Regression(step, r)
            for r in test.results
            if r.below_mde
            and r.delta != 0
            and (r.delta > 0) != higher_is_better(r.metric_name, directions)
        ]


def _seed_noise(
    con: duckdb.DuckDBPyConnection,
    step: RunStep,
    settings: BootstrapSettings,
    arrays: Callable[[str], RunArrays],
) -> dict[str, tuple[float, float]]:
    """When the baseline run is one of two or more replicates of its configuration (the new run
    aside), each metric's interval over those replicates counting segment and seed noise
    (docs/statistics.md, "Replicates"): a drop whose new score lies inside it does not exceed
    both noises. Empty otherwise."""
    label = replicate_label(con, step.previous_run_id)
    if label is None:
        return {}
    model, condition, _name, corpus_id, *_ = _run_row(con, step.previous_run_id)
    members = [
        run_id
        for (run_id,) in con.execute(
            "WITH labelled AS (" + LABELLED_RUNS + ") SELECT run_id FROM labelled "
            "WHERE label = ? AND model_slug = ? AND condition IS NOT DISTINCT FROM ? "
            "AND test_corpus_id = ? AND run_id <> ? ORDER BY run_id",
            [SEED_LABEL, REPLICATE_TAG, label, model, condition, corpus_id, step.run_id],
        ).fetchall()
    ]
    if len(members) < 2:
        return {}
    scores = replicate_scores([arrays(m) for m in members], settings)
    return {
        name: (score.ci_lower, score.ci_upper)
        for name, score in scores.items()
        if score.ci_lower is not None and score.ci_upper is not None
    }


def _run_row(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[Any, ...]:
    """Model, condition, test set name and id, creation time (text), ingest time of a run."""
    row = con.execute(
        "SELECT r.model_slug, r.condition, c.name, r.test_corpus_id, "
        "strftime(r.created_at, '%Y-%m-%dT%H:%M:%SZ'), r.created_at, r.ingested_at "
        "FROM runs r JOIN corpora c ON c.corpus_id = r.test_corpus_id WHERE r.run_id = ?",
        [run_id],
    ).fetchone()
    assert row is not None, run_id
    return row


def _tag_rule(against: str) -> tuple[str, str]:
    """The key and value of a `tag:KEY=VALUE` baseline rule."""
    key, sep, value = against.removeprefix("tag:").partition("=")
    if not sep or not key:
        raise UsageError(f"--against {against!r}: expected tag:KEY=VALUE")
    return key, value


def check_against(con: duckdb.DuckDBPyConnection | None, against: str) -> None:
    """Refuse, before anything is written, a baseline rule that cannot name a run: a malformed
    tag rule, or a run reference that names no stored run (`con` None: no warehouse yet)."""
    if against in ("previous", "best"):
        return
    if against.startswith("tag:"):
        _tag_rule(against)
        return
    if con is None:
        raise UsageError(
            f"--against {against!r}: the warehouse does not exist yet, so no stored run can be "
            "the baseline; nothing was written"
        )
    resolve_run(con, against)


def choose_baseline(con: duckdb.DuckDBPyConnection, run_id: str, against: str) -> Baseline:
    """The run `run_id` is judged against: `previous` (the run of the same model, condition and
    test set before it), `best` (the other run of its test set with the highest chrF++),
    `tag:KEY=VALUE` (the newest other run of its test set with that tag) or a run reference
    (which must be on the same test set)."""
    model, condition, test_set, test_corpus_id, _, created, ingested = _run_row(con, run_id)
    if against == "previous":
        row = con.execute(
            "SELECT run_id FROM ingested_runs WHERE model_slug = ? "
            "AND condition IS NOT DISTINCT FROM ? "
            "AND test_corpus_id = ? AND (created_at, ingested_at, run_id) < (?, ?, ?) "
            "ORDER BY created_at DESC, ingested_at DESC, run_id DESC LIMIT 1",
            [model, condition, test_corpus_id, created, ingested, run_id],
        ).fetchone()
        why = (
            f"no earlier run of model {model!r}"
            + (f", condition {condition!r}" if condition is not None else "")
            + f" on test set {test_set!r}"
        )
    elif against == "best":
        row = con.execute(
            "SELECT r.run_id FROM ingested_runs r JOIN run_surface s USING (run_id) "
            "WHERE r.test_corpus_id = ? AND r.run_id <> ? AND s.chrf_plus_plus IS NOT NULL "
            "ORDER BY s.chrf_plus_plus DESC, r.created_at, r.run_id LIMIT 1",
            [test_corpus_id, run_id],
        ).fetchone()
        why = f"no other run on test set {test_set!r} has a {CHRF} score"
    elif against.startswith("tag:"):
        key, value = _tag_rule(against)
        row = con.execute(
            "SELECT r.run_id FROM ingested_runs r JOIN run_tags t USING (run_id) "
            "WHERE r.test_corpus_id = ? AND r.run_id <> ? AND t.key = ? AND t.value = ? "
            "ORDER BY r.created_at DESC, r.ingested_at DESC, r.run_id DESC LIMIT 1",
            [test_corpus_id, run_id, key, value],
        ).fetchone()
        why = f"no other run on test set {test_set!r} is tagged {key}={value}"
    else:
        baseline = resolve_run(con, against)
        if baseline == run_id:
            raise UsageError(f"--against {against!r} names the judged run itself")
        other = _run_row(con, baseline)
        if other[3] != test_corpus_id:
            raise UsageError(
                f"--against {against!r}: run {baseline} is on test set {other[2]!r}, "
                f"the judged run {run_id} on {test_set!r}"
            )
        return Baseline(against, baseline)
    if row is None:
        return Baseline(against, None, why)
    return Baseline(against, row[0])


def gate_run(
    con: duckdb.DuckDBPyConnection,
    run: str,
    *,
    against: str = DEFAULT_AGAINST,
    require_baseline: bool = False,
    method: str = "sign",
    settings: BootstrapSettings | None = None,
    policy: GatePolicy | None = None,
) -> RegressionReport:
    """Judge one run against the baseline `against` names by the gate's `policy` (default: chrF++
    at the settings' alpha), every other shared metric tested with `method` as information (a
    run with no baseline passes with a note, or is refused when `require_baseline`)."""
    run_id = resolve_run(con, run)
    baseline = choose_baseline(con, run_id, against)
    settings = settings or BootstrapSettings()
    report = RegressionReport(
        settings,
        method=method,
        gated_run=run_id,
        baseline=baseline,
        policy=policy or GatePolicy(alpha=settings.alpha),
    )
    if baseline.run_id is None:
        if require_baseline:
            raise UsageError(
                f"no baseline for run {run_id} (--against {against}): {baseline.missing}"
            )
        report.nothing_checked = f"{baseline.missing}: nothing to compare with, the gate passes"
        return report
    model, condition, test_set, _, created, _, _ = _run_row(con, run_id)
    previous_created = _run_row(con, baseline.run_id)[4]
    step = RunStep(model, condition, test_set, run_id, created, baseline.run_id, previous_created)
    report.checked = [step]
    _test_steps(con, report)  # every shared metric, as information (raw p-values)
    _decide_gate(con, report, step)
    return report


def _decide_gate(con: duckdb.DuckDBPyConnection, report: RegressionReport, step: RunStep) -> None:
    """The gate's verdict by its policy; a gated metric that fails is a regression unless the
    candidate's score lies within the seed noise of the baseline's replicates."""
    assert report.policy is not None
    cache: dict[str, RunArrays] = {}

    def arrays(run_id: str) -> RunArrays:
        if run_id not in cache:
            cache[run_id] = load_run_arrays(con, run_id)
        return cache[run_id]

    verdict = decide_gate(
        arrays(step.run_id),
        arrays(step.previous_run_id),
        report.policy,
        report.settings,
        metric_directions(con),
    )
    report.verdict = verdict
    failed = [m for m in verdict.metrics if m.failed]
    noise = _seed_noise(con, step, report.settings, arrays) if failed else {}
    info = {r.result.metric_name: r for r in report.tested}
    report.regressions, report.within_seed_noise = [], []
    for m in failed:
        band = noise.get(m.metric_name)
        inside = band is not None and band[0] <= m.candidate_score <= band[1]
        (report.within_seed_noise if inside else report.regressions).append(info[m.metric_name])
