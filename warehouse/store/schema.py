"""Creating and upgrading the warehouse schema from the numbered files in `sql/`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from warehouse import __version__
from warehouse.errors import MissingWarehouseError, SchemaError
from warehouse.store.address import LakeAddress
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    hold_writers_lock,
    is_lake_connection,
    transaction,
)
from warehouse.store.lake import lake_catalog_is_legacy
from warehouse.store.resources import schema_files, score_macro_statements, view_statements


def code_schema_version() -> int:
    """The schema version this code writes: the number of the last file in `sql/`."""
    return len(schema_files())


@dataclass(frozen=True)
class SchemaStatus:
    """What `ensure_schema` found and did."""

    path: str
    before: int
    after: int
    catalog_moved: bool = False

    @property
    def created(self) -> bool:
        """Whether the warehouse was empty before."""
        return self.before == 0

    @property
    def upgraded(self) -> bool:
        """Whether any schema file was applied."""
        return self.after > self.before


def stored_schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """Schema version recorded in the warehouse; 0 for an empty database file."""
    try:
        # The table read directly first: listing the tables loads a lake's whole catalog.
        row = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        return int(row[0]) if row else 0
    except duckdb.CatalogException:
        pass  # no schema_version table: empty, or not a warehouse
    others = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
    ).fetchone()
    if others is not None and others[0] > 0:
        raise SchemaError(
            "this DuckDB file holds tables but is not a tame-wh warehouse "
            "(no schema_version table); use another --db path"
        )
    return 0


def apply_schema_files(con: duckdb.DuckDBPyConnection, before: int) -> None:
    """Apply the schema files after version `before` inside the caller's transaction (on a lake
    in DuckLake's dialect, constraints kept by the application), then every view and macro
    (`sql/views/`); the score macros also before the files, which may score stored sums."""
    lake = None
    if is_lake_connection(con):
        # The dialect translation (sqlglot) is imported only for lakes: it costs every other
        # command a fifth of its start-up.
        from warehouse.store.lake_dialect import lake_schema_files
        from warehouse.store.lake_stats import prime_table_statistics

        lake = dict(lake_schema_files())
    if before < len(schema_files()):
        for statement in score_macro_statements():
            con.execute(statement)
    for sql_file in schema_files()[before:]:
        if lake is None:
            con.execute(sql_file.text)
        else:
            for statement in lake[sql_file.number]:
                con.execute(statement)
        con.execute(
            "INSERT INTO schema_version (version, tame_wh_version) VALUES (?, ?)",
            [sql_file.number, __version__],
        )
    if before < len(schema_files()):
        for statement in view_statements():
            con.execute(statement)
    if lake is not None:
        prime_table_statistics(con)


def ensure_schema(con: duckdb.DuckDBPyConnection, path: str = "") -> SchemaStatus:
    """Create or upgrade the schema in one transaction; refuse warehouses from newer code."""
    target = code_schema_version()
    before = stored_schema_version(con)
    if before > target:
        raise SchemaError(
            f"{path or 'warehouse'}: written by a newer tame-wh (schema version {before}); "
            f"this tame-wh {__version__} knows schema versions up to {target}; upgrade tame-wh"
        )
    if before < target:
        with transaction(con):
            apply_schema_files(con, before)
    return SchemaStatus(path=path, before=before, after=target)


def open_warehouse(
    path: str | Path | LakeAddress,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    threads: int | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open (creating or upgrading as needed) the warehouse at `path` for reading and writing;
    close it with `close_connection` (a lake's writers' lock is given back then)."""
    con = connect(path, lock_timeout=lock_timeout, threads=threads)
    try:
        ensure_schema(con, str(path))
    except BaseException:
        close_connection(con)
        raise
    return con


@contextmanager
def writing(
    path: str | Path | LakeAddress,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    threads: int | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse (created or upgraded as needed) for reading and writing during the block."""
    con = open_warehouse(path, lock_timeout=lock_timeout, threads=threads)
    try:
        yield con
    finally:
        close_connection(con)


class StagedWrite:
    """A command that reads the warehouse, works without it (scoring, say), then writes: `look`
    is the warehouse to read (None while there is none), `writer()` the warehouse to write.

    On a lake both are one attach, and `writer()` waits for the writers' lock; on a file the
    read-only look is closed before the file is opened for writing, so other processes may write
    meanwhile. Either way nothing holds the lock while the command works in between."""

    def __init__(self, path: str | Path | LakeAddress, lock_timeout: float) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self.look: duckdb.DuckDBPyConnection | None = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._reading = False  # the look's read transaction is open
        if isinstance(path, LakeAddress):
            try:
                self._con = connect(path, lock_timeout=lock_timeout, create=False, lock_later=True)
            except MissingWarehouseError:
                return
            try:
                # Every read of the look in one transaction: one snapshot, and DuckLake reads
                # each table's catalog entries once instead of once per statement.
                self._con.execute("BEGIN TRANSACTION")
                self._reading = True
                if stored_schema_version(self._con) > 0:
                    self.look = self._con
            except BaseException:
                self.close()
                raise
        elif Path(path).exists():
            self._con = connect(path, read_only=True, lock_timeout=lock_timeout)
            self.look = self._con

    @contextmanager
    def writer(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The warehouse (created or upgraded as needed) for writing during the block."""
        if isinstance(self.path, LakeAddress) and self._con is not None:
            self.look = None
            self._end_reading()
            hold_writers_lock(self._con, self.lock_timeout)
            ensure_schema(self._con, str(self.path))
            yield self._con
            return
        self.close()
        with writing(self.path, lock_timeout=self.lock_timeout) as con:
            yield con

    def _end_reading(self) -> None:
        """End the look's read transaction (it wrote nothing: rolled back)."""
        if self._reading and self._con is not None:
            self._reading = False
            with contextlib.suppress(duckdb.Error):
                self._con.execute("ROLLBACK")

    def close(self) -> None:
        """Close what is open (a lake's writers' lock is given back)."""
        self.look = None
        self._end_reading()
        if self._con is not None:
            close_connection(self._con)
            self._con = None


@contextmanager
def staged_write(
    path: str | Path | LakeAddress, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> Iterator[StagedWrite]:
    """Read, then write, the warehouse at `path` (see `StagedWrite`)."""
    stage = StagedWrite(path, lock_timeout)
    try:
        yield stage
    finally:
        stage.close()


def init_warehouse(
    path: str | Path | LakeAddress, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> SchemaStatus:
    """Create or upgrade the warehouse at `path` (on a lake, with its catalog moved out of
    `public` and sealed against PostgreSQL's client roles); a no-op when it is current."""
    legacy = isinstance(path, LakeAddress) and lake_catalog_is_legacy(path)
    con = connect(path, lock_timeout=lock_timeout, relocate=True)
    try:
        status = ensure_schema(con, str(path))
    finally:
        close_connection(con)
    return replace(status, catalog_moved=legacy)
