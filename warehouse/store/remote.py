"""Failures of a lake's services — the PostgreSQL catalog and the data path (object store or
directory) — recognised in the errors DuckDB, DuckLake and psycopg raise, and told as one
`RemoteError` (exit 4) naming the service, what was under way and what was kept; and the bound
on how long a command waits for a service that does not answer (`Watchdog`)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

from warehouse.errors import RemoteError, UsageError
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


# The data path each lake's catalog records, as the process learnt it when it opened the lake
# (by catalog connection): later commands name a lake by its catalog alone, and the watchdog and
# the messages must still know which store it writes.
_RECORDED: dict[tuple[tuple[str, str], ...], str] = {}


def note_data_path(address: LakeAddress) -> None:
    """Remember the data path an opened lake uses (read from its catalog, or given)."""
    if address.data_path:
        _RECORDED[address.conninfo] = address.data_path


def resolved(address: LakeAddress) -> LakeAddress:
    """The address with the data path its catalog records, once this process has read it."""
    if address.data_path:
        return address
    recorded = _RECORDED.get(address.conninfo)
    return address.with_data_path(recorded) if recorded else address


def _service(address: LakeAddress, exc: BaseException) -> str | None:
    """Which of the lake's services an error comes from (None: neither, as far as it tells)."""
    import duckdb

    # psycopg is looked up, not imported: an error cannot be psycopg's unless it was loaded, and a
    # reader on a lake starts without it (a retried storage error must not load it).
    psycopg = sys.modules.get("psycopg")
    text = str(exc).lower()
    address = resolved(address)
    if psycopg is not None and isinstance(exc, psycopg.Error):  # the catalog, through psycopg
        lost = isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
        return "catalog" if lost or any(t in text for t in _CATALOG_TEXTS) else None
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


# How long the look at the services after an unplaced error waits for each.
_AFTER_ERROR_PROBE = 3.0


def _silent_service(address: LakeAddress, exc: BaseException) -> str | None:
    """For a DuckDB error whose text names no service (DuckDB's `Attempting to fetch from an
    unsuccessful query result` after its catalog connection died, say): the service that does
    not answer a probe now, if one does not."""
    import duckdb

    if not isinstance(exc, duckdb.Error):
        return None
    if not _catalog_answers(address, _AFTER_ERROR_PROBE):
        return "catalog"
    if not _storage_answers(address, _AFTER_ERROR_PROBE):
        return "storage"
    return None


def describe_service(address: LakeAddress, service: str) -> str:
    """The service as a message names it: the catalog's host and database, or the data path."""
    info = dict(address.conninfo)
    if service == "catalog":
        where = info.get("host") or "the local socket"
        port = f":{info['port']}" if info.get("port") else ""
        return f"lake catalog (PostgreSQL at {where}{port}, database {address.database})"
    return f"lake data path ({describe_store(resolved(address))})"


def describe_store(address: LakeAddress) -> str:
    """The data path by its kind: an S3 bucket and prefix at its endpoint, or a directory."""
    if not address.data_path:
        return "its data path, not yet read from the catalog"
    if not address.is_s3:
        return f"directory {address.data_path}"
    bucket, _, prefix = address.data_path.removeprefix("s3://").partition("/")
    where = f"prefix {prefix}" if prefix else "no prefix"
    try:
        endpoint = store_endpoint(address)
    except UsageError:  # a malformed endpoint variable is told where it is read
        endpoint = "(endpoint not readable from the environment)"
    return f"object store {endpoint}, bucket {bucket}, {where}"


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
    service = _service(address, exc) or _silent_service(address, exc)
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


def exit_4_on_abort(address: LakeAddress, doing: str) -> None:
    """From now on, if DuckDB aborts this process (a C++ terminate when the catalog's
    connection breaks mid-statement), it ends with exit 4 and one line saying so, instead of a
    bare SIGABRT."""
    from warehouse.native import native

    native.exit_on_abort(
        f"error: DuckDB aborted the process during {doing} on the lake (the known cause: the "
        f"connection to the {describe_service(address, 'catalog')} broke mid-statement); a "
        "commit already sent may or may not have landed (a run, test set or audit already "
        "stored is recognised and kept): run the command again once the catalog answers",
        RemoteError.exit_code,
    )


# --- Bounded waits -----------------------------------------------------------------------------

TIMEOUT_ENV = "TAME_WH_LAKE_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
# How often a command's services are probed (after the first probe interval has passed), at
# most; a quarter of the timeout when that is shorter, so that a command stops soon after it.
PROBE_EVERY = 5.0


