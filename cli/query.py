"""`tame-wh query`: read-only SQL over the warehouse."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import sys
from typing import Any

import click

from cli.context import AppContext, pass_app
from cli.output import print_table
from warehouse.analysis.query import run_query


def _jsonable(value: Any) -> Any:
    """JSON form of a DuckDB value."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@click.command()
@click.argument("sql")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@pass_app
def query(app: AppContext, sql: str, fmt: str, as_json: bool) -> None:
    """Run one read-only SELECT over the warehouse (tables, views and macros).

    Writes, PRAGMA, SET, ATTACH, COPY, CALL, transactions and file or network access are
    refused; the query runs on a read-only connection with external access disabled.
    """
    result = run_query(app.db, sql)
    if as_json:
        fmt = "json"
    if fmt == "json":
        rows = [dict(zip(result.columns, map(_jsonable, row), strict=True)) for row in result.rows]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(
            [
                [json.dumps(_jsonable(v)) if isinstance(v, (list, dict)) else v for v in row]
                for row in result.rows
            ]
        )
    else:
        print_table(None, result.columns, [list(r) for r in result.rows])
        click.echo(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})", err=True)
