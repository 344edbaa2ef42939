"""`tame-wh lake`: maintenance and history of a DuckLake lake."""

from __future__ import annotations

import click

from warehouse import UsageError
from warehouse.cli.context import INT64_MAX, MAX_KEEP_DAYS, AppContext, json_option, pass_app
from warehouse.cli.output import emit_json, print_fields, print_table
from warehouse.frontend import DEFAULT_GRACE_HOURS, DEFAULT_KEEP_DAYS


@click.group()
def lake() -> None:
    """A lake's maintenance and history (--db ducklake:postgres:…)."""


def _require_lake(app: AppContext) -> None:
    if not app.is_lake:
        raise UsageError(
            f"{app.db} is a local file: `tame-wh lake` works on a lake (--db ducklake:postgres:…)"
        )


@lake.command()
@click.option(
    "--keep-days",
    type=click.IntRange(min=0, max=MAX_KEEP_DAYS),
    default=DEFAULT_KEEP_DAYS,
    show_default=True,
    help="Expire snapshots older than this many days (--as-of reaches back this far).",
)
@click.option(
    "--grace-hours",
    type=click.IntRange(min=0, max=MAX_KEEP_DAYS * 24),
    default=DEFAULT_GRACE_HOURS,
    show_default=True,
    help="Delete unreferenced files only after they were scheduled this long ago.",
)
@click.option("--dry-run", is_flag=True, help="Count what would be expired and deleted.")
@json_option
@pass_app
def maintain(
    app: AppContext, keep_days: int, grace_hours: int, dry_run: bool, as_json: bool
) -> None:
    """Flush rows inlined in the catalog to Parquet, merge small data files, expire old
    snapshots and delete files no snapshot needs."""
    _require_lake(app)
    with app.open("write") as wh:
        result = wh.maintain(keep_days=keep_days, grace_hours=grace_hours, dry_run=dry_run)
    if as_json:
        emit_json(result.to_dict())
        return
    print_fields(
        [
            (
                "inlined rows flushed" if not dry_run else "inlined rows to flush",
                result.rows_flushed,
            ),
            (
                "files merged",
                f"{result.files_merged} into {result.files_created}"
                if result.files_merged is not None
                else "known only by merging (not in a dry run)",
            ),
            (
                "snapshots expired" if not dry_run else "snapshots to expire",
                result.snapshots_expired,
            ),
            ("files deleted" if not dry_run else "files to delete", result.files_deleted),
            ("snapshots kept", result.snapshots_left),
        ]
    )


@lake.command()
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=INT64_MAX),
    default=20,
    show_default=True,
    help="Show the newest N snapshots.",
)
@json_option
@pass_app
def snapshots(app: AppContext, limit: int, as_json: bool) -> None:
    """The lake's newest snapshots (ids and times for --as-of) and what each changed."""
    _require_lake(app)
    with app.open("read") as wh:
        rows = wh.snapshots(limit)
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    print_table(
        None,
        ["snapshot", "time (UTC)", "runs", "changes"],
        [[r.snapshot_id, r.time, _runs(r.runs_added, r.runs_deleted), r.changes] for r in rows],
        keep=(0, 1, 2),
    )


def _runs(added: list[str], deleted: list[str]) -> str:
    """The runs a snapshot added (+) and deleted (-)."""
    return ", ".join([*(f"+{r}" for r in added), *(f"-{r}" for r in deleted)])
