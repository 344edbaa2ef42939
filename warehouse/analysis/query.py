"""Read-only SQL over the warehouse: one SELECT, vetted, run on a locked-down, bounded connection.

Three fences, each enough on its own for what it guards:

1. `vet_query` refuses everything but one SELECT / WITH / FROM-first query (or `SHOW TABLES`,
   `DESCRIBE x`, `SUMMARIZE x`) over the warehouse's own tables and views, and every function
   that reaches outside the warehouse or tells its configuration (`current_setting`, the
   `duckdb_*` listings, variables, secrets, the environment). A table name counts as a CTE only
   where that CTE is in scope, so a CTE named like a file in one subquery does not make the same
   name elsewhere a table (DuckDB would read the file). The query is checked twice: on sqlglot's
   tree (scopes) and on DuckDB's own parse (every function and table DuckDB will bind, whatever
   the syntax that names it: method calls, lambdas, DESCRIBE of a query).
2. The connection is read-only, external access is off, DuckDB's local file system is disabled
   and the temporary directory is unset (so neither the database directory nor `<db>.tmp/` can
   be read), and the configuration is locked.
3. The statement has a time limit (a timer calls `interrupt()`) and a memory limit (DuckDB's
   `memory_limit` for its buffers, and, where the platform has it, the process's data-segment
   limit for allocations outside them, such as one huge string), both from `settings` unless
   given.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from warehouse.basics import first_line
from warehouse.errors import UsageError
from warehouse.metrics.cyzil import names_a_cyzil_function, register_cyzil_functions
from warehouse.sizes import MAX_SIZE_BYTES, parse_size
from warehouse.store.address import LakeAddress
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    missing_warehouse,
)
from warehouse.store.lake import AsOf, PinnedRead, pin_snapshot
from warehouse.store.remote import remote_failure
from warehouse.store.resources import extract_statements
from warehouse.store.settings import read_settings

# Table functions a query may call in FROM; every other table function is refused.
ALLOWED_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})

# Limits (settings rows of sql/011_query_limits.sql; these defaults apply to older warehouses).
TIMEOUT_SETTING = "query.timeout_seconds"
MEMORY_SETTING = "query.memory_limit_mb"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_MB = 1024.0
MIN_MEMORY_MB = 64.0
MAX_TIMEOUT = 7 * 24 * 3600.0
# Allocations outside DuckDB's buffers (results converted to Python, strings) share this margin.
_PROCESS_MARGIN_MB = 256
# Rows per Arrow batch of a result: DuckDB allocates each column's buffers for a whole batch up
# front (1,000,000 rows by default, 8 MB per numeric column), which a wide result (the
# leaderboard's 81 columns) makes larger than the memory limit before a row is read.
_ARROW_BATCH_ROWS = 65_536

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
        # Configuration: settings hold paths (the lake's catalog address among them), and a
        # variable or a listing may hold what the process was configured with.
        "current_setting",
        "getvariable",
        "json_execute_serialized_sql",
        "json_serialize_plan",
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
    "duckdb_",
)
# The views of `information_schema` a query may read (the catalog's own description of tables and
# columns); any other name under it is refused.
ALLOWED_INFORMATION_SCHEMA = frozenset(
    {
        "character_sets",
        "check_constraints",
        "columns",
        "constraint_column_usage",
        "constraint_table_usage",
        "key_column_usage",
        "referential_constraints",
        "schemata",
        "table_constraints",
        "tables",
        "views",
    }
)
_SHOW_TABLES = re.compile(r"^\s*SHOW\s+(ALL\s+)?TABLES\s*;?\s*$", re.IGNORECASE)

# sqlglot logs "unsupported syntax" warnings for statements it parses as commands; the vet
# refuses those itself, and the log lines must not reach the terminal.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True)
class QueryResult:
    """Column names and rows of a query (or, when asked for, the result as an Arrow table)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    arrow: pa.Table | None = None


@dataclass(frozen=True)
class QueryLimits:
    """Time and memory a query may use."""

    timeout: float
    memory_mb: float


