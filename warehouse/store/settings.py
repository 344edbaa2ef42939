"""The warehouse's `settings` table: thresholds and defaults kept as data (docs/warehouse.md)."""

from __future__ import annotations

import json

import duckdb

from warehouse.errors import UsageError

DIRECTION_PREFIX = "direction."


def read_settings(con: duckdb.DuckDBPyConnection) -> dict[str, float]:
    """Every `settings` row as key → value (none for a warehouse from before the table)."""
    try:
        return dict(con.execute("SELECT key, value FROM settings").fetchall())
    except duckdb.CatalogException:
        return {}


def _plugin_directions(con: duckdb.DuckDBPyConnection) -> dict[str, bool]:
    """The directions metric plugins declared in the signatures stored with runs
    (`…|better:lower|…`, docs/metrics.md)."""
    out: dict[str, bool] = {}
    try:
        rows = con.execute(
            "SELECT DISTINCT metric_settings FROM runs WHERE contains(metric_settings, '|better:')"
        ).fetchall()
    except duckdb.CatalogException:
        return out
    for (text,) in rows:
        signatures = json.loads(text or "{}").get("signatures") or {}
        for name, signature in signatures.items():
            if isinstance(signature, str) and "|better:" in signature:
                out[name] = "|better:lower" not in signature
    return out


def metric_directions(con: duckdb.DuckDBPyConnection | None) -> dict[str, bool]:
    """Metric directions set in `settings` rows `direction.<metric>` (1: higher is better, -1:
    lower is better) as metric → higher-is-better, over those metric plugins declared; none
    without a warehouse."""
    out: dict[str, bool] = _plugin_directions(con) if con is not None else {}
    for key, value in (read_settings(con) if con is not None else {}).items():
        if not key.startswith(DIRECTION_PREFIX):
            continue
        if value not in (1, -1):
            raise UsageError(f"settings {key} must be 1 (higher is better) or -1, got {value:g}")
        out[key.removeprefix(DIRECTION_PREFIX)] = value == 1
    return out
