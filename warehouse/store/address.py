"""Warehouse addresses: a local DuckDB file, or a DuckLake lake (catalog in PostgreSQL, data files
in a directory or under an `s3://` prefix) named `ducklake:postgres:<libpq connection string>`.

Passwords never travel in an address: libpq takes them from `$PGPASSWORD`, `~/.pgpass` or a
service file, so the address can be printed, logged and stored as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warehouse.errors import MissingWarehouseError, UsageError
from warehouse.store.conninfo import ConninfoError, make_conninfo, parse_conninfo

DB_ENV_VAR = "TAME_WH_DB"
DATA_PATH_ENV_VAR = "TAME_WH_DATA_PATH"
DEFAULT_DB_NAME = "tame.duckdb"
LAKE_PREFIX = "ducklake:postgres:"
# The PostgreSQL schema that holds a lake's catalog tables (DuckLake's METADATA_SCHEMA). Not
# `public`: Supabase grants its client roles (anon, authenticated) everything created there.
CATALOG_SCHEMA = "tame_lake"
# Where lakes made by earlier tame-wh versions keep their catalog (`tame-wh init` moves it).
LEGACY_CATALOG_SCHEMA = "public"
# libpq keys that carry a secret; they must come from the environment or libpq's own files.
_SECRET_KEYS = ("password", "sslpassword")
# libpq keys whose values name where the catalog is, never a secret: shown in messages.
_SHOWN_KEYS = frozenset({"host", "hostaddr", "port", "dbname", "user", "sslmode", "service"})


@dataclass(frozen=True)
class LakeAddress:
    """A DuckLake warehouse: the catalog's libpq parameters, the data path (None: the one the
    catalog already records) and the PostgreSQL schema of the catalog tables."""

    conninfo: tuple[tuple[str, str], ...]
    data_path: str | None = None
    catalog_schema: str = CATALOG_SCHEMA

    @property
    def libpq(self) -> str:
        """The catalog's libpq connection string (no secrets: they are refused when parsed)."""
        return make_conninfo(dict(self.conninfo))

    @property
    def database(self) -> str:
        """The catalog database's name, as given (libpq's default otherwise)."""
        info = dict(self.conninfo)
        return info.get("dbname") or info.get("user") or os.environ.get("PGDATABASE", "")

    @property
    def is_s3(self) -> bool:
        """Whether the data files live under an `s3://` prefix."""
        return bool(self.data_path and self.data_path.startswith("s3://"))

    def with_data_path(self, data_path: str | None) -> LakeAddress:
        """The same catalog with another data path."""
        return LakeAddress(self.conninfo, data_path, self.catalog_schema)

    def in_schema(self, catalog_schema: str) -> LakeAddress:
        """The same lake with its catalog tables in another PostgreSQL schema."""
        return LakeAddress(self.conninfo, self.data_path, catalog_schema)

    def hidden_values(self) -> list[str]:
        """The values messages never show (`options`, `passfile`, `application_name`, …)."""
        return [value for key, value in self.conninfo if key not in _SHOWN_KEYS]

    def redact(self, text: str) -> str:
        """`text` with the value of every key not shown verbatim replaced by `***`."""
        for key, value in sorted(self.conninfo, key=lambda kv: -len(kv[1])):
            if key not in _SHOWN_KEYS and len(value) >= 3:
                text = text.replace(value, "***")
        return text

    def __str__(self) -> str:
        """The address as messages show it: harmless keys verbatim, every other value `***`
        (`options`, `passfile`, `application_name` and the like can carry secrets)."""
        shown = {k: (v if k in _SHOWN_KEYS else "***") for k, v in self.conninfo}
        return LAKE_PREFIX + make_conninfo(shown)


Address = Path | LakeAddress


def is_lake(address: object) -> bool:
    """Whether an address names a lake."""
    return isinstance(address, LakeAddress)


