"""warehouse/html only turns values into markup: no module imports DuckDB, runs a query, takes a
connection, or calls a function of the rest of the warehouse that takes one."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "warehouse" / "html"
QUERY_METHODS = {"execute", "executemany", "sql", "query", "register", "unregister"}
CONNECTION = "DuckDBPyConnection"


def _modules() -> list[Path]:
    """Every Python module of warehouse/html."""
    return sorted(HTML.rglob("*.py"))


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    """Every parameter of a function."""
    args = node.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def query_findings(source: str, name: str = "<source>") -> list[str]:
    """What in a module's source imports DuckDB, runs a query or takes a connection."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [
                f"{where} imports {a.name}" for a in node.names if a.name.split(".")[0] == "duckdb"
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "duckdb":
            found.append(f"{where} imports from {node.module}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in QUERY_METHODS:
                found.append(f"{where} calls .{node.func.attr}(")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in _parameters(node):
                if arg.annotation is not None and CONNECTION in ast.unparse(arg.annotation):
                    found.append(f"{where} {node.name}({arg.arg}: {ast.unparse(arg.annotation)})")
    return found


def test_the_check_sees_every_kind_of_query():
    bad = (
        "import duckdb\n"
        "from duckdb import connect\n"
        "def page(con: duckdb.DuckDBPyConnection) -> str:\n"
        "    return con.execute('SELECT 1').fetchone()[0] + con.sql('x') + con.query('y')\n"
        "def other(*, c: 'DuckDBPyConnection | None' = None) -> None:\n"
        "    c.register('t', None)\n"
    )
    assert len(query_findings(bad)) == 8
    assert query_findings("def page(rows: list[dict]) -> str:\n    return str(rows)\n") == []


def test_no_html_module_queries_the_warehouse():
    modules = _modules()
    assert len(modules) >= 8 and HTML / "dashboard.py" in modules
    found = [
        finding
        for path in modules
        for finding in query_findings(path.read_text(encoding="utf-8"), path.name)
    ]
    assert found == []


def _takes_a_connection(function: Callable[..., Any]) -> bool:
    """Whether a function has a parameter annotated as a DuckDB connection."""
    parameters = inspect.signature(function).parameters.values()
    return any(CONNECTION in str(p.annotation) for p in parameters)


def test_html_calls_no_warehouse_function_that_takes_a_connection():
    takes_a_connection = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if not node.module.startswith("warehouse."):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(module, alias.name)
                if inspect.isfunction(value) and _takes_a_connection(value):
                    takes_a_connection.append(f"{path.name} imports {node.module}.{alias.name}")
    assert takes_a_connection == []
