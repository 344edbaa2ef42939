"""Options shared by every command, carried on the click context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import duckdb

from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT, connect
from warehouse.store.schema import open_warehouse


@dataclass
class AppContext:
    """Global options: warehouse path, lock timeout, debug."""

    db: Path
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    debug: bool = False

    @contextmanager
    def warehouse(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the warehouse (created on first use) for the duration of a command."""
        con = open_warehouse(self.db, lock_timeout=self.lock_timeout)
        try:
            yield con
        finally:
            con.close()

    @contextmanager
    def existing_warehouse(self) -> Iterator[duckdb.DuckDBPyConnection | None]:
        """The warehouse read-only if its file exists (nothing created or upgraded), else None."""
        if not self.db.exists():
            yield None
            return
        con = connect(self.db, read_only=True, lock_timeout=self.lock_timeout)
        try:
            yield con
        finally:
            con.close()


pass_app = click.make_pass_decorator(AppContext)

json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON document.")


def bootstrap_options(
    n_flag: str, n_help: str, alpha_flag: str, alpha_help: str, seed_help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The resamples / alpha / --seed options, each defaulting to None (then the warehouse's
    settings bootstrap.n / bootstrap.alpha / bootstrap.seed apply)."""
    options = [
        click.option(n_flag, type=click.IntRange(min=1), default=None, help=n_help),
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
