"""Copying a whole warehouse between a local file and a lake (either way), verified table by table.

The destination is created (or must hold no data yet); every table is streamed from the source
(a lake read at one snapshot) as Arrow batches, in its stored order, inside one transaction,
schema_version rows included, so the schema version travels with the data. Before that
transaction commits, each table's row count and content hash (the sum of the rows' hashes) are
compared on both sides. A file destination is written under a staging name and renamed when
verified.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from warehouse.basics import Notify
from warehouse.errors import SchemaError, UsageError
from warehouse.store.address import Address, LakeAddress
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    transaction,
    warehouse_exists,
)
from warehouse.store.lake import AsOf, pin_snapshot
from warehouse.store.schema import (
    apply_schema_files,
    code_schema_version,
    stored_schema_version,
)

BATCH_ROWS = 100_000
# Tables the schema files fill with defaults; every other table must be empty in a destination.
SEEDED_TABLES = frozenset(
    {"schema_version", "settings", "quality_tiers", "composite_weights", "languages", "mqm_weights"}
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


def _refuse_special_file(option: str, address: Address) -> None:
    """A file address must be a regular file or not exist yet: a FIFO, a device or a socket
    would block the copy (or feed it something that is not a warehouse), a directory is no
    file."""
    if not isinstance(address, Path):
        return
    try:
        mode = address.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"{option} {address}: cannot look at it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        kind = (
            "a directory" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode)
            else "a device"
        )  # fmt: skip
        raise UsageError(
            f"{option} {address} is {kind}, not a regular file: copy reads and writes DuckDB "
            "warehouse files (or lakes); nothing was written"
        )


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
    """Copy every table of `source` (a lake as it stands at one snapshot) into a new (or empty)
    `destination`, verified before it is committed: a file destination is written under a
    staging name and appears only when complete, a lake destination in one transaction."""
    say = notify or (lambda _m: None)
    if _same_place(source, destination):
        raise UsageError("--from and --to name the same warehouse")
    for option, address in (("--from", source), ("--to", destination)):
        _refuse_special_file(option, address)
    if not warehouse_exists(source):
        raise UsageError(f"--from {source}: no warehouse there")
    as_of = None
    if isinstance(source, LakeAddress):
        # One snapshot for every table: writers committing meanwhile change nothing read here.
        as_of = AsOf(snapshot=pin_snapshot(source).snapshot)
        say(f"reading {source} at snapshot {as_of.snapshot}")
    src = connect(source, read_only=True, lock_timeout=lock_timeout, as_of=as_of)
    try:
        version = stored_schema_version(src)
        if version != code_schema_version():
            raise SchemaError(
                f"--from {source}: schema version {version}, this tame-wh writes "
                f"{code_schema_version()}; run `tame-wh --db SOURCE init` first (or use the "
                "tame-wh that wrote it)"
            )
        result = CopyResult(str(source), str(destination), version)
        if isinstance(destination, Path):
            _copy_to_file(src, destination, result, lock_timeout, say)
        else:
            _copy_into(src, destination, destination, result, lock_timeout, say)
    finally:
        close_connection(src)
    return result


def _copy_into(
    src: duckdb.DuckDBPyConnection,
    target: Address,
    destination: Address,
    result: CopyResult,
    lock_timeout: float,
    say: Notify,
) -> None:
    """Create (or upgrade) the schema at `target`, copy every table and compare each with the
    source, all in one transaction that commits only when every table is equal."""
    tables = table_names(src)
    dst = connect(target, lock_timeout=lock_timeout)
    try:
        before = stored_schema_version(dst)
        if before > result.schema_version:
            raise SchemaError(
                f"--to {destination}: written by a newer tame-wh (schema version {before})"
            )
        with transaction(dst):
            if before < result.schema_version:
                apply_schema_files(dst, before)
            _require_empty(dst, destination)
            missing = sorted(set(tables) - set(table_names(dst)))
            if missing:
                raise SchemaError(f"--to {destination} lacks tables {', '.join(missing)}")
            say(f"copying {len(tables)} tables")
            for table in tables:
                _copy_table(src, dst, table)
            for table in tables:
                here, there = fingerprint(src, table), fingerprint(dst, table)
                result.tables.append(TableCopy(table, here[0], here == there))
            if not result.verified:
                differ = ", ".join(t.table for t in result.tables if not t.verified)
                raise SchemaError(
                    f"the copy differs from the source in: {differ}; nothing was written"
                )
    finally:
        close_connection(dst)


def _staging_name(destination: Path, pid: int) -> Path:
    """Where a copy to a file is written before it appears under its name."""
    return destination.with_name(f".{destination.name}.copy-{pid}")


def _remove_file_and_wal(path: Path) -> None:
    """Remove a database file and its WAL, if there."""
    for leftover in (path, Path(f"{path}.wal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _remove_stale_staging(destination: Path) -> None:
    """Remove staging files of copies whose process is gone (killed mid-copy)."""
    for path in destination.parent.glob(f".{destination.name}.copy-*"):
        pid = path.name.rsplit("-", 1)[-1].removesuffix(".wal")
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        except OSError:
            continue


def _copy_to_file(
    src: duckdb.DuckDBPyConnection,
    destination: Path,
    result: CopyResult,
    lock_timeout: float,
    say: Notify,
) -> None:
    """Copy into a staging file beside `destination`, then give it the destination's name: a
    copy that fails or is killed never leaves a partial warehouse there. An existing (empty)
    destination is held open meanwhile, so no other writer can fill it."""
    if not destination.parent.is_dir():
        raise UsageError(f"--to {destination}: the directory {destination.parent} does not exist")
    _remove_stale_staging(destination)
    staging = _staging_name(destination, os.getpid())
    _remove_file_and_wal(staging)
    holder = None
    try:
        if destination.exists():
            holder = connect(destination, lock_timeout=lock_timeout)
            stored_schema_version(holder)  # a DuckDB file that is no warehouse is refused
            _require_empty(holder, destination)
        _copy_into(src, staging, destination, result, lock_timeout, say)
        if holder is not None:
            os.replace(staging, destination)
        else:
            try:
                os.link(staging, destination)  # never over a file that appeared meanwhile
            except FileExistsError:
                raise UsageError(
                    f"--to {destination} was created by another process during the copy; "
                    "nothing was written"
                ) from None
            staging.unlink()
    finally:
        if holder is not None:
            close_connection(holder)
        _remove_file_and_wal(staging)


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
