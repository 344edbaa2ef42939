"""The stored per-run and per-bin sums behind the views, kept in step with runs and audits."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from warehouse.store.resources import sql_statements


def refresh_runs(
    con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], *, written: bool = False
) -> None:
    """Recompute the runs' sums (whole run and every audit of their test sets); `written`: the
    runs were just inserted, so they have no sums to delete first (on a lake each DELETE scans
    its table through the catalog)."""
    if not run_ids:
        return
    for statement in sql_statements("refresh_run_sums"):
        if written and statement.lstrip().upper().startswith("DELETE"):
            continue
        con.execute(statement, {"run_ids": list(run_ids)})


def refresh_audit(con: duckdb.DuckDBPyConnection, audit_id: str) -> None:
    """Recompute the per-bin sums of every run of one audit's test set."""
    for statement in sql_statements("refresh_audit_sums"):
        con.execute(statement, {"audit_id": audit_id})
