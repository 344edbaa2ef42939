"""libpq connection strings (`host=… port=… dbname=…`): parsed and written without loading a
PostgreSQL driver, so that a command on a lake starts without psycopg (about 0.1 s to import).

Only the keyword/value form with keywords this module knows is parsed here; a URI
(`postgresql://…`) or an unknown keyword is handed to psycopg, whose parser is libpq's own.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

# libpq's connection keywords (PostgreSQL 17's list; a keyword a newer libpq added goes to psycopg).
KEYWORDS = frozenset(
    {
        "application_name",
        "channel_binding",
        "client_encoding",
        "connect_timeout",
        "dbname",
        "fallback_application_name",
        "gssdelegation",
        "gssencmode",
        "gsslib",
        "host",
        "hostaddr",
        "keepalives",
        "keepalives_count",
        "keepalives_idle",
        "keepalives_interval",
        "krbsrvname",
        "load_balance_hosts",
        "options",
        "passfile",
        "password",
        "port",
        "replication",
        "require_auth",
        "requirepeer",
        "requiressl",
        "service",
        "ssl_max_protocol_version",
        "ssl_min_protocol_version",
        "sslcert",
        "sslcertmode",
        "sslcompression",
        "sslcrl",
        "sslcrldir",
        "sslkey",
        "sslmode",
        "sslnegotiation",
        "sslpassword",
        "sslrootcert",
        "sslsni",
        "target_session_attrs",
        "tcp_user_timeout",
        "user",
    }
)
_URI_PREFIXES = ("postgresql://", "postgres://")


class ConninfoError(ValueError):
    """The text is not a libpq connection string."""


def _scan(text: str) -> list[tuple[str, str]] | None:
    """The keyword/value pairs of `text` in order; None when it needs libpq's own parser (a URI
    or a keyword not in `KEYWORDS`)."""
    if text.lstrip().startswith(_URI_PREFIXES):
        return None
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i == n:
            return pairs
        start = i
        while i < n and not text[i].isspace() and text[i] != "=":
            i += 1
        key = text[start:i]
        while i < n and text[i].isspace():
            i += 1
        if i == n or text[i] != "=":
            raise ConninfoError(f'missing "=" after "{key}" in connection info string')
        i += 1
        while i < n and text[i].isspace():
            i += 1
        value: list[str] = []
        if i < n and text[i] == "'":
            i += 1
            while True:
                if i == n:
                    raise ConninfoError("unterminated quoted string in connection info string")
                char = text[i]
                if char == "\\" and i + 1 < n:
                    value.append(text[i + 1])
                    i += 2
                elif char == "'":
                    i += 1
                    break
                else:
                    value.append(char)
                    i += 1
        else:
            while i < n and not text[i].isspace():
                if text[i] == "\\" and i + 1 < n:
                    value.append(text[i + 1])
                    i += 2
                else:
                    value.append(text[i])
                    i += 1
        if key not in KEYWORDS:
            return None
        pairs.append((key, "".join(value)))


def parse_conninfo(text: str) -> dict[str, str]:
    """The parameters a libpq connection string sets (a later repeat of a keyword wins)."""
    pairs = _scan(text)
    if pairs is not None:
        return dict(pairs)
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        parsed = conninfo_to_dict(text)
    except ProgrammingError as exc:
        raise ConninfoError(str(exc).strip()) from None
    return {str(k): str(v) for k, v in parsed.items() if v is not None}


def _quoted(value: str) -> str:
    """A value as a connection string writes it: quote and backslash escaped, and in quotes
    when empty or when it holds white space."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    if not escaped or any(c.isspace() for c in escaped):
        return f"'{escaped}'"
    return escaped


def make_conninfo(params: dict[str, str]) -> str:
    """The keyword/value connection string setting `params`, in their order."""
    return " ".join(f"{key}={_quoted(value)}" for key, value in params.items())


_PASSFILE_CHECKED = False


def quiet_ignored_passfile() -> None:
    """Say, without its path, that libpq will ignore the password file (`$PGPASSFILE`, else
    ~/.pgpass) for its group or world access, and keep libpq from printing its own warning with
    the file's path (libpq reads no such file either way: it is pointed at none)."""
    global _PASSFILE_CHECKED
    if _PASSFILE_CHECKED:
        return
    _PASSFILE_CHECKED = True
    given = os.environ.get("PGPASSFILE")
    path = Path(given) if given else Path.home() / ".pgpass"
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) and mode & (stat.S_IRWXG | stat.S_IRWXO):
        print(
            "warning: the PostgreSQL password file ($PGPASSFILE or ~/.pgpass) has group or "
            "world access, so libpq ignores it; `chmod 600` it to use its passwords",
            file=sys.stderr,
        )
        os.environ["PGPASSFILE"] = os.devnull + ".tame-wh-ignored-passfile"