def normalize_data_path(text: str) -> str:
    """An `s3://bucket/prefix/` URL or an absolute directory path, ending in `/`."""
    text = text.strip()
    if not text:
        raise UsageError("--data-path is empty; give an s3://bucket/prefix/ URL or a directory")
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme != "s3":
            raise UsageError(
                f"--data-path {text}: only s3:// URLs (any S3-compatible store) and "
                "directories are supported"
            )
        bucket = rest.split("/", 1)[0]
        if not bucket:
            raise UsageError(f"--data-path {text}: the URL names no bucket (s3://bucket/prefix/)")
        return text if text.endswith("/") else text + "/"
    path = str(Path(text).expanduser().absolute())
    return path if path.endswith("/") else path + "/"


def parse_lake(text: str, data_path: str | None = None) -> LakeAddress:
    """Parse `ducklake:postgres:<conninfo>`; a password in it is refused (never echoed)."""
    conninfo = text[len(LAKE_PREFIX) :].strip()
    try:
        parsed = parse_conninfo(conninfo)
    except ConninfoError:
        raise UsageError(
            "the lake address is not a libpq connection string: write "
            "ducklake:postgres:host=HOST port=PORT dbname=DB user=USER"
        ) from None
    secret = sorted(key for key in parsed if key in _SECRET_KEYS)
    if secret:
        raise UsageError(
            f"the lake address must not contain {secret[0]}=…: give the password in "
            "$PGPASSWORD or ~/.pgpass (it would be printed and logged with the address)"
        )
    timeout = parsed.get("connect_timeout")
    if timeout is not None and not str(timeout).strip().isdigit():
        raise UsageError(f"the lake address's connect_timeout={timeout} is not a whole number")
    if not parsed.get("dbname") and not parsed.get("service"):
        raise UsageError("the lake address names no database: add dbname=NAME")
    items = tuple(sorted((str(k), str(v)) for k, v in parsed.items() if v is not None))
    return LakeAddress(items, normalize_data_path(data_path) if data_path else None)


def parse_address(
    db: str | Path | None, data_path: str | None = None, *, use_env: bool = True
) -> Address:
    """The warehouse `--db` names (default `$TAME_WH_DB`, else `./tame.duckdb`): a lake when it
    starts with `ducklake:postgres:` (data path from `--data-path`, else `$TAME_WH_DATA_PATH`
    unless `use_env` is False), else a local file (where a data path makes no sense)."""
    text = str(db) if db is not None else (os.environ.get(DB_ENV_VAR) or DEFAULT_DB_NAME)
    if text.startswith(("ducklake:postgresql:", "ducklake:postgres://")):
        raise UsageError(
            "a lake address is ducklake:postgres: followed by the catalog's libpq string: write "
            "ducklake:postgres:host=… dbname=… user=…, or ducklake:postgres:postgresql://… for "
            "a URL"
        )
    if text.startswith(LAKE_PREFIX):
        from_env = os.environ.get(DATA_PATH_ENV_VAR) if use_env else None
        return parse_lake(text, data_path or from_env or None)
    if text.startswith("ducklake:"):
        raise UsageError(
            "only PostgreSQL lake catalogs are supported: write ducklake:postgres:<libpq string>"
        )
    if text.startswith(("postgres:", "postgresql:")):
        # Never echoed: the text may carry a password.
        raise UsageError(
            "--db names a PostgreSQL database, not a warehouse: a lake's address starts with "
            "ducklake:postgres: (write ducklake:postgres:<libpq string or URL>, with --data-path "
            "for a new lake); a Supabase/Postgres sync target goes to `sync --dsn` or "
            "$TAME_WH_PG_DSN"
        )
    if data_path:
        raise UsageError(
            "--data-path is for a lake warehouse (--db ducklake:postgres:…), not a local file"
        )
    return Path(text)


def missing_warehouse(path: str | Path | LakeAddress) -> MissingWarehouseError:
    """The error of a read-only command run where no warehouse exists (nothing is created)."""
    return MissingWarehouseError(
        f"no warehouse at {path}: nothing to read (create one with `tame-wh init` or "
        "`tame-wh demo`, or pass --db PATH)"
    )
