"""Failures of a lake's services — the PostgreSQL catalog and the data path (object store or
directory) — recognised in the errors DuckDB, DuckLake and psycopg raise, and told as one
`RemoteError` (exit 4) naming the service, what was under way and what was kept."""

from __future__ import annotations

from warehouse.errors import RemoteError
from warehouse.store.address import LakeAddress

# An attribute set on an error raised by COMMIT (warehouse.store.connection.transaction): the
# commit's outcome is then not known to the client.
DURING_COMMIT = "tame_wh_during_commit"

# Texts of catalog failures: the connection refused, dropped, reset or timed out, the server
# restarting or stopping, and DuckDB's state after a lost connection.
_CATALOG_TEXTS = (
    "unable to connect to postgres",
    "failed to execute query",
    "server closed the connection",
    "terminating connection",
    "database has been invalidated",
    "connection refused",
    "could not connect to server",
    "connection to server",
    "no connection to the server",
    "ssl syscall",
    "failed to query most recent snapshot",
    "failed to probe ducklake metadata",
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is in recovery mode",
    "could not receive data from server",
    "could not send data to server",
    "connection timed out",
    "consuming input failed",
    "connection is closed",
    "the connection is lost",
    "connection reset",
)
# Texts of data-path failures: HTTP errors of the object store, refused or timed-out requests,
# objects gone, and a directory that can no longer be written.
_STORAGE_TEXTS = (
    "http ",
    "http error",
    "http get",
    "http put",
    "http head",
    "http post",
    "could not establish connection",
    "connection error for http",
    "s3://",
    "nosuchkey",
    "nosuchbucket",
    "accessdenied",
    "access denied",
    "forbidden",
    "read-only file system",
    "permission denied",
    "no such file or directory",
    "operation timed out",
    "timeout was reached",
)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _service(address: LakeAddress, exc: BaseException) -> str | None:
    """Which of the lake's services an error comes from (None: neither, as far as it tells)."""
    import duckdb

    text = str(exc).lower()
    module = type(exc).__module__ or ""
    if module.startswith("psycopg") and isinstance(exc, Exception):
        import psycopg

        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            return "catalog"
        return "catalog" if any(t in text for t in _CATALOG_TEXTS) else None
    if not isinstance(exc, duckdb.Error):
        return None
    data_path = (address.data_path or "").lower()
    over_http = "http" in text or "s3://" in text
    if not over_http and any(t in text for t in _CATALOG_TEXTS):
        return "catalog"
    if any(t in text for t in _STORAGE_TEXTS) or (data_path and data_path in text):
        return "storage"
    if any(t in text for t in _CATALOG_TEXTS):
        return "catalog"
    return None


def describe_service(address: LakeAddress, service: str) -> str:
    """The service as a message names it: the catalog's host and database, or the data path."""
    info = dict(address.conninfo)
    if service == "catalog":
        where = info.get("host") or "the local socket"
        port = f":{info['port']}" if info.get("port") else ""
        return f"lake catalog (PostgreSQL at {where}{port}, database {address.database})"
    kind = "object store" if address.is_s3 else "directory"
    return f"lake data path ({kind} {address.data_path or 'recorded in the catalog'})"


# Where DuckDB's nested messages state the cause, most telling first.
_CAUSES = (
    "connection refused",
    "server closed the connection unexpectedly",
    "terminating connection due to administrator command",
    "the database system is shutting down",
    "the database system is starting up",
    "database has been invalidated",
    "connection timed out",
    "timeout was reached",
    "could not establish connection",
    "no such file or directory",
    "permission denied",
    "read-only file system",
    "nosuchkey",
    "access denied",
)
_MAX_REASON = 160


def _telling_part(text: str) -> str:
    """The cause a nested DuckDB message ends with (e.g. `connection refused`), else the
    message cut to a readable length."""
    lower = text.lower()
    for cause in _CAUSES:
        if cause in lower:
            return cause
    text = text.strip().splitlines()[0] if text.strip() else "no message"
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def remote_failure(address: LakeAddress, exc: BaseException, doing: str) -> RemoteError | None:
    """The one-line `RemoteError` for an error that a lake's service caused while `doing` ran
    (None when the error is not such a failure: then it is a bug, reported as one)."""
    service = _service(address, exc)
    if service is None:
        return None
    reason = _telling_part(address.redact(str(exc)))
    if getattr(exc, DURING_COMMIT, False):
        kept = (
            "the commit may or may not have landed: run the command again (a run, test set or "
            "audit already stored is recognised and kept)"
        )
    else:
        kept = "nothing of the interrupted transaction was committed; run the command again"
    return RemoteError(
        f"{describe_service(address, service)} failed during {doing}: {reason}; {kept}"
    )
