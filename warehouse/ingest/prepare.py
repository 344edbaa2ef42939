"""Reading a run from its files and aligning it with its test set: plain hypothesis files against a
registered test set, or a test report / run card whose entries carry their text (its own test set,
or a registered one it must match). Nothing is scored here and the warehouse is only read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import duckdb

from warehouse.basics import utc_now
from warehouse.errors import InputError, UsageError
from warehouse.ingest import checks
from warehouse.ingest.runs import PreparedRun
from warehouse.inputs.ci_env import ci_metadata
from warehouse.inputs.corpus_files import CorpusData
from warehouse.inputs.json_checks import check_labels
from warehouse.inputs.languages import direction_conflict, language_pair
from warehouse.inputs.runcard import TOKEN_FIELDS, EntryInput, RunDocument, read_run_document
from warehouse.inputs.segment_meta import SegmentMeta, check_unique_keys
from warehouse.inputs.textio import read_lines
from warehouse.metrics.options import DEFAULT_OPTIONS, MetricOptions
from warehouse.metrics.surface import metric_settings
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.address import Address
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    warehouse_exists,
)
from warehouse.store.corpora import get_corpus

# Where a test set is read from: the warehouse's address, or an open connection to it.
WarehouseRef: TypeAlias = str | Address | duckdb.DuckDBPyConnection


@dataclass(frozen=True)
class RegisteredTestSet:
    """A registered test set as ingest needs it: ids, texts and difficulties in segment order."""

    corpus_id: str
    name: str
    keys: list[str]
    sources: list[str]
    refs: list[list[str]]
    difficulty: list[int | None]
    src_lang: str | None = None
    tgt_lang: str | None = None


def stored_test_set(con: duckdb.DuckDBPyConnection, name: str) -> RegisteredTestSet:
    """A registered test set, read through an open connection to the warehouse."""
    info = get_corpus(con, name, "test")
    table = con.execute(  # one scan of the segments (on a lake each scan reads the catalog)
        "SELECT seg_key, src, refs, difficulty FROM segments WHERE corpus_id = ? ORDER BY seg_idx",
        [info.corpus_id],
    ).to_arrow_table()
    column = table.column
    return RegisteredTestSet(
        info.corpus_id,
        info.name,
        column("seg_key").to_pylist(),
        column("src").to_pylist(),
        column("refs").to_pylist(),
        column("difficulty").to_pylist(),
        info.src_lang,
        info.tgt_lang,
    )


def load_test_set(
    db: WarehouseRef, name: str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
) -> RegisteredTestSet:
    """A registered test set: through `db` when it is an open connection, else from the
    warehouse at that address (opened read-only, and closed again)."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        return stored_test_set(db, name)
    if not warehouse_exists(db):
        raise UsageError(f"unknown test set {name!r}; the warehouse {db} does not exist yet")
    con = connect(db, read_only=True, lock_timeout=lock_timeout)
    try:
        return stored_test_set(con, name)
    finally:
        close_connection(con)


def _pick(option: str | None, from_doc: str | None, name: str, file: str) -> str | None:
    """A value given both on the command line and in the document must agree."""
    if option is not None and from_doc is not None and option != from_doc:
        raise UsageError(
            f"{file}: {name} is {from_doc!r} but --{name.replace('_', '-')} says {option!r}"
        )
    return option if option is not None else from_doc


def _label_conflict(document: RunDocument, test: RegisteredTestSet, file: str) -> list[str]:
    """A warning when the document's `dataset.language_pair` contradicts the test set's labels."""
    found = direction_conflict(
        f"{file}: dataset.language_pair",
        language_pair(document.language_pair),
        f"test set {test.name!r}",
        (test.src_lang, test.tgt_lang),
    )
    return [found] if found else []


