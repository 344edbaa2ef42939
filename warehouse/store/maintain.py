"""Lake maintenance: DuckLake's compaction, snapshot expiry and file clean-up with safe defaults.

Small writes are inlined in the catalog (`INLINE_ROW_LIMIT` rows, DuckLake's data inlining) and
larger ones are Parquet files; a pass first flushes the inlined rows to Parquet (the catalog's
tables stay small), then merges adjacent small files, which keeps scans fast. Snapshots older
than `keep_days` are expired (the history `--as-of` can reach shrinks accordingly; the newest
snapshot always stays), and the files they alone referenced are deleted once they have been
scheduled for deletion for `grace_hours` (readers that started before are still safe), as are
files older than that which no snapshot references (a writer killed before its commit).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from warehouse.errors import UsageError
from warehouse.store.lake import LAKE_ALIAS, metadata_table

DEFAULT_KEEP_DAYS = 30
DEFAULT_GRACE_HOURS = 24


@dataclass(frozen=True)
class MaintainResult:
    """What a maintenance pass did (or, with `dry_run`, would do: the inlined rows to flush are
    counted; which small files would merge DuckLake only knows by merging them, so None)."""

    rows_flushed: int
    files_merged: int | None
    files_created: int | None
    snapshots_expired: int
    files_deleted: int
    snapshots_left: int
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _call(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> Any:
    """Run a DuckLake maintenance CALL (a SELECT around it would not commit its changes); its
    rows as an Arrow table (timestamps with time zone stay out of Python)."""
    return con.execute(sql, params).to_arrow_table()


def inlined_rows(con: duckdb.DuckDBPyConnection) -> int:
    """Live rows the lake's catalog holds inline (DuckLake's inlined-data tables, all tables):
    what a flush would write to Parquet."""
    listed = metadata_table(con, "ducklake_inlined_data_tables")
    names = [name for (name,) in con.execute(f"SELECT table_name FROM {listed}").fetchall()]
    total = 0
    for name in names:
        row = con.execute(
            f"SELECT count(*) FROM {metadata_table(con, name)} WHERE end_snapshot IS NULL"
        ).fetchone()
        total += int(row[0]) if row else 0
    return total


def maintain_lake(
    con: duckdb.DuckDBPyConnection,
    *,
    keep_days: int = DEFAULT_KEEP_DAYS,
    grace_hours: int = DEFAULT_GRACE_HOURS,
    dry_run: bool = False,
) -> MaintainResult:
    """Flush inlined rows to Parquet, merge small files, expire old snapshots, delete files no
    snapshot needs (a lake's writer connection; the writers' lock keeps tame-wh writers out
    meanwhile)."""
    if keep_days < 0 or grace_hours < 0:
        raise UsageError("--keep-days and --grace-hours must be 0 or more")
    flushed = 0
    merged: int | None = None
    created: int | None = None
    if dry_run:
        flushed = inlined_rows(con)
    else:
        inlined = _call(con, f"CALL ducklake_flush_inlined_data('{LAKE_ALIAS}')", [])
        flushed = sum(int(v or 0) for v in inlined.column("rows_flushed").to_pylist())
        files = _call(con, f"CALL ducklake_merge_adjacent_files('{LAKE_ALIAS}')", [])
        merged = sum(v or 0 for v in files.column("files_processed").to_pylist())
        created = sum(v or 0 for v in files.column("files_created").to_pylist())
    expired = _call(
        con,
        f"CALL ducklake_expire_snapshots('{LAKE_ALIAS}', dry_run => ?, "
        "older_than => now() - to_days(CAST(? AS INTEGER)))",
        [dry_run, keep_days],
    ).num_rows
    deleted = 0
    # Files of expired snapshots and merged files, then files no snapshot ever referenced (left
    # by a writer that died before its commit), each only after the grace period.
    for function in ("ducklake_cleanup_old_files", "ducklake_delete_orphaned_files"):
        deleted += _call(
            con,
            f"CALL {function}('{LAKE_ALIAS}', dry_run => ?, "
            "older_than => now() - to_hours(CAST(? AS INTEGER)))",
            [dry_run, grace_hours],
        ).num_rows
    row = con.execute(f"SELECT count(*) FROM ducklake_snapshots('{LAKE_ALIAS}')").fetchone()
    left = int(row[0]) if row else 0
    return MaintainResult(flushed, merged, created, expired, deleted, left, dry_run)
