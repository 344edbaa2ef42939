"""Ingesting evaluated runs: parse and score everything first, then write in one transaction."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from warehouse import __version__
from warehouse.errors import InputError, UsageError
from warehouse.inputs.ci_env import ci_metadata
from warehouse.inputs.corpus_files import CorpusData
from warehouse.inputs.runcard import TOKEN_FIELDS, EntryInput, RunDocument, read_run_document
from warehouse.inputs.segment_meta import SegmentMeta, check_unique_keys
from warehouse.inputs.textio import read_lines
from warehouse.metrics.scores import corpus_scores
from warehouse.metrics.surface import (
    SegmentStats,
    compute_segment_stats,
    metric_settings,
)
from warehouse.stats.arrays import RunArrays, build_run_arrays
from warehouse.stats.intervals import (
    RunConfidence,
    composite_interval,
    compute_confidence,
    write_intervals,
)
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT, connect, transaction
from warehouse.store.corpora import add_corpus_row, corpus_texts, get_corpus
from warehouse.store.purge import delete_runs
from warehouse.store.sums import refresh_runs

Notify = Callable[[str], None]
_LANG_PAIR = re.compile(r"^([A-Za-z]{2,3}(?:_[A-Za-z]{4})?)[-→>]([A-Za-z]{2,3}(?:_[A-Za-z]{4})?)$")
_ID_LENGTH = 16


@dataclass
class PreparedRun:
    """A run parsed, aligned and scored, ready to be written; nothing touched the warehouse."""

    label: str
    test_corpus_id: str
    test_name: str
    new_test_set: CorpusData | None
    model_slug: str
    condition: str | None
    created_at: datetime
    hyps: list[str]
    errors: list[str | None]
    latency: list[float | None]
    entry_tokens: dict[str, list[int | None]]
    stats: SegmentStats
    seg_metrics: list[tuple[int, str, float]]
    run_metrics: dict[str, float]
    document: RunDocument | None
    settings: dict[str, Any]
    ci: dict[str, Any] | None
    run_id: str = ""
    warnings: list[str] = field(default_factory=list)
    difficulty: list[int | None] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # segment ids (default: line numbers)
    confidence: RunConfidence | None = None

    def __post_init__(self) -> None:
        if not self.run_id:
            self.run_id = self._fingerprint()

    def _fingerprint(self) -> str:
        """Content id of the run: test set, hypotheses, error flags, model, condition, settings."""
        header = {
            "format": 1,
            "test_corpus_id": self.test_corpus_id,
            "model_slug": self.model_slug,
            "condition": self.condition,
            "settings": self.settings,
        }
        digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
        digest.update(json.dumps(self.hyps, ensure_ascii=False).encode("utf-8"))
        digest.update(json.dumps([e is not None for e in self.errors]).encode())
        return digest.hexdigest()[:_ID_LENGTH]

    def scores(self) -> dict[str, float | None]:
        """Corpus BLEU, chrF++, TER and exact-match rate of the whole run."""
        out: dict[str, float | None] = dict(
            corpus_scores(self.stats.bleu, self.stats.chrf, self.stats.ter)
        )
        evaluated = [m for m in self.stats.exact_match if m is not None]
        out["exact_match_rate"] = sum(evaluated) / len(evaluated) if evaluated else None
        return out

    def arrays(self, label: str | None = None) -> RunArrays:
        """The run's per-segment statistics and per-entry metrics as arrays, keyed by segment
        id — what `load_run_arrays` reads back once the run is stored."""
        n = len(self.hyps)
        return build_run_arrays(
            run_id=self.run_id,
            label=self.label if label is None else label,
            test_corpus_id=self.test_corpus_id,
            keys=self.keys or [str(i) for i in range(n)],
            bleu=self.stats.bleu,
            chrf=self.stats.chrf,
            ter=self.stats.ter,
            exact=self.stats.exact_match,
            difficulty=self.difficulty or [None] * n,
            entry_values=self.seg_metrics,
            test_set=self.test_name,
        )

    def add_confidence(self, settings: BootstrapSettings | None) -> PreparedRun:
        """Compute the run's bootstrap intervals (none when `settings` is None); returns self."""
        if settings is not None:
            self.confidence = compute_confidence(self.arrays(), settings)
        return self

    def run_card(self) -> dict[str, Any]:
        """The JSON stored in `runs.run_card`: the input document as given, or a minimal card."""
        if self.document is not None:
            return self.document.doc
        return {"model_slug": self.model_slug, "condition": self.condition}


