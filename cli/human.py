"""`tame-wh human …`: human judgments (MQM, ESA, DA) stored beside the metrics (docs/human.md)."""

from __future__ import annotations

import click

from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.output import emit_json, print_table, say
from warehouse.frontend import HUMAN_FORMATS, parse_system_map


@click.group()
def human() -> None:
    """Human judgments (MQM, ESA, DA) on the runs of a test set: add, list."""


@human.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--testset", required=True, help="The test set whose runs were judged.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(HUMAN_FORMATS),
    default="mqm-tsv",
    show_default=True,
    help="mqm-tsv: Google's MQM layout; esa, da: TSV of scores; jsonl: one judgment per line "
    "(MQM, ESA with spans, or DA).",
)
@click.option(
    "--system-map",
    "system_map",
    multiple=True,
    metavar="SYSTEM=RUN",
    help="The run of a system whose name is not its model slug (a slug or a run id); repeat.",
)
@click.option(
    "--skip-system",
    "skip",
    multiple=True,
    metavar="SYSTEM",
    help="Leave a system's judgments out (e.g. the human translation used as reference); repeat.",
)
@click.option("--name", default=None, help="The set's name (default: the file's name).")
@click.option("--replace", is_flag=True, help="Replace a stored set of the same name.")
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse a file that repeats an error line (default: keep it once, with a warning).",
)
@click.option(
    "--seg-id-base",
    type=click.IntRange(min=-(2**31), max=2**31),
    default=None,
    metavar="N",
    help="The file's seg_id N is the test set's first line (e.g. 1 for the WMT MQM files on a "
    "test set from plain files); default: the test set's own segment ids.",
)
@json_option
@pass_app
def human_add(
    app: AppContext,
    file: str,
    testset: str,
    fmt: str,
    system_map: tuple[str, ...],
    skip: tuple[str, ...],
    name: str | None,
    replace: bool,
    strict: bool,
    seg_id_base: int | None,
    as_json: bool,
) -> None:
    """Store a file of human judgments on the runs of a test set (the same file again is a
    no-op)."""
    mapping = parse_system_map(system_map)
    with app.open("write") as wh:
        result = wh.add_human(file, testset=testset, format=fmt, name=name, system_map=mapping,
                              skip_systems=skip, replace=replace, strict=strict,
                              seg_id_base=seg_id_base)  # fmt: skip
    for warning in result.warnings:
        say(f"warning: {warning}")
    if as_json:
        emit_json(result.to_dict())
        return
    verb = "added" if result.added else "already stored:"
    replaced = f" (replaced set {result.replaced})" if result.replaced else ""
    click.echo(
        f"{verb} {result.scheme.upper()} set {result.set_id} {result.name!r} on "
        f"{result.test_set}: {result.n_judgments:,} judgments, {result.n_errors:,} errors, "
        f"{len(result.runs)} runs{replaced}"
    )


@human.command("list")
@click.option("--testset", default=None, help="Only the sets of this test set.")
@json_option
@pass_app
def human_list(app: AppContext, testset: str | None, as_json: bool) -> None:
    """List the stored judgment sets."""
    with app.open("read") as wh:
        sets = wh.human_sets(testset)
    if as_json:
        emit_json(sets)
        return
    if not sets:
        click.echo("no judgment sets stored" + (f" on {testset}" if testset else ""))
        return
    print_table(
        None,
        ["set", "name", "test set", "scheme", "judgments", "errors", "added"],
        [[s["set_id"], s["name"], s["test_set"], s["scheme"], f"{s['n_judgments']:,}",
          f"{s['n_errors']:,}", str(s["added_at"])[:19]] for s in sets],
        right=(4, 5),
    )  # fmt: skip
