"""Opening a DuckLake warehouse: extensions, storage credentials, a look at the catalog before
anything is attached, the writers' lock, and the attach under one fixed alias.

Every tame-wh process attaches a lake as `tame` (macros and views keep the catalog alias they
were created under). Writers take a PostgreSQL advisory lock on the catalog database before they
attach and hold it until their connection is closed, across the commit: two processes never write
at once, so ids checked before an insert stay unique (DuckLake has no PRIMARY KEY or UNIQUE) and
no UPDATE or DELETE meets a concurrent write. Readers take no lock; they see committed snapshots.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from warehouse.basics import first_line, redact
from warehouse.errors import LockTimeoutError, RemoteError, SchemaError, UsageError
from warehouse.store.address import (
    CATALOG_SCHEMA,
    LEGACY_CATALOG_SCHEMA,
    LakeAddress,
    missing_warehouse,
)
from warehouse.store.conninfo import quiet_ignored_passfile
from warehouse.store.s3 import S3Settings, s3_settings

LAKE_ALIAS = "tame"
_LAKE_SECRET = "tame_lake"
_S3_SECRET = "tame_s3"
# A DuckDB variable naming the PostgreSQL schema of the attached lake's catalog tables.
_SCHEMA_VARIABLE = "tame_lake_catalog_schema"
EXTENSIONS = ("ducklake", "postgres", "httpfs")
# DuckLake retries a commit that met a concurrent one (writers outside tame-wh, which take no
# lock); the default of 10 is low for a busy lake.
MAX_RETRY_COUNT = 100
# A writer's inserts (and deletes) of at most this many rows go into the catalog instead of a new
# Parquet file (DuckLake's data inlining; its default is 10): a run's intervals, sums, warnings and
# tags, and every row of a small test set's run. `tame-wh lake maintain` flushes them to Parquet.
INLINE_ROW_LIMIT = 250
# Seconds to wait for the catalog's server to accept a connection (connect_timeout=N in the lake
# address overrides it).
CONNECT_TIMEOUT = 10
# One advisory lock for every tame-wh writer of a catalog database.
_WRITER_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"tame-wh lake writer").digest()[:8], "big", signed=True
)


def _first_line(exc: BaseException) -> str:
    """The first line of an error message, secrets redacted."""
    return redact(first_line(exc))


# --- Extensions --------------------------------------------------------------------------------

# DuckDB checks an extension's signature on every LOAD: about 0.2 s for each of these ~40 MB
# files, on every command. tame-wh loads them with the check once, then records each file's
# identity (size, modification and change times, inode) in a stamp beside the installed
# extensions; while a file is unchanged (its change time cannot be set back without root), later
# connections load it without repeating the check. Extensions are never autoloaded here, and
# `tame-wh query` refuses LOAD and INSTALL.
_STAMP = "tame-wh-verified.json"
_verified: dict[str, list[Any]] = {}


def extensions_for(address: LakeAddress) -> tuple[str, ...]:
    """The extensions a lake needs: httpfs only for an S3 data path."""
    return EXTENSIONS if address.is_s3 else ("ducklake", "postgres")


def _identity(path: str) -> list[int] | None:
    """What changes whenever a file's content changes: size, mtime, ctime, inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _stamp_file() -> Path:
    """Where the stamp of checked extension files lives (DuckDB's extension directory)."""
    return Path.home() / ".duckdb" / "extensions" / f"v{duckdb.__version__}" / _STAMP


