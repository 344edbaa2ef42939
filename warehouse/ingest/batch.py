"""Ingesting a batch of runs from files: read and align every run, score what is new without
holding the warehouse, then write them all in one transaction (what `tame-wh ingest` does)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb

from warehouse.basics import Notify, did_you_mean, silent, suggestion
from warehouse.errors import InputError, UsageError
from warehouse.ingest.prepare import (
    RegisteredTestSet,
    WarehouseRef,
    load_test_set,
    prepare_from_files,
    prepare_from_parsed,
    stored_test_set,
)
from warehouse.ingest.runs import IngestResult, PreparedRun
from warehouse.ingest.write import stored_run_ids, write_runs
from warehouse.inputs.foreign import Columns, ForeignRun, read_foreign
from warehouse.inputs.runcard import parse_run_document, read_run_document
from warehouse.metrics.options import MetricOptions
from warehouse.metrics.plugins import load_plugin, plugin_timeout
from warehouse.stats.resample import bootstrap_settings
from warehouse.store.address import Address
from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT
from warehouse.store.replicates import REPLICATE_TAG, replicate_tags
from warehouse.store.schema import staged_write
from warehouse.store.settings import read_settings

Progress = Callable[[str], AbstractContextManager[Any]]


def no_progress(_phase: str) -> AbstractContextManager[Any]:
    """No progress display."""
    return nullcontext()


@dataclass(frozen=True)
class IngestRequest:
    """What to ingest: JSON test reports / run cards (`reports`), or one hypothesis file with
    `testset` (and optionally a run card); metric options and bootstrap settings."""

    reports: Sequence[str | Path] = ()
    testset: str | None = None
    hyp: str | Path | None = None
    model_slug: str | None = None
    condition: str | None = None
    run_card: str | Path | None = None
    options: MetricOptions = field(default_factory=MetricOptions)
    replace: bool = False
    intervals: bool = True
    n_bootstrap: int | None = None
    alpha: float | None = None
    seed: int | None = None
    replicate_of: str | None = None  # a stored run these runs repeat (docs/statistics.md)
    tags: Mapping[str, str] = field(default_factory=dict)  # set on every run, stored ones too
    # Another tool's files (`reports` are then those files; docs/inputs.md).
    from_format: str | None = None
    columns: Columns = field(default_factory=Columns)
    table_format: str | None = None
    comet_model: str | None = None
    lm_eval_results: str | Path | None = None
    inputs_dir: str | Path | None = None  # where files an import names may be (--inputs-dir)
    metrics: tuple[str, ...] = ()  # metric plugins to score the runs with (docs/metrics.md)
    # Refuse a run whose model has no stored run yet (what a gate needs: a misspelled slug
    # would be a new model with no baseline).
    known_models_only: bool = False

    def __post_init__(self) -> None:
        if self.reports and (self.hyp or self.run_card):
            raise UsageError("give JSON reports, or --testset/--hyp/--run-card, not both")
        if not self.reports and not (self.testset and self.hyp):
            what = "the files of --from" if self.from_format else "JSON reports"
            raise UsageError(f"give {what}, or both --testset and --hyp")
        if REPLICATE_TAG in self.tags:
            raise UsageError(
                f"--tag {REPLICATE_TAG}=…: that tag names a run's replicate group; "
                "--replicate-of RUN sets it"
            )
        imports = (self.columns.given, self.table_format, self.comet_model, self.lm_eval_results,
                   self.inputs_dir)  # fmt: skip
        if self.from_format is None and any(imports):
            raise UsageError(
                "the column options, --format, --comet-model, --lm-eval-results and --inputs-dir "
                "read other tools' files: add --from"
            )


def _prepare_foreign(
    registered: RegisteredTestSet | None,
    request: IngestRequest,
    lookup: Callable[[str], RegisteredTestSet | None] | None,
) -> list[PreparedRun]:
    """Read other tools' files as test reports, then align them like reports."""
    assert request.from_format is not None
    prepared = []
    for path in request.reports:
        runs = read_foreign(path, request.from_format, columns=request.columns,
                            table_format=request.table_format, comet_model=request.comet_model,
                            lm_eval_results=request.lm_eval_results,
                            inputs_dir=request.inputs_dir)  # fmt: skip
        if request.model_slug is not None and len(runs) > 1:
            raise UsageError(f"{path}: holds {len(runs)} systems; --model-slug names one run "
                             "(each system's name is its model slug)")  # fmt: skip
        for run in runs:
            if run.positions:
                _answer_in_order(run, registered, str(path))
            document = parse_run_document(run.document, run.label)
            prepared.append(prepare_from_parsed(
                document, model_slug=request.model_slug, condition=request.condition,
                options=request.options, testset=registered, fallback_model_slug=run.model_hint,
                registered=lookup,
            ))  # fmt: skip
    return prepared


