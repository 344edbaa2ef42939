"""`tame-wh init`: create or upgrade a warehouse."""

from __future__ import annotations

import click

from warehouse import Warehouse
from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.output import emit_json


@click.command()
@json_option
@pass_app
def init(app: AppContext, as_json: bool) -> None:
    """Create the warehouse, or upgrade it to this version's schema (a no-op when current)."""
    status = Warehouse.init(app.db, lock_timeout=app.lock_timeout)
    if as_json:
        emit_json(
            {
                "path": str(app.db),
                "schema_version_before": status.before,
                "schema_version": status.after,
                "created": status.created,
                "upgraded": status.upgraded,
                "catalog_moved": status.catalog_moved,
            }
        )
        return
    if status.catalog_moved:
        click.echo(
            "moved the lake's catalog out of schema public into its own schema, closed to "
            "PUBLIC and the client roles"
        )
    if status.created:
        click.echo(f"created warehouse {app.db} (schema version {status.after})")
    elif status.upgraded:
        click.echo(f"upgraded warehouse {app.db} from schema {status.before} to {status.after}")
    else:
        click.echo(
            f"warehouse {app.db} is up to date (schema version {status.after}); nothing to do"
        )
