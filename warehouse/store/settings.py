"""The warehouse's `settings` table: thresholds and defaults kept as data (docs/warehouse.md)."""

from __future__ import annotations

import duckdb

from warehouse.errors import UsageError

DIRECTION_PREFIX = "direction."


def read_settings(con: duckdb.DuckDBPyConnection) -> dict[str, float]:
    """Every `settings` row as key → value (none for a warehouse from before the table)."""
    try:
        return dict(con.execute("SELECT key, value FROM settings").fetchall())
    except duckdb.CatalogException:
        return {}


def metric_directions(con: duckdb.DuckDBPyConnection | None) -> dict[str, bool]:
    """Metric directions set in `settings` rows `direction.<metric>` (1: higher is better, -1:
    lower is better) as metric → higher-is-better; none without a warehouse."""
    out: dict[str, bool] = {}
    for key, value in (read_settings(con) if con is not None else {}).items():
        if not key.startswith(DIRECTION_PREFIX):
            continue
        if value not in (1, -1):
            raise UsageError(f"settings {key} must be 1 (higher is better) or -1, got {value:g}")
        out[key.removeprefix(DIRECTION_PREFIX)] = value == 1
    return out