def parse_memory_limit(text: str) -> float:
    """A memory size such as `512MB`, `2GB` or `1.5GiB` (warehouse/sizes.py) in MB of 10**6
    bytes, the unit of the setting `query.memory_limit_mb` and of DuckDB's `memory_limit`."""
    return _check_memory(parse_size(text, "--memory-limit") / 1e6, "--memory-limit")


def _check_memory(mb: float, where: str) -> float:
    if not mb >= MIN_MEMORY_MB or mb != mb or mb == float("inf"):
        raise UsageError(f"{where}: the memory limit must be at least {MIN_MEMORY_MB:g} MB")
    if mb > MAX_SIZE_BYTES / 1e6:
        raise UsageError(f"{where}: the memory limit must be at most 1 PiB")
    return mb


def _check_timeout(seconds: float, where: str) -> float:
    if not 0 < seconds <= MAX_TIMEOUT:
        raise UsageError(f"{where}: the time limit must be in (0, {MAX_TIMEOUT:g}] seconds")
    return seconds


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
        "SELECT table_name FROM duckdb_tables() WHERE NOT internal AND database_name = "
        "current_database() UNION SELECT view_name FROM duckdb_views() WHERE NOT internal "
        "AND database_name = current_database()"
    ).fetchall()
    return {str(name).lower() for (name,) in rows}


def _in_recursive_term(table: exp.Table, cte: exp.CTE) -> bool:
    """Whether a table reference lies in the recursive term of a CTE: the right operand of the
    UNION that forms its body. Anywhere else (the anchor, a body without UNION) DuckDB does not
    bind the CTE's own name to the CTE, and a name that looks like a file is read as one."""
    body = cte.this
    # DuckDB recurses through UNION [ALL] only: with BY NAME (or EXCEPT, INTERSECT) the CTE's
    # name inside its body is not the CTE, and a name that looks like a file is read as one.
    if not isinstance(body, exp.Union) or body.args.get("by_name"):
        return False
    node: Any = table
    while node is not None and node is not cte:
        if node is body.expression:
            return True
        node = node.parent
    return False


def ctes_in_scope(table: exp.Table) -> set[str]:
    """Names of the CTEs a table reference can see: those of every enclosing WITH, except that
    inside a WITH only the earlier CTEs are visible (and, when RECURSIVE, the CTE itself, from
    its recursive term only)."""
    visible: set[str] = set()
    inner_cte: exp.CTE | None = None
    node: Any = table  # sqlglot's node base class differs between versions
    while node.parent is not None:
        parent = node.parent
        if isinstance(node, exp.CTE):
            inner_cte = node
        clause = parent.args.get("with_", parent.args.get("with"))  # the key depends on sqlglot
        if isinstance(clause, exp.With):
            ctes = list(clause.expressions)
            if node is clause:
                position = next(i for i, c in enumerate(ctes) if c is inner_cte)
                recursive = bool(clause.args.get("recursive")) and _in_recursive_term(
                    table, ctes[position]
                )
                ctes = ctes[: position + 1 if recursive else position]
            visible |= {cte.alias_or_name.lower() for cte in ctes}
        node = parent
    return visible


def _parse(sql: str) -> Any:
    """The single sqlglot tree of a statement DuckDB has already split and typed."""
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except (ParseError, SqlglotError) as exc:
        raise UsageError(f"SQL does not parse: {first_line(exc)}") from None
    except RecursionError:
        raise UsageError("SQL is nested too deeply (e.g. thousands of parentheses)") from None
    if len(trees) != 1:
        raise UsageError(f"exactly one statement is allowed, got {len(trees)}")
    return trees[0]


