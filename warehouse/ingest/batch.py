"""Ingesting a batch of runs from files: read and align every run, score what is new without
holding the warehouse, then write them all in one transaction (what `tame-wh ingest` does)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warehouse.basics import Notify, silent
from warehouse.errors import UsageError
from warehouse.ingest.prepare import (
    WarehouseRef,
    load_test_set,
    prepare_from_document,
    prepare_from_files,
)
from warehouse.ingest.runs import IngestResult, PreparedRun
from warehouse.ingest.write import stored_run_ids, write_runs
from warehouse.metrics.surface import MetricOptions
from warehouse.stats.resample import bootstrap_settings
from warehouse.store.address import Address
from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT
from warehouse.store.replicates import REPLICATE_TAG, replicate_tags
from warehouse.store.schema import staged_write

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

    def __post_init__(self) -> None:
        if self.reports and (self.hyp or self.run_card):
            raise UsageError("give JSON reports, or --testset/--hyp/--run-card, not both")
        if not self.reports and not (self.testset and self.hyp):
            raise UsageError("give JSON reports, or both --testset and --hyp")


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
    return [
        prepare_from_document(
            path,
            model_slug=request.model_slug,
            condition=request.condition,
            options=request.options,
            testset=registered,
        )
        for path in request.reports
    ]


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
        ci = (
            bootstrap_settings(con, request.n_bootstrap, request.alpha, request.seed)
            if request.intervals
            else None
        )
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
            return write_runs(writer, prepared, replace=request.replace, notify=notify, tags=tags)