def _checked(names: tuple[str, ...]) -> bool:
    """Whether every named extension file was checked and has not changed since."""
    if not _verified:
        try:
            _verified.update(json.loads(_stamp_file().read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return False
    for name in names:
        entry = _verified.get(name)
        if not entry or _identity(str(entry[0])) != entry[1]:
            return False
    return True


def _record_checked(con: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> None:
    """Remember the files just loaded with their signatures checked."""
    rows = con.execute(
        "SELECT extension_name, install_path FROM duckdb_extensions() WHERE loaded"
    ).fetchall()
    paths = {("postgres" if n == "postgres_scanner" else n): p for n, p in rows}
    for name in names:
        identity = _identity(paths.get(name) or "")
        if identity is not None:
            _verified[name] = [paths[name], identity]
    with contextlib.suppress(OSError):
        _stamp_file().write_text(json.dumps(_verified), encoding="utf-8")


def connection_config(config: dict[str, Any] | None, address: LakeAddress) -> dict[str, Any]:
    """DuckDB settings of a new lake connection: no autoloading, and no repeated signature check
    of extension files checked before and unchanged since."""
    out = dict(config or {})
    out["autoinstall_known_extensions"] = False
    out["autoload_known_extensions"] = False
    if _checked(extensions_for(address)):
        out["allow_unsigned_extensions"] = True
    return out


def load_extensions(con: duckdb.DuckDBPyConnection, names: tuple[str, ...] = EXTENSIONS) -> None:
    """Load DuckLake, PostgreSQL and httpfs (or `names`) from the installed wheels (no
    download)."""
    installed = {
        name
        for (name,) in con.execute(
            "SELECT extension_name FROM duckdb_extensions() WHERE installed"
        ).fetchall()
    }
    for name in names:
        internal = "postgres_scanner" if name == "postgres" else name
        try:
            if internal not in installed:
                from duckdb_extensions import import_extension

                import_extension(name, con=con)
            con.execute(f"LOAD {name}")
            if name == "httpfs":
                _forget_environment_credentials(con)
        except (ImportError, duckdb.Error) as exc:
            raise SchemaError(
                f"the DuckDB {name} extension is not available ({_first_line(exc)}); "
                f"install tame-wh with its dependencies (duckdb-extension-{name})"
            ) from None
    row = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()
    if row and not row[0]:
        _record_checked(con, names)


# --- Object storage credentials ----------------------------------------------------------------

# Settings httpfs fills from the AWS environment variables when it loads: readable by any
# statement on the connection (`current_setting`), so they are emptied at once; the credentials
# live only in the connection's S3 secret, which never shows its secret key.
_CREDENTIAL_SETTINGS = ("s3_access_key_id", "s3_secret_access_key", "s3_session_token")


def _forget_environment_credentials(con: duckdb.DuckDBPyConnection) -> None:
    """Empty the S3 credential settings httpfs copied from the environment."""
    for setting in _CREDENTIAL_SETTINGS:
        con.execute(f"RESET {setting}")


def _create_s3_secret(con: duckdb.DuckDBPyConnection, settings: S3Settings) -> None:
    """A temporary DuckDB secret holding the S3 settings (values passed as parameters)."""
    names = ["TYPE s3", "REGION ?", "URL_STYLE ?", "USE_SSL ?"]
    values: list[Any] = [settings.region, settings.url_style, settings.use_ssl]
    for option, value in (
        ("KEY_ID", settings.key_id),
        ("SECRET", settings.secret),
        ("SESSION_TOKEN", settings.session_token),
        ("ENDPOINT", settings.endpoint),
    ):
        if value is not None:
            names.append(f"{option} ?")
            values.append(value)
    con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {_S3_SECRET} ({', '.join(names)})", values)


def prepare(con: duckdb.DuckDBPyConnection, address: LakeAddress) -> None:
    """Load the extensions (httpfs only for an S3 data path) and, for an S3 data path, create the
    S3 secret from the environment."""
    load_extensions(con, extensions_for(address))
    if address.is_s3:
        _prepare_s3(con)


def _prepare_s3(con: duckdb.DuckDBPyConnection) -> None:
    """The S3 secret from the environment, and the bound on each request to the store."""
    _create_s3_secret(con, s3_settings())
    # A store that stops answering ends a request after the lake timeout, retried once.
    from warehouse.store.remote import lake_timeout

    con.execute(f"SET http_timeout = {max(1, int(lake_timeout()))}")
    con.execute("SET http_retries = 1")


# --- The catalog, seen before attaching --------------------------------------------------------


@dataclass(frozen=True)
class CatalogState:
    """What the catalog database holds: whether a lake exists there, its format version, the
    data path it records and the PostgreSQL schema of its tables."""

    exists: bool
    format_version: str | None
    data_path: str | None
    schema: str = CATALOG_SCHEMA

    @property
    def legacy(self) -> bool:
        """Whether the catalog tables still sit in `public` (made by an earlier tame-wh)."""
        return self.exists and self.schema == LEGACY_CATALOG_SCHEMA


def catalog_connection(address: LakeAddress) -> Any:
    """A psycopg connection to the catalog database; failures are one-line usage errors."""
    import psycopg

    quiet_ignored_passfile()
    try:
        # The address's own connect_timeout (libpq's key) wins over the default.
        timeout = dict(address.conninfo).get("connect_timeout") or CONNECT_TIMEOUT
        return psycopg.connect(address.libpq, autocommit=True, connect_timeout=int(timeout))
    except psycopg.Error as exc:
        reason = _pg_reason(exc)
        message = f"lake catalog {address}: cannot connect ({reason}); nothing was written"
        if any(text in reason.lower() for text in _ADDRESS_PROBLEMS):
            raise UsageError(message) from None  # a wrong address or credentials: fix the call
        raise RemoteError(message) from None  # the server refused, failed or did not answer


# Connection failures that a wrong address or wrong credentials cause (exit 2); every other
# failure to connect is the server's (exit 4).
_ADDRESS_PROBLEMS = (
    "does not exist",
    "password authentication failed",
    "no password supplied",
    "authentication failed",
    "no pg_hba.conf entry",
    "could not translate host name",
    "invalid",
    # A setting the address's `options` names that the server does not have or lets it set.
    "unrecognized configuration parameter",
    "permission denied to set parameter",
)


def _pg_reason(exc: BaseException) -> str:
    """The telling line of a libpq error (its last non-empty line names the cause)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    reason = lines[-1] if lines else type(exc).__name__
    return redact(reason.removeprefix("FATAL:").strip())


def catalog_state(conn: Any) -> CatalogState:
    """Read the lake's metadata (format version, data path) straight from PostgreSQL: from the
    catalog schema, else from `public` where earlier versions made lakes."""
    from psycopg import sql

    schemas = (CATALOG_SCHEMA, LEGACY_CATALOG_SCHEMA)
    found = conn.execute(  # both places in one round trip (every lake command starts here)
        "SELECT to_regclass(quote_ident(%s) || '.ducklake_metadata') IS NOT NULL, "
        "to_regclass(quote_ident(%s) || '.ducklake_metadata') IS NOT NULL",
        list(schemas),
    ).fetchone()
    schema = next((name for name, there in zip(schemas, found or (), strict=False) if there), None)
    if schema is None:
        return CatalogState(False, None, None)
    query = sql.SQL(
        "SELECT key, value FROM {}.ducklake_metadata WHERE scope IS NULL OR scope = ''"
    ).format(sql.Identifier(schema))
    values = dict(conn.execute(query).fetchall())
    return CatalogState(True, values.get("version"), values.get("data_path"), schema)


def check_data_path(address: LakeAddress, state: CatalogState) -> LakeAddress:
    """The address with the data path to use (the given one must match the catalog's; a new lake
    needs one) and the schema where the catalog tables are."""
    from warehouse.store.remote import note_data_path

    address = address.in_schema(state.schema)
    if state.exists:
        stored = state.data_path or ""
        if address.data_path and address.data_path.rstrip("/") != stored.rstrip("/"):
            raise UsageError(
                f"--data-path {address.data_path} does not match the data path this lake "
                f"records ({stored}); give that one, or none; nothing was written"
            )
        address = address.with_data_path(stored or None)
    elif not address.data_path:
        raise UsageError(
            f"no lake at {address} yet: creating one needs --data-path (or $TAME_WH_DATA_PATH): "
            "an s3://bucket/prefix/ URL or a directory"
        )
    note_data_path(address)  # the watchdog probes the store this lake really uses
    return address


# --- The catalog's privileges ------------------------------------------------------------------

# Roles that must reach nothing of the catalog: everyone (PUBLIC) and Supabase's client roles.
CLIENT_ROLES = ("anon", "authenticated")


def _existing_client_roles(conn: Any) -> list[str]:
    """Supabase's client roles that exist in this database cluster."""
    rows = conn.execute(
        "SELECT rolname FROM pg_roles WHERE rolname = ANY(%s) ORDER BY rolname",
        [list(CLIENT_ROLES)],
    ).fetchall()
    return [name for (name,) in rows]


def seal_catalog(conn: Any, schema: str = CATALOG_SCHEMA) -> None:
    """Create the catalog schema if needed and take every privilege on it, and on everything in
    it, from PUBLIC and the client roles (tables DuckLake adds later inherit no grant: the
    schema itself is closed to them)."""
    from psycopg import sql

    if schema == LEGACY_CATALOG_SCHEMA:
        raise UsageError("the lake catalog must move out of schema public before it is sealed")
    roles = [sql.SQL("PUBLIC"), *(sql.Identifier(r) for r in _existing_client_roles(conn))]
    grantees = sql.SQL(", ").join(roles)
    name = sql.Identifier(schema)
    with conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
        for kind in (
            "SCHEMA {}",
            "ALL TABLES IN SCHEMA {}",
            "ALL SEQUENCES IN SCHEMA {}",
            "ALL FUNCTIONS IN SCHEMA {}",
        ):
            conn.execute(sql.SQL("REVOKE ALL ON " + kind + " FROM {}").format(name, grantees))
        for kind in ("TABLES", "SEQUENCES", "FUNCTIONS"):
            conn.execute(
                sql.SQL(
                    "ALTER DEFAULT PRIVILEGES IN SCHEMA {} REVOKE ALL ON " + kind + " FROM {}"
                ).format(name, grantees)
            )


def relocate_catalog(conn: Any) -> int:
    """Move a lake's catalog tables from `public` into the catalog schema (one transaction,
    under the writers' lock) and seal it; returns the number of tables moved."""
    from psycopg import sql

    seal_catalog(conn)
    with conn.transaction():
        names = [
            name
            for (name,) in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'p') "
                "AND c.relname LIKE 'ducklake\\_%%' ORDER BY c.relname",
                [LEGACY_CATALOG_SCHEMA],
            ).fetchall()
        ]
        for name in names:
            conn.execute(
                sql.SQL("ALTER TABLE {}.{} SET SCHEMA {}").format(
                    sql.Identifier(LEGACY_CATALOG_SCHEMA),
                    sql.Identifier(name),
                    sql.Identifier(CATALOG_SCHEMA),
                )
            )
    seal_catalog(conn)
    return len(names)


def catalog_exposures(conn: Any, schema: str) -> list[str]:
    """What PUBLIC or a client role may do with the catalog: `role: privilege on object` for
    every privilege held on the schema, its tables, sequences and functions (empty: sealed)."""
    exposures: list[str] = []
    roles = ["public", *_existing_client_roles(conn)]
    for role in roles:
        rows = conn.execute(
            """
            SELECT 'schema ' || n.nspname, p
            FROM pg_namespace n, unnest(ARRAY['USAGE', 'CREATE']) AS p
            WHERE n.nspname = %(schema)s AND has_schema_privilege(%(role)s, n.oid, p)
            UNION ALL
            SELECT 'table ' || c.relname, p
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
                 unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE',
                              'REFERENCES', 'TRIGGER']) AS p
            WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND c.relname LIKE 'ducklake%%' AND has_table_privilege(%(role)s, c.oid, p)
            UNION ALL
            SELECT 'sequence ' || c.relname, p
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
                 unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) AS p
            WHERE n.nspname = %(schema)s AND c.relkind = 'S'
              AND has_sequence_privilege(%(role)s, c.oid, p)
            UNION ALL
            SELECT 'function ' || f.proname, 'EXECUTE'
            FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
            WHERE n.nspname = %(schema)s AND n.nspname <> 'public'
              AND has_function_privilege(%(role)s, f.oid, 'EXECUTE')
            ORDER BY 1, 2
            """,
            {"schema": schema, "role": role},
        ).fetchall()
        if schema == LEGACY_CATALOG_SCHEMA:
            # In `public` the schema itself is open to everyone by PostgreSQL's defaults; what
            # counts there is the catalog tables'.
            rows = [r for r in rows if not r[0].startswith("schema ")]
        exposures += [f"{role}: {privilege} on {what}" for what, privilege in rows]
    return exposures


def probe_storage(con: duckdb.DuckDBPyConnection, address: LakeAddress, *, create: bool) -> None:
    """Check that the data path can be reached (the bucket exists; the directory exists, or is
    created when `create`) before anything is attached."""
    data_path = address.data_path
    assert data_path is not None
    if not address.is_s3:
        if not os.path.isdir(data_path):
            if not create:
                raise UsageError(
                    f"lake data path {data_path} does not exist (the catalog records it); "
                    "nothing was written"
                )
            try:
                os.makedirs(data_path, exist_ok=True)
            except OSError as exc:
                raise UsageError(
                    f"lake data path {data_path}: cannot create it ({exc.strerror or exc})"
                ) from None
        return
    try:
        con.execute("SELECT count(*) FROM glob(?)", [data_path + ".tame-wh-probe*"]).fetchall()
    except duckdb.Error as exc:
        text = str(exc)
        reason = "the bucket does not exist" if "NoSuchBucket" in text else _first_line(exc)
        raise UsageError(
            f"lake data path {data_path}: object storage not usable ({reason}); nothing was written"
        ) from None


# --- The writers' lock -------------------------------------------------------------------------


class _InThread:
    """A call running in a daemon thread of its own; `result` waits for it and returns its value
    or raises its error."""

    def __init__(self, name: str, call: Callable[[], Any]) -> None:
        self._value: Any = None
        self._failure: BaseException | None = None

        def run() -> None:
            try:
                self._value = call()
            except BaseException as exc:  # handed to the caller by `result`
                self._failure = exc

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    def result(self) -> Any:
        """The call's value (its error raised here), once the thread is done."""
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self._value


class WriterLock:
    """The catalog database's advisory lock for tame-wh writers, held on its own session until
    released (a killed process's session ends, and PostgreSQL releases the lock). Waiters queue
    in PostgreSQL, so none is starved by luckier ones."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._connecting: _InThread | None = None
        self.held = False

    @classmethod
    def connecting(cls, address: LakeAddress) -> WriterLock:
        """A lock whose session connects in a thread of its own while the caller goes on (the
        PostgreSQL driver takes a tenth of a second to load); `acquire` waits for it."""
        lock = cls(None)
        lock._connecting = _InThread("tame-wh-lock", lambda: catalog_connection(address))
        return lock

    def _session(self) -> Any:
        """The lock's session (its connection error, if connecting failed)."""
        if self._connecting is not None:
            self._conn = self._connecting.result()
        return self._conn

    def acquire(self, address: LakeAddress, timeout: float) -> None:
        """Wait in PostgreSQL's queue (first come, first served) until the lock is ours, at most
        `timeout` seconds."""
        conn = self._session()
        import psycopg

        millis = max(1, int(timeout * 1000))
        try:
            conn.execute("SELECT set_config('lock_timeout', %s, false)", [f"{millis}ms"])
            conn.execute("SELECT pg_advisory_lock(%s)", [_WRITER_LOCK_KEY])
        except psycopg.errors.LockNotAvailable:
            raise LockTimeoutError(
                f"{address}: another tame-wh process is writing the lake and kept it for "
                f"{timeout:g} s (raise --lock-timeout to wait longer)"
            ) from None
        except psycopg.Error as exc:
            raise RemoteError(
                f"lake catalog {address}: cannot take the writers' lock ({_pg_reason(exc)}); "
                "nothing was written"
            ) from None
        conn.execute("SELECT set_config('lock_timeout', '0', false)")
        self.held = True

    def release(self) -> None:
        """Give the lock back and close its session."""
        with contextlib.suppress(BaseException):
            self._session()
        with contextlib.suppress(Exception):
            if self.held:
                self._conn.execute("SELECT pg_advisory_unlock(%s)", [_WRITER_LOCK_KEY])
        self.held = False
        with contextlib.suppress(Exception):
            if self._conn is not None:
                self._conn.close()


# --- Attaching ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AsOf:
    """A point in the lake's history: a snapshot id, or a time (UTC)."""

    snapshot: int | None = None
    time: datetime | None = None

    def option(self) -> str:
        """The ATTACH option naming it (built from the parsed value, never from user text)."""
        if self.snapshot is not None:
            return f"SNAPSHOT_VERSION {int(self.snapshot)}"
        assert self.time is not None
        return f"SNAPSHOT_TIME '{self.time.strftime('%Y-%m-%d %H:%M:%S.%f')}+00'"

    def __str__(self) -> str:
        if self.snapshot is not None:
            return f"snapshot {self.snapshot}"
        assert self.time is not None
        return f"{self.time.isoformat(sep=' ')} UTC"


def parse_as_of(text: str) -> AsOf:
    """`--as-of`: a snapshot id (an integer) or an ISO date/time (UTC unless it has an offset)."""
    from datetime import timezone

    value = text.strip()
    if value.isdigit():
        if len(value) > 18:  # beyond a BIGINT snapshot id
            raise UsageError(f"--as-of {text!r}: no lake has a snapshot id that large")
        return AsOf(snapshot=int(value))
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if when.tzinfo is not None:
            when = when.astimezone(timezone.utc).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise UsageError(
            f"--as-of {text!r}: give a snapshot id (e.g. 42) or a date/time such as "
            "2026-05-01 or 2026-05-01T12:00:00Z (years 1 to 9999, in UTC)"
        ) from None
    return AsOf(time=when)


def attach(
    con: duckdb.DuckDBPyConnection,
    address: LakeAddress,
    *,
    read_only: bool,
    as_of: AsOf | None = None,
    alias: str = LAKE_ALIAS,
    existing: bool = False,
) -> None:
    """Attach the lake as `alias` and make it the default catalog (settings passed as parameters;
    the S3 secret, when the data path needs one, is created by `prepare`). With `existing`, a
    catalog that holds no lake is an error and nothing is created."""
    quiet_ignored_passfile()  # DuckDB's own libpq reads the same file
    libpq = address.libpq
    if "connect_timeout" not in dict(address.conninfo):
        libpq += f" connect_timeout={CONNECT_TIMEOUT}"
    names = ["TYPE ducklake", "METADATA_PATH ?", "METADATA_SCHEMA ?"]
    values = ["postgres:" + libpq, address.catalog_schema]
    if address.data_path:
        names.append("DATA_PATH ?")
        values.append(address.data_path)
    con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {_LAKE_SECRET} ({', '.join(names)})", values)
    options = []
    if read_only or as_of is not None:
        options.append("READ_ONLY")
    else:
        options.append(f"DATA_INLINING_ROW_LIMIT {INLINE_ROW_LIMIT}")
    if as_of is not None:
        options.append(as_of.option())
    if existing:
        options.append("CREATE_IF_NOT_EXISTS false")
    suffix = f" ({', '.join(options)})" if options else ""
    try:
        con.execute(f"ATTACH 'ducklake:{_LAKE_SECRET}' AS {alias}{suffix}")
    except duckdb.Error as exc:
        if as_of is not None and "snapshot" in str(exc).lower():
            raise UsageError(f"--as-of {as_of}: the lake has no such snapshot") from None
        from warehouse.store.remote import remote_failure

        remote = remote_failure(address, exc, "the attach")
        if remote is not None:
            raise remote from None
        raise UsageError(f"lake {address}: cannot attach ({_first_line(exc)})") from None
    con.execute(f"USE {alias}")
    con.execute(f"SET ducklake_max_retry_count = {MAX_RETRY_COUNT}")
    con.execute(f"SET VARIABLE {_SCHEMA_VARIABLE} = ?", [address.catalog_schema])


def metadata_table(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The qualified name of one of the attached lake's catalog tables (`ducklake_…`), for
    reading it through DuckDB's attachment of the catalog database."""
    if not name.startswith("ducklake_") or not name.replace("_", "").isalnum():
        raise ValueError(f"not a DuckLake catalog table: {name}")
    row = con.execute(f"SELECT getvariable('{_SCHEMA_VARIABLE}')").fetchone()
    if not row or row[0] not in (CATALOG_SCHEMA, LEGACY_CATALOG_SCHEMA):
        # Attached by someone else (a DuckDB-file catalog, say): its default schema.
        return f"__ducklake_metadata_{LAKE_ALIAS}.{name}"
    return f"__ducklake_metadata_{LAKE_ALIAS}.{row[0]}.{name}"


def open_lake(
    address: LakeAddress,
    *,
    read_only: bool,
    lock_timeout: float,
    config: dict[str, Any] | None = None,
    as_of: AsOf | None = None,
    create: bool = True,
    lock: WriterLock | None = None,
    relocate: bool = False,
    lock_later: bool = False,
) -> tuple[duckdb.DuckDBPyConnection, WriterLock | None]:
    """Connect to a lake: the catalog checked first (reachable, a lake there or not, the data path
    matching), the storage probed, the attach, and for a writer the writers' lock (unless `lock`,
    already held by this process, is given; taken before the attach when the lake is created or
    its catalog moved). Without a lake in the catalog, a reader (or a writer with `create`
    False) gets `missing_warehouse` and nothing is created. A new lake's catalog schema is sealed
    before DuckLake fills it; `relocate` (a writer's) moves an earlier version's catalog out of
    `public` and seals it. With `lock_later`, a writer of an existing lake gets its lock's
    session without the lock: the caller reads first and takes it (`WriterLock.acquire`) before
    it writes.

    Returns the connection and the lock this call took or prepared (None for readers and shared
    locks)."""
    if not relocate:
        ahead = _take_ahead(address, read_only, config, as_of)
        if ahead is not None:
            found = ahead.outcome()
        else:
            found = _open_existing(address, read_only=read_only, config=config, as_of=as_of)
        if found is not None:
            writer = not read_only and lock is None
            return _with_lock(found[0], found[1], writer, lock_later, lock_timeout)
    pg = catalog_connection(address)
    taken: WriterLock | None = None
    con: duckdb.DuckDBPyConnection | None = None
    try:
        state = catalog_state(pg)
        if not read_only and lock is None and (not state.exists or (relocate and state.legacy)):
            # Creating the lake or moving its catalog: under the lock from the start (and look
            # again once it is ours).
            taken = WriterLock(pg)
            taken.acquire(address, lock_timeout)
            state = catalog_state(pg)
        if not state.exists and (read_only or not create):
            raise missing_warehouse(address)
        if not read_only:
            with _catalog_errors(address, "seal the catalog schema"):
                if relocate and state.legacy:
                    relocate_catalog(pg)
                    state = catalog_state(pg)
                elif not state.exists or relocate:
                    seal_catalog(pg, state.schema)
        address = check_data_path(address, state)
        con = duckdb.connect(":memory:", config=connection_config(config, address))
        prepare(con, address)
        probe_storage(con, address, create=not read_only and not state.exists)
        attach(con, address, read_only=read_only, as_of=as_of)
        if not read_only and lock is None and taken is None:
            # An existing lake: extensions and attach are done outside the lock; every
            # transaction from here on reads the snapshot current when it begins.
            taken = WriterLock(pg)
            if not lock_later:
                taken.acquire(address, lock_timeout)
    except BaseException:
        if con is not None:
            con.close()
        if taken is not None:
            taken.release()
        else:
            with contextlib.suppress(Exception):
                pg.close()
        raise
    if taken is None:
        pg.close()
    return con, taken


def _with_lock(
    con: duckdb.DuckDBPyConnection,
    address: LakeAddress,
    writer: bool,
    lock_later: bool,
    lock_timeout: float,
) -> tuple[duckdb.DuckDBPyConnection, WriterLock | None]:
    """An attached existing lake with, for a writer, its lock's session (connecting meanwhile)
    and the lock itself unless `lock_later`."""
    if not writer:
        return con, None
    lock = WriterLock.connecting(address)
    if not lock_later:
        try:
            lock.acquire(address, lock_timeout)
        except BaseException:
            con.close()
            lock.release()
            raise
    return con, lock


def _open_existing(
    address: LakeAddress,
    *,
    read_only: bool,
    config: dict[str, Any] | None,
    as_of: AsOf | None,
) -> tuple[duckdb.DuckDBPyConnection, LakeAddress] | None:
    """The common case without a look at the catalog first (and without loading the PostgreSQL
    driver): a lake in the catalog schema, attached as it is and its recorded data path checked.
    None when that attach fails (no lake there, an earlier version's catalog in `public`, any
    error): `open_lake` then looks at the catalog first and tells what is wrong."""
    here = address.in_schema(CATALOG_SCHEMA)
    con = duckdb.connect(":memory:", config=connection_config(config, here))
    try:
        prepare(con, here)
        try:
            attach(con, here.with_data_path(None), read_only=read_only, as_of=as_of, existing=True)
        except (duckdb.Error, UsageError, RemoteError):
            con.close()
            return None
        row = con.execute(
            f"SELECT value FROM {metadata_table(con, 'ducklake_metadata')} "
            "WHERE key = 'data_path' AND (scope IS NULL OR scope = '')"
        ).fetchone()
        resolved = check_data_path(here, CatalogState(True, None, row[0] if row else None))
        if resolved.is_s3 and not here.is_s3:
            # Only now is httpfs known to be needed: loaded without its signature check only
            # when it was checked before, like the others.
            unsigned = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()
            if unsigned and unsigned[0] and not _checked(EXTENSIONS):
                con.close()
                return None
            load_extensions(con, ("httpfs",))
            _prepare_s3(con)
        probe_storage(con, resolved, create=False)
    except BaseException:
        con.close()
        raise
    return con, resolved


# --- Attaching ahead ---------------------------------------------------------------------------


class _Ahead:
    """An existing lake being attached in a thread of its own (see `attach_ahead`)."""

    def __init__(self, address: LakeAddress, read_only: bool) -> None:
        self.address = address
        self.read_only = read_only
        self._attaching = _InThread(
            "tame-wh-attach",
            lambda: _open_existing(address, read_only=read_only, config=None, as_of=None),
        )

    def outcome(self) -> tuple[duckdb.DuckDBPyConnection, LakeAddress] | None:
        """What `_open_existing` returned (its error raised here), once the thread is done."""
        found: tuple[duckdb.DuckDBPyConnection, LakeAddress] | None = self._attaching.result()
        return found

    def discard(self) -> None:
        """Wait for the thread and close what it attached."""
        with contextlib.suppress(BaseException):
            found = self.outcome()
            if found is not None:
                found[0].close()


_AHEAD: list[_Ahead] = []


def attach_ahead(address: LakeAddress, *, read_only: bool) -> None:
    """Start attaching an existing lake while the command's modules load (the attach waits on
    the catalog and runs outside Python's lock): the command's `open_lake` with the same
    address and mode takes it. Attaches that no command took are closed by `drop_ahead`."""
    _AHEAD.append(_Ahead(address, read_only))


def _take_ahead(
    address: LakeAddress,
    read_only: bool,
    config: dict[str, Any] | None,
    as_of: AsOf | None,
) -> _Ahead | None:
    """The attach started ahead for this address and mode (None: there is none, or the caller
    needs other settings)."""
    if config or as_of is not None:
        return None
    for ahead in _AHEAD:
        if ahead.address == address and ahead.read_only == read_only:
            _AHEAD.remove(ahead)
            return ahead
    return None


def drop_ahead() -> None:
    """Close every attach started ahead that no command took."""
    while _AHEAD:
        _AHEAD.pop().discard()


@contextlib.contextmanager
def _catalog_errors(address: LakeAddress, what: str) -> Iterator[None]:
    """PostgreSQL errors of the block as one line naming the catalog and the operation."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        raise UsageError(
            f"lake catalog {address}: cannot {what} ({_pg_reason(exc)}); nothing was written"
        ) from None


# The files a snapshot reads: each live data and delete file of each live table, with DuckLake's
# relative paths resolved (file in table directory, in schema directory, in the data path).
_SNAPSHOT_FILES = """
WITH live_schema AS (
    SELECT schema_id,
           CASE WHEN path_is_relative THEN %(data)s || path ELSE path END AS dir
    FROM {schema}.ducklake_schema
    WHERE begin_snapshot <= %(snapshot)s
      AND (end_snapshot IS NULL OR end_snapshot > %(snapshot)s)
), live_table AS (
    SELECT t.table_id,
           CASE WHEN t.path_is_relative THEN s.dir || t.path ELSE t.path END AS dir
    FROM {schema}.ducklake_table t JOIN live_schema s USING (schema_id)
    WHERE t.begin_snapshot <= %(snapshot)s
      AND (t.end_snapshot IS NULL OR t.end_snapshot > %(snapshot)s)
)
SELECT CASE WHEN f.path_is_relative THEN t.dir || f.path ELSE f.path END
FROM {schema}.ducklake_data_file f JOIN live_table t USING (table_id)
WHERE f.begin_snapshot <= %(snapshot)s
  AND (f.end_snapshot IS NULL OR f.end_snapshot > %(snapshot)s)
UNION
SELECT CASE WHEN f.path_is_relative THEN t.dir || f.path ELSE f.path END
FROM {schema}.ducklake_delete_file f JOIN live_table t USING (table_id)
WHERE f.begin_snapshot <= %(snapshot)s
  AND (f.end_snapshot IS NULL OR f.end_snapshot > %(snapshot)s)
"""


@dataclass(frozen=True)
class PinnedRead:
    """A lake read fixed at one snapshot: its id and every file DuckLake may read for it."""

    snapshot: int
    files: list[str]


def pin_snapshot(address: LakeAddress, as_of: AsOf | None = None) -> PinnedRead:
    """The snapshot a read answers from (the latest, or the one `as_of` names) and the data and
    delete files of that snapshot, read from the catalog; no lake or no such snapshot is a usage
    error."""
    from psycopg import sql

    with catalog_session(address) as pg:
        state = catalog_state(pg)
        if not state.exists:
            raise missing_warehouse(address)
        schema = sql.Identifier(state.schema)
        table = sql.SQL("{}.ducklake_snapshot").format(schema)
        if as_of is not None and as_of.snapshot is not None:
            row = pg.execute(
                sql.SQL("SELECT snapshot_id FROM {} WHERE snapshot_id = %s").format(table),
                [as_of.snapshot],
            ).fetchone()
        elif as_of is not None:
            row = pg.execute(
                sql.SQL(
                    "SELECT max(snapshot_id) FROM {} "
                    "WHERE snapshot_time <= %s::timestamp AT TIME ZONE 'UTC'"
                ).format(table),
                [as_of.time],
            ).fetchone()
        else:
            row = pg.execute(sql.SQL("SELECT max(snapshot_id) FROM {}").format(table)).fetchone()
        if not row or row[0] is None:
            raise UsageError(f"--as-of {as_of}: the lake has no such snapshot")
        snapshot = int(row[0])
        files = pg.execute(
            sql.SQL(_SNAPSHOT_FILES).format(schema=schema),
            {"data": state.data_path or "", "snapshot": snapshot},
        ).fetchall()
    return PinnedRead(snapshot, sorted(path for (path,) in files if path))


@contextlib.contextmanager
def catalog_session(address: LakeAddress) -> Iterator[Any]:
    """A psycopg session on the catalog database for the duration of the block."""
    pg = catalog_connection(address)
    try:
        yield pg
    finally:
        pg.close()


def lake_catalog_is_legacy(address: LakeAddress) -> bool:
    """Whether the lake's catalog tables still sit in `public` (an earlier version made it)."""
    with catalog_session(address) as pg:
        return catalog_state(pg).legacy


def lake_exists(address: LakeAddress) -> bool:
    """Whether the catalog database holds a lake (an unreachable catalog is a usage error)."""
    with catalog_session(address) as pg:
        return catalog_state(pg).exists