def _entry_columns(
    entries: Sequence[EntryInput | None], n: int
) -> tuple[list[float | None], dict[str, list[int | None]], list[tuple[int, str, float]]]:
    """Latency, token counts and per-entry metrics, aligned with segments (None = absent)."""
    latency: list[float | None] = [None] * n
    tokens: dict[str, list[int | None]] = {name: [None] * n for name in TOKEN_FIELDS}
    metrics: list[tuple[int, str, float]] = []
    for idx, entry in enumerate(entries):
        if entry is None:
            continue
        latency[idx] = entry.latency_s
        for name in TOKEN_FIELDS:
            tokens[name][idx] = entry.tokens[name]
        metrics.extend((idx, name, value) for name, value in sorted(entry.metrics.items()))
    return latency, tokens, metrics


def _text_warnings(
    hyps: Sequence[str], sources: Sequence[str], errors: Sequence[str | None]
) -> list[str]:
    """The checks that need no scores."""
    return [
        *checks.empty_hypotheses(hyps, errors),
        *checks.some_empty(hyps, errors),
        *checks.untranslated(hyps, sources, errors),
        *checks.tokenized_periods(hyps),
    ]


def prepare_from_files(
    db: WarehouseRef,
    *,
    testset: str,
    hyp_path: str | Path,
    model_slug: str | None,
    condition: str | None = None,
    run_card_path: str | Path | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ci: BootstrapSettings | None = None,
    options: MetricOptions = DEFAULT_OPTIONS,
) -> PreparedRun:
    """A hypothesis file against a registered test set (plus an optional run card); bootstrap
    intervals are computed when scored if `ci` is given."""
    hyps = read_lines(hyp_path)
    document = read_run_document(run_card_path) if run_card_path is not None else None
    card_file = str(run_card_path)
    if document is not None:
        model_slug = _pick(model_slug, document.model_slug, "model_slug", card_file)
        condition = _pick(condition, document.condition, "condition", card_file)
    if not model_slug:
        raise UsageError("--model-slug is required (or a run card with model_slug)")
    check_labels(model_slug=model_slug, condition=condition)
    test = load_test_set(db, testset, lock_timeout)
    keys = test.keys
    if len(hyps) != len(keys):
        raise InputError(
            f"has {len(hyps)} lines but test set {testset!r} has {len(keys)} segments",
            str(hyp_path),
            min(len(hyps), len(keys)) + 1,
        )
    entries: list[EntryInput | None] = [None] * len(keys)
    warnings: list[str] = []
    if document is not None and document.entries:
        entries = _align_entries(document.entries, keys, card_file)
        warnings += checks.partial_run_card(len(document.entries), len(keys), card_file)
    if document is not None:
        warnings += _label_conflict(document, test, card_file)
    return _prepared(test, hyps, str(hyp_path), model_slug, condition, document, entries,
                     warnings, ci, options)  # fmt: skip


def _prepared(
    test: RegisteredTestSet,
    hyps: list[str],
    label: str,
    model_slug: str,
    condition: str | None,
    document: RunDocument | None,
    entries: Sequence[EntryInput | None],
    warnings: list[str],
    ci: BootstrapSettings | None,
    options: MetricOptions,
    new_test_set: CorpusData | None = None,
) -> PreparedRun:
    """A run of `hyps` (aligned with the test set's segments) ready to score and write."""
    errors = [e.error if e is not None else None for e in entries]
    latency, tokens, seg_metrics = _entry_columns(entries, len(test.keys))
    n_refs = max(len(r) for r in test.refs)
    return PreparedRun(
        label=label,
        test_corpus_id=test.corpus_id,
        test_name=test.name,
        new_test_set=new_test_set,
        model_slug=model_slug,
        condition=condition,
        created_at=(document.created_at if document else None) or utc_now(),
        hyps=hyps,
        errors=errors,
        latency=latency,
        entry_tokens=tokens,
        refs=test.refs,
        seg_metrics=seg_metrics,
        run_metrics=document.run_metrics if document else {},
        document=document,
        settings=metric_settings(n_refs, options),
        ci=ci_metadata(),
        warnings=warnings + _text_warnings(hyps, test.sources, errors),
        difficulty=test.difficulty,
        keys=test.keys,
        sources=test.sources,
        options=options,
        bootstrap=ci,
    )


