"""Files shipped inside the package: DuckDB schema files, Postgres migrations, the demo data."""

from __future__ import annotations

import re
import sys
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # Python 3.10
    from importlib.abc import Traversable

if TYPE_CHECKING:
    import duckdb

_NUMBERED = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class NumberedSql:
    """One numbered SQL file (`NNN_name.sql`)."""

    number: int
    name: str
    text: str


def _numbered(folder: str) -> list[NumberedSql]:
    """Numbered .sql files of a package folder, in order; gaps and duplicates are packaging bugs."""
    root = resources.files("warehouse") / folder
    found: list[NumberedSql] = []
    for entry in root.iterdir():
        match = _NUMBERED.match(entry.name)
        if match:
            found.append(NumberedSql(int(match.group(1)), entry.name, entry.read_text("utf-8")))
    found.sort(key=lambda f: f.number)
    numbers = [f.number for f in found]
    if numbers != list(range(1, len(found) + 1)):
        raise RuntimeError(f"warehouse/{folder} files are not numbered 001..N: {numbers}")
    return found


def schema_files() -> list[NumberedSql]:
    """The DuckDB schema files of `sql/`, in the order they are applied."""
    return _numbered("sql")


@dataclass(frozen=True)
class SqlStatement:
    """One statement of a SQL file: its text, whether it is a DELETE, and the names of its `$`
    parameters."""

    query: str
    is_delete: bool
    parameters: frozenset[str]


def split_statements(text: str) -> list[SqlStatement]:
    """The statements of a SQL text, split by DuckDB's own parser."""
    import duckdb

    return [
        SqlStatement(s.query, s.type == duckdb.StatementType.DELETE, frozenset(s.named_parameters))
        for s in extract_statements(text)
    ]


def extract_statements(text: str) -> list[duckdb.Statement]:
    """DuckDB's own parse of a SQL text, statement by statement (nothing is run; raises
    `duckdb.Error` on text that does not parse)."""
    with _SPLITTER_LOCK:
        return _splitter().extract_statements(text)


# One in-memory database parses every file (opening a DuckDB database takes some 20 ms); parsing
# reads and writes nothing in it. The lock keeps two threads off the one connection.
_SPLITTER_LOCK = threading.Lock()


@cache
def _splitter() -> duckdb.DuckDBPyConnection:
    """The in-memory connection that splits SQL texts."""
    import duckdb

    return duckdb.connect(":memory:")


@cache  # package data does not change; splitting opens a DuckDB connection
def view_statements() -> tuple[str, ...]:
    """The statements of `sql/views/*.sql` in file order: the one current definition of every
    view and macro (CREATE OR REPLACE), applied after the numbered files whenever the schema
    version moves."""
    folder = resources.files("warehouse") / "sql" / "views"
    files = sorted((e for e in folder.iterdir() if e.name.endswith(".sql")), key=lambda e: e.name)
    text = "\n".join(entry.read_text("utf-8") for entry in files)
    return tuple(s.query for s in split_statements(text))


# The view file of the score macros, which refer to no table: applied before the numbered files
# too, so that a schema file may score the sums it stores (sql/021_stored_scores.sql).
SCORE_MACROS_FILE = "01_score_macros.sql"


@cache  # package data does not change; splitting opens a DuckDB connection
def score_macro_statements() -> tuple[str, ...]:
    """The statements of `sql/views/01_score_macros.sql`: the corpus score macros."""
    text = (resources.files("warehouse") / "sql" / "views" / SCORE_MACROS_FILE).read_text("utf-8")
    return tuple(s.query for s in split_statements(text))


@cache  # package data does not change; splitting opens a DuckDB connection
def sql_statements(name: str) -> tuple[SqlStatement, ...]:
    """The statements of a named (unnumbered) file in `sql/`, e.g. `refresh_run_sums`."""
    text = (resources.files("warehouse") / "sql" / f"{name}.sql").read_text("utf-8")
    return tuple(split_statements(text))


def migration_files() -> list[NumberedSql]:
    """The Postgres migrations of `migrations/`, in the order they are applied."""
    return _numbered("migrations")


def example_dir() -> Traversable:
    """The folder holding the bundled demo data."""
    return resources.files("warehouse") / "examples"
