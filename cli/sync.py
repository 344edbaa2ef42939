"""`tame-wh migrate` and `tame-wh sync`: the Supabase/Postgres side."""

from __future__ import annotations

import click

from warehouse import SyncReport, UsageError, Warehouse
from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.output import emit_json, say, status
from warehouse.frontend import DSN_ENV_VAR, KEY_ENV_VAR


@click.command()
@click.option("--dsn", default=None, help=f"Postgres connection string (default: ${DSN_ENV_VAR}).")
@click.option("--dry-run", is_flag=True, help="Show the plan; apply nothing.")
@json_option
def migrate(dsn: str | None, dry_run: bool, as_json: bool) -> None:
    """Apply pending numbered migrations to the Supabase/Postgres database, in order."""
    report = Warehouse.migrate(dsn, dry_run=dry_run)
    if as_json:
        emit_json(report.to_dict())
        return
    if dry_run:
        plan = ", ".join(report.pending) or "nothing"
        click.echo(f"{report.target}: {len(report.applied_before)} applied; would apply: {plan}")
    elif report.applied_now:
        click.echo(f"{report.target}: applied {', '.join(report.applied_now)}")
    else:
        click.echo(f"{report.target}: up to date ({len(report.applied_before)} migrations applied)")


def _print_sync(report: SyncReport) -> None:
    """One line for people, plus warnings."""
    verb = "would send" if report.dry_run else "sent"
    click.echo(
        f"{report.target}: {verb} {report.sent_runs} of {report.total_runs} runs "
        f"({report.sent_bins} bin rows); {report.unchanged_runs} unchanged"
        + ("" if report.dry_run else f" ({report.seconds:.2f} s)")
    )
    for warning in report.warnings:
        say(f"warning: {warning}")
    for skipped in report.skipped:
        say(f"error: run {skipped.run_id} was not synced: {skipped.reason}")


@click.command()
@click.option(
    "--dsn",
    default=None,
    help=f"Direct Postgres transport (default: ${DSN_ENV_VAR} unless --supabase-url).",
)
@click.option(
    "--supabase-url",
    default=None,
    help=f"REST transport: the project URL; the key comes from ${KEY_ENV_VAR}.",
)
@click.option("--full", is_flag=True, help="Resend every run, not only new or changed ones.")
@click.option("--dry-run", is_flag=True, help="Count what would be sent; send nothing.")
@json_option
@pass_app
def sync(
    app: AppContext,
    dsn: str | None,
    supabase_url: str | None,
    full: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Upsert the leaderboard's denormalised columns and bin scores to Supabase/Postgres."""
    if dsn and supabase_url:
        raise click.UsageError("give --dsn or --supabase-url, not both")
    with app.open("write") as wh, status("syncing"):
        report = wh.sync(
            dsn=dsn,
            supabase_url=supabase_url,
            full=full,
            dry_run=dry_run,
            notify=None if as_json else say,
        )
    if as_json:
        emit_json(report.to_dict())
    else:
        _print_sync(report)
    if report.skipped:
        raise UsageError(
            f"{len(report.skipped)} run(s) could not be synced: "
            f"{', '.join(s.run_id for s in report.skipped)}; the others were "
            + ("counted" if report.dry_run else "sent")
        )
