"""A lake's snapshots: the points in its history that `--as-of` can name."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from warehouse.store.lake import LAKE_ALIAS, metadata_table

# Changes that list table ids (named here by the tables' names).
_BY_TABLE = ("tables_inserted_into", "tables_deleted_from", "inlined_insert", "inlined_delete")


@dataclass(frozen=True)
class Snapshot:
    """One snapshot: id, commit time (UTC) and a summary of its changes."""

    snapshot_id: int
    time: str
    changes: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def list_snapshots(con: duckdb.DuckDBPyConnection, limit: int = 20) -> list[Snapshot]:
    """The newest `limit` snapshots of the lake the connection has attached, newest first."""
    names = dict(
        con.execute(
            "SELECT DISTINCT table_id, table_name FROM " + metadata_table(con, "ducklake_table")
        ).fetchall()
    )
    rows = con.execute(
        "SELECT snapshot_id, strftime(snapshot_time AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S'), "
        f"map_entries(changes) FROM ducklake_snapshots('{LAKE_ALIAS}') "
        "ORDER BY snapshot_id DESC LIMIT ?",
        [limit],
    ).fetchall()
    out = []
    for snapshot_id, time, entries in rows:
        parts = []
        for entry in entries or []:
            values = [str(v) for v in entry["value"] or []]
            if entry["key"] in _BY_TABLE:
                values = sorted({names.get(int(v), v) for v in values})
            parts.append(f"{entry['key']}: {', '.join(values)}")
        out.append(Snapshot(int(snapshot_id), str(time), "; ".join(sorted(parts))))
    return out
