"""The stored per-run and per-bin sums behind the views, kept in step with runs and audits."""

from __future__ import annotations

import duckdb

from warehouse.resources import sql_statements


def refresh_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Recompute one run's sums (whole run and every audit of its test set)."""
    for statement in sql_statements("refresh_run_sums"):
        con.execute(statement, {"run_id": run_id})


def refresh_audit(con: duckdb.DuckDBPyConnection, audit_id: str) -> None:
    """Recompute the per-bin sums of every run of one audit's test set."""
    for statement in sql_statements("refresh_audit_sums"):
        con.execute(statement, {"audit_id": audit_id})


def forget_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Drop one run's sums."""
    con.execute("DELETE FROM run_sums WHERE run_id = ?", [run_id])
    con.execute("DELETE FROM run_bin_sums WHERE run_id = ?", [run_id])


def forget_audit(con: duckdb.DuckDBPyConnection, audit_id: str) -> None:
    """Drop one audit's per-bin sums."""
    con.execute("DELETE FROM run_bin_sums WHERE audit_id = ?", [audit_id])