@dataclass(frozen=True)
class IngestResult:
    """What happened to one run: `added`, `unchanged` or `replaced`."""

    action: str
    run_id: str
    label: str
    model_slug: str
    condition: str | None
    test_set: str
    test_set_created: bool
    n_entries: int
    n_errors: int
    scores: dict[str, float | None]
    warnings: list[str]
    intervals: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _now() -> datetime:
    """Current UTC time as a naive timestamp (the warehouse stores UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _pick(option: str | None, from_doc: str | None, name: str, file: str) -> str | None:
    """A value given both on the command line and in the document must agree."""
    if option is not None and from_doc is not None and option != from_doc:
        raise UsageError(
            f"{file}: {name} is {from_doc!r} but --{name.replace('_', '-')} says {option!r}"
        )
    return option if option is not None else from_doc


def _languages(pair: str | None) -> tuple[str | None, str | None]:
    """Source and target language codes from a `dataset.language_pair` such as `en-es`."""
    match = _LANG_PAIR.match(pair or "")
    return (match.group(1), match.group(2)) if match else (None, None)


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


def _tokenized_period_warning(hyps: Sequence[str]) -> list[str]:
    """sacrebleu's hint that hypotheses look tokenized, as a warning of ours."""
    count = sum(1 for h in hyps if h.endswith(" ."))
    if count >= 100:
        return [
            f"{count} hypotheses end in ' .' — are they tokenized? BLEU expects detokenized text"
        ]
    return []


def _load_test_set(
    db: str | Path, name: str, lock_timeout: float
) -> tuple[str, list[str], list[list[str]], list[int | None]]:
    """Corpus id, segment keys, references and difficulties of a registered test set."""
    if not Path(db).exists():
        raise UsageError(f"unknown test set {name!r}; the warehouse {db} does not exist yet")
    con = connect(db, read_only=True, lock_timeout=lock_timeout)
    try:
        info = get_corpus(con, name, "test")
        rows = con.execute(
            "SELECT seg_key, difficulty FROM segments WHERE corpus_id = ? ORDER BY seg_idx",
            [info.corpus_id],
        ).fetchall()
        _sources, refs = corpus_texts(con, info.corpus_id)
    finally:
        con.close()
    return info.corpus_id, [r[0] for r in rows], refs, [r[1] for r in rows]


def prepare_from_files(
    db: str | Path,
    *,
    testset: str,
    hyp_path: str | Path,
    model_slug: str | None,
    condition: str | None = None,
    run_card_path: str | Path | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ci: BootstrapSettings | None = None,
) -> PreparedRun:
    """Score a hypothesis file against a registered test set (plus an optional run card), with
    bootstrap intervals when `ci` is given."""
    hyps = read_lines(hyp_path)
    document = read_run_document(run_card_path) if run_card_path is not None else None
    card_file = str(run_card_path)
    if document is not None:
        model_slug = _pick(model_slug, document.model_slug, "model_slug", card_file)
        condition = _pick(condition, document.condition, "condition", card_file)
    if not model_slug:
        raise UsageError("--model-slug is required (or a run card with model_slug)")
    corpus_id, keys, refs, difficulty = _load_test_set(db, testset, lock_timeout)
    if len(hyps) != len(keys):
        raise InputError(
            f"has {len(hyps)} lines but test set {testset!r} has {len(keys)} segments",
            str(hyp_path),
            min(len(hyps), len(keys)) + 1,
        )
    entries: list[EntryInput | None] = [None] * len(keys)
    if document is not None and document.entries:
        entries = _align_entries(document.entries, keys, card_file)
    errors = [e.error if e is not None else None for e in entries]
    latency, tokens, seg_metrics = _entry_columns(entries, len(keys))
    n_refs = max(len(r) for r in refs)
    return PreparedRun(
        label=str(hyp_path),
        test_corpus_id=corpus_id,
        test_name=testset,
        new_test_set=None,
        model_slug=model_slug,
        condition=condition,
        created_at=(document.created_at if document else None) or _now(),
        hyps=hyps,
        errors=errors,
        latency=latency,
        entry_tokens=tokens,
        stats=compute_segment_stats(hyps, refs, [e is not None for e in errors]),
        seg_metrics=seg_metrics,
        run_metrics=document.run_metrics if document else {},
        document=document,
        settings=metric_settings(n_refs),
        ci=ci_metadata(),
        warnings=_tokenized_period_warning(hyps),
        difficulty=difficulty,
        keys=keys,
    ).add_confidence(ci)


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


