"""Writing prepared runs: every run of one ingest in one transaction, an identical run already
stored left alone (recognised by its id, without scoring it again)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from warehouse import __version__
from warehouse.basics import Notify, utc_now
from warehouse.errors import UsageError
from warehouse.ingest import checks
from warehouse.ingest.runs import IngestResult, PreparedRun
from warehouse.inputs.runcard import TOKEN_FIELDS
from warehouse.metrics.scores import bleu_from_stats, chrf_from_stats, ter_or_none
from warehouse.stats.intervals import RunConfidence, composite_interval, write_intervals
from warehouse.store.connection import transaction
from warehouse.store.corpora import add_corpus_row
from warehouse.store.purge import delete_runs
from warehouse.store.settings import read_settings
from warehouse.store.sums import refresh_runs


def stored_run_ids(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> set[str]:
    """Which of these runs the warehouse already holds."""
    rows = con.execute(
        "SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?))", [list(run_ids)]
    ).fetchall()
    return {r for (r,) in rows}


def stored_scores(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, float | None]:
    """A stored run's whole-run scores (the names `PreparedRun.scores` uses)."""
    row = con.execute(
        "SELECT bleu_stats, chrf_stats, ter_stats, exact_match_rate FROM run_summaries "
        "WHERE run_id = ?",
        [run_id],
    ).fetchone()
    assert row is not None
    bleu, chrf, ter, exact = row
    return {
        "bleu": bleu_from_stats(bleu),
        "chrf": chrf_from_stats(chrf),
        "ter": ter_or_none(ter),
        "exact_match_rate": exact,
    }


def _same_hypotheses_elsewhere(con: duckdb.DuckDBPyConnection, run: PreparedRun) -> list[str]:
    """Runs of other models on the same test set whose hypotheses are these, to the letter."""
    if not run.hyps:
        return []
    # Only runs whose first hypothesis is ours are compared in full (no scan of every run), and
    # only those are read back: the hypotheses are never sent to DuckDB as a parameter.
    candidates = con.execute(
        "SELECT r.run_id, r.model_slug FROM runs r "
        "JOIN hypotheses f ON f.run_id = r.run_id AND f.seg_idx = 0 "
        "WHERE r.test_corpus_id = ? AND r.model_slug <> ? AND f.hyp = ? AND r.n_entries = ? "
        "ORDER BY r.run_id",
        [run.test_corpus_id, run.model_slug, run.hyps[0], len(run.hyps)],
    ).fetchall()
    same = []
    for run_id, slug in candidates:
        stored = con.execute(
            "SELECT hyp FROM hypotheses WHERE run_id = ? ORDER BY seg_idx", [run_id]
        ).fetchall()
        if len(stored) == len(run.hyps) and all(
            h == mine for (h,), mine in zip(stored, run.hyps, strict=True)
        ):
            same.append((run_id, slug))
    return [
        f"the same hypotheses are already stored as run {run_id} of model {slug!r}: "
        "was the model slug mixed up?"
        for run_id, slug in same
    ]


def _resolve_test_set(con: duckdb.DuckDBPyConnection, run: PreparedRun) -> tuple[str, bool]:
    """Name of the run's test set, registering an on-the-fly test set when it is new."""
    row = con.execute(
        "SELECT name FROM corpora WHERE corpus_id = ? AND role = 'test'", [run.test_corpus_id]
    ).fetchone()
    if row is not None:
        return str(row[0]), False
    if run.new_test_set is None:
        raise UsageError(
            f"test set {run.test_name!r} changed or was removed while ingesting; run again"
        )
    data = run.new_test_set
    taken = con.execute("SELECT 1 FROM corpora WHERE name = ?", [data.name]).fetchone()
    if taken is not None:
        data.name = f"{data.name}@{data.corpus_id[:8]}"
    add_corpus_row(con, data)
    return data.name, True


