"""Options shared by every command, carried on the click context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import duckdb

from warehouse import __version__
from warehouse.errors import SchemaError
from warehouse.stats.resample import MAX_RESAMPLES
from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT, connect, missing_warehouse
from warehouse.store.schema import code_schema_version, open_warehouse, stored_schema_version


@dataclass
class AppContext:
    """Global options: warehouse path, lock timeout, debug."""

    db: Path
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    debug: bool = False
    db_size_before: int | None = None  # the file's size when the command started

    @contextmanager
    def warehouse(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the warehouse (created on first use) for the duration of a command."""
        con = open_warehouse(self.db, lock_timeout=self.lock_timeout)
        try:
            yield con
        finally:
            con.close()

    @contextmanager
    def reader(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The existing warehouse for a read-only command: opened once, read-only (other readers,
        e.g. a BI tool, never block it; a writer makes it wait up to --lock-timeout; a file this
        user may not write is fine). Nothing is created or upgraded: no warehouse, or one whose
        schema is older than this tame-wh, is a one-line error."""
        if not self.db.exists():
            raise missing_warehouse(self.db)
        con = connect(self.db, read_only=True, lock_timeout=self.lock_timeout)
        try:
            _require_current_schema(con, self.db)
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


def _require_current_schema(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    """Refuse an empty file, an older schema (read commands never upgrade) and a newer one."""
    stored = stored_schema_version(con)
    current = code_schema_version()
    if stored == 0:
        raise missing_warehouse(db)
    if stored < current:
        raise SchemaError(
            f"{db}: schema version {stored} is older than this tame-wh's ({current}); run "
            "`tame-wh init` to upgrade it (read-only commands never change the warehouse)"
        )
    if stored > current:
        raise SchemaError(
            f"{db}: written by a newer tame-wh (schema version {stored}); this tame-wh "
            f"{__version__} knows schema versions up to {current}; upgrade tame-wh"
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
