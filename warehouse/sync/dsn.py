"""Connecting to the Postgres/Supabase side: DSN from option or environment, secrets redacted.

Every message that can reach the terminal goes through `redact` with the secrets of the DSN or
URL it is about. The secrets are found by parsing every form a user may write — a URL
(`postgresql://user:password@host/db?password=…`, also with unencoded reserved characters in
the password, which libpq then splits in surprising places), key=value (`password=…`, quoted or
not, with escapes), and the `PGPASSWORD` environment variable — and each is redacted whole and
in the fragments a parser may have cut it into. Malformed DSNs are refused before libpq sees
them, with a message that names the problem, never the text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict

from warehouse.basics import first_line
from warehouse.errors import RemoteError, UsageError
from warehouse.store.conninfo import quiet_ignored_passfile

DSN_ENV_VAR = "TAME_WH_PG_DSN"
PASSWORD_ENV_VARS = ("PGPASSWORD",)
REDACTED = "***"
# Fragments shorter than this are not redacted on their own (they would blank out ordinary
# words); whole secrets of any length are.
_MIN_FRAGMENT = 3
_URL_PREFIX = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*)://", re.ASCII)
_POSTGRES_SCHEMES = frozenset({"postgres", "postgresql"})
_RESERVED_IN_USERINFO = re.compile(r"[@/?#\s]")
_FRAGMENT_SPLIT = re.compile(r"[@/?#:&=\s'\"\\]+")
# key=value pairs: a value is a single-quoted string (backslash escapes) or a run of non-spaces.
_KV_VALUE = r"""('(?:[^'\\]|\\.)*'?|\S*)"""
_KV_PASSWORD = re.compile(r"(password\s*=\s*)" + _KV_VALUE, re.IGNORECASE | re.DOTALL)
_KV_PASSWORD_TAIL = re.compile(r"password\s*=\s*(.*)$", re.IGNORECASE | re.DOTALL)
_URL_PASSWORD_PARAM = re.compile(
    r"([?&](?:ssl)?(?:password|passwd|apikey|api_key|key|token|access_token|secret)=)([^&#]*)",
    re.IGNORECASE,
)
_URL_USERINFO = re.compile(r"(://[^:/@\s]*:)([^@\s]+)(@)")


def resolve_dsn(dsn: str | None) -> str:
    """The DSN given on the command line, else `$TAME_WH_PG_DSN`."""
    found = dsn or os.environ.get(DSN_ENV_VAR)
    if not found:
        raise UsageError(f"no Postgres DSN: pass --dsn or set {DSN_ENV_VAR}")
    return found


def _url_parts(url: str) -> tuple[str, str | None, str] | None:
    """(scheme, userinfo or None, rest after the userinfo) of a URL, taking the userinfo up to
    the last `@` (so that an unencoded `@` stays inside the password); None when not a URL."""
    match = _URL_PREFIX.match(url)
    if not match:
        return None
    rest = url[match.end() :]
    at = rest.rfind("@")
    if at < 0:
        return match.group(1).lower(), None, rest
    return match.group(1).lower(), rest[:at], rest[at + 1 :]


def _with_fragments(secret: str) -> set[str]:
    """A secret, its percent-decoded form, and the pieces a parser may have cut it into."""
    found = {secret, unquote(secret)}
    for whole in list(found):
        found.update(p for p in _FRAGMENT_SPLIT.split(whole) if len(p) >= _MIN_FRAGMENT)
    return {s for s in found if s}


def url_secrets(url: str) -> set[str]:
    """Passwords inside a URL: in the userinfo (read with the first and with the last `@` as its
    end) and in query parameters such as `password=`, `apikey=` or `token=`."""
    found: set[str] = set()
    parts = _url_parts(url)
    if parts is None:
        return found
    _scheme, userinfo, _rest = parts
    if userinfo is not None:
        first_at = userinfo.find("@")
        for candidate in {userinfo, userinfo[:first_at] if first_at >= 0 else userinfo}:
            if ":" in candidate:
                found |= _with_fragments(candidate.partition(":")[2])
            elif candidate != userinfo:
                found |= _with_fragments(userinfo[len(candidate) + 1 :])
        # libpq ends the authority at the first `/`: what follows may be read as host or path.
        found |= {f for f in _with_fragments(userinfo) if f != userinfo.partition(":")[0]}
    for match in _URL_PASSWORD_PARAM.finditer(url):
        found |= _with_fragments(match.group(2))
    return found