def _insert_run(con: duckdb.DuckDBPyConnection, run: PreparedRun) -> dict[str, pa.Table]:
    """Insert the run row, its hypotheses, statistics and metric values (bulk via Arrow); the
    rows inserted, by table."""
    doc = run.document
    totals = doc.tokens if doc else dict.fromkeys(TOKEN_FIELDS)
    settings = {**run.settings, "tame_wh": __version__}
    row = {
        "run_id": run.run_id,
        "test_corpus_id": run.test_corpus_id,
        "model_slug": run.model_slug,
        "condition": run.condition,
        "created_at": run.created_at,
        "ingested_at": utc_now(),
        "elapsed_seconds": doc.elapsed_seconds if doc else None,
        "n_entries": len(run.hyps),
        **totals,
        "total_cost_usd": doc.total_cost_usd if doc else None,
        "dataset_id": doc.dataset_id if doc else None,
        "language_pair": doc.language_pair if doc else None,
        "fingerprint_hash": doc.fingerprint_hash if doc else None,
        "ci": json.dumps(run.ci) if run.ci else None,
        "metric_settings": json.dumps(settings),
        "run_card": json.dumps(run.run_card(), ensure_ascii=False),
    }
    run_row = pa.Table.from_pylist([row])
    n = len(run.hyps)
    seg_idx = pa.array(np.arange(n, dtype=np.int64))
    run_ids = pa.array([run.run_id] * n, pa.string())
    hypotheses = pa.table(
        {
            "run_id": run_ids,
            "seg_idx": seg_idx,
            "hyp": pa.array(run.hyps, pa.large_string()),
            "latency_s": pa.array(run.latency, pa.float64()),
            "error": pa.array(run.errors, pa.string()),
            **{name: pa.array(run.entry_tokens[name], pa.int64()) for name in TOKEN_FIELDS},
        }
    )
    stats = segment_stats_table(run)
    metric_rows: list[tuple[int | None, str, float]] = [
        (None, name, value) for name, value in sorted(run.run_metrics.items())
    ]
    metric_rows += run.seg_metrics
    metrics = pa.table(
        {
            "run_id": pa.array([run.run_id] * len(metric_rows), pa.string()),
            "seg_idx": pa.array([r[0] for r in metric_rows], pa.int64()),
            "metric": pa.array([r[1] for r in metric_rows], pa.string()),
            "value": pa.array([r[2] for r in metric_rows], pa.float64()),
        }
    )
    inserted = {
        "runs": run_row,
        "hypotheses": hypotheses,
        "segment_stats": stats,
        "metric_values": metrics,
    }
    for table, rows in inserted.items():
        insert_rows(con, table, rows)
    return inserted


def segment_stats_table(run: PreparedRun) -> pa.Table:
    """The run's rows of `segment_stats` (its statistics under its metric options)."""
    n = len(run.hyps)
    ter = run.stats.ter if run.options.ter else [None] * n
    return pa.table(
        {
            "run_id": pa.array([run.run_id] * n, pa.string()),
            "seg_idx": pa.array(np.arange(n, dtype=np.int64)),
            "bleu_stats": pa.array(run.stats.bleu, pa.list_(pa.int64())),
            "chrf_stats": pa.array(run.stats.chrf, pa.list_(pa.int64())),
            "ter_stats": pa.array(ter, pa.list_(pa.float64())),
            "exact_match": pa.array(run.stats.exact_match, pa.bool_()),
            "length_ratio": pa.array(run.stats.length_ratio, pa.float64()),
            "chrf_sentence": pa.array(run.stats.chrf_sentence, pa.float64()),
        }
    )


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """Bulk-insert Arrow rows into a warehouse table (by column name; none: no statement)."""
    if rows.num_rows == 0:
        return  # most runs have no metric values: no statement for them
    con.register("_tame_rows", rows)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _tame_rows")
    finally:
        con.unregister("_tame_rows")


def store_intervals(
    con: duckdb.DuckDBPyConnection, run_id: str, confidence: RunConfidence
) -> list[dict[str, Any]]:
    """Write a freshly inserted run's intervals, the composite's computed from its stored rows."""
    intervals = list(confidence.intervals)
    composite = composite_interval(con, run_id, confidence)
    if composite is not None:
        intervals.append(composite)
    write_intervals(con, run_id, intervals)
    return [i.to_dict() for i in intervals]


def _record_warnings(con: duckdb.DuckDBPyConnection, run_id: str, warnings: Sequence[str]) -> None:
    """Store the warnings found while ingesting a run just inserted (shown by `report` and `runs
    show`; a replaced run's old ones went with it)."""
    if warnings:
        con.executemany(
            "INSERT INTO run_warnings VALUES (?, ?, ?)",
            [[run_id, seq, message] for seq, message in enumerate(warnings)],
        )


