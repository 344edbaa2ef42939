"""The two warehouse backends as fixtures: a local DuckDB file, and a DuckLake lake (a fresh
PostgreSQL catalog database and a fresh data path: a directory, or a bucket on the S3-compatible
server that `.ci/run` starts on loopback).

Lakes need `$TAME_WH_TEST_PG_DSN` (an admin connection) and, for the S3 data path,
`$TAME_WH_TEST_S3_ENDPOINT` (http://127.0.0.1:PORT). Without them the lake cases are skipped,
except under CI, where that is a failure.
"""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cli.main import main
from warehouse.store.address import Address, parse_address
from warehouse.store.connection import close_connection, connect

PG_DSN_ENV = "TAME_WH_TEST_PG_DSN"
S3_ENDPOINT_ENV = "TAME_WH_TEST_S3_ENDPOINT"
BACKENDS = ("local", "lake-dir", "lake-s3")


def require_service(variable: str, what: str) -> str:
    """The value of a test-service variable; skipped without it, failed under CI."""
    value = os.environ.get(variable)
    if not value:
        if os.environ.get("CI"):
            pytest.fail(f"{variable} is not set: CI must run the {what} tests")
        pytest.skip(f"{variable} not set (no {what} to test against)")
    return value


def new_catalog_database() -> tuple[str, str]:
    """A fresh, empty PostgreSQL database: (its name, a libpq key=value string for it)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    admin = require_service(PG_DSN_ENV, "PostgreSQL")
    name = f"tame_lake_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    info = {k: v for k, v in conninfo_to_dict(admin).items() if v is not None}
    info["dbname"] = name
    return name, make_conninfo("", **info)


def drop_catalog_database(name: str) -> None:
    """Drop a database made by `new_catalog_database`."""
    import psycopg

    admin = os.environ[PG_DSN_ENV]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def s3_environment(endpoint: str) -> dict[str, str]:
    """AWS variables for the loopback S3 server (a fresh secret key each time, so that tests can
    look for it in output)."""
    return {
        "AWS_ACCESS_KEY_ID": "tame-test-key",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t-" + secrets.token_hex(12),
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": endpoint,
    }


def new_bucket(endpoint: str) -> str:
    """Create a fresh bucket on the S3 server; returns its name."""
    import boto3

    name = f"tame-{uuid.uuid4().hex[:12]}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="tame-test-key",
        aws_secret_access_key="unused",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=name)
    return name


@dataclass
class Warehouse:
    """One backend under test: how to name it on the command line and in library calls."""

    kind: str
    db: str
    data_path: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def is_lake(self) -> bool:
        """Whether this is a lake backend."""
        return self.kind != "local"

    @property
    def address(self) -> Address:
        """The parsed address (as `--db`/`--data-path` give it)."""
        return parse_address(self.db, self.data_path)

    def args(self) -> list[str]:
        """The global options naming this warehouse."""
        return ["--db", self.db] + (["--data-path", self.data_path] if self.data_path else [])

    def run(self, *args: Any) -> Result:
        """`tame-wh --db … ARGS…` in-process."""
        return CliRunner().invoke(main, [*self.args(), *map(str, args)])

    def child_env(self) -> dict[str, str]:
        """Environment for a `tame-wh` child process naming this warehouse."""
        env = {**os.environ, **self.env, "TAME_WH_DB": self.db}
        if self.data_path:
            env["TAME_WH_DATA_PATH"] = self.data_path
        return env

    def tables(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, sorted (empty when there is no warehouse)."""
        from warehouse.store.connection import warehouse_exists

        if not warehouse_exists(self.address):
            return {}
        con = connect(self.address, read_only=True)
        try:
            names = [
                r[0]
                for r in con.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE database_name = "
                    "current_database() ORDER BY table_name"
                ).fetchall()
            ]
            return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in names}
        finally:
            close_connection(con)

    def sql(self, query: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of a read-only query on the warehouse."""
        con = connect(self.address, read_only=True)
        try:
            return con.execute(query, params or []).fetchall()
        finally:
            close_connection(con)


def make_warehouse(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """Set up one backend (environment patched for S3) and drop its catalog afterwards."""
    if kind == "local":
        yield Warehouse(kind, str(tmp_path / "wh.duckdb"))
        return
    name, libpq = new_catalog_database()
    env: dict[str, str] = {}
    if kind == "lake-s3":
        endpoint = require_service(S3_ENDPOINT_ENV, "S3")
        env = s3_environment(endpoint)
        data_path = f"s3://{new_bucket(endpoint)}/lake/"
    else:
        data_path = str(tmp_path / "lake-data")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        yield Warehouse(kind, "ducklake:postgres:" + libpq, data_path, env)
    finally:
        drop_catalog_database(name)


@pytest.fixture(params=BACKENDS)
def warehouse(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """A warehouse that does not exist yet, on each backend in turn."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch)


@pytest.fixture(params=BACKENDS[1:])
def lake(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """A lake that does not exist yet: a directory data path, then an S3 one."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch)
