"""Rendering command results: JSON for scripts, rich tables for people, messages on stderr."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from warehouse.frontend import redact

_stderr = Console(stderr=True, highlight=False)
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"  # for significance-level headers
PIPED_WIDTH = 100  # table width when stdout is not a terminal (--wide: no limit)
PROGRESS_EVERY = 5.0  # seconds between progress lines when stderr is not a terminal


@dataclass
class OutputOptions:
    """The global output options (`--wide`, `--quiet`)."""

    wide: bool = False
    quiet: bool = False


OPTIONS = OutputOptions()


def configure(*, wide: bool = False, quiet: bool = False) -> None:
    """Set the global output options for this process."""
    OPTIONS.wide = wide
    OPTIONS.quiet = quiet


def emit_json(document: Any) -> None:
    """Print a JSON document on stdout."""
    click.echo(json.dumps(document, indent=2, ensure_ascii=False, default=str))


def say(message: str) -> None:
    """A status message or warning on stderr (stdout stays clean for data), secrets redacted."""
    click.echo(redact(message), err=True)


def progress(message: str) -> None:
    """A progress line on stderr, unless --quiet (secrets redacted)."""
    if not OPTIONS.quiet:
        click.echo(redact(message), err=True)


def table_width() -> int | None:
    """Columns a table may use: no limit with --wide, else `$COLUMNS` when set, else the
    terminal's width, 100 when piped."""
    if OPTIONS.wide:
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((PIPED_WIDTH, 24)).columns
    return PIPED_WIDTH


def _fitting_columns(
    widths: Sequence[int], limit: int | None, keep: Sequence[int], priority: Sequence[int]
) -> list[int]:
    """Indices of the columns that fit in `limit` characters, leaving out the least important
    first (`priority` lists columns most important first; unlisted ones follow left to right);
    the columns in `keep` are never left out."""
    shown = list(range(len(widths)))
    if limit is None:
        return shown

    def total(columns: list[int]) -> int:
        return sum(widths[i] for i in columns) + 3 * max(len(columns) - 1, 0)

    order = [*priority, *(i for i in shown if i not in priority)]
    for i in reversed(order):
        if total(shown) <= limit:
            break
        if i not in keep:
            shown.remove(i)
    return shown


def print_table(
    title: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    right: Sequence[int] = (),
    keep: Sequence[int] = (0,),
    priority: Sequence[int] = (),
) -> None:
    """A table on stdout that fits the width (`table_width`): columns that do not fit are left
    out from the right and named on stderr; the `keep` columns (handles such as run ids) are
    never left out or cut; `priority` orders the others, most important first. Numbers (and
    columns in `right`) are right-aligned; None is empty."""
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max([len(name), *(len(r[i]) for r in cells)]) for i, name in enumerate(columns)]
    limit = table_width()
    shown = _fitting_columns(widths, limit, keep, priority)
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for i in shown:
        numeric = i in right or (
            bool(rows) and all(isinstance(r[i], (int, float)) for r in rows if r[i] is not None)
        )
        table.add_column(
            columns[i],
            justify="right" if numeric else "left",
            no_wrap=i in keep,
            min_width=widths[i] if i in keep else None,
        )
    for row in cells:
        table.add_row(*(row[i] for i in shown))
    Console(soft_wrap=True, width=limit if limit is not None else 10_000).print(table)
    hidden = [columns[i] for i in range(len(columns)) if i not in shown]
    if hidden:
        say(
            f"({len(hidden)} columns left out to fit {limit} characters: {', '.join(hidden)}; "
            "--wide shows all)"
        )


def print_fields(pairs: Sequence[tuple[str, Any]]) -> None:
    """Aligned `key: value` lines on stdout."""
    width = max(len(k) for k, _ in pairs)
    for key, value in pairs:
        click.echo(f"{key.ljust(width)}  {'' if value is None else value}")


@contextmanager
def status(message: str) -> Iterator[None]:
    """Tell people on stderr that long work runs: a spinner on a terminal, else a line every few
    seconds once it has run that long (quick commands stay silent); nothing with --quiet."""
    if OPTIONS.quiet:
        yield
        return
    if _stderr.is_terminal:
        with _stderr.status(message):
            yield
        return
    started = time.monotonic()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(PROGRESS_EVERY):
            say(f"{message}... ({time.monotonic() - started:.0f} s)")

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()


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


def print_lenses(lenses: dict[str, Any] | None) -> None:
    """Where the audits by different measures of the same corpora bin segments apart."""
    if not lenses:
        return
    names = [
        f"{label} audit {lenses[key]}"
        for label, key in (
            ("Jaccard", "jaccard_audit_id"),
            ("containment", "containment_audit_id"),
            ("substring", "substring_audit_id"),
            ("MinHash", "minhash_audit_id"),
        )
        if lenses.get(key)
    ]
    facts = []
    if lenses.get("jaccard_audit_id") and lenses.get("containment_audit_id"):
        facts.append(
            f"{lenses['contained_yet_far']:,} are wholly contained in a training text yet far "
            "by Jaccard"
        )
    if lenses.get("jaccard_audit_id") and lenses.get("substring_audit_id"):
        facts.append(
            f"{lenses['verbatim_yet_far']:,} occur verbatim in training yet are far by Jaccard"
        )
    click.echo(
        f"lenses ({lenses['side']} side): {' and '.join(names)} bin {lenses['bins_agree']:,} of "
        f"{lenses['segments']:,} segments alike" + "".join(f"; {f}" for f in facts)
    )
    if lenses["examples"]:
        shown = [
            (label, key)
            for label, key in (
                ("Jaccard", "jaccard"),
                ("containment", "containment"),
                ("substring", "substring"),
                ("MinHash", "minhash"),
            )
            if lenses.get(f"{key}_audit_id")
        ]
        header = ["segment"]
        for label, _key in shown:
            header += [label, f"{label} bin"]
        rows = []
        for e in lenses["examples"]:
            row = [e["seg_idx"]]
            for _, key in shown:
                value = (
                    f"{e['longest_chars']} of {e['chars']} chars"
                    if key == "substring"
                    else fmt_number(e[key], 3)
                )
                row += [value, e[f"{key}_bin"]]
            rows.append(row)
        print_table(None, header, rows)