def prepare_from_texts(
    test: RegisteredTestSet,
    hyps: list[str],
    *,
    label: str,
    model_slug: str,
    condition: str | None = None,
    ci: BootstrapSettings | None = None,
    options: MetricOptions = DEFAULT_OPTIONS,
    new_test_set: CorpusData | None = None,
) -> PreparedRun:
    """A run from hypotheses already in memory, one per segment of `test` (`new_test_set`: the
    test set is registered with the run when it is not stored yet)."""
    check_labels(model_slug=model_slug, condition=condition)
    if len(hyps) != len(test.keys):
        raise UsageError(f"{label}: {len(hyps)} hypotheses for {len(test.keys)} segments")
    return _prepared(test, hyps, label, model_slug, condition, None, [None] * len(hyps), [], ci,
                     options, new_test_set)  # fmt: skip


def _align_entries(
    entries: Sequence[EntryInput], keys: Sequence[str], file: str
) -> list[EntryInput | None]:
    """Place run-card entries on test-set segments by id (by position when no entry has an id)."""
    aligned: list[EntryInput | None] = [None] * len(keys)
    if all(e.key is None for e in entries):
        if len(entries) != len(keys):
            raise InputError(
                f"$.entries: {len(entries)} entries without ids cannot be aligned with "
                f"{len(keys)} test segments",
                file,
            )
        return list(entries)
    position = {key: idx for idx, key in enumerate(keys)}
    seen: set[str] = set()
    for number, entry in enumerate(entries):
        if entry.key is None:
            raise InputError(f"$.entries[{number}]: missing id (other entries have ids)", file)
        if entry.key not in position:
            raise InputError(f"$.entries[{number}]: id {entry.key!r} is not in the test set", file)
        if entry.key in seen:
            raise InputError(f"$.entries[{number}]: duplicate id {entry.key!r}", file)
        seen.add(entry.key)
        aligned[position[entry.key]] = entry
    return aligned


def _check_entries(entries: Sequence[EntryInput], file: str, need_text: bool) -> int:
    """Every entry has its text (when the report defines its own test set), a hypothesis or an
    error, and as many references as the first; returns that number of references (0 when
    the entries carry none)."""
    n_refs: int | None = None
    for number, entry in enumerate(entries):
        where = f"$.entries[{number}]"
        if need_text and entry.source is None:
            raise InputError(f"{where}.source: missing (needed to build the test set)", file)
        if need_text and entry.refs is None:
            raise InputError(f"{where}.expected: missing (needed to build the test set)", file)
        if entry.hyp is None and entry.error is None:
            raise InputError(f"{where}.predicted: missing and the entry has no error", file)
        if entry.refs is None:
            continue
        if n_refs is None:
            n_refs = len(entry.refs)
        elif len(entry.refs) != n_refs:
            raise InputError(
                f"{where}.expected: {len(entry.refs)} references but the first entry has {n_refs}",
                file,
            )
    return n_refs or 0


def _match_by_content(
    entries: Sequence[EntryInput], test: RegisteredTestSet, file: str
) -> list[int]:
    """Segment index of each entry found by its source text (first unused match)."""
    free: dict[str, list[int]] = {}
    for idx, source in enumerate(test.sources):
        free.setdefault(source.strip(), []).append(idx)
    order = []
    for number, entry in enumerate(entries):
        if entry.source is None:
            raise InputError(
                f"$.entries[{number}]: no id of test set {test.name!r} and no source to find "
                "its segment by",
                file,
            )
        slots = free.get(entry.source.strip())
        if not slots:
            raise InputError(
                f"$.entries[{number}]: source {entry.source[:80]!r} is not a segment of test set "
                f"{test.name!r}",
                file,
            )
        order.append(slots.pop(0))
    return order