def _answer_in_order(run: ForeignRun, test: RegisteredTestSet | None, file: str) -> None:
    """Entries with neither id nor source answer the registered test set's segments in order
    (as the lines of a hypothesis file do)."""
    entries = run.document["entries"]
    if test is None:
        raise UsageError(
            f"{file}: its rows carry neither ids nor sources: give --testset NAME to answer a "
            "registered test set row by row (a table may also define one: --src-col, --ref-col)"
        )
    if len(entries) != len(test.sources):
        raise InputError(
            f"has {len(entries)} rows but test set {test.name!r} has {len(test.sources)} "
            "segments (give --id-col or --src-col to align rows by id or source)",
            file,
        )
    for entry, source in zip(entries, test.sources, strict=True):
        entry["source"] = source


def _prepare(db: WarehouseRef, request: IngestRequest) -> list[PreparedRun]:
    """Read and align every run (nothing scored yet)."""
    if not request.reports:
        assert request.testset is not None and request.hyp is not None
        return [
            prepare_from_files(
                db,
                testset=request.testset,
                hyp_path=request.hyp,
                model_slug=request.model_slug,
                condition=request.condition,
                run_card_path=request.run_card,
                options=request.options,
            )
        ]
    registered = load_test_set(db, request.testset) if request.testset else None
    lookup = _test_set_lookup(db)
    if request.from_format is not None:
        return _prepare_foreign(registered, request, lookup)
    return [
        prepare_from_parsed(
            read_run_document(path),
            model_slug=request.model_slug,
            condition=request.condition,
            options=request.options,
            testset=registered,
            registered=lookup,
        )
        for path in request.reports
    ]


def _test_set_lookup(db: WarehouseRef) -> Callable[[str], RegisteredTestSet | None] | None:
    """Finding a registered test set by name in the open warehouse (None: there is none yet)."""
    if not isinstance(db, duckdb.DuckDBPyConnection):
        return None
    con = db

    def find(name: str) -> RegisteredTestSet | None:
        known = con.execute(
            "SELECT 1 FROM corpora WHERE name = ? AND role = 'test'", [name]
        ).fetchone()
        return stored_test_set(con, name) if known else None

    return find


def ingest_batch(
    address: Address,
    request: IngestRequest,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    notify: Notify = silent,
    progress: Progress = no_progress,
) -> list[IngestResult]:
    """Store the runs of `request` in the warehouse at `address` (created on first use); a run
    already stored is recognised before anything is scored, and no lock is held while scoring."""
    with staged_write(address, lock_timeout=lock_timeout) as stage:
        # A look at the warehouse, when it exists: the registered test set, the bootstrap
        # defaults from its settings, and which runs it holds. Nothing is locked while scoring.
        con = stage.look
        prepared = _prepare(con if con is not None else address, request)
        timeout = plugin_timeout(read_settings(con) if con is not None else {})
        plugins = [load_plugin(name, timeout) for name in dict.fromkeys(request.metrics)]
        for run in prepared:
            run.use_plugins(plugins)  # their signatures are part of the run's id
        ci = (
            bootstrap_settings(con, request.n_bootstrap, request.alpha, request.seed)
            if request.intervals
            else None
        )
        known = _stored_models(con)
        new_models = {p.model_slug for p in prepared} - known
        if request.known_models_only and new_models:
            raise UsageError(_new_model_message(sorted(new_models)[0], known))
        for slug in sorted(new_models):
            close = did_you_mean(slug, known)
            if close:
                notify(f"warning: model {slug!r} is new, and close to the stored "
                       f"{' and '.join(repr(c) for c in close)}: a typo would start a history "
                       "of its own")  # fmt: skip
        stored = stored_run_ids(con, [p.run_id for p in prepared]) if con is not None else set()
        for run in prepared:
            run.bootstrap = ci
        to_score = [p for p in prepared if request.replace or p.run_id not in stored]
        with progress("scoring"):
            for run in to_score:
                run.score()
        with stage.writer() as writer, progress("writing"):
            tags: dict[str, dict[str, str]] = {}
            if request.replicate_of is not None:
                label, of_tags = replicate_tags(
                    writer,
                    request.replicate_of,
                    [(p.model_slug, p.condition, p.test_corpus_id) for p in prepared],
                )
                tags = {p.run_id: {REPLICATE_TAG: label} for p in prepared}
                tags.update({run_id: {REPLICATE_TAG: value} for run_id, value in of_tags.items()})
            for run in prepared:
                tags.setdefault(run.run_id, {}).update(request.tags)
            results = write_runs(
                writer, prepared, replace=request.replace, notify=notify, tags=tags
            )
        return [replace(r, new_model=r.model_slug in new_models) for r in results]


def _stored_models(con: duckdb.DuckDBPyConnection | None) -> set[str]:
    """The model slugs of the stored runs (none without a warehouse)."""
    if con is None:
        return set()
    return {slug for (slug,) in con.execute("SELECT DISTINCT model_slug FROM runs").fetchall()}


def _new_model_message(slug: str, known: set[str]) -> str:
    """Why a gate refuses a model no stored run has, with the stored slugs it may mean."""
    return (
        f"new model {slug!r}{suggestion(slug, known)}: no run of it is stored, so the gate has "
        "no baseline for it; nothing was written (--allow-new-model stores it and passes the "
        "gate with a note)"
    )
