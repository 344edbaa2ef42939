"""Opening the warehouse: a local file (lock-conflict retries) or a DuckLake lake (the writers'
advisory lock, released when the connection is closed through `close_connection`), and one
transaction per command."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from warehouse.basics import first_line
from warehouse.errors import LockTimeoutError, SchemaError, UsageError
from warehouse.store.address import LakeAddress
from warehouse.store.address import missing_warehouse as missing_warehouse  # re-exported
from warehouse.store.holders import lock_holder
from warehouse.store.interrupt import (
    interrupt_requested,
    note_commit_failed,
    note_commit_started,
)
from warehouse.store.lake import AsOf, WriterLock, lake_exists, open_lake
from warehouse.store.remote import DURING_COMMIT

DEFAULT_LOCK_TIMEOUT = 120.0
THREADS_ENV = "TAME_WH_DUCKDB_THREADS"
MAX_THREADS = 1024


def duckdb_threads_setting() -> int | None:
    """DuckDB's worker threads in each connection a command opens: `$TAME_WH_DUCKDB_THREADS`
    (None: DuckDB's default, one per core)."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_THREADS:
        raise UsageError(f"${THREADS_ENV}={text!r}: give a whole number from 1 to {MAX_THREADS}")
    return int(text)


def _is_lock_conflict(exc: duckdb.Error) -> bool:
    """Whether DuckDB refused the file because another process holds its lock."""
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def warehouse_exists(address: str | Path | LakeAddress) -> bool:
    """Whether a warehouse file exists, or the lake's catalog holds a lake."""
    if isinstance(address, LakeAddress):
        return lake_exists(address)
    return Path(address).exists()


def is_lake_connection(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's default catalog is a DuckLake lake."""
    row = con.execute(
        "SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    return bool(row and row[0] == "ducklake")


# Writers' locks on lakes held by this process, by catalog: the lock and the connections sharing
# it (a second writer in the same process shares the lock, as it would share a local file).
_HELD: dict[str, tuple[WriterLock, list[duckdb.DuckDBPyConnection]]] = {}
# Lake writers opened with `lock_later`, and the lock's session each takes its lock on.
_LATER: list[tuple[duckdb.DuckDBPyConnection, LakeAddress, WriterLock]] = []


def _is_open(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a connection has not been closed."""
    try:
        con.execute("SELECT 1")
    except duckdb.ConnectionException:
        return False
    return True


def _connect_lake(
    address: LakeAddress,
    read_only: bool,
    lock_timeout: float,
    config: dict[str, str | bool | int | float | list[str]],
    as_of: AsOf | None,
    create: bool,
    relocate: bool = False,
    lock_later: bool = False,
) -> duckdb.DuckDBPyConnection:
    """A lake connection; a writer's holds (or shares) the writers' lock until closed (with
    `lock_later`, from `hold_writers_lock` on)."""
    if read_only or as_of is not None:
        con, _ = open_lake(
            address, read_only=True, lock_timeout=lock_timeout, config=config, as_of=as_of
        )
        return con
    key = address.libpq
    held = _HELD.get(key)
    if held is not None:
        lock, users = held
        users[:] = [c for c in users if _is_open(c)]
        # The process holds the lock already (a live writer, or one closed without
        # close_connection): reuse it rather than wait for ourselves.
        shared, _ = open_lake(
            address,
            read_only=False,
            lock_timeout=lock_timeout,
            config=config,
            create=create,
            lock=lock,
            relocate=relocate,
        )
        users.append(shared)
        return shared
    con, new_lock = open_lake(
        address,
        read_only=False,
        lock_timeout=lock_timeout,
        config=config,
        create=create,
        relocate=relocate,
        lock_later=lock_later,
    )
    assert new_lock is not None
    if new_lock.held:
        _HELD[key] = (new_lock, [con])
    else:
        _LATER.append((con, address, new_lock))
    return con


def _take_later(
    con: duckdb.DuckDBPyConnection,
) -> tuple[duckdb.DuckDBPyConnection, LakeAddress, WriterLock] | None:
    """Remove and return the `lock_later` entry of a connection (None: it has none)."""
    for entry in _LATER:
        if entry[0] is con:
            _LATER.remove(entry)
            return entry
    return None


def hold_writers_lock(con: duckdb.DuckDBPyConnection, lock_timeout: float) -> None:
    """Take the lake writers' lock that `connect(..., lock_later=True)` left for later (a file's
    writer, or a lake writer holding the lock, has nothing to take)."""
    entry = _take_later(con)
    if entry is None:
        return
    _, address, lock = entry
    held = _HELD.get(address.libpq)
    if held is not None:  # another connection of this process took it meanwhile: share it
        lock.release()
        held[1].append(con)
        return
    try:
        lock.acquire(address, lock_timeout)
    except BaseException:
        lock.release()
        raise
    _HELD[address.libpq] = (lock, [con])


def close_connection(con: duckdb.DuckDBPyConnection) -> None:
    """Close a warehouse connection; the last writer of a lake in this process gives the writers'
    lock back."""
    con.close()
    waiting = _take_later(con)
    if waiting is not None:
        waiting[2].release()
    for key, (lock, users) in list(_HELD.items()):
        if any(c is con for c in users):
            users[:] = [c for c in users if c is not con and _is_open(c)]
            if not users:
                lock.release()
                del _HELD[key]


def _set_threads(con: duckdb.DuckDBPyConnection, threads: int) -> None:
    """Set DuckDB's worker threads of the open database."""
    con.execute(f"SET threads = {int(threads)}")


def _settled(con: duckdb.DuckDBPyConnection, threads: int | None) -> duckdb.DuckDBPyConnection:
    """The connection without DuckDB's progress bar (a query slower than two seconds would
    otherwise draw it on standard output, into the middle of a command's JSON or table), and
    with `threads` workers when given. The threads are set on the open database rather than in
    its configuration: a file this process has open already (a library user's own connection)
    accepts no second configuration, and a lake attached ahead of the command (`attach_ahead`)
    is taken only by a connection asking for no settings."""
    con.execute("SET enable_progress_bar = false")
    if threads is not None:
        _set_threads(con, threads)
    return con


def connect(
    path: str | Path | LakeAddress,
    *,
    read_only: bool = False,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    threads: int | None = None,
    config: dict[str, str | bool | int | float | list[str]] | None = None,
    as_of: AsOf | None = None,
    create: bool = True,
    relocate: bool = False,
    lock_later: bool = False,
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse: a file, retrying with jittered backoff while another process holds it,
    or a lake (see `warehouse.store.lake`). Close it with `close_connection`.

    Read-only connections share the file with other readers (another tame-wh, a BI tool); only a
    writer makes them wait. A file this user may not write is opened read-only just the same.
    `as_of` (a lake's past snapshot, read-only) is a usage error on a file; `relocate` (a lake
    writer's) moves a catalog made by an earlier version out of PostgreSQL's `public` schema.
    `lock_later` (a lake writer's) leaves the writers' lock of an existing lake to
    `hold_writers_lock`, so that a command can read before it waits for the lock. `threads`:
    DuckDB's worker threads (default `$TAME_WH_DUCKDB_THREADS`, else one per core)."""
    config = dict(config or {})
    if threads is None:
        threads = duckdb_threads_setting()
    if isinstance(path, LakeAddress):
        return _settled(
            _connect_lake(
                path, read_only, lock_timeout, config, as_of, create, relocate, lock_later
            ),
            threads,
        )
    if as_of is not None:
        raise UsageError(
            f"--as-of needs a lake warehouse (--db ducklake:postgres:…): the local file {path} "
            "keeps no history"
        )
    deadline = time.monotonic() + lock_timeout
    delay = 0.02
    while True:
        try:
            return _settled(duckdb.connect(str(path), read_only=read_only, config=config), threads)
        except duckdb.IOException as exc:
            if not _is_lock_conflict(exc):
                raise SchemaError(f"{path}: cannot open warehouse ({first_line(exc)})") from None
            if time.monotonic() >= deadline:
                holder = lock_holder(path)
                who = f": {holder.text()}" if holder is not None else ""
                advice = (
                    "; a dashboard or BI tool should read an export or a lake, not hold the file"
                    if holder is not None and holder.mode == "reading"
                    else ""
                )
                raise LockTimeoutError(
                    f"{path}: warehouse is locked by another process and stayed locked for "
                    f"{lock_timeout:g} s{who}; stop it or wait for it to finish (raise "
                    f"--lock-timeout to wait longer){advice}"
                ) from None
        except duckdb.ConnectionException as exc:
            if read_only and "different configuration" in str(exc):
                # This process already holds the file read-write; reuse that database instance.
                return _settled(duckdb.connect(str(path), read_only=False, config=config), threads)
            raise SchemaError(
                f"{path}: not a usable DuckDB warehouse ({first_line(exc)})"
            ) from None
        except duckdb.Error as exc:
            raise SchemaError(
                f"{path}: not a usable DuckDB warehouse ({first_line(exc)})"
            ) from None
        time.sleep(min(delay * (0.5 + random.random()), max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 1.0)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Run the block in one transaction: committed when it returns, rolled back when it raises
    or when the process was interrupted (Ctrl-C that a library swallowed)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        if interrupt_requested():
            raise KeyboardInterrupt
    except BaseException:
        # A connection the failure left unusable (a lake whose catalog went away) cannot roll
        # back; the error that got us here is the one to tell.
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    note_commit_started()  # a Ctrl-C from here on may come after the commit took effect
    try:
        con.execute("COMMIT")
    except duckdb.Error as exc:
        note_commit_failed()
        setattr(exc, DURING_COMMIT, True)
        raise


@contextmanager
def duckdb_threads(con: duckdb.DuckDBPyConnection, threads: int) -> Iterator[None]:
    """Run the block with DuckDB's worker pool limited to `threads` (restored afterwards).

    Used while a native UDF runs its own thread pool: idle DuckDB workers would otherwise spin
    on the same cores. Enter it outside a transaction, so that the setting can be restored after
    a rollback.
    """
    row = con.execute("SELECT current_setting('threads')").fetchone()
    before = int(row[0]) if row else 1
    _set_threads(con, threads)
    try:
        yield
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # never hide the error that got us here
            _set_threads(con, before)
        raise
    _set_threads(con, before)


# --- A full disk: recognised, and the file's unused tail given back ---------------------------

_DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
_DISK_FULL_TEXT = ("No space left on device", "File too large", "Disk quota exceeded")
# A DuckDB file starts with three 4 KiB headers; then come its blocks.
_FILE_HEADERS = 3 * 4096


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error (or one it was raised from) says the disk, the quota or the file-size
    limit ran out."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _DISK_FULL_ERRNOS:
            return True
        if any(text in str(seen) for text in _DISK_FULL_TEXT):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def is_interrupt(exc: BaseException) -> bool:
    """Whether an error comes from Ctrl-C: a KeyboardInterrupt (or one it was raised from), or
    any error after this process was sent SIGINT (`watch_interrupts`): DuckDB answers Ctrl-C
    with its own error for the query it stopped, and a library that swallowed the
    KeyboardInterrupt fails later, e.g. with a half-imported module. A query stopped by its own
    time limit is not an interrupt."""
    if interrupt_requested():
        return True
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def file_size(path: str | Path) -> int | None:
    """Size of a file in bytes, None when it does not exist."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def reclaim_after_failed_write(path: str | Path, size_before: int | None) -> int | None:
    """After a write that failed for lack of space (and was rolled back), give back the blocks
    DuckDB had appended to the file: the committed database ends at its header's block count, so
    the file is cut there (never below its size before the command). A file this command created
    that holds no table is removed. Holds a read-only connection meanwhile, so no writer can be at
    work. Returns the file's size afterwards (None: it does not exist)."""
    size_now = file_size(path)
    if size_now is None or (size_before is not None and size_now <= size_before):
        return size_now
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        if size_before is None:  # this command began the file and could not finish its header
            _remove_database_files(path)
            return None
        return size_now
    try:
        row = con.execute(
            "SELECT block_size, total_blocks FROM pragma_database_size() "
            "WHERE database_name = current_database()"
        ).fetchone()
        tables = con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()
        if row is None or tables is None:
            return size_now
        needed = _FILE_HEADERS + int(row[0]) * int(row[1])
        if size_before is None and tables[0] == 0:
            con.close()
            _remove_database_files(path)
            return None
        target = max(needed, size_before or 0)
        if target < size_now:
            os.truncate(path, target)
    except (duckdb.Error, OSError):
        pass
    finally:
        con.close()
    return file_size(path)


def _remove_database_files(path: str | Path) -> None:
    """Remove a database file (and its WAL) that holds nothing."""
    for leftover in (Path(path), Path(f"{path}.wal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
