"""Lists of ids as tables a query can join (long lists convert value by value as parameters)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, data: pa.Table) -> Iterator[None]:
    """`data` visible to queries on `con` as the table `name` while the block runs."""
    con.register(name, data)
    try:
        yield
    finally:
        con.unregister(name)


def id_table(**columns: list[str]) -> pa.Table:
    """An Arrow table of string columns (ids), for `registered`."""
    return pa.table({name: pa.array(values, pa.string()) for name, values in columns.items()})
