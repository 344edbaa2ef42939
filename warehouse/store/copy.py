"""Copying a whole warehouse between a local file and a lake (either way), verified table by table.

The destination is created (or must hold no data yet); every table is streamed from the source
as Arrow batches, in its stored order, inside one transaction, schema_version rows included, so
the schema version travels with the data. Afterwards each table's row count and content hash
(the sum of the rows' hashes) are compared on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from warehouse.errors import SchemaError, UsageError
from warehouse.store.address import Address, LakeAddress
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    transaction,
    warehouse_exists,
)
from warehouse.store.schema import code_schema_version, stored_schema_version, writing

Notify = Callable[[str], None]
BATCH_ROWS = 100_000
# Tables the schema files fill with defaults; every other table must be empty in a destination.
SEEDED_TABLES = frozenset(
    {"schema_version", "settings", "quality_tiers", "composite_weights", "languages"}
)


@dataclass(frozen=True)
class TableCopy:
    """One table copied: its rows and whether both sides agree (count and content hash)."""

    table: str
    rows: int
    verified: bool


@dataclass
class CopyResult:
    """What `copy_warehouse` did."""

    source: str
    destination: str
    schema_version: int
    tables: list[TableCopy] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """Whether every table is equal on both sides."""
        return all(t.verified for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "source": self.source,
            "destination": self.destination,
            "schema_version": self.schema_version,
            "verified": self.verified,
            "tables": [t.__dict__ for t in self.tables],
        }


def table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The warehouse's tables (main schema of the default catalog), by name."""
    return [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = 'main' ORDER BY table_name"
        ).fetchall()
    ]


def fingerprint(con: duckdb.DuckDBPyConnection, table: str) -> tuple[int, int]:
    """A table's row count and the sum of its rows' hashes (independent of row order)."""
    row = con.execute(
        f'SELECT count(*), coalesce(sum(hash(t)), 0)::HUGEINT FROM "{table}" AS t'
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def _same_place(source: Address, destination: Address) -> bool:
    """Whether two addresses name the same warehouse."""
    if isinstance(source, Path) and isinstance(destination, Path):
        return source.resolve() == destination.resolve()
    if isinstance(source, LakeAddress) and isinstance(destination, LakeAddress):
        return source.libpq == destination.libpq
    return False


def _require_empty(con: duckdb.DuckDBPyConnection, destination: Address) -> None:
    """Refuse a destination that holds data beyond the schema's defaults."""
    for table in table_names(con):
        if table in SEEDED_TABLES:
            continue
        count, _ = fingerprint(con, table)
        if count:
            raise UsageError(
                f"--to {destination} already holds data ({count} row(s) in {table}); copy "
                "needs a new or empty warehouse"
            )


def copy_warehouse(
    source: Address,
    destination: Address,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    notify: Notify | None = None,
) -> CopyResult:
    """Copy every table of `source` into a new (or empty) `destination`, then verify each."""
    say = notify or (lambda _m: None)
    if _same_place(source, destination):
        raise UsageError("--from and --to name the same warehouse")
    if not warehouse_exists(source):
        raise UsageError(f"--from {source}: no warehouse there")
    src = connect(source, read_only=True, lock_timeout=lock_timeout)
    try:
        version = stored_schema_version(src)
        if version != code_schema_version():
            raise SchemaError(
                f"--from {source}: schema version {version}, this tame-wh writes "
                f"{code_schema_version()}; run `tame-wh --db SOURCE init` first (or use the "
                "tame-wh that wrote it)"
            )
        tables = table_names(src)
        result = CopyResult(str(source), str(destination), version)
        with writing(destination, lock_timeout=lock_timeout) as dst:
            _require_empty(dst, destination)
            missing = sorted(set(tables) - set(table_names(dst)))
            if missing:
                raise SchemaError(f"--to {destination} lacks tables {', '.join(missing)}")
            say(f"copying {len(tables)} tables")
            with transaction(dst):
                for table in tables:
                    _copy_table(src, dst, table)
            for table in tables:
                here, there = fingerprint(src, table), fingerprint(dst, table)
                result.tables.append(TableCopy(table, here[0], here == there))
    finally:
        close_connection(src)
    return result


def _copy_table(src: duckdb.DuckDBPyConnection, dst: duckdb.DuckDBPyConnection, table: str) -> None:
    """Replace a destination table's rows with the source's, streamed as Arrow batches."""
    columns = [
        name
        for (name,) in src.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
            [table],
        ).fetchall()
    ]
    names = ", ".join(f'"{c}"' for c in columns)
    dst.execute(f'DELETE FROM "{table}"')
    reader = src.execute(f'SELECT {names} FROM "{table}"').to_arrow_reader(BATCH_ROWS)
    dst.register("_tame_copy", reader)
    try:
        dst.execute(f'INSERT INTO "{table}" ({names}) SELECT * FROM _tame_copy')
    finally:
        dst.unregister("_tame_copy")