def prepare_from_document(
    path: str | Path,
    *,
    model_slug: str | None = None,
    condition: str | None = None,
    ci: BootstrapSettings | None = None,
) -> PreparedRun:
    """Score a test report / run card whose entries carry source, expected and predicted text,
    with bootstrap intervals when `ci` is given."""
    file = str(path)
    document = read_run_document(path)
    model_slug = _pick(model_slug, document.model_slug, "model_slug", file)
    condition = _pick(condition, document.condition, "condition", file)
    if not model_slug:
        raise UsageError(f"{file}: no model_slug in the document; pass --model-slug")
    entries = document.entries
    if not entries:
        raise InputError(
            "$.entries: no per-entry results; ingest plain files with --testset and --hyp "
            "and pass this file as --run-card",
            file,
        )
    n_refs = None
    for number, entry in enumerate(entries):
        where = f"$.entries[{number}]"
        if entry.source is None:
            raise InputError(f"{where}.source: missing (needed to build the test set)", file)
        if entry.refs is None:
            raise InputError(f"{where}.expected: missing (needed to build the test set)", file)
        if entry.hyp is None and entry.error is None:
            raise InputError(f"{where}.predicted: missing and the entry has no error", file)
        if n_refs is None:
            n_refs = len(entry.refs)
        elif len(entry.refs) != n_refs:
            raise InputError(
                f"{where}.expected: {len(entry.refs)} references but the first entry has {n_refs}",
                file,
            )
    assert n_refs is not None
    keys = [e.key for e in entries]
    segment_ids = [k if k is not None else str(i) for i, k in enumerate(keys)]
    check_unique_keys(segment_ids, f"{file} ($.entries[].id)")
    meta = SegmentMeta(
        keys=keys,
        difficulty=[e.difficulty for e in entries],
        provenance=[e.provenance for e in entries],
        extra=[None] * len(entries),
    )
    src_lang, tgt_lang = _languages(document.language_pair)
    test = CorpusData(
        name=document.dataset_id or "report",
        role="test",
        src=[e.source or "" for e in entries],
        refs=[[(e.refs or [])[k] for e in entries] for k in range(n_refs)],
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        seg_meta=meta,
        files={"report": {"path": str(Path(path).resolve())}},
    )
    hyps = [e.hyp or "" for e in entries]
    errors = [e.error for e in entries]
    latency, tokens, seg_metrics = _entry_columns(entries, len(entries))
    return PreparedRun(
        label=file,
        test_corpus_id=test.corpus_id,
        test_name=test.name,
        new_test_set=test,
        model_slug=model_slug,
        condition=condition,
        created_at=document.created_at or _now(),
        hyps=hyps,
        errors=errors,
        latency=latency,
        entry_tokens=tokens,
        stats=compute_segment_stats(
            hyps, [e.refs or [] for e in entries], [e is not None for e in errors]
        ),
        seg_metrics=seg_metrics,
        run_metrics=document.run_metrics,
        document=document,
        settings=metric_settings(n_refs),
        ci=ci_metadata(),
        warnings=_tokenized_period_warning(hyps),
        difficulty=[e.difficulty for e in entries],
        keys=segment_ids,
    ).add_confidence(ci)


def _resolve_test_set(con: duckdb.DuckDBPyConnection, run: PreparedRun) -> tuple[str, bool]:
    """Name of the run's test set, registering an on-the-fly test set when it is new."""
    row = con.execute(
        "SELECT name FROM corpora WHERE corpus_id = ? AND role = 'test'", [run.test_corpus_id]
    ).fetchone()
    if row is not None:
        return str(row[0]), False
    if run.new_test_set is None:
        raise UsageError(
            f"test set {run.test_name!r} changed or was removed while ingesting; run again"
        )
    data = run.new_test_set
    taken = con.execute("SELECT 1 FROM corpora WHERE name = ?", [data.name]).fetchone()
    if taken is not None:
        data.name = f"{data.name}@{data.corpus_id[:8]}"
    add_corpus_row(con, data)
    return data.name, True


