"""Shared fixtures: temporary warehouses, text files, a CLI runner and table snapshots."""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner, Result

from tests.backends import (  # noqa: F401 (fixtures: every backend or lakes only; empty or new)
    TEMPLATES,
    Templates,
    demo_lake,
    demo_warehouse,
    drop_database,
    lake,
    new_database,
    new_lake,
    new_warehouse,
    warehouse,
)
from warehouse.cli.main import main
from warehouse.store.connection import THREADS_ENV


def pytest_configure(config: pytest.Config) -> None:
    """One Vega bundle cache for every test process and child (not the user's own cache), one
    DuckDB worker thread per connection, and one name for the warehouses the run's test
    processes share (`Templates`)."""
    shared = Path(tempfile.gettempdir()) / f"tame-wh-test-cache-{os.getuid()}"
    os.environ.setdefault("TAME_WH_CACHE_DIR", str(shared))
    # Each core runs a test process of its own, whose commands run many small statements; a
    # second DuckDB worker buys them no time, and DuckDB's Python client polls without pause
    # while a worker finishes (docs/cli.md, TAME_WH_DUCKDB_THREADS). Tests of the setting itself
    # set it as they need.
    os.environ.setdefault(THREADS_ENV, "1")
    if not hasattr(config, "workerinput"):  # the run's first process: xdist's controller
        Templates.start_run()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's first process removes the warehouses its test processes shared (`Templates`)."""
    if not hasattr(config, "workerinput"):
        Templates.end_run()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core, and one more. With one DuckDB thread per connection (above)
    a worker is one core's work, except while it waits: on PostgreSQL, the object store, a lake
    timeout or a command it started. On 2 cores the whole suite took 718 s with 2 workers (90
    core-seconds idle) and 676 s with 3 (17 idle), for the same 1,320-1,330 busy core-seconds."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Queue the `slow` tests first (the order is the same in every worker): a test of minutes
    started last would keep one worker busy long after the others ran out of tests."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist's workers set COLUMNS and LINES; the CLI's tables follow COLUMNS, so every
    test starts without them (and sets them when it tests them)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Path of an empty warehouse file (its schema created, no data)."""
    path = tmp_path / "wh.duckdb"
    TEMPLATES.copy_file(path)
    return path


@pytest.fixture(scope="session")
def demo_template() -> Path:
    """The demo warehouse (`tame-wh demo`), built once per test process for tests to copy."""
    return TEMPLATES.demo_file()


@pytest.fixture
def demo_db(db_path: Path) -> Path:
    """`db_path` holding a copy of the demo warehouse, with its stored training index."""
    TEMPLATES.copy_demo_file(db_path)
    return db_path


@pytest.fixture
def new_db_path(tmp_path: Path) -> Path:
    """Path of a warehouse file that does not exist yet."""
    return tmp_path / "wh.duckdb"


@pytest.fixture
def write_lines(tmp_path: Path) -> Callable[..., Path]:
    """Write lines (or raw bytes) to a file under tmp_path; `.gz` names are gzipped."""

    def write(name: str, lines: Sequence[str] | bytes, newline: str = "\n") -> Path:
        path = tmp_path / name
        data = lines if isinstance(lines, bytes) else "".join(x + newline for x in lines).encode()
        if name.endswith(".gz"):
            data = gzip.compress(data)
        path.write_bytes(data)
        return path

    return write


@pytest.fixture
def run_cli(request: pytest.FixtureRequest) -> Callable[..., Result]:
    """Invoke `tame-wh --db DB ARGS…` in-process; DB defaults to the test's `new_db_path` when it
    asks for one, else to `db_path` (made only when a call needs it)."""
    default = "new_db_path" if "new_db_path" in request.fixturenames else "db_path"

    def run(*args: Any, db: Path | None = None) -> Result:
        runner = CliRunner()
        target = db or request.getfixturevalue(default)
        return runner.invoke(main, ["--db", str(target), *map(str, args)])

    return run


def snapshot(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted, to compare a warehouse before and after a command."""
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() ORDER BY table_name"
            ).fetchall()
        ]
        return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in tables}
    finally:
        con.close()


# A small vocabulary for generated sentences: small enough that systems share n-grams.
VOCABULARY = [
    "river", "market", "teacher", "window", "bread", "morning", "letter", "ticket", "garden",
    "station", "city",
]  # fmt: skip


@pytest.fixture
def pg_dsn():
    """DSN of a fresh, empty Postgres database (dropped afterwards).

    Needs `$TAME_WH_TEST_PG_DSN` (an admin connection; `.ci/run` starts a throwaway cluster and
    sets it). Without it the test is skipped — except under CI, where that is a failure.
    """
    name, dsn = new_database()
    yield dsn
    drop_database(name)
