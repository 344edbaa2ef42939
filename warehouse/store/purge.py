"""Delete cascades: everything stored for a run, an audit, a judgment set or a corpus, listed
in one place."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

# Tables keyed by run_id (the `runs` row last) and by audit_id (the `audits` row last).
RUN_TABLES = (
    "run_rescores",
    "run_tags",
    "run_warnings",
    "hypotheses",
    "segment_stats",
    "metric_values",
    "run_intervals",
    "run_sums",
    "run_bin_sums",
    "human_errors",
    "human_judgments",
    "runs",
)
AUDIT_TABLES = (
    "exposures",
    "substring_lens",
    "tm_segment_stats",
    "run_bin_sums",
    "audits",
)
HUMAN_SET_TABLES = ("human_errors", "human_judgments", "human_sets")  # keyed by set_id


def delete_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> None:
    """Remove runs and everything stored for them, and every stored tie-group board that held
    one of them (call inside a transaction)."""
    if run_ids:
        boards = con.execute(
            "SELECT DISTINCT test_corpus_id, metric, method, correction FROM run_clusters "
            "WHERE run_id IN (SELECT unnest(?))",
            [list(run_ids)],
        ).fetchall()
        for board in boards:
            con.execute(
                "DELETE FROM run_clusters WHERE test_corpus_id = ? AND metric = ? AND method = ? "
                "AND correction = ?",
                list(board),
            )
        for table in RUN_TABLES:
            con.execute(f"DELETE FROM {table} WHERE run_id IN (SELECT unnest(?))", [list(run_ids)])
        # A re-scored run outlives its source as a run of its own (the only scoring left of
        # those hypotheses): boards list it from then on.
        con.execute(
            "DELETE FROM run_rescores WHERE source_run_id IN (SELECT unnest(?))", [list(run_ids)]
        )


def delete_audits(con: duckdb.DuckDBPyConnection, audit_ids: Sequence[str]) -> None:
    """Remove audits, their exposures, TM statistics and the per-bin sums that use them."""
    if audit_ids:
        for table in AUDIT_TABLES:
            con.execute(
                f"DELETE FROM {table} WHERE audit_id IN (SELECT unnest(?))", [list(audit_ids)]
            )


def delete_human_sets(con: duckdb.DuckDBPyConnection, set_ids: Sequence[str]) -> None:
    """Remove judgment sets with their judgments and errors (call inside a transaction)."""
    if set_ids:
        for table in HUMAN_SET_TABLES:
            con.execute(f"DELETE FROM {table} WHERE set_id IN (SELECT unnest(?))", [list(set_ids)])


def dependents(con: duckdb.DuckDBPyConnection, corpus_id: str) -> tuple[list[str], list[str]]:
    """The audits and runs that reference a corpus (as test set or training corpus)."""
    audits = con.execute(
        "SELECT audit_id FROM audits WHERE test_corpus_id = ? OR train_corpus_id = ? "
        "ORDER BY audit_id",
        [corpus_id, corpus_id],
    ).fetchall()
    runs = con.execute(
        "SELECT run_id FROM runs WHERE test_corpus_id = ? ORDER BY run_id", [corpus_id]
    ).fetchall()
    return [a for (a,) in audits], [r for (r,) in runs]


def delete_corpus(con: duckdb.DuckDBPyConnection, corpus_id: str) -> None:
    """Remove a corpus, its segments, and every audit and run that depends on it."""
    audit_ids, run_ids = dependents(con, corpus_id)
    delete_audits(con, audit_ids)
    delete_runs(con, run_ids)
    sets = con.execute("SELECT set_id FROM human_sets WHERE test_corpus_id = ?", [corpus_id])
    delete_human_sets(con, [s for (s,) in sets.fetchall()])
    con.execute("DELETE FROM segments WHERE corpus_id = ?", [corpus_id])
    con.execute("DELETE FROM corpora WHERE corpus_id = ?", [corpus_id])
