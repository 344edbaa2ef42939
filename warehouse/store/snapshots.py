"""A lake's snapshots: the points in its history that `--as-of` can name."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from warehouse.store.lake import LAKE_ALIAS, metadata_table

# Changes that list table ids (named here by the tables' names).
_BY_TABLE = ("tables_inserted_into", "tables_deleted_from", "inlined_insert", "inlined_delete")


@dataclass(frozen=True)
class Snapshot:
    """One snapshot: id, commit time (UTC), a summary of its changes, and the runs it added
    and deleted (`model/condition (id)`)."""

    snapshot_id: int
    time: str
    changes: str
    runs_added: list[str] = field(default_factory=list)
    runs_deleted: list[str] = field(default_factory=list)

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
    if out:
        _name_runs(con, out)
    return out


def _name_runs(con: duckdb.DuckDBPyConnection, snapshots: list[Snapshot]) -> None:
    """Fill each snapshot's added and deleted runs from the lake's row changes of `runs`
    (nothing when the lake cannot tell, e.g. before the table existed)."""
    first, last = snapshots[-1].snapshot_id, snapshots[0].snapshot_id
    try:
        rows = con.execute(
            f"SELECT snapshot_id, change_type, run_id, model_slug, condition FROM "
            f"ducklake_table_changes('{LAKE_ALIAS}', 'main', 'runs', ?, ?) "
            "ORDER BY snapshot_id, run_id",
            [first, last],
        ).fetchall()
    except duckdb.Error:
        return
    by_id = {s.snapshot_id: s for s in snapshots}
    for snapshot_id, change, run_id, model, condition in rows:
        found = by_id.get(int(snapshot_id))
        if found is None:
            continue
        name = f"{model}/{condition} ({run_id[:8]})" if condition else f"{model} ({run_id[:8]})"
        if change == "insert":
            found.runs_added.append(name)
        elif change == "delete":
            found.runs_deleted.append(name)
