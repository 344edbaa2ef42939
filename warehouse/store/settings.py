"""The warehouse's `settings` table: thresholds and defaults kept as data (SPEC §3)."""

from __future__ import annotations

import duckdb


def read_settings(con: duckdb.DuckDBPyConnection) -> dict[str, float]:
    """Every `settings` row as key → value (none for a warehouse from before the table)."""
    try:
        return dict(con.execute("SELECT key, value FROM settings").fetchall())
    except duckdb.CatalogException:
        return {}
