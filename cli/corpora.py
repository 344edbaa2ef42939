"""`tame-wh corpus …` and `tame-wh testset …`: register, list and show text collections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from warehouse import AddResult, CorpusInfo, UsageError
from warehouse.cli.context import AppContext, confirm, json_option, language_options, pass_app
from warehouse.cli.output import emit_json, print_fields, print_table, say, status
from warehouse.frontend import (
    TABLE_FORMATS,
    TEXT_FORMATS,
    CorpusData,
    read_test_set,
    read_test_set_table,
    read_text_corpus,
    read_training_corpus,
)

_input_file = click.Path(path_type=Path, dir_okay=False)


def _report_add(result: AddResult, as_json: bool) -> None:
    """Print what an add did."""
    if as_json:
        emit_json(result.to_dict())
        return
    info = result.corpus
    label = "training corpus" if info.role == "train" else "test set"
    if result.action == "unchanged":
        click.echo(
            f"{label} {info.name!r} already holds identical content (id {info.corpus_id}); "
            "nothing to do"
        )
        return
    verb = "replaced" if result.action == "replaced" else "added"
    refs = f", {info.n_refs} reference(s)" if info.role == "test" else ""
    click.echo(
        f"{verb} {label} {info.name!r}: {info.n_segments} segments{refs}, "
        f"id {info.corpus_id} ({result.seconds:.2f} s)"
    )


def _delete(app: AppContext, name: str, role: str, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Delete a corpus of `role` after saying what goes with it (confirmed unless dry)."""
    with app.open("read") as wh:  # the plan alone (and a dry run) takes no writers' lock
        plan = wh.deletion_plan(name, role)
    if dry_run:
        if as_json:
            emit_json(plan.to_dict())
        else:
            click.echo(plan.describe())
        return
    if not as_json:
        say(plan.describe())
    confirm(plan.describe(), yes, "delete them?")
    with app.open("write") as wh:
        done = wh.delete_corpus(name, role, confirmed=plan)
    if as_json:
        emit_json(done.to_dict())
    else:
        click.echo(done.describe())


def _rename(app: AppContext, name: str, new_name: str, role: str, as_json: bool) -> None:
    """Rename a corpus of `role`."""
    with app.open("write") as wh:
        info = wh.rename_corpus(name, new_name, role)
    if as_json:
        emit_json(info.to_dict())
    else:
        label = "training corpus" if role == "train" else "test set"
        click.echo(f"renamed {label} {name!r} to {info.name!r} (id {info.corpus_id})")


def _add(app: AppContext, data: CorpusData, replace: bool, yes: bool) -> AddResult:
    """Register a corpus; a replacement that removes something is described first and needs
    --yes (or a yes at the terminal's prompt)."""
    confirmed = None
    if replace:
        with app.open("write") as wh:
            plan = wh.replacement_plan(data)
        if plan is not None:
            say(plan.describe())
            confirm("the replacement", yes, "replace it?")
            confirmed = plan
    with app.open("write") as wh, status(f"loading {data.n_segments} segments"):
        return wh.add(data, replace=replace, notify=say, confirmed=confirmed)


def _list(app: AppContext, role: str, as_json: bool) -> None:
    """Print the corpora of one role."""
    with app.open("read") as wh:
        items = wh.corpora(role)
    if as_json:
        emit_json([c.to_dict() for c in items])
        return
    if not items:
        kind = "training corpora" if role == "train" else "test sets"
        click.echo(f"no {kind} registered yet")
        return
    columns = ["name", "id", "segments", "refs", "src", "tgt", "added (UTC)"]
    rows = [
        [c.name, c.corpus_id, c.n_segments, c.n_refs, c.src_lang, c.tgt_lang, c.added_at]
        for c in items
    ]
    print_table(None, columns, rows)


