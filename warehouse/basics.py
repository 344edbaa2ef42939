"""Helpers every pipeline stage shares: progress callbacks, an error's one-line message, the one
redaction of secrets, naive UTC timestamps, content ids, and query results as dicts."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, Protocol, TypeVar

# A callback told what a long step is doing (a progress line); `silent` says nothing.
Notify = Callable[[str], None]

# Hex digits of a content id (a SHA-256 prefix): corpora, runs, audit configurations.
ID_LENGTH = 16


def silent(_message: str) -> None:
    """A `Notify` that says nothing."""


def first_line(exc: BaseException, empty: str | None = None) -> str:
    """The first line of an error's message (libraries add hints and context on later lines);
    `empty`, else the error's type name, when it has no message."""
    text = str(exc).strip()
    if text:
        return text.splitlines()[0]
    return type(exc).__name__ if empty is None else empty


# Environment variables whose values are secrets: the S3 secret key and session token, the
# PostgreSQL password, the Supabase service key.
SECRET_ENV_VARS = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "PGPASSWORD",
    "SUPABASE_SERVICE_ROLE_KEY",
)
REDACTED = "***"
# Shorter values would mask ordinary words; no real secret is this short.
_MIN_SECRET = 3
_remembered: set[str] = set()


def remember_secrets(values: Iterable[str | None]) -> None:
    """Add values (a lake address's hidden parts, say) to what `redact` hides from now on."""
    _remembered.update(v for v in values if v and len(v) >= _MIN_SECRET)


def redact(text: str) -> str:
    """The text with every secret this process knows replaced by `***`: the values of the secret
    environment variables and every value given to `remember_secrets` (what every message that
    leaves the process goes through, errors of metric plugins included)."""
    known = {os.environ.get(name) or "" for name in SECRET_ENV_VARS} | _remembered
    for secret in sorted((s for s in known if len(s) >= _MIN_SECRET), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between two strings (insertions, deletions, substitutions)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def did_you_mean(name: str, known: Iterable[str], within: int = 2) -> list[str]:
    """The known names within `within` edits of `name`, closest first (then alphabetically)."""
    scored = sorted((edit_distance(name.lower(), k.lower()), k) for k in set(known) if k != name)
    return [k for d, k in scored if d <= within]


def suggestion(name: str, known: Iterable[str], within: int = 2) -> str:
    """` (did you mean 'a' or 'b'?)` for the known names close to `name`, else nothing."""
    close = did_you_mean(name, known, within)[:3]
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def listing(names: Sequence[str], most: int = 20) -> str:
    """Names for a message: the first `most`, then how many there are in all."""
    shown = ", ".join(names[:most])
    return shown + (f", … ({len(names)} in all)" if len(names) > most else "")


def utc_now() -> datetime:
    """The current UTC time without a zone (the warehouse stores UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def short_id(hex_digest: str) -> str:
    """A content id: the first `ID_LENGTH` hex digits of a SHA-256 digest."""
    return hex_digest[:ID_LENGTH]


class _Cursor(Protocol):
    """What `rows_as_dicts` reads: a DB-API cursor that has run a query."""

    @property
    def description(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def rows_as_dicts(cursor: _Cursor) -> list[dict[str, Any]]:
    """Every row a query returned, as a dict keyed by column name."""
    names = [column[0] for column in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


_Item = TypeVar("_Item")
_Key = TypeVar("_Key", bound=Hashable)


def grouped(items: Iterable[_Item], key: Callable[[_Item], _Key]) -> dict[_Key, list[_Item]]:
    """The items by `key`, groups in order of first appearance, items in their order."""
    out: dict[_Key, list[_Item]] = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return out
