"""Table statistics for a lake's empty tables, so that its queries plan without a catalog storm.

DuckLake keeps a statistics row per table in its catalog, written the first time the table holds
a row. For a table that never held one it has nothing to cache, and the pinned DuckLake asks the
catalog again for every column each query references: a leaderboard on a lake whose
`metric_values` table is empty made ~700 catalog round trips instead of ~300 (docs/lake.md). A
table that held a row once keeps its (zero) statistics for good, so each empty table gets one
placeholder row, deleted in the same transaction, when the schema is created or upgraded.
"""

from __future__ import annotations

import duckdb

# A value of each type that a NOT NULL column of the schema holds (cast from this text); nullable
# columns get NULL. A NOT NULL type missing here fails the creation of every lake (so every lake
# test), never silently.
PLACEHOLDERS: dict[str, str] = {
    "BIGINT": "0",
    "INTEGER": "0",
    "TINYINT": "0",
    "DOUBLE": "0",
    "BOOLEAN": "false",
    "VARCHAR": "",
    "JSON": "null",
    "TIMESTAMP": "1970-01-01",
    "BIGINT[]": "[]",
    "DOUBLE[]": "[]",
    "VARCHAR[]": "[]",
}


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str, bool]]]:
    """(name, type, nullable) of each column, in order, of each table (views left out) of the
    default catalog."""
    columns: dict[str, list[tuple[str, str, bool]]] = {}
    for table, name, data_type, nullable in con.execute(
        "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM duckdb_columns() c "
        "JOIN duckdb_tables() t USING (database_name, schema_name, table_name) "
        "WHERE c.database_name = current_database() AND c.schema_name = 'main' "
        "ORDER BY c.table_name, c.column_index"
    ).fetchall():
        columns.setdefault(str(table), []).append((str(name), str(data_type), bool(nullable)))
    return columns


def _is_empty(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether a table of the default catalog holds no row."""
    row = con.execute(f'SELECT NOT EXISTS (SELECT 1 FROM "{table}")').fetchone()
    return bool(row and row[0])


def prime_table_statistics(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Give every empty lake table statistics (a placeholder row written and deleted in the
    caller's transaction); returns the tables primed."""
    primed = []
    for table, columns in _columns(con).items():
        if not _is_empty(con, table):
            continue
        values: list[str | None] = []
        casts = []
        for name, data_type, nullable in columns:
            if nullable:
                values.append(None)
            elif data_type in PLACEHOLDERS:
                values.append(PLACEHOLDERS[data_type])
            else:
                raise ValueError(f"no placeholder for NOT NULL column {table}.{name} {data_type}")
            casts.append(f"CAST(? AS {data_type})")
        con.execute(f'INSERT INTO "{table}" VALUES ({", ".join(casts)})', values)
        con.execute(f'DELETE FROM "{table}"')
        primed.append(table)
    return primed