def vet_query(sql: str, known_relations: set[str]) -> None:
    """Refuse anything but one read-only SELECT over the warehouse's own tables and views."""
    if not sql.strip():
        raise UsageError("empty query")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"the SQL is not valid UTF-8 (at character {exc.start + 1}); write it in UTF-8"
        ) from None
    try:
        statements = extract_statements(sql)
    except duckdb.Error as exc:
        raise UsageError(f"SQL does not parse: {first_line(exc)}") from None
    if len(statements) != 1:
        raise UsageError(f"exactly one statement is allowed, got {len(statements)}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise UsageError(f"only SELECT queries are allowed, got {kind.name}")
    if _SHOW_TABLES.match(sql):
        return
    tree = _parse(sql)
    if not isinstance(tree, (exp.Query, exp.Describe, exp.Summarize)):
        raise UsageError(
            "only SELECT / WITH / FROM-first queries, SHOW TABLES, DESCRIBE and SUMMARIZE "
            "are allowed"
        )
    if isinstance(tree, (exp.Describe, exp.Summarize)) and not isinstance(
        tree.this, (exp.Table, exp.Query)
    ):
        # `SUMMARIZE 'file.csv'`: a string names a file to DuckDB, never a table.
        raise UsageError(
            f"{tree.key.upper()} takes a table, a view or a query of the warehouse, not "
            f"{tree.this.sql(dialect='duckdb')}"
        )
    for table in tree.find_all(exp.Table):
        _vet_table(table, known_relations)
    for node in tree.find_all(exp.Func):
        name = _function_name(node)
        if _denied(name):
            raise UsageError(f"function {name}() is not allowed in queries")
    vet_duckdb_parse(sql, known_relations | _cte_names(tree))


def _cte_names(tree: Any) -> set[str]:
    """Every CTE name the query defines, anywhere (lower-case)."""
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


# DuckDB's parser, for `json_serialize_sql` only (no database, no file system reached).
_PARSER: duckdb.DuckDBPyConnection | None = None
_PARSER_LOCK = threading.Lock()
# The table references DuckDB's parse may hold; any other kind is refused.
_TABLE_REFS = frozenset(
    {
        "BASE_TABLE",
        "JOIN",
        "SUBQUERY",
        "EMPTY",
        "EXPRESSION_LIST",
        "TABLE_FUNCTION",
        "SHOW_REF",
        "PIVOT",
    }
)


def _duckdb_parse(sql: str) -> dict[str, Any]:
    """DuckDB's own parse tree of a SELECT statement, as `json_serialize_sql` gives it."""
    import json

    global _PARSER
    with _PARSER_LOCK:
        if _PARSER is None:
            _PARSER = duckdb.connect(":memory:", config={"enable_external_access": False})
        row = _PARSER.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()
    tree: dict[str, Any] = json.loads(row[0]) if row else {"error": True}
    if tree.get("error"):
        lines = str(tree.get("error_message") or "").strip().splitlines() or ["not a SELECT"]
        raise UsageError(f"SQL does not parse as one plain query: {lines[0]}")
    return tree


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every object of a JSON parse tree, depth first."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def vet_duckdb_parse(sql: str, names: set[str]) -> None:
    """The second look, on DuckDB's own parse: every function it will bind is allowed, every
    table function is one of `ALLOWED_TABLE_FUNCTIONS`, and every table is a warehouse table or
    view, a CTE of the query (in `names`) or an allowed `information_schema` view."""
    for node in _nodes(_duckdb_parse(sql)):
        function = node.get("function_name")
        if isinstance(function, str) and _denied(function.lower()):
            raise UsageError(f"function {function.lower()}() is not allowed in queries")
        kind = node.get("type")
        if not _is_table_ref(node) or not isinstance(kind, str):
            continue
        if kind not in _TABLE_REFS:
            raise UsageError(f"a {kind.lower().replace('_', ' ')} is not allowed in queries")
        if kind == "TABLE_FUNCTION":
            name = str((node.get("function") or {}).get("function_name", "")).lower()
            if name not in ALLOWED_TABLE_FUNCTIONS:
                raise UsageError(f"table function {name}() is not allowed in queries")
        elif kind in ("BASE_TABLE", "SHOW_REF") and node.get("table_name"):
            _vet_parsed_table(node, names)


def _is_table_ref(node: dict[str, Any]) -> bool:
    """Whether a parse-tree object is a table reference: it carries a sample clause (maybe
    null), as query nodes do too, but no query modifiers and no expression class."""
    return "sample" in node and "modifiers" not in node and "class" not in node


def _vet_parsed_table(node: dict[str, Any], names: set[str]) -> None:
    """A table DuckDB's parse names: local and known, or an allowed `information_schema` view."""
    name = str(node.get("table_name", "")).lower()
    schema = str(node.get("schema_name") or "").lower()
    catalog = str(node.get("catalog_name") or "")
    if not catalog and schema == "information_schema" and name in ALLOWED_INFORMATION_SCHEMA:
        return
    if not catalog and schema in ("", "main") and name in names:
        return
    raise UsageError(
        f"unknown table {name!r}: queries may read only the warehouse's own tables and views"
    )


def _vet_table(table: exp.Table, known_relations: set[str]) -> None:
    """A table reference must be a warehouse table or view, a CTE in scope, or an allowed
    table function."""
    if isinstance(table.this, exp.Func):
        name = _function_name(table.this)
        if name not in ALLOWED_TABLE_FUNCTIONS:
            raise UsageError(f"table function {name}() is not allowed in queries")
        return
    if not isinstance(table.this, exp.Identifier):
        raise UsageError(
            f"{table.sql(dialect='duckdb')} is not a table: queries may read only the "
            "warehouse's own tables and views"
        )
    name = table.name.lower()
    schema = table.db.lower() if table.db else ""
    if schema == "information_schema" and not table.catalog:
        if name in ALLOWED_INFORMATION_SCHEMA:
            return
        raise UsageError(
            f"information_schema.{name} is not allowed in queries (allowed: "
            f"{', '.join(sorted(ALLOWED_INFORMATION_SCHEMA))})"
        )
    local = schema in ("", "main") and not table.catalog
    if local and (name in known_relations or (not schema and name in ctes_in_scope(table))):
        return
    raise UsageError(
        f"unknown table {table.sql(dialect='duckdb')}: queries may read only the "
        "warehouse's own tables and views"
    )


# Connection settings fixed at open: no external access, no temporary directory (it would be an
# allowed directory), no extension loading.
_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "temp_directory": "",
}
# A lake's connection loads its extensions and attaches first, then is locked down.
_LAKE_CONFIG: dict[str, str | bool | int | float | list[str]] = {"temp_directory": ""}


