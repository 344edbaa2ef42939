"""Read-only SQL over the warehouse: one SELECT, vetted, run on a locked-down connection."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from warehouse.errors import UsageError
from warehouse.metrics.cyzil import register_cyzil_functions
from warehouse.store.schema import init_warehouse

# Table functions a query may call in FROM; every other table function is refused.
ALLOWED_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})

# Functions that reach outside the warehouse (files, network, environment, other databases)
# or run SQL of their own; refused wherever they appear.
_DENIED_FUNCTIONS = frozenset(
    {
        "getenv",
        "glob",
        "query",
        "query_table",
        "sniff_csv",
        "csv_scan",
        "parquet_scan",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "st_read",
        "duckdb_secrets",
        "which_secret",
        "load_extension",
        "install_extension",
        "read_file",
        "read_files",
    }
)
_DENIED_PREFIXES = (
    "read_",
    "pragma_",
    "iceberg_",
    "delta_",
    "postgres_",
    "sqlite_",
    "mysql_",
    "http",
    "s3_",
    "ducklake_",
)


@dataclass(frozen=True)
class QueryResult:
    """Column names and rows of a query."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


def _function_name(node: exp.Func) -> str:
    """Lower-case SQL name of a function node."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _denied(name: str) -> bool:
    """Whether a function name is on the deny list."""
    return name in _DENIED_FUNCTIONS or name.startswith(_DENIED_PREFIXES)


def _known_relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the warehouse's tables and views (lower-case)."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT internal "
        "UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
    ).fetchall()
    return {str(name).lower() for (name,) in rows}


def vet_query(sql: str, known_relations: set[str]) -> None:
    """Refuse anything but one read-only SELECT over the warehouse's own tables and views."""
    if not sql.strip():
        raise UsageError("empty query")
    splitter = duckdb.connect(":memory:")
    try:
        statements = splitter.extract_statements(sql)
    except duckdb.Error as exc:
        raise UsageError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
    finally:
        splitter.close()
    if len(statements) != 1:
        raise UsageError(f"exactly one statement is allowed, got {len(statements)}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise UsageError(f"only SELECT queries are allowed, got {kind.name}")
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except ParseError as exc:
        raise UsageError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        raise UsageError("only SELECT / WITH / FROM-first queries are allowed")
    tree = trees[0]
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Func):
            name = _function_name(table.this)
            if name not in ALLOWED_TABLE_FUNCTIONS:
                raise UsageError(f"table function {name}() is not allowed in queries")
            continue
        name = table.name.lower()
        schema = table.db.lower() if table.db else ""
        if schema == "information_schema":
            continue
        if schema not in ("", "main") or table.catalog or name not in known_relations | ctes:
            raise UsageError(
                f"unknown table {table.sql(dialect='duckdb')}: queries may read only the "
                "warehouse's own tables and views"
            )
    for node in tree.find_all(exp.Func):
        name = _function_name(node)
        if _denied(name):
            raise UsageError(f"function {name}() is not allowed in queries")


def _locked_connection(db: str | Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection with external access disabled and configuration locked."""
    config: dict[str, str | bool | int | float | list[str]] = {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "lock_configuration": True,
    }
    return duckdb.connect(str(db), read_only=True, config=config)


def run_query(db: str | Path, sql: str) -> QueryResult:
    """Vet and run one read-only query against the warehouse at `db`."""
    init_warehouse(db)  # created on first use, like every other command
    con = _locked_connection(db)
    try:
        register_cyzil_functions(con)  # temporary functions: usable, nothing written
        vet_query(sql, _known_relations(con))
        try:
            cursor = con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchall()
        except duckdb.Error as exc:
            raise UsageError(f"query failed: {str(exc).strip().splitlines()[0]}") from None
    finally:
        con.close()
    return QueryResult(columns, rows)
