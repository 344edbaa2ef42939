"""The `tame-wh` command: global options, error handling, subcommand registration."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import click

from cli.context import AppContext
from warehouse import __version__
from warehouse.connection import DB_ENV_VAR, DEFAULT_LOCK_TIMEOUT, default_db_path
from warehouse.errors import WarehouseError


class _Group(click.Group):
    """Click group that turns warehouse errors into one-line messages with their exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WarehouseError as exc:
            if _debug(ctx):
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted; nothing was committed by the interrupted command", err=True)
            ctx.exit(130)
        except Exception as exc:
            if _debug(ctx):
                traceback.print_exc()
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            click.echo(
                f"internal error: {type(exc).__name__}: {message} (rerun with --debug for details)",
                err=True,
            )
            ctx.exit(1)


def _debug(ctx: click.Context) -> bool:
    """Whether --debug was given."""
    app = ctx.find_object(AppContext)
    return bool(app and app.debug)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"Warehouse file (default: ${DB_ENV_VAR}, else ./tame.duckdb).",
)
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_LOCK_TIMEOUT,
    show_default=True,
    help="Seconds to wait while another process holds the warehouse.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.version_option(__version__, "--version", prog_name="tame-wh")
@click.pass_context
def main(ctx: click.Context, db: Path | None, lock_timeout: float, debug: bool) -> None:
    """tame-wh: training-aware MT evaluation warehouse (DuckDB)."""
    ctx.obj = AppContext(db=db or default_db_path(), lock_timeout=lock_timeout, debug=debug)


def _register() -> None:
    """Attach the subcommands."""
    from cli.compare import compare, significance
    from cli.corpora import corpus, testset
    from cli.demo import demo
    from cli.doctor import doctor
    from cli.ingest import ingest
    from cli.init import init
    from cli.leaderboard import leaderboard_cmd
    from cli.query import query
    from cli.regressions import regressions
    from cli.runs import runs

    for command in (init, doctor, corpus, testset, ingest, runs, leaderboard_cmd, query, demo):
        main.add_command(command)
    for command in (compare, significance, regressions):
        main.add_command(command)


_register()