def _insert_run(con: duckdb.DuckDBPyConnection, run: PreparedRun) -> None:
    """Insert the run row, its hypotheses, statistics and metric values (bulk via Arrow)."""
    doc = run.document
    totals = doc.tokens if doc else dict.fromkeys(TOKEN_FIELDS)
    settings = {**run.settings, "tame_wh": __version__}
    row = {
        "run_id": run.run_id,
        "test_corpus_id": run.test_corpus_id,
        "model_slug": run.model_slug,
        "condition": run.condition,
        "created_at": run.created_at,
        "ingested_at": _now(),
        "elapsed_seconds": doc.elapsed_seconds if doc else None,
        "n_entries": len(run.hyps),
        **totals,
        "total_cost_usd": doc.total_cost_usd if doc else None,
        "dataset_id": doc.dataset_id if doc else None,
        "language_pair": doc.language_pair if doc else None,
        "fingerprint_hash": doc.fingerprint_hash if doc else None,
        "ci": json.dumps(run.ci) if run.ci else None,
        "metric_settings": json.dumps(settings),
        "run_card": json.dumps(run.run_card(), ensure_ascii=False),
    }
    run_row = pa.Table.from_pylist([row])
    n = len(run.hyps)
    seg_idx = pa.array(np.arange(n, dtype=np.int64))
    run_ids = pa.array([run.run_id] * n, pa.string())
    hypotheses = pa.table(
        {
            "run_id": run_ids,
            "seg_idx": seg_idx,
            "hyp": pa.array(run.hyps, pa.large_string()),
            "latency_s": pa.array(run.latency, pa.float64()),
            "error": pa.array(run.errors, pa.string()),
            **{name: pa.array(run.entry_tokens[name], pa.int64()) for name in TOKEN_FIELDS},
        }
    )
    stats = pa.table(
        {
            "run_id": run_ids,
            "seg_idx": seg_idx,
            "bleu_stats": pa.array(run.stats.bleu, pa.list_(pa.int64())),
            "chrf_stats": pa.array(run.stats.chrf, pa.list_(pa.int64())),
            "ter_stats": pa.array(run.stats.ter, pa.list_(pa.float64())),
            "exact_match": pa.array(run.stats.exact_match, pa.bool_()),
            "length_ratio": pa.array(run.stats.length_ratio, pa.float64()),
            "chrf_sentence": pa.array(run.stats.chrf_sentence, pa.float64()),
        }
    )
    metric_rows: list[tuple[int | None, str, float]] = [
        (None, name, value) for name, value in sorted(run.run_metrics.items())
    ]
    metric_rows += run.seg_metrics
    metrics = pa.table(
        {
            "run_id": pa.array([run.run_id] * len(metric_rows), pa.string()),
            "seg_idx": pa.array([r[0] for r in metric_rows], pa.int64()),
            "metric": pa.array([r[1] for r in metric_rows], pa.string()),
            "value": pa.array([r[2] for r in metric_rows], pa.float64()),
        }
    )
    for view, table, statement in (
        ("_tame_run", run_row, "INSERT INTO runs BY NAME SELECT * FROM _tame_run"),
        ("_tame_hyps", hypotheses, "INSERT INTO hypotheses BY NAME SELECT * FROM _tame_hyps"),
        ("_tame_stats", stats, "INSERT INTO segment_stats BY NAME SELECT * FROM _tame_stats"),
        ("_tame_metrics", metrics, "INSERT INTO metric_values BY NAME SELECT * FROM _tame_metrics"),
    ):
        con.register(view, table)
        try:
            con.execute(statement)
        finally:
            con.unregister(view)


def _store_intervals(
    con: duckdb.DuckDBPyConnection, run_id: str, confidence: RunConfidence
) -> list[dict[str, Any]]:
    """Write a freshly inserted run's intervals, the composite's computed from its stored rows."""
    intervals = list(confidence.intervals)
    composite = composite_interval(con, run_id, confidence)
    if composite is not None:
        intervals.append(composite)
    write_intervals(con, run_id, intervals)
    return [i.to_dict() for i in intervals]


def write_runs(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[PreparedRun],
    *,
    replace: bool = False,
    notify: Notify | None = None,
) -> list[IngestResult]:
    """Write runs in one transaction; a run already present is left alone unless `replace`."""
    say = notify or (lambda _m: None)
    results: list[IngestResult] = []
    with transaction(con):
        for run in runs:
            test_name, created = _resolve_test_set(con, run)
            existing = con.execute(
                "SELECT run_card FROM runs WHERE run_id = ?", [run.run_id]
            ).fetchone()
            warnings = list(run.warnings)
            intervals: list[dict[str, Any]] = []
            if existing is not None and not replace:
                action = "unchanged"
                if json.loads(existing[0]) != run.run_card():
                    warnings.append(
                        "the stored run card differs from this one; pass --replace to overwrite it"
                    )
            else:
                action = "added"
                if existing is not None:
                    say(f"replacing run {run.run_id} ({run.model_slug})")
                    delete_runs(con, [run.run_id])
                    action = "replaced"
                _insert_run(con, run)
                refresh_runs(con, [run.run_id])  # the composite interval reads the stored sums
                if run.confidence is not None:
                    intervals = _store_intervals(con, run.run_id, run.confidence)
                    warnings += run.confidence.warnings
            results.append(
                IngestResult(
                    action=action,
                    run_id=run.run_id,
                    label=run.label,
                    model_slug=run.model_slug,
                    condition=run.condition,
                    test_set=test_name,
                    test_set_created=created,
                    n_entries=len(run.hyps),
                    n_errors=sum(e is not None for e in run.errors),
                    scores=run.scores(),
                    warnings=warnings,
                    intervals=intervals,
                )
            )
    return results
