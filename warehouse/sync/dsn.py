"""Connecting to the Postgres/Supabase side: DSN from option or environment, secrets redacted."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import psycopg

from warehouse.errors import RemoteError, UsageError

DSN_ENV_VAR = "TAME_WH_PG_DSN"
_PASSWORD_IN_KV = re.compile(r"(password\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)
_PASSWORD_IN_URL = re.compile(r"(://[^:/@\s]*:)([^@\s]+)(@)")


def resolve_dsn(dsn: str | None) -> str:
    """The DSN given on the command line, else `$TAME_WH_PG_DSN`."""
    found = dsn or os.environ.get(DSN_ENV_VAR)
    if not found:
        raise UsageError(f"no Postgres DSN: pass --dsn or set {DSN_ENV_VAR}")
    return found


def dsn_password(dsn: str) -> str | None:
    """The password inside a DSN (URL or key=value form), if any."""
    url = _PASSWORD_IN_URL.search(dsn)
    if url:
        return url.group(2)
    kv = _PASSWORD_IN_KV.search(dsn)
    return kv.group(2).strip("'") if kv else None


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with DSN passwords and every given secret replaced by `***`."""
    text = _PASSWORD_IN_URL.sub(r"\1***\3", text)
    text = _PASSWORD_IN_KV.sub(r"\1***", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def target_label(dsn: str) -> str:
    """A printable, secret-free name of a Postgres target: `postgres://user@host:port/db`."""
    if "://" in dsn:
        parts = urlsplit(dsn)
        user = f"{parts.username}@" if parts.username else ""
        port = f":{parts.port}" if parts.port else ""
        return f"postgres://{user}{parts.hostname or ''}{port}{parts.path or ''}"
    fields = dict(re.findall(r"(\w+)\s*=\s*('[^']*'|\S+)", dsn))
    host, port, db = fields.get("host", ""), fields.get("port", ""), fields.get("dbname", "")
    user = f"{fields['user']}@" if "user" in fields else ""
    return f"postgres://{user}{host}{':' + port if port else ''}/{db}"


def connect_pg(dsn: str, *, autocommit: bool = False) -> psycopg.Connection:
    """Connect to Postgres; failures become one-line errors without the password."""
    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=15)
    except psycopg.Error as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RemoteError(
            f"cannot connect to {target_label(dsn)}: {redact(message, [dsn_password(dsn)])}"
        ) from None