def dsn_secrets(dsn: str | None) -> set[str]:
    """Every secret a DSN (URL or key=value) may carry, plus $PGPASSWORD."""
    found: set[str] = set()
    for name in PASSWORD_ENV_VARS:
        value = os.environ.get(name)
        if value:
            found |= _with_fragments(value)
    if not dsn:
        return found
    found |= url_secrets(dsn)
    try:
        password = conninfo_to_dict(dsn).get("password")
    except (psycopg.Error, ValueError, TypeError):
        password = None
    if password:
        found |= _with_fragments(str(password))
    for match in _KV_PASSWORD.finditer(dsn):
        value = match.group(2)
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1] if value.endswith("'") else value[1:])
        found |= _with_fragments(value)
    for match in _KV_PASSWORD_TAIL.finditer(dsn):
        found |= _with_fragments(match.group(1).strip())
    return found


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with URL and key=value passwords and every given secret replaced by `***`."""
    text = _URL_USERINFO.sub(rf"\1{REDACTED}\3", text)
    text = _URL_PASSWORD_PARAM.sub(rf"\1{REDACTED}", text)
    text = _KV_PASSWORD.sub(rf"\1{REDACTED}", text)
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if secret != REDACTED:
            text = text.replace(secret, REDACTED)
    return text


def redact_dsn(text: str, dsn: str | None) -> str:
    """`text` without any secret of `dsn`."""
    return redact(text, dsn_secrets(dsn))


def url_label(url: str) -> str:
    """A URL without its user name and password: `scheme://host:port/path`."""
    parts = _url_parts(url)
    if parts is None:
        return redact(url, url_secrets(url))
    scheme, _userinfo, rest = parts
    return redact(f"{scheme}://{rest}", url_secrets(url))


def target_label(dsn: str) -> str:
    """A printable, secret-free name of a Postgres target: `postgres://user@host:port/db`.
    Never raises, whatever the DSN holds."""
    secrets = dsn_secrets(dsn)
    parts = _url_parts(dsn)
    if parts is not None:
        _scheme, userinfo, rest = parts
        user = (userinfo or "").partition(":")[0].partition("@")[0]
        location = re.split(r"[?#]", rest, maxsplit=1)[0]
        label = f"postgres://{unquote(user) + '@' if user else ''}{location}"
        return redact(label, secrets)
    try:
        fields = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    except (psycopg.Error, ValueError, TypeError):
        fields = {k: v.strip("'") for k, v in re.findall(r"(\w+)\s*=\s*('[^']*'|\S+)", dsn)}
    host, port, db = fields.get("host", ""), fields.get("port", ""), fields.get("dbname", "")
    user = f"{fields['user']}@" if fields.get("user") else ""
    return redact(f"postgres://{user}{host}{':' + port if port else ''}/{db}", secrets)


def check_dsn(dsn: str) -> dict[str, str]:
    """The DSN's fields as libpq reads them; malformed DSNs are refused with a message that
    names the problem but no part of the DSN that could be a secret."""
    parts = _url_parts(dsn)
    if parts is not None:
        scheme, userinfo, rest = parts
        if scheme not in _POSTGRES_SCHEMES:
            raise UsageError(
                f"the DSN is a {scheme}:// URL; a Postgres DSN is postgresql://user:password@"
                "host:port/dbname or key=value pairs (host=… dbname=…)"
            )
        if any(ch.isspace() for ch in dsn.strip()):
            raise UsageError(
                "the DSN URL holds a space: percent-encode it (%20), or use the key=value "
                "form with password='…'"
            )
        if userinfo is not None and _RESERVED_IN_USERINFO.search(userinfo):
            raise UsageError(
                "the user name or password in the DSN URL holds a reserved character "
                "(@ / ? # or a space): percent-encode it (@ as %40, / as %2F, ? as %3F, "
                "# as %23), or use the key=value form with password='…'"
            )
        if "#" in rest:
            raise UsageError("the DSN URL holds a '#': percent-encode it as %23")
    try:
        fields = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    except (psycopg.Error, ValueError, TypeError) as exc:
        raise UsageError(
            f"the DSN does not parse: {redact(first_line(exc), dsn_secrets(dsn))}"
        ) from None
    for port in fields.get("port", "").split(","):
        if port and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise UsageError(
                f"the DSN's port {redact(port, dsn_secrets(dsn))!r} is not a port number (1-65535)"
            )
    return fields


def connect_pg(dsn: str, *, autocommit: bool = False) -> psycopg.Connection:
    """Connect to Postgres; failures become one-line errors without the password."""
    check_dsn(dsn)
    quiet_ignored_passfile()
    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=15)
    except (psycopg.Error, ValueError, OverflowError) as exc:
        raise RemoteError(
            f"cannot connect to {target_label(dsn)}: {redact_dsn(first_line(exc), dsn)}"
        ) from None