def _below_tm_baseline(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """The plausibility warning of a run far below the TM baseline of its test set's audits."""
    ratio = read_settings(con).get("warn.below_tm_ratio")
    if ratio is None:
        return []
    bins = con.execute(
        "SELECT c.name, b.chrf_plus_plus, b.tm_chrf_plus_plus FROM run_bins b "
        "JOIN corpora c ON c.corpus_id = b.train_corpus_id WHERE b.run_id = ? AND b.bin = 'all' "
        "ORDER BY c.name",
        [run_id],
    ).fetchall()
    return checks.far_below_tm(bins, ratio)


def _write_one(
    con: duckdb.DuckDBPyConnection, run: PreparedRun, replace: bool, say: Notify
) -> IngestResult:
    """Store one run (inside the caller's transaction) and say what happened."""
    test_name, created = _resolve_test_set(con, run)
    existing = con.execute("SELECT run_card FROM runs WHERE run_id = ?", [run.run_id]).fetchone()
    warnings = list(run.warnings)
    intervals: list[dict[str, Any]] = []
    if existing is not None and not replace:
        action = "unchanged"
        scores = stored_scores(con, run.run_id)
        if json.loads(existing[0]) != run.run_card():
            warnings.append(
                "the stored run card differs from this one; pass --replace to overwrite it"
            )
    else:
        action = "added"
        tags: list[tuple[Any, ...]] = []
        if existing is not None:
            say(f"replacing run {run.run_id} ({run.model_slug})")
            # The run's tags are the team's, not the file's: they stay with the replaced run.
            tags = con.execute(
                "SELECT run_id, key, value FROM run_tags WHERE run_id = ? ORDER BY key",
                [run.run_id],
            ).fetchall()
            # So are the runs re-scored from it: the same hypotheses, so still its scorings.
            rescored = con.execute(
                "SELECT run_id, source_run_id, rescored_at FROM run_rescores "
                "WHERE source_run_id = ?",
                [run.run_id],
            ).fetchall()
            delete_runs(con, [run.run_id])
            if rescored:
                con.executemany("INSERT INTO run_rescores VALUES (?, ?, ?)", rescored)
            action = "replaced"
        run.score()
        warnings = list(run.warnings) + _same_hypotheses_elsewhere(con, run)
        inserted = _insert_run(con, run)
        if tags:
            con.executemany("INSERT INTO run_tags VALUES (?, ?, ?)", tags)
        # The composite interval reads the stored sums. A replaced run's went with it above.
        refresh_runs(con, [run.run_id], written=inserted)
        warnings += _below_tm_baseline(con, run.run_id)
        if run.confidence is not None:
            intervals = store_intervals(con, run.run_id, run.confidence)
            warnings += run.confidence.warnings
        _record_warnings(con, run.run_id, warnings)
        scores = run.scores()
    return IngestResult(
        action=action,
        run_id=run.run_id,
        label=run.label,
        model_slug=run.model_slug,
        condition=run.condition,
        test_set=test_name,
        test_set_created=created,
        n_entries=len(run.hyps),
        n_errors=sum(e is not None for e in run.errors),
        scores=scores,
        warnings=warnings,
        intervals=intervals,
    )


def write_runs(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[PreparedRun],
    *,
    replace: bool = False,
    notify: Notify | None = None,
    tags: Mapping[str, Mapping[str, str]] | None = None,
    then: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> list[IngestResult]:
    """Write runs in one transaction; a run already present is left alone unless `replace`;
    `tags` (by run id, stored runs included) are set, and `then` is called, in the same
    transaction.

    Runs that are written are scored first if they were not (`PreparedRun.score`); score them
    before opening the warehouse to keep the write lock short.
    """
    say = notify or (lambda _m: None)
    with transaction(con):
        results = [_write_one(con, run, replace, say) for run in runs]
        for run_id, pairs in (tags or {}).items():
            for key, value in pairs.items():
                con.execute("DELETE FROM run_tags WHERE run_id = ? AND key = ?", [run_id, key])
                con.execute("INSERT INTO run_tags VALUES (?, ?, ?)", [run_id, key, value])
        if then is not None:
            then(con)
        return results