def align_with_testset(
    entries: Sequence[EntryInput], test: RegisteredTestSet, file: str
) -> list[int]:
    """The test-set segment of every entry: by entry id when every entry's id is a segment id of
    the test set, else by source text. Every segment must be covered once, and an entry's text
    (when given) must be its segment's; the first entry that differs is named."""
    position = {key: idx for idx, key in enumerate(test.keys)}
    if all(e.key is not None and e.key in position for e in entries):
        order = [position[str(e.key)] for e in entries]
    else:
        order = _match_by_content(entries, test, file)
    seen: dict[int, int] = {}
    for number, idx in enumerate(order):
        if idx in seen:
            raise InputError(
                f"$.entries[{number}]: segment {test.keys[idx]!r} of test set {test.name!r} is "
                f"already answered by $.entries[{seen[idx]}]",
                file,
            )
        seen[idx] = number
        entry = entries[number]
        if entry.source is not None and entry.source.strip() != test.sources[idx].strip():
            raise InputError(
                f"$.entries[{number}] (segment {test.keys[idx]!r}): source {entry.source[:60]!r} "
                f"differs from the test set's {test.sources[idx][:60]!r}",
                file,
            )
        if entry.refs is not None and [r.strip() for r in entry.refs] != [
            r.strip() for r in test.refs[idx]
        ]:
            raise InputError(
                f"$.entries[{number}] (segment {test.keys[idx]!r}): expected text differs from "
                f"test set {test.name!r}'s reference",
                file,
            )
    if len(seen) != len(test.keys):
        missing = next(test.keys[i] for i in range(len(test.keys)) if i not in seen)
        raise InputError(
            f"$.entries: {len(seen)} entries cover {len(seen)} of the {len(test.keys)} segments "
            f"of test set {test.name!r}; the first one missing is {missing!r}",
            file,
        )
    return order


def _own_test_set(
    document: RunDocument, entries: Sequence[EntryInput], n_refs: int, path: str | Path
) -> CorpusData:
    """The test set a report defines by its entries' text."""
    file = str(path)
    keys = [e.key for e in entries]
    check_unique_keys(
        [k if k is not None else str(i) for i, k in enumerate(keys)], f"{file} ($.entries[].id)"
    )
    meta = SegmentMeta(
        keys=keys,
        difficulty=[e.difficulty for e in entries],
        provenance=[e.provenance for e in entries],
        extra=[None] * len(entries),
    )
    src_lang, tgt_lang = language_pair(document.language_pair)
    return CorpusData(
        name=document.dataset_id or "report",
        role="test",
        src=[e.source or "" for e in entries],
        refs=[[(e.refs or [])[k] for e in entries] for k in range(n_refs)],
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        seg_meta=meta,
        files={"report": {"path": str(Path(path).resolve())}},
    )


def _with_declared(settings: dict[str, Any], document: RunDocument) -> dict[str, Any]:
    """The settings with the signatures a document declares for its ingested metrics
    (`metric_signatures`, e.g. the COMET model that scored it); computed metrics keep theirs."""
    declared = document.doc.get("metric_signatures")
    if declared is None:
        return settings
    if not isinstance(declared, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and 0 < len(v) <= 500 for k, v in declared.items()
    ):
        raise InputError("$.metric_signatures: expected an object of metric names to signature "
                         "texts", document.file)  # fmt: skip
    return {**settings, "signatures": {**declared, **settings["signatures"]}}


