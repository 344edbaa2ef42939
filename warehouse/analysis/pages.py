"""What the HTML pages show, gathered from the warehouse: one run's page (`tame-wh report RUN
--html`) and the whole dashboard (`tame-wh dashboard`). The pages in warehouse/html only turn
these values into markup."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from warehouse.analysis.compare import Comparison, compare_runs, load_runs
from warehouse.analysis.exposure_histograms import exposure_histograms
from warehouse.analysis.human_pages import HumanPageData, human_page_data
from warehouse.analysis.leaderboard import leaderboard
from warehouse.analysis.replicates import ReplicateGroup, replicate_groups
from warehouse.analysis.report import build_report, build_reports, default_audits
from warehouse.analysis.runs import RunFilter, resolve_run
from warehouse.analysis.segments import (
    EMPTY_RUN_COLUMNS,
    run_columns,
    segment_key,
    shared_columns,
)
from warehouse.analysis.trends import ModelTrend, model_trends
from warehouse.errors import UsageError
from warehouse.exposure.summary import AuditResult, load_audit
from warehouse.stats.resample import bootstrap_settings
from warehouse.store.corpora import CorpusInfo, list_corpora


@dataclass(frozen=True)
class RunPageData:
    """One run's page: its report document, the segment table's columns (the test set's and
    audit's under `segment_key`, and the run's own) and its audit's exposure histogram."""

    doc: dict[str, Any]
    segment_key: str
    shared_columns: str
    run_columns: str
    histogram: list[dict[str, Any]]


@dataclass
class SiteData:
    """Everything the dashboard shows, read from the warehouse in set-based queries."""

    board: list[dict[str, Any]]
    test_sets: list[CorpusInfo]
    docs: dict[str, dict[str, Any]]  # report document by run id
    default_audit: dict[str, str]  # audit id by test set id (audited test sets with runs)
    audits: dict[str, list[tuple[AuditResult, str]]]  # (audit, created) by test set id
    histograms: dict[str, list[dict[str, Any]]]  # exposure chart rows by audit id
    run_columns: dict[str, str]  # the segment table's run columns (JSON) by run id
    shared: dict[str, str]  # segment key -> JSON of the test set's and audit's columns
    comparisons: list[tuple[str, str, Comparison]]  # run ids A and B, their comparison
    human: dict[str, HumanPageData] = field(default_factory=dict)  # by test set id
    trends: list[ModelTrend] = field(default_factory=list)  # models with two runs or more
    replicates: list[ReplicateGroup] = field(default_factory=list)  # groups of two runs or more


def run_page_data(
    con: duckdb.DuckDBPyConnection,
    run_ref: str,
    *,
    train: str | None = None,
    testset: str | None = None,
    bin_by: str | None = None,
) -> RunPageData:
    """What the page of one run shows (its audit: against `train` and by `bin_by` when given,
    else the default one)."""
    doc = build_report(con, run_ref, train=train, testset=testset, bin_by=bin_by)
    run_id = doc["run"]["run_id"]
    audit_id = doc["exposure"]["audit_id"] if doc["exposure"] else None
    test_corpus_id = doc["run"]["test_corpus_id"]
    return RunPageData(
        doc=doc,
        segment_key=segment_key(test_corpus_id, audit_id),
        shared_columns=shared_columns(con, test_corpus_id, audit_id),
        run_columns=run_columns(con, [run_id]).get(run_id, EMPTY_RUN_COLUMNS),
        histogram=exposure_histograms(con, [audit_id])[audit_id] if audit_id else [],
    )


def site_data(
    con: duckdb.DuckDBPyConnection,
    compare: Sequence[tuple[str, str]] = (),
    runs: RunFilter | None = None,
) -> SiteData:
    """What the whole dashboard shows (the runs `runs` lets through), with a comparison of each
    pair of runs in `compare`."""
    pairs = comparison_pairs(con, compare)
    runs = runs or RunFilter()
    board = leaderboard(con, tags=dict(runs.tags), exclude_tags=runs.exclude)
    default_audit = default_audits(con, [r["test_corpus_id"] for r in board])
    audits = audits_by_test_set(con)
    shared = {}
    for test_corpus_id in dict.fromkeys(r["test_corpus_id"] for r in board):
        audit_id = default_audit.get(test_corpus_id)
        shared[segment_key(test_corpus_id, audit_id)] = shared_columns(
            con, test_corpus_id, audit_id
        )
    settings = bootstrap_settings(con)
    test_sets = list_corpora(con, "test")
    human = {info.corpus_id: human_page_data(con, info, settings) for info in test_sets}
    return SiteData(
        board=board,
        test_sets=test_sets,
        docs=build_reports(con, board),
        default_audit=default_audit,
        audits=audits,
        histograms=exposure_histograms(
            con, [audit.audit_id for found in audits.values() for audit, _ in found]
        ),
        run_columns=run_columns(con, [r["run_id"] for r in board]),
        shared=shared,
        comparisons=[
            (a, b, compare_runs(load_runs([a, b], con), significance=True, settings=settings))
            for a, b in pairs
        ],
        human={k: v for k, v in human.items() if v is not None},
        trends=model_trends(con, board, settings),
        replicates=replicate_groups(con, settings, min_runs=2),
    )


def comparison_pairs(
    con: duckdb.DuckDBPyConnection, compare: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The run ids of each pair asked for, without repeats; each two runs of one test set."""
    # As `tame-wh compare` requires: anything else is a usage error.
    pairs: list[tuple[str, str]] = []
    for ref_a, ref_b in compare:
        a, b = resolve_run(con, ref_a), resolve_run(con, ref_b)
        if a == b:
            raise UsageError(f"--compare {ref_a} {ref_b}: both name run {a}; give two runs")
        tests = dict(
            con.execute(
                "SELECT r.run_id, c.name FROM runs r JOIN corpora c "
                "ON c.corpus_id = r.test_corpus_id WHERE r.run_id IN (?, ?)",
                [a, b],
            ).fetchall()
        )
        if tests[a] != tests[b]:
            raise UsageError(
                f"--compare {ref_a} {ref_b}: the runs are on different test sets "
                f"({tests[a]!r} and {tests[b]!r}); compare runs of one test set"
            )
        if (a, b) not in pairs:
            pairs.append((a, b))
    return pairs


def audits_by_test_set(
    con: duckdb.DuckDBPyConnection,
) -> dict[str, list[tuple[AuditResult, str]]]:
    """Every audit with its creation time, by test set, oldest first."""
    out: dict[str, list[tuple[AuditResult, str]]] = {}
    rows = con.execute(
        "SELECT test_corpus_id, audit_id, created_at FROM audits ORDER BY created_at, audit_id"
    ).fetchall()
    for test_corpus_id, audit_id, created in rows:
        audit = load_audit(con, audit_id, action="unchanged")
        out.setdefault(test_corpus_id, []).append((audit, str(created)))
    return out