def _lock_down(con: duckdb.DuckDBPyConnection, limits: QueryLimits) -> None:
    """After the file is open: bounded memory, no local file system at all, no spilling, and the
    configuration locked."""
    con.execute(f"SET memory_limit = '{int(limits.memory_mb)}MB'")
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    con.execute("SET max_temp_directory_size = '0B'")
    con.execute("SET lock_configuration = true")


def _lock_down_lake(con: duckdb.DuckDBPyConnection, files: list[str], limits: QueryLimits) -> None:
    """After a lake is attached at a pinned snapshot: no external access beyond that snapshot's
    own data files (the catalog connection is already open), no extension loading, bounded
    memory, no spilling, and the configuration locked."""
    con.execute("SET allowed_directories = ?", [[]])
    con.execute("SET allowed_paths = ?", [files])
    con.execute("SET enable_external_access = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute(f"SET memory_limit = '{int(limits.memory_mb)}MB'")
    con.execute("SET max_temp_directory_size = '0B'")
    con.execute("SET lock_configuration = true")


def resolve_limits(
    con: duckdb.DuckDBPyConnection, timeout: float | None, memory_mb: float | None
) -> QueryLimits:
    """Limits given as options, else the warehouse's settings, else the defaults."""
    settings = read_settings(con)
    if timeout is None:
        timeout = _check_timeout(
            float(settings.get(TIMEOUT_SETTING, DEFAULT_TIMEOUT)), f"settings {TIMEOUT_SETTING}"
        )
    if memory_mb is None:
        memory_mb = _check_memory(
            float(settings.get(MEMORY_SETTING, DEFAULT_MEMORY_MB)), f"settings {MEMORY_SETTING}"
        )
    return QueryLimits(_check_timeout(timeout, "--timeout"), memory_mb)


def _data_segment_kib() -> int | None:
    """This process's data segment (VmData) in KiB, where /proc tells it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


@contextlib.contextmanager
def _process_memory_bound(memory_mb: float) -> Iterator[None]:
    """Bound new allocations of this process (RLIMIT_DATA) to the memory limit plus a margin for
    the duration of the block; a no-op where the platform has no such limit."""
    try:
        import resource
    except ImportError:  # not on POSIX
        yield
        return
    current = _data_segment_kib()
    if current is None or not hasattr(resource, "RLIMIT_DATA"):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    bound = current * 1024 + int((memory_mb + _PROCESS_MARGIN_MB) * 1024 * 1024)
    if soft != resource.RLIM_INFINITY:
        bound = min(bound, soft)
    if hard != resource.RLIM_INFINITY:
        bound = min(bound, hard)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (bound, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _execute(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    limits: QueryLimits,
    arrow: bool,
    lake: LakeAddress | None = None,
) -> QueryResult:
    """Run and fetch the query under its limits; limit breaches become clear errors, and a
    failure of `lake`'s services a `RemoteError`."""
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        con.interrupt()

    timer = threading.Timer(limits.timeout, stop)
    timer.daemon = True
    try:
        with _process_memory_bound(limits.memory_mb):
            timer.start()
            cursor = con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            if arrow:
                table = cursor.to_arrow_table(_ARROW_BATCH_ROWS)
                return QueryResult(columns, [], table)
            return QueryResult(columns, cursor.fetchall())
    except duckdb.InterruptException:
        raise UsageError(
            f"query stopped after its time limit of {limits.timeout:g} s "
            f"(--timeout, or settings {TIMEOUT_SETTING})"
        ) from None
    except (duckdb.OutOfMemoryException, MemoryError):
        raise UsageError(
            f"query needed more than its memory limit of {limits.memory_mb:g} MB "
            f"(--memory-limit, or settings {MEMORY_SETTING})"
        ) from None
    except RuntimeError as exc:
        # DuckDB's Python client, building the rows' objects past the process bound.
        if "allocate" not in str(exc):
            raise
        raise UsageError(
            f"query's result needed more than its memory limit of {limits.memory_mb:g} MB to "
            f"hold (--memory-limit, or settings {MEMORY_SETTING}): add a LIMIT, or aggregate"
        ) from None
    except duckdb.Error as exc:
        if timed_out.is_set():
            raise UsageError(
                f"query stopped after its time limit of {limits.timeout:g} s "
                f"(--timeout, or settings {TIMEOUT_SETTING})"
            ) from None
        if lake is not None:
            # The lake's catalog or store failing (an emptied bucket, a stopped catalog) is a
            # service fault, as in every other command: exit 4.
            remote = remote_failure(lake, exc, "`tame-wh query`")
            if remote is not None:
                raise remote from None
        raise UsageError(f"query failed: {first_line(exc)}") from None
    finally:
        timer.cancel()


def run_query(
    db: str | Path | LakeAddress,
    sql: str,
    *,
    timeout: float | None = None,
    memory_mb: float | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    arrow: bool = False,
    as_of: AsOf | None = None,
) -> QueryResult:
    """Vet and run one read-only query against the existing warehouse at `db` (a lake as it stood
    at `as_of` when given).

    The warehouse is opened once, read-only (other readers never block it; a writer of a file
    makes it wait up to `lock_timeout`); nothing is created or upgraded. Limits default to the
    warehouse's settings `query.timeout_seconds` and `query.memory_limit_mb`.
    """
    if memory_mb is not None:
        _check_memory(memory_mb, "--memory-limit")
    pinned: PinnedRead | None = None
    if isinstance(db, LakeAddress):
        # One snapshot answers, and DuckDB may open exactly its files and nothing else (not the
        # rest of the data path, not a temporary directory).
        pinned = pin_snapshot(db, as_of)
        con = connect(
            db,
            read_only=True,
            lock_timeout=lock_timeout,
            config=_LAKE_CONFIG,
            as_of=AsOf(snapshot=pinned.snapshot),
        )
    else:
        if as_of is None and not Path(db).exists():
            raise missing_warehouse(db)
        con = connect(db, read_only=True, lock_timeout=lock_timeout, config=_CONFIG, as_of=as_of)
    try:
        limits = resolve_limits(con, timeout, memory_mb)
        if names_a_cyzil_function(sql):
            register_cyzil_functions(con)  # temporary functions: usable, nothing written
        if pinned is not None:
            _lock_down_lake(con, pinned.files, limits)
        else:
            _lock_down(con, limits)
        vet_query(sql, _known_relations(con))
        return _execute(con, sql, limits, arrow, db if isinstance(db, LakeAddress) else None)
    finally:
        close_connection(con)
