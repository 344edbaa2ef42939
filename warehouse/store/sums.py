"""The stored per-run and per-bin sums behind the views, kept in step with runs and audits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import duckdb

from warehouse.store.resources import sql_statements

if TYPE_CHECKING:
    import pyarrow as pa


# The tables whose rows the run sums are computed from (warehouse/sql/refresh_run_sums.sql).
SUM_SOURCES = ("segment_stats", "hypotheses", "runs")


def refresh_runs(
    con: duckdb.DuckDBPyConnection,
    run_ids: Sequence[str],
    *,
    written: Mapping[str, pa.Table] | None = None,
) -> None:
    """Recompute the runs' sums (whole run and every audit of their test sets). `written`: the
    runs were just inserted and these are their rows of `SUM_SOURCES` (by table): the sums are
    computed from them rather than from the stored tables, and there are no old sums to delete
    (on a lake each read of a stored table goes through the catalog)."""
    if not run_ids:
        return
    sources = {table: table for table in SUM_SOURCES}
    registered = []
    try:
        if written is not None:
            for table in SUM_SOURCES:
                sources[table] = f"_tame_written_{table}"
                con.register(sources[table], written[table])
                registered.append(sources[table])
        for statement in sql_statements("refresh_run_sums"):
            if written is not None and statement.is_delete:
                continue
            given: dict[str, object] = {"run_ids": list(run_ids), **sources}
            params = {name: given[name] for name in statement.parameters}
            con.execute(statement.query, params)
    finally:
        for name in registered:
            con.unregister(name)


def refresh_audit(con: duckdb.DuckDBPyConnection, audit_id: str) -> None:
    """Recompute the per-bin sums of every run of one audit's test set."""
    for statement in sql_statements("refresh_audit_sums"):
        con.execute(statement.query, {"audit_id": audit_id})
