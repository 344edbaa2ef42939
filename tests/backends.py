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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from warehouse.cli.main import main
from warehouse.store.address import Address, parse_address
from warehouse.store.connection import close_connection, connect

PG_DSN_ENV = "TAME_WH_TEST_PG_DSN"
S3_ENDPOINT_ENV = "TAME_WH_TEST_S3_ENDPOINT"
BACKENDS = ("local", "lake-dir", "lake-s3")
LAKES = BACKENDS[1:]
# A behaviour that does not depend on the kind of data path runs on one lake, S3 (a shared lake's
# kind): the `warehouse` and `lake` fixtures. A test of what a command creates, reads or refuses
# on the data path itself parametrizes them with BACKENDS or LAKES (`indirect=True`).
ONE_LAKE = ("lake-s3",)


def require_service(variable: str, what: str) -> str:
    """The value of a test-service variable; skipped without it, failed under CI."""
    value = os.environ.get(variable)
    if not value:
        if os.environ.get("CI"):
            pytest.fail(f"{variable} is not set: CI must run the {what} tests")
        pytest.skip(f"{variable} not set (no {what} to test against)")
    return value


def new_database(template: str | None = None, name: str = "") -> tuple[str, str]:
    """A fresh PostgreSQL database on the test server (named `name`, else uniquely), empty or a
    copy of `template`: (its name, a libpq key=value string for it). Drop it with
    `drop_database`."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    admin = require_service(PG_DSN_ENV, "PostgreSQL")
    name = name or f"tame_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        copy = f' TEMPLATE "{template}"' if template else ""
        # Copied file by file: PostgreSQL 15's default strategy (WAL_LOG) writes every block of
        # the template through the WAL, 2-3x the time for these small databases.
        conn.execute(f'CREATE DATABASE "{name}"{copy} STRATEGY FILE_COPY')
    info = {k: v for k, v in conninfo_to_dict(admin).items() if v is not None}
    info["dbname"] = name
    return name, make_conninfo("", **info)


def drop_database(name: str) -> None:
    """Drop a database made by `new_database` (sessions still on it are ended)."""
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
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    empty: bool = False,
    demo: bool = False,
) -> Iterator[Warehouse]:
    """Set up one backend (environment patched for S3) and drop its catalog afterwards: a
    warehouse that does not exist yet, or with `empty` one whose schema is already there, or
    with `demo` one holding the demo (copies of this process's templates, see `Templates`)."""
    if kind == "local":
        path = tmp_path / "wh.duckdb"
        if demo:
            TEMPLATES.copy_demo_file(path)
        elif empty:
            TEMPLATES.copy_file(path)
        yield Warehouse(kind, str(path))
        return
    template = TEMPLATES.catalog(demo) if empty or demo else None
    name, libpq = new_database(template)
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
        if template is not None:
            TEMPLATES.point_catalog(libpq, data_path, demo)
        yield Warehouse(kind, "ducklake:postgres:" + libpq, data_path, env)
    finally:
        drop_database(name)


RUN_ENV = "TAME_WH_TEST_RUN"
TEMPLATE_PREFIX = "tame_tpl_"


class Templates:
    """Warehouses made once per test run and copied for each test that needs them but does not
    test their making: an empty one (its schema created; creating it binds every view, about a
    second on a file and several on a lake) and one holding the demo (`tame-wh demo`, five
    seconds on a file and ten on a lake). The first test process that needs one makes it, under
    a file lock; the others wait and copy it (`start_run` names the run, `end_run` removes
    them). A lake's copy is `CREATE DATABASE … TEMPLATE` with the data path rewritten in its
    metadata and the template's data files copied there: a lake's table and file paths are
    relative to its data path."""

    def __init__(self) -> None:
        self._demo_file: Path | None = None
        self._lake_trees: dict[str, Path] = {}  # by kind: the data tree of the lake template

    @staticmethod
    def start_run() -> None:
        """Name this test run (in the environment, which the test processes inherit)."""
        os.environ[RUN_ENV] = uuid.uuid4().hex[:12]

    @staticmethod
    def _run() -> str:
        return os.environ.get(RUN_ENV) or "solo"

    @classmethod
    def _root(cls) -> Path:
        import tempfile

        root = Path(tempfile.gettempdir()) / f"tame-templates-{cls._run()}"
        root.mkdir(exist_ok=True)
        return root

    @classmethod
    def _catalog_name(cls, kind: str) -> str:
        """The catalog database of this run's lake template `kind` ("empty" or "demo")."""
        return f"{TEMPLATE_PREFIX}{cls._run()}_{kind}"

    @classmethod
    def _made_once(cls, kind: str, make: Callable[[Path], None]) -> Path:
        """The folder of this run's template `kind`, filled by `make(folder)` in the first
        process to ask while the others wait on the lock."""
        import fcntl
        import shutil

        root = cls._root()
        folder, done = root / kind, root / f"{kind}.done"
        with open(root / f"{kind}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                done.touch()
        return folder

    def copy_file(self, path: Path) -> None:
        """Put an empty local warehouse at `path`."""
        from warehouse.store.schema import init_warehouse

        self.copy_built("empty-file", init_warehouse, path)

    def copy_built(self, key: str, make: Callable[[Path], object], path: Path) -> Path:
        """Put at `path` a copy of this run's local warehouse `key`: the set-up `make(file)`
        builds, the same for every test that asks for it, run once (for a set-up that is not
        under test; the commands it runs are tested elsewhere). Returns the folder of the
        built file, where `make` may leave what else the set-up returns."""
        import shutil

        def build(folder: Path) -> None:
            make(folder / "wh.duckdb")

        folder = self._made_once(f"built-{key}", build)
        shutil.copyfile(folder / "wh.duckdb", path)
        return folder

    def demo_file(self) -> Path:
        """This run's demo warehouse file (made on first use; copy it, never change it)."""
        if self._demo_file is None:

            def make(folder: Path) -> None:
                done = CliRunner().invoke(
                    main, ["--db", str(folder / "demo.duckdb"), "demo", "--json"]
                )
                assert done.exit_code == 0, done.output

            self._demo_file = self._made_once("demo-file", make) / "demo.duckdb"
        return self._demo_file

    def copy_demo_file(self, path: Path) -> None:
        """Put a copy of the demo warehouse, with its stored training index, at `path`."""
        import shutil

        made = self.demo_file()
        shutil.copyfile(made, path)
        indexes = Path(f"{made}.indexes")
        if indexes.is_dir():
            shutil.copytree(indexes, Path(f"{path}.indexes"))

    def catalog(self, demo: bool = False) -> str:
        """The name of this run's catalog database of an empty lake, or of the demo's lake
        (`demo`), made on first use with its data in a directory."""
        kind = "demo" if demo else "empty"
        name = self._catalog_name(kind)
        if kind not in self._lake_trees:
            from warehouse.store.schema import init_warehouse

            def make(folder: Path) -> None:
                drop_database(name)  # left by an attempt that failed
                _name, libpq = new_database(name=name)
                address = "ducklake:postgres:" + libpq
                tree = folder / "lake-data"
                if demo:
                    done = CliRunner().invoke(
                        main, ["--db", address, "--data-path", str(tree), "demo", "--json"]
                    )
                    assert done.exit_code == 0, done.output
                else:
                    init_warehouse(parse_address(address, str(tree)))

            self._lake_trees[kind] = self._made_once(f"{kind}-lake", make) / "lake-data"
        return name

    def point_catalog(self, libpq: str, data_path: str, demo: bool = False) -> None:
        """Record `data_path` in a copied catalog and copy the template's data files there (an
        S3 data path gets the table files; stored indexes live only in a data directory)."""
        import shutil

        import psycopg

        from warehouse.store.address import CATALOG_SCHEMA

        tree = self._lake_trees["demo" if demo else "empty"]
        if not data_path.startswith("s3://"):
            shutil.copytree(tree, data_path)
        else:
            _upload(tree, data_path)
        stored = data_path if data_path.endswith("/") else data_path + "/"
        with psycopg.connect(libpq, autocommit=True) as conn:
            conn.execute(
                f'UPDATE "{CATALOG_SCHEMA}".ducklake_metadata SET value = %s '
                "WHERE key = 'data_path' AND (scope IS NULL OR scope = '')",
                [stored],
            )

    @classmethod
    def end_run(cls) -> None:
        """Remove what this run made (its catalogs and files)."""
        import shutil

        if os.environ.get(PG_DSN_ENV):
            for kind in ("empty", "demo"):
                drop_database(cls._catalog_name(kind))
        shutil.rmtree(cls._root(), ignore_errors=True)


def _upload(tree: Path, data_path: str) -> None:
    """Copy the table files under `tree` to the S3 prefix `data_path`, at the same relative
    paths (the stored indexes stay behind: a lake on object storage keeps none)."""
    import boto3

    bucket, _, prefix = data_path.removeprefix("s3://").partition("/")
    client = boto3.client(
        "s3",
        endpoint_url=require_service(S3_ENDPOINT_ENV, "S3"),
        aws_access_key_id="tame-test-key",
        aws_secret_access_key="unused",
        region_name="us-east-1",
    )
    for path in sorted(tree.rglob("*")):
        relative = path.relative_to(tree)
        if path.is_file() and relative.parts[0] != "tame-wh-indexes":
            client.upload_file(str(path), bucket, prefix.rstrip("/") + "/" + relative.as_posix())


TEMPLATES = Templates()


@pytest.fixture(params=BACKENDS[:1] + ONE_LAKE)
def warehouse(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """An empty warehouse (its schema created, no data): a file, then a lake (ONE_LAKE)."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch, empty=True)


@pytest.fixture(params=BACKENDS[:1] + ONE_LAKE)
def new_warehouse(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """A warehouse that does not exist yet: a file, then a lake (ONE_LAKE)."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch)


@pytest.fixture(params=ONE_LAKE)
def lake(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """An empty lake (its schema created, no data), on S3 (LAKES: a directory, then S3)."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch, empty=True)


@pytest.fixture(params=ONE_LAKE)
def new_lake(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """A lake that does not exist yet, on S3 (LAKES: a directory, then S3)."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch)


@pytest.fixture(params=BACKENDS[:1] + ONE_LAKE)
def demo_warehouse(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """A warehouse holding the demo (a copy): a file, then a lake (ONE_LAKE)."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch, demo=True)


@pytest.fixture(params=ONE_LAKE)
def demo_lake(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Warehouse]:
    """A lake holding the demo (a copy), on S3 (LAKES: a directory, then S3)."""
    yield from make_warehouse(request.param, tmp_path, monkeypatch, demo=True)
