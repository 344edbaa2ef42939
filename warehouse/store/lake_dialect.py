"""The schema files in DuckLake's dialect, and the constraints the application enforces instead.

DuckLake has no PRIMARY KEY, UNIQUE, CHECK, sequences or indexes. The numbered files in `sql/`
are written for a local DuckDB file; on a lake each CREATE TABLE loses its constraints (NOT NULL
and DEFAULT stay), sequence statements and defaults drawn from a sequence are dropped, and every
other statement (views, macros, inserts, ALTER, DROP) runs as written. The constraints removed are
kept as `Constraint`s: the writers check ids before they insert (under the lake's writer lock),
and `violations` counts rows that break any of them, on either backend.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache

import duckdb
import sqlglot
from sqlglot import exp

from warehouse.store.resources import schema_files, split_statements

_CONSTRAINT_KINDS = (
    exp.PrimaryKeyColumnConstraint,
    exp.UniqueColumnConstraint,
    exp.CheckColumnConstraint,
)


@dataclass(frozen=True)
class Constraint:
    """A key (`columns` unique together) or a row check (`check`, a SQL condition) of a table."""

    table: str
    columns: tuple[str, ...] = ()
    check: str | None = None

    def broken(self) -> str:
        """The condition a row breaking this check meets (a NULL check holds, as in SQL)."""
        return f"NOT coalesce(({self.check}), true)"

    def violation_sql(self) -> str:
        """A query counting the rows that break the constraint (identifiers are ours)."""
        if self.check is not None:
            return f'SELECT count(*) FROM "{self.table}" WHERE {self.broken()}'
        cols = ", ".join(f'"{c}"' for c in self.columns)
        return (
            f'SELECT count(*) FROM (SELECT {cols} FROM "{self.table}" '
            f"GROUP BY ALL HAVING count(*) > 1)"
        )

    def describe(self) -> str:
        """`table (a, b) unique` or `table check (...)`."""
        if self.check is not None:
            return f"{self.table} check ({self.check})"
        return f"{self.table} ({', '.join(self.columns)}) unique"


def _split(text: str) -> list[str]:
    """The statements of a SQL file, split by DuckDB's own parser."""
    return [s.query for s in split_statements(text)]


def _without_comments(statement: str) -> str:
    """The statement without the `--` comment lines that lead it."""
    lines = statement.strip().splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines)


def _column_names(node: exp.Expression) -> tuple[str, ...]:
    """Column names of a table-level PRIMARY KEY / UNIQUE node."""
    return tuple(c.name for c in node.find_all(exp.Identifier))


def _strip_table(tree: exp.Create, found: list[Constraint]) -> None:
    """Remove the constraints of a CREATE TABLE in place, recording them."""
    table = tree.this.this.name
    kept: list[exp.Expression] = []
    for item in tree.this.expressions:
        if isinstance(item, exp.ColumnDef):
            constraints = []
            for constraint in item.constraints:
                kind = constraint.kind
                if isinstance(kind, (exp.PrimaryKeyColumnConstraint, exp.UniqueColumnConstraint)):
                    found.append(Constraint(table, (item.name,)))
                elif isinstance(kind, exp.CheckColumnConstraint):
                    found.append(Constraint(table, check=kind.this.sql(dialect="duckdb")))
                elif isinstance(kind, exp.DefaultColumnConstraint) and any(
                    f.name.lower() == "nextval" for f in kind.find_all(exp.Anonymous)
                ):
                    continue  # a value drawn from a sequence: a local-file surrogate key
                else:
                    constraints.append(constraint)
            item.set("constraints", constraints)
            kept.append(item)
        elif isinstance(item, (exp.PrimaryKey, exp.UniqueColumnConstraint)):
            found.append(Constraint(table, _column_names(item)))
        elif isinstance(item, exp.CheckColumnConstraint):
            found.append(Constraint(table, check=item.this.sql(dialect="duckdb")))
        elif isinstance(item, (exp.Constraint, *_CONSTRAINT_KINDS)):
            raise ValueError(f"unhandled table constraint in {table}: {item.sql()}")
        else:
            kept.append(item)
    tree.this.set("expressions", kept)


def lake_statement(statement: str, found: list[Constraint] | None = None) -> str | None:
    """One schema statement in DuckLake's dialect (None: it has no lake counterpart)."""
    words = [w.upper() for w in _without_comments(statement).split(None, 3)[:3]]
    if words[:1] == ["CREATE"] and "SEQUENCE" in words:
        return None
    if words[:2] == ["DROP", "SEQUENCE"]:
        return None
    if words[:2] != ["CREATE", "TABLE"]:
        return statement
    tree = sqlglot.parse_one(statement, read="duckdb")
    assert isinstance(tree, exp.Create)
    _strip_table(tree, found if found is not None else [])
    return tree.sql(dialect="duckdb")


@cache
def lake_schema_files() -> tuple[tuple[int, tuple[str, ...]], ...]:
    """Each numbered schema file as (number, its statements in DuckLake's dialect)."""
    out = []
    for sql_file in schema_files():
        statements = [lake_statement(s) for s in _split(sql_file.text)]
        out.append((sql_file.number, tuple(s for s in statements if s is not None)))
    return tuple(out)


_DROP_TABLE = re.compile(r"^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)\s*;?$", re.IGNORECASE)
_RENAME_TABLE = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)\s*;?$", re.IGNORECASE)


@cache
def enforced_constraints() -> tuple[Constraint, ...]:
    """The keys and checks the local schema declares on the tables that exist at the end (the
    application keeps them on a lake): a table dropped takes its constraints with it, and a
    table rebuilt under a new name and renamed (a schema step that changes a CHECK) hands its
    own to the name it takes."""
    found: list[Constraint] = []
    for sql_file in schema_files():
        for statement in _split(sql_file.text):
            text = _without_comments(statement).strip()
            if dropped := _DROP_TABLE.match(text):
                found = [c for c in found if c.table != dropped.group(1)]
            elif renamed := _RENAME_TABLE.match(text):
                old, new = renamed.groups()
                found = [replace(c, table=new) if c.table == old else c for c in found]
            else:
                lake_statement(statement, found)
    return tuple(found)


def violations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The constraints some rows break (`table (cols) unique: N groups`), none when all hold."""
    tables = {
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = 'main'"
        ).fetchall()
    }
    columns = {
        (t, c)
        for t, c in con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    checked = [
        c
        for c in enforced_constraints()
        if c.table in tables  # and not a key on a column a later file dropped:
        and all((c.table, column) in columns for column in c.columns)
    ]
    if not checked:
        return []
    # One statement: one snapshot, and one transaction instead of one per constraint (each
    # costs a lake a round of catalog queries). A table's checks are counted in one scan of it.
    keys = [c for c in checked if c.check is None]
    by_table: dict[str, list[Constraint]] = {}
    for c in checked:
        if c.check is not None:
            by_table.setdefault(c.table, []).append(c)
    parts = [f"({c.violation_sql()})" for c in keys]
    order = list(keys)
    for table, checks in by_table.items():
        counted = ", ".join(f"count(*) FILTER (WHERE {c.broken()})" for c in checks)
        parts.append(f'(SELECT [{counted}] FROM "{table}")')
        order.extend(checks)
    row = con.execute("SELECT " + ", ".join(parts)).fetchone()
    assert row is not None
    counts = [n for value in row for n in (value if isinstance(value, list) else [value])]
    return [f"{c.describe()}: {n} violation(s)" for c, n in zip(order, counts, strict=True) if n]
