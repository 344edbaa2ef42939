"""Options shared by every command, carried on the click context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click
import duckdb

from warehouse.handle import Access, Warehouse
from warehouse.stats.limits import MAX_RESAMPLES
from warehouse.store.address import Address, is_lake
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    warehouse_exists,
)
from warehouse.store.lake import AsOf, parse_as_of
from warehouse.store.schema import (
    StagedWrite,
    staged_write,
    writing,
)


@dataclass
class AppContext:
    """Global options: warehouse address (a file or a lake), lock timeout, debug."""

    db: Address
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    debug: bool = False
    db_size_before: int | None = None  # a file's size when the command started

    @property
    def is_lake(self) -> bool:
        """Whether the warehouse is a DuckLake lake."""
        return is_lake(self.db)

    @contextmanager
    def warehouse(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the warehouse (created on first use) for the duration of a command; on a lake
        the writers' lock is held until the block ends."""
        with writing(self.db, lock_timeout=self.lock_timeout) as con:
            yield con

    @contextmanager
    def staged_write(self) -> Iterator[StagedWrite]:
        """The warehouse to read first and write later (one attach on a lake; no lock held in
        between)."""
        with staged_write(self.db, lock_timeout=self.lock_timeout) as stage:
            yield stage

    def open(self, access: Access, as_of: AsOf | None = None) -> Warehouse:
        """The warehouse as the handle (`warehouse.Warehouse`), for a block: `read` opens an
        existing warehouse of this schema read-only (at `as_of` on a lake), `write` creates or
        upgrades it and holds a lake's writers' lock until the block ends."""
        return Warehouse.open(self.db, access=access, as_of=as_of, lock_timeout=self.lock_timeout)

    @contextmanager
    def reader(self, as_of: AsOf | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """The existing warehouse for a read-only command: opened once, read-only (other readers,
        e.g. a BI tool, never block it; a writer of a file makes it wait up to --lock-timeout; a
        file this user may not write is fine). Nothing is created or upgraded: no warehouse, or
        one whose schema is older than this tame-wh, is a one-line error. `as_of` reads a lake as
        it stood at a past snapshot."""
        with self.open("read", as_of) as opened:
            yield opened.con

    @contextmanager
    def existing_warehouse(self) -> Iterator[duckdb.DuckDBPyConnection | None]:
        """The warehouse read-only if it exists (nothing created or upgraded), else None."""
        if not warehouse_exists(self.db):
            yield None
            return
        con = connect(self.db, read_only=True, lock_timeout=self.lock_timeout)
        try:
            yield con
        finally:
            close_connection(con)


def as_of_value(text: str | None) -> AsOf | None:
    """The parsed `--as-of` value (None when not given)."""
    return parse_as_of(text) if text is not None else None


as_of_option = click.option(
    "--as-of",
    "as_of",
    default=None,
    metavar="SNAPSHOT|TIME",
    help="Answer as the lake stood then: a snapshot id or a UTC date/time (lakes only).",
)


pass_app = click.make_pass_decorator(AppContext)

json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON document.")


def bootstrap_options(
    n_flag: str, n_help: str, alpha_flag: str, alpha_help: str, seed_help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The resamples / alpha / --seed options, each defaulting to None (then the warehouse's
    settings bootstrap.n / bootstrap.alpha / bootstrap.seed apply)."""
    options = [
        click.option(
            n_flag, type=click.IntRange(min=1, max=MAX_RESAMPLES), default=None, help=n_help
        ),
        click.option(
            alpha_flag,
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=None,
            help=alpha_help,
        ),
        click.option("--seed", type=click.IntRange(min=0), default=None, help=seed_help),
    ]

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return apply
