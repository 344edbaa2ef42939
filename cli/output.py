"""Rendering command results: JSON for scripts, rich tables for people, messages on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.table import Table

_stderr = Console(stderr=True, highlight=False)
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"  # for significance-level headers


def emit_json(document: Any) -> None:
    """Print a JSON document on stdout."""
    click.echo(json.dumps(document, indent=2, ensure_ascii=False, default=str))


def say(message: str) -> None:
    """A progress or status message on stderr (stdout stays clean for data)."""
    click.echo(message, err=True)


def print_table(
    title: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    right: Sequence[int] = (),
) -> None:
    """A table on stdout; right-aligned numbers (and columns listed in `right`), empty cells
    for None."""
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    numeric = [
        i in right
        or (bool(rows) and all(isinstance(r[i], (int, float)) for r in rows if r[i] is not None))
        for i in range(len(columns))
    ]
    for name, is_num in zip(columns, numeric, strict=True):
        table.add_column(name, justify="right" if is_num else "left")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    Console(soft_wrap=True, width=_width()).print(table)


def print_fields(pairs: Sequence[tuple[str, Any]]) -> None:
    """Aligned `key: value` lines on stdout."""
    width = max(len(k) for k, _ in pairs)
    for key, value in pairs:
        click.echo(f"{key.ljust(width)}  {'' if value is None else value}")


def _width() -> int | None:
    """Terminal width, or a wide fixed width when stdout is not a terminal."""
    return None if sys.stdout.isatty() else 200


@contextmanager
def status(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (plain text when stderr is not a terminal)."""
    if _stderr.is_terminal:
        with _stderr.status(message):
            yield
    else:
        yield


def fmt_number(value: Any, digits: int = 2) -> str:
    """A number for people; n/a for NULL."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_share(value: float | None) -> str:
    """A share as a percentage; n/a for NULL."""
    return "n/a" if value is None else f"{value:.1%}"
