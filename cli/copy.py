"""`tame-wh copy`: a whole warehouse from a file to a lake or back, verified table by table."""

from __future__ import annotations

import click

from warehouse import SchemaError, Warehouse
from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.main import watch_lake
from warehouse.cli.output import emit_json, print_table, say
from warehouse.frontend import DATA_PATH_ENV_VAR, LakeAddress, parse_address


@click.command("copy")
@click.option("--from", "source", required=True, metavar="PATH|LAKE", help="The warehouse to copy.")
@click.option(
    "--to",
    "destination",
    required=True,
    metavar="PATH|LAKE",
    help="Where to copy it: a new (or empty) file or lake.",
)
@click.option(
    "--to-data-path",
    default=None,
    metavar="URL|DIR",
    help=f"Data path of a new destination lake (default: ${DATA_PATH_ENV_VAR}).",
)
@json_option
@pass_app
def copy(
    app: AppContext, source: str, destination: str, to_data_path: str | None, as_json: bool
) -> None:
    """Copy every table (and the schema version) between a local file and a lake, either way;
    then compare each table's rows and content hash on both sides."""
    src = parse_address(source, use_env=False)
    dst = parse_address(destination, to_data_path)
    ctx = click.get_current_context()
    for address in (src, dst):
        if isinstance(address, LakeAddress):
            watch_lake(ctx, address)
    result = Warehouse.copy(src, dst, lock_timeout=app.lock_timeout, notify=say)
    if as_json:
        emit_json(result.to_dict())
    else:
        print_table(
            f"copied {src} → {dst} (schema version {result.schema_version})",
            ["table", "rows", "verified"],
            [[t.table, t.rows, "equal" if t.verified else "DIFFERS"] for t in result.tables],
        )
    if not result.verified:
        differ = ", ".join(t.table for t in result.tables if not t.verified)
        raise SchemaError(f"the copy differs from the source in: {differ}")