def _show(info: CorpusInfo, as_json: bool) -> None:
    """Print one corpus."""
    if as_json:
        emit_json(info.to_dict())
        return
    files = info.meta.get("files", {})
    pairs: list[tuple[str, object]] = [
        ("name", info.name),
        ("role", info.role),
        ("id", info.corpus_id),
        ("sha256", info.sha256),
        ("segments", info.n_segments),
        ("references", info.n_refs),
        ("kind", "documents / monolingual text" if info.kind == "text" else info.kind),
        ("languages", f"{info.src_lang or '?'} -> {info.tgt_lang or '?'}"),
        ("added (UTC)", info.added_at),
    ]
    for key, value in files.items():
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            pairs.append((f"file {key}", f"{entry.get('path')} ({entry.get('bytes')} bytes)"))
    print_fields(pairs)


@click.group()
def corpus() -> None:
    """Training corpora (parallel text the systems were trained on)."""


@corpus.command("add")
@click.argument("name")
@click.option(
    "--src", "src", type=_input_file, default=None, help="Source side, one segment per line."
)
@click.option(
    "--tgt", "tgt", type=_input_file, default=None, help="Target side, aligned with --src."
)
@click.option(
    "--text",
    "text",
    type=_input_file,
    default=None,
    help="Instead of --src/--tgt: documents or monolingual text, one per line or JSON Lines.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(TEXT_FORMATS),
    default=None,
    help="With --text: lines, or jsonl (a string field text); default by the file's extension.",
)
@language_options(lang=True)
@click.option(
    "--replace", is_flag=True, help="Overwrite a corpus of the same name (drops its audits)."
)
@click.option("--yes", is_flag=True, help="Confirm what --replace removes without a prompt.")
@json_option
@pass_app
def corpus_add(
    app: AppContext,
    name: str,
    src: Path | None,
    tgt: Path | None,
    text: Path | None,
    fmt: str | None,
    lang: str | None,
    src_lang: str | None,
    tgt_lang: str | None,
    replace: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Register a training corpus: parallel text (--src, --tgt; .gz accepted), or documents
    and monolingual text (--text)."""
    if text is not None:
        if src is not None or tgt is not None or src_lang or tgt_lang:
            raise UsageError("--text: leave out --src, --tgt, --src-lang and --tgt-lang")
        with status(f"reading {text}"):
            data = read_text_corpus(name, text, lang, fmt)
    else:
        if src is None or tgt is None:
            raise UsageError("give --src and --tgt (a parallel corpus) or --text (documents)")
        if lang or fmt:
            raise UsageError("--lang and --format apply to --text only")
        with status(f"reading {src} and {tgt}"):
            data = read_training_corpus(name, src, tgt, src_lang, tgt_lang)
    _report_add(_add(app, data, replace, yes), as_json)


@corpus.command("list")
@json_option
@pass_app
def corpus_list(app: AppContext, as_json: bool) -> None:
    """List training corpora."""
    _list(app, "train", as_json)


@corpus.command("show")
@click.argument("name")
@json_option
@pass_app
def corpus_show(app: AppContext, name: str, as_json: bool) -> None:
    """Show one training corpus: counts, languages, hash, files, when it was added."""
    with app.open("read") as wh:
        info = wh.corpus(name, "train")
    _show(info, as_json)


@click.group()
def testset() -> None:
    """Test sets (sources with one or more references)."""


@testset.command("add")
@click.argument("name")
@click.option("--src", "src", type=_input_file, default=None, help="Sources, one per line.")
@click.option(
    "--ref",
    "refs",
    type=_input_file,
    multiple=True,
    help="References, aligned with --src; repeat for several references.",
)
@click.option(
    "--from",
    "table",
    type=_input_file,
    default=None,
    help="A table instead of --src/--ref: Parquet, JSON Lines, CSV or TSV (docs/inputs.md).",
)
@click.option("--src-col", default=None, help="With --from: the source column (a.b: nested).")
@click.option(
    "--ref-col", "ref_cols", multiple=True, help="With --from: a reference column; repeatable."
)
@click.option("--id-col", default=None, help="With --from: a column of segment ids.")
@click.option(
    "--format",
    "table_format",
    type=click.Choice(TABLE_FORMATS),
    default=None,
    help="With --from: the table's format (default: from the file name).",
)
@click.option(
    "--segments-meta",
    type=_input_file,
    default=None,
    help="JSONL, one object per segment: id, difficulty (1-5), provenance, extra fields.",
)
@language_options()
@click.option(
    "--replace",
    is_flag=True,
    help="Overwrite a test set of the same name (drops its audits and runs).",
)
@click.option("--yes", is_flag=True, help="Confirm what --replace removes without a prompt.")
@json_option
@pass_app
def testset_add(
    app: AppContext,
    name: str,
    src: Path | None,
    refs: tuple[Path, ...],
    table: Path | None,
    src_col: str | None,
    ref_cols: tuple[str, ...],
    id_col: str | None,
    table_format: str | None,
    segments_meta: Path | None,
    src_lang: str | None,
    tgt_lang: str | None,
    replace: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Register a test set from plain files (--src, --ref) or a table (--from; .gz accepted)."""
    if table is None:
        if src is None or not refs or src_col or ref_cols or id_col or table_format:
            raise UsageError(
                "give --src and --ref (plain files), or --from TABLE with --src-col and --ref-col"
            )
        with status(f"reading {src}"):
            data = read_test_set(name, src, list(refs), segments_meta, src_lang, tgt_lang)
    else:
        if src is not None or refs or segments_meta is not None or not src_col or not ref_cols:
            raise UsageError(
                "--from reads sources and references from the table: give --src-col and "
                "--ref-col, not --src, --ref or --segments-meta"
            )
        with status(f"reading {table}"):
            data = read_test_set_table(
                name, table, src_col=src_col, ref_cols=ref_cols, id_col=id_col,
                fmt=table_format, src_lang=src_lang, tgt_lang=tgt_lang,
            )  # fmt: skip
    _report_add(_add(app, data, replace, yes), as_json)


@testset.command("list")
@json_option
@pass_app
def testset_list(app: AppContext, as_json: bool) -> None:
    """List test sets."""
    _list(app, "test", as_json)


@testset.command("show")
@click.argument("name")
@json_option
@pass_app
def testset_show(app: AppContext, name: str, as_json: bool) -> None:
    """Show one test set."""
    with app.open("read") as wh:
        info = wh.corpus(name, "test")
    _show(info, as_json)


_delete_options = [
    click.argument("name"),
    click.option("--dry-run", is_flag=True, help="Say what would be deleted; change nothing."),
    click.option(
        "--yes", is_flag=True, help="Delete without a prompt (needed when not at a terminal)."
    ),
    json_option,
]


def _with(options: list[Any]) -> Any:
    """Apply click decorators in order."""

    def apply(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return apply


@corpus.command("delete")
@_with(_delete_options)
@pass_app
def corpus_delete(app: AppContext, name: str, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Delete a training corpus with its segments and every audit against it."""
    _delete(app, name, "train", dry_run, yes, as_json)


@testset.command("delete")
@_with(_delete_options)
@pass_app
def testset_delete(app: AppContext, name: str, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Delete a test set with its segments, audits and runs."""
    _delete(app, name, "test", dry_run, yes, as_json)


@corpus.command("rename")
@click.argument("name")
@click.argument("new_name")
@json_option
@pass_app
def corpus_rename(app: AppContext, name: str, new_name: str, as_json: bool) -> None:
    """Rename a training corpus (its id and audits stay)."""
    _rename(app, name, new_name, "train", as_json)


@testset.command("rename")
@click.argument("name")
@click.argument("new_name")
@json_option
@pass_app
def testset_rename(app: AppContext, name: str, new_name: str, as_json: bool) -> None:
    """Rename a test set (its id, audits and runs stay)."""
    _rename(app, name, new_name, "test", as_json)