def _why_not_the_same(entries: Sequence[EntryInput], test: RegisteredTestSet) -> str | None:
    """Why a report's entries are not the registered test set's segments, text for text (in
    any order, ids aside); None when they are."""
    if len(entries) != len(test.sources):
        return f"it has {len(test.sources)} segments and the report {len(entries)} entries"
    if max((len(e.refs or []) for e in entries), default=0) != max(len(r) for r in test.refs):
        return "the number of references differs"

    def texts(source: str | None, refs: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        return (source or "").strip(), tuple(r.strip() for r in refs)

    theirs = sorted(texts(s, r) for s, r in zip(test.sources, test.refs, strict=True))
    ours = sorted(texts(e.source, e.refs or []) for e in entries)
    for (source, refs), (their_source, their_refs) in zip(ours, theirs, strict=True):
        if (source, refs) != (their_source, their_refs):
            what = "source" if source != their_source else "reference"
            return f"a {what} differs ({source[:50]!r} is not among its segments)"
    return None


def prepare_from_document(
    path: str | Path,
    *,
    model_slug: str | None = None,
    condition: str | None = None,
    ci: BootstrapSettings | None = None,
    options: MetricOptions = DEFAULT_OPTIONS,
    testset: RegisteredTestSet | None = None,
    fallback_model_slug: str | None = None,
) -> PreparedRun:
    """A test report / run card whose entries carry their predicted text: against `testset`
    when given (entries aligned by id, else by source, and checked against it), else against
    the test set its entries' source and expected text define. `fallback_model_slug` names the
    model when neither `model_slug` nor the document does."""
    return prepare_from_parsed(
        read_run_document(path), model_slug=model_slug, condition=condition, ci=ci,
        options=options, testset=testset, fallback_model_slug=fallback_model_slug,
    )  # fmt: skip


def prepare_from_parsed(
    document: RunDocument,
    *,
    model_slug: str | None = None,
    condition: str | None = None,
    ci: BootstrapSettings | None = None,
    options: MetricOptions = DEFAULT_OPTIONS,
    testset: RegisteredTestSet | None = None,
    fallback_model_slug: str | None = None,
    registered: Callable[[str], RegisteredTestSet | None] | None = None,
) -> PreparedRun:
    """`prepare_from_document` of a document already parsed (e.g. converted from another
    tool's output, docs/inputs.md). Without `testset`, a `dataset.id` that names a test set
    `registered` finds, with the same texts, joins it."""
    file = document.file
    path = file
    model_slug = _pick(model_slug, document.model_slug, "model_slug", file) or fallback_model_slug
    condition = _pick(condition, document.condition, "condition", file)
    if not model_slug:
        raise UsageError(f"{file}: no model_slug in the document; pass --model-slug")
    check_labels(model_slug=model_slug, condition=condition)
    entries = document.entries
    if not entries:
        raise InputError(
            "$.entries: no per-entry results; ingest plain files with --testset and --hyp "
            "and pass this file as --run-card",
            file,
        )
    n_refs = _check_entries(entries, file, need_text=testset is None)
    join_warnings: list[str] = []
    if testset is None and document.dataset_id and registered is not None:
        named = registered(document.dataset_id)
        if named is not None:
            why = _why_not_the_same(entries, named)
            if why is None:
                testset = named  # the same texts: the report answers the registered test set
            else:
                join_warnings.append(
                    f"dataset.id {document.dataset_id!r} names a registered test set, but {why}: "
                    "the run gets a test set of its own; pass --testset "
                    f"{document.dataset_id} to align it by id or source and see the difference"
                )
    if testset is None:
        own = _own_test_set(document, entries, n_refs, path)
        ordered: list[EntryInput] = list(entries)
        corpus_id, name = own.corpus_id, own.name
        keys: Sequence[str | None] = own.seg_meta.keys if own.seg_meta else []
        sources = own.src
        refs = [list(e.refs or []) for e in entries]
        difficulty = [e.difficulty for e in entries]
        new_test_set: CorpusData | None = own
        label_warnings = join_warnings
    else:
        order = align_with_testset(entries, testset, file)
        ordered = [entries[j] for j in sorted(range(len(order)), key=order.__getitem__)]
        corpus_id, name, keys = testset.corpus_id, testset.name, testset.keys
        sources, refs, difficulty = testset.sources, testset.refs, testset.difficulty
        new_test_set = None
        label_warnings = _label_conflict(document, testset, file)
    segment_ids = [k if k is not None else str(i) for i, k in enumerate(keys)]
    hyps = [e.hyp or "" for e in ordered]
    errors = [e.error for e in ordered]
    latency, tokens, seg_metrics = _entry_columns(ordered, len(ordered))
    return PreparedRun(
        label=file,
        test_corpus_id=corpus_id,
        test_name=name,
        new_test_set=new_test_set,
        model_slug=model_slug,
        condition=condition,
        created_at=document.created_at or utc_now(),
        hyps=hyps,
        errors=errors,
        latency=latency,
        entry_tokens=tokens,
        refs=refs,
        seg_metrics=seg_metrics,
        run_metrics=document.run_metrics,
        document=document,
        settings=_with_declared(metric_settings(max(len(r) for r in refs), options), document),
        ci=ci_metadata(),
        warnings=label_warnings + _text_warnings(hyps, sources, errors),
        difficulty=difficulty,
        keys=segment_ids,
        sources=sources,
        options=options,
        bootstrap=ci,
    )
