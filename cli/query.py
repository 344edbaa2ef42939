"""`tame-wh query`: read-only SQL over the warehouse, printed or exported to a file."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import decimal
import io
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import click

from warehouse import QueryResult, UsageError, Warehouse
from warehouse.cli.context import AppContext, as_of_option, as_of_value, pass_app
from warehouse.cli.output import print_table, say
from warehouse.frontend import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, first_line, parse_memory_limit


def _jsonable(value: Any) -> Any:
    """JSON form of a DuckDB value."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and (value != value or abs(value) == float("inf")):
        return None  # JSON has no NaN or Infinity
    return value


def _json_text(result: QueryResult) -> str:
    rows = [dict(zip(result.columns, map(_jsonable, row), strict=True)) for row in result.rows]
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def _csv_text(result: QueryResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(result.columns)
    writer.writerows(
        [
            [json.dumps(_jsonable(v)) if isinstance(v, (list, dict)) else v for v in row]
            for row in result.rows
        ]
    )
    return buffer.getvalue()


def _check_out(out: Path, db: Path | None) -> None:
    """The output file must not be the warehouse file (or its WAL), nor a directory."""
    target = out.resolve()
    for protected in (db, Path(f"{db}.wal")) if db is not None else ():
        if target == protected.resolve():
            raise UsageError(f"--out {out} is the warehouse itself; choose another file")
    if target.is_dir():
        raise UsageError(f"--out {out} is a directory; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"--out {out}: the directory {target.parent} does not exist")


def _write_atomically(out: Path, write: Any) -> None:
    """Write through a temporary file in the same directory, renamed over `out` when complete,
    so that a failed export never leaves a partial file."""
    handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.resolve().parent)
    os.close(handle)
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        os.chmod(temporary, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        write(temporary)
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _export(result: QueryResult, fmt: str, out: Path) -> None:
    """Write the result to `out` (tame-wh writes it; the query connection cannot)."""
    if fmt == "parquet":
        import pyarrow.lib
        import pyarrow.parquet as pq

        assert result.arrow is not None

        def write(path: str) -> None:
            try:
                pq.write_table(result.arrow, path)
            except (pyarrow.lib.ArrowNotImplementedError, pyarrow.lib.ArrowInvalid) as exc:
                raise UsageError(
                    f"the result cannot be written as parquet ({first_line(exc)}); "
                    "cast that column, e.g. to VARCHAR"
                ) from None

    else:
        text = _json_text(result) if fmt == "json" else _csv_text(result)

        def write(path: str) -> None:
            Path(path).write_text(text, encoding="utf-8")

    try:
        _write_atomically(out, write)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write ({exc.strerror or exc})") from None


@click.command()
@click.argument("sql")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "parquet"]),
    default="table",
    show_default=True,
    help="Output format (parquet needs --out).",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the result to this file (csv, json or parquet) instead of printing it.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help=f"Stop the statement after this many seconds (default: settings "
    f"query.timeout_seconds, {DEFAULT_TIMEOUT:g}).",
)
@click.option(
    "--memory-limit",
    default=None,
    metavar="SIZE",
    help=f"Memory the statement may use, e.g. 512MB or 2GB (default: settings "
    f"query.memory_limit_mb, {DEFAULT_MEMORY_MB:g} MB).",
)
@as_of_option
@pass_app
def query(
    app: AppContext,
    sql: str,
    fmt: str,
    as_json: bool,
    out: Path | None,
    timeout: float | None,
    memory_limit: str | None,
    as_of: str | None,
) -> None:
    """Run one read-only SELECT over the warehouse (tables, views and macros).

    Also SHOW TABLES, DESCRIBE x and SUMMARIZE x. Writes, PRAGMA, SET, ATTACH, COPY, CALL,
    transactions and file or network access are refused; the query runs on a read-only
    connection without file system access, with a time and a memory limit. The warehouse is
    opened once, read-only: other readers never block it.
    """
    if as_json:
        fmt = "json"
    if fmt == "parquet" and out is None:
        raise click.UsageError("--format parquet writes a file: give --out FILE")
    if out is not None and fmt == "table":
        raise click.UsageError("--out writes csv, json or parquet: give --format")
    if out is not None:
        _check_out(out, app.db if isinstance(app.db, Path) else None)
    memory_mb = parse_memory_limit(memory_limit) if memory_limit is not None else None
    result = Warehouse.safe_query(
        app.db,
        sql,
        timeout=timeout,
        memory_mb=memory_mb,
        lock_timeout=app.lock_timeout,
        arrow=fmt == "parquet",
        as_of=as_of_value(as_of),
    )
    if out is not None:
        _export(result, fmt, out)
        rows = result.arrow.num_rows if result.arrow is not None else len(result.rows)
        say(f"wrote {rows} row{'s' if rows != 1 else ''} to {out}")
        return
    if fmt == "json":
        click.echo(_json_text(result), nl=False)
    elif fmt == "csv":
        sys.stdout.write(_csv_text(result))
    else:
        print_table(None, result.columns, [list(r) for r in result.rows])
        click.echo(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})", err=True)