def lake_timeout() -> float:
    """Seconds a lake's service may go unanswered before a command stops: `$TAME_WH_LAKE_TIMEOUT`
    (default 60)."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1.0 <= value <= 86400.0:  # also refuses nan
        raise UsageError(f"${TIMEOUT_ENV}={text!r}: give seconds from 1 to 86400")
    return value


def _catalog_answers(address: LakeAddress, timeout: float) -> bool:
    """Whether the catalog's server answers a new connection within `timeout` seconds (any
    answer counts, a refusal of this login too: the server is alive)."""
    target = _catalog_socket(dict(address.conninfo))
    if target is not None:
        return _postmaster_answers(target, timeout)
    import psycopg  # an address libpq alone resolves (several hosts, a service file, defaults)

    try:
        psycopg.connect(address.libpq, connect_timeout=max(2, int(timeout))).close()
    except psycopg.OperationalError as exc:
        text = str(exc).lower()
        return not any(t in text for t in ("timeout", "refused", "could not connect", "closed"))
    return True


def _catalog_socket(info: dict[str, str]) -> tuple[str, int] | str | None:
    """Where the catalog's server listens — (host, port) or a Unix socket's path — when the
    address names one place; None when only libpq can tell."""
    if info.get("service") or os.environ.get("PGSERVICE"):
        return None  # a service file's host comes before the environment's: libpq decides
    host = info.get("hostaddr") or info.get("host") or os.environ.get("PGHOSTADDR")
    host = host or os.environ.get("PGHOST")
    port_text = info.get("port") or os.environ.get("PGPORT") or "5432"
    if not host or "," in host or "," in port_text or not port_text.isdigit():
        return None
    if host.startswith("/"):
        return os.path.join(host, f".s.PGSQL.{int(port_text)}")
    return host, int(port_text)


# PostgreSQL's SSLRequest: length 8, code 80877103; a live server answers one byte ('S' or 'N').
_SSL_REQUEST = (8).to_bytes(4, "big") + (80877103).to_bytes(4, "big")


def _postmaster_answers(target: tuple[str, int] | str, timeout: float) -> bool:
    """Whether a PostgreSQL server at `target` answers an SSLRequest within `timeout` seconds
    (no login, no driver: a command that reads a lake never loads psycopg for its probes)."""
    import socket

    try:
        if isinstance(target, str):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(target)
        else:
            sock = socket.create_connection(target, timeout=timeout)
        with sock:
            sock.settimeout(timeout)
            sock.sendall(_SSL_REQUEST)
            return len(sock.recv(1)) == 1
    except OSError:
        return False


def _store_answers(endpoint: str, timeout: float) -> bool:
    """Whether the object store's endpoint answers an HTTP request within `timeout` seconds
    (any HTTP status counts)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.netloc, timeout=timeout)
    try:
        connection.request("HEAD", "/")
        connection.getresponse().read()
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
    return True


def store_endpoint(address: LakeAddress) -> str | None:
    """The URL of the object store a lake's S3 data path lives on (None for a directory)."""
    if not address.is_s3:
        return None
    from warehouse.store.s3 import s3_settings

    settings = s3_settings()
    scheme = "https" if settings.use_ssl else "http"
    if settings.endpoint:
        return f"{scheme}://{settings.endpoint.split('/')[0]}"
    bucket = (address.data_path or "s3:///").removeprefix("s3://").split("/", 1)[0]
    return f"https://{bucket}.s3.{settings.region}.amazonaws.com"


def _directory_answers(path: str) -> bool:
    """Whether a data directory can be looked at (a stalled network file system never
    answers; the probe's thread then waits, and the watchdog sees the silence)."""
    return os.path.isdir(path)


def _storage_answers(address: LakeAddress, timeout: float) -> bool:
    """Whether the lake's data path answers: its object store's endpoint, or its directory;
    a data path not yet read from the catalog counts as answering."""
    address = resolved(address)
    if not address.data_path:
        return True
    if address.is_s3:
        endpoint = store_endpoint(address)
        return endpoint is None or _store_answers(endpoint, timeout)
    return _directory_answers(address.data_path)


class Watchdog:
    """While a command uses a lake, probes its catalog and its data path (the object store or
    the directory, the one its catalog records when the command names none) every few seconds,
    each in a thread of its own so that a probe that hangs delays no check; when one has not
    answered for `timeout` seconds, calls `on_timeout` with a one-line message naming the
    service (a paused or unreachable server never answers the command's own requests either,
    and DuckDB cannot be interrupted while it waits)."""

    def __init__(
        self,
        address: LakeAddress,
        timeout: float,
        on_timeout: Callable[[str], None],
        doing: str,
    ) -> None:
        self._address = address
        self._timeout = timeout
        self._on_timeout = on_timeout
        self._doing = doing
        self._stop = threading.Event()
        self._answered: dict[str, float] = {}
        self._thread = threading.Thread(target=self._watch, name="tame-wh-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        now = time.monotonic()
        self._answered = {"catalog": now, "storage": now}
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)

    def _probe(self, service: str, answers: Callable[[], bool]) -> None:
        """Probe one service every interval; record when it last answered."""
        every = min(PROBE_EVERY, self._timeout / 4)
        while not self._stop.wait(every):
            try:
                alive = answers()
            except Exception:  # a probe that cannot run tells nothing: the silence will
                alive = False
            if alive:
                self._answered[service] = time.monotonic()

    def _watch(self) -> None:
        probe_timeout = min(10.0, max(2.0, self._timeout / 3))
        probes = {
            "catalog": lambda: _catalog_answers(self._address, probe_timeout),
            "storage": lambda: _storage_answers(self._address, probe_timeout),
        }
        for service, answers in probes.items():
            threading.Thread(
                target=self._probe,
                args=(service, answers),
                name=f"tame-wh-probe-{service}",
                daemon=True,
            ).start()
        tick = min(0.5, self._timeout / 10)
        while not self._stop.wait(tick):
            for service, last in list(self._answered.items()):
                if time.monotonic() - last > self._timeout and not self._stop.is_set():
                    self._on_timeout(
                        f"{describe_service(self._address, service)} has not answered for "
                        f"{self._timeout:g} s during {self._doing} (${TIMEOUT_ENV}); the "
                        "command was stopped and wrote nothing more (a commit it had already "
                        "sent may still land when the service is back): run it again once the "
                        "service answers"
                    )
                    return
