"""`tame-wh index …`: build, list and drop stored training indexes (docs/exposure.md)."""

from __future__ import annotations

import os
from typing import Any

import click

from warehouse.cli.audit import INDEX_OPTIONS, index_options
from warehouse.cli.context import INT64_MAX, AppContext, json_option, pass_app
from warehouse.cli.output import emit_json, print_table, progress, say, status
from warehouse.frontend import StoredIndex


@click.group()
def index() -> None:
    """Stored training indexes, loaded by audits instead of rebuilt: build, list, drop."""


def _size(n: int) -> str:
    """Bytes for people."""
    return f"{n / 2**20:,.1f} MiB"


@index.command("build")
@click.option("--train", required=True, help="Training corpus name.")
@click.option(
    "--shard-rows",
    type=click.IntRange(min=1, max=INT64_MAX),
    default=None,
    help="Store shards of this many consecutive rows, one file each (default: one file).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1, max=os.cpu_count() or 1),
    default=None,
    help="Worker threads (default: all cores; at most this machine's CPU threads).",
)
@click.option("--force", is_flag=True, help="Rebuild files that are already stored.")
@json_option
@pass_app
def index_build(app: AppContext, train: str, as_json: bool, **opts: Any) -> None:
    """Build and store the index of a training corpus for the given orders and normalisation."""
    options = index_options(opts)
    with app.open("read") as wh, status("building the index"):
        result = wh.build_index(
            train,
            options,
            shard_rows=opts["shard_rows"],
            threads=opts["threads"],
            force=opts["force"],
            notify=lambda m: say(m) if m.startswith("warning: ") else progress(m),
        )
    if as_json:
        emit_json(result.to_dict())
        return
    built = [f for f in result.files if f["action"] == "built"]
    total = sum(f["bytes"] for f in result.files)
    click.echo(
        f"index of {train!r} in {result.directory}: {len(result.files)} file(s), "
        f"{_size(total)}; {len(built)} built, {len(result.files) - len(built)} already stored "
        f"({result.seconds:.2f} s)"
    )


for _option in reversed(INDEX_OPTIONS):
    index_build = _option(index_build)


def _short_problem(item: StoredIndex) -> str | None:
    """The problem without the file's path (the table shows the key beside it)."""
    if item.problem is None:
        return None
    return item.problem.removeprefix(f"stored index {item.path}: ")


def _print_indexes(items: list[StoredIndex]) -> None:
    """The stored-index table for people."""
    print_table(
        "stored indexes",
        ["corpus", "lens", "status", "key", "size", "created", "rows", "shard"],
        [
            [
                i.corpus or (f"({i.corpus_id})" if i.corpus_id else ""),
                i.lens,
                _short_problem(i) or "ok",
                i.key,
                _size(i.bytes),
                i.created or "",
                "" if i.rows is None else f"{i.rows:,}",
                f"{i.side} side from row {i.row_offset:,}"
                if i.lens == "substring" and i.row_offset is not None
                else (
                    "" if i.shard is None else f"{i.shard + 1}/{i.shards} from row {i.row_offset:,}"
                ),
            ]
            for i in items
        ],
    )


@index.command("list")
@click.option(
    "--verify/--headers-only",
    default=True,
    show_default=True,
    help="Check every checksum (reads each file whole), or only the headers' (quick).",
)
@json_option
@pass_app
def index_list(app: AppContext, verify: bool, as_json: bool) -> None:
    """The stored index files of the warehouse: corpus, key, size, creation, rows, shard."""
    with app.open("read") as wh:
        items = wh.stored_indexes(verify=verify)
    if as_json:
        emit_json([i.to_dict() for i in items])
    elif not items:
        click.echo("no stored indexes")
    else:
        _print_indexes(items)


@index.command("drop")
@click.option("--train", default=None, help="Every stored index of this training corpus.")
@click.option("--key", default=None, help="The file with this key (a base key: all its shards).")
@click.option(
    "--stale",
    is_flag=True,
    help="Files no audit can use (damaged, old, or of a corpus no longer registered).",
)
@click.option("--all", "everything", is_flag=True, help="Every stored index.")
@json_option
@pass_app
def index_drop(
    app: AppContext,
    train: str | None,
    key: str | None,
    stale: bool,
    everything: bool,
    as_json: bool,
) -> None:
    """Delete stored index files (audits rebuild what they need)."""
    with app.open("read") as wh:
        dropped = wh.drop_indexes(train=train, key=key, stale=stale, everything=everything)
    if as_json:
        emit_json([i.to_dict() for i in dropped])
        return
    total = sum(i.bytes for i in dropped)
    click.echo(f"dropped {len(dropped)} stored index file(s), {_size(total)}")
