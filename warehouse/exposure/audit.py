"""Running an exposure audit: build the index, fill `exposures` through the UDF, score the TM.

The definitions (exposure, bins, TM baseline, fast-mode validation) are in docs/exposure.md.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import duckdb
import pyarrow as pa

from warehouse import __version__
from warehouse.basics import silent, utc_now
from warehouse.exposure.config import AuditConfig, AuditOptions, audit_id_for
from warehouse.exposure.direction import reversed_direction, sample_lines
from warehouse.exposure.execution import LOCAL, Execution
from warehouse.exposure.index.checksums import index_checksum
from warehouse.exposure.index.memory import (
    check_longest_row,
    duckdb_budget,
    duckdb_memory,
    peak_rss,
)
from warehouse.exposure.index.minhash import open_minhash_index
from warehouse.exposure.index.retrieval import SearchIndex
from warehouse.exposure.index.retrieval import audit as retrieval_audit
from warehouse.exposure.index.stored import BackgroundSaves, open_training_index
from warehouse.exposure.substring import compute_lenses, store_lenses
from warehouse.exposure.summary import AuditResult, load_audit, tm_hypotheses
from warehouse.exposure.udf import EXPOSURE_FUNCTION, SearchCounters, register_exposure_functions
from warehouse.inputs.languages import direction_conflict, language_conflict
from warehouse.metrics.scores import bleu_from_stats
from warehouse.metrics.surface import compute_segment_stats
from warehouse.sizes import size_text
from warehouse.store.connection import duckdb_threads, transaction
from warehouse.store.corpora import (
    CorpusInfo,
    corpus_texts,
    get_corpus,
    longest_row,
    training_lines,
    training_texts,
)
from warehouse.store.purge import delete_audits
from warehouse.store.sums import refresh_audit

Progress = Callable[[int, int], None]  # (done, total)
VALIDATION_SEED = 12345


def _insert_audit_row(
    con: duckdb.DuckDBPyConnection,
    audit_id: str,
    test: CorpusInfo,
    train: CorpusInfo,
    config: AuditConfig,
    input_warnings: list[str],
    index_checksum: str | None = None,
) -> None:
    """The `audits` row (timings and validation are added when the audit is done); an audit
    whose numbers come from a stored index names its checksum in the signature."""
    con.execute(
        "INSERT INTO audits (audit_id, test_corpus_id, train_corpus_id, mode, near_threshold, "
        "far_threshold, leak_thresholds, n_segments, config, signature, backend, created_at, "
        "input_warnings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            audit_id,
            test.corpus_id,
            train.corpus_id,
            config.mode,
            config.near,
            config.far,
            list(config.leak),
            test.n_segments,
            json.dumps(config.identity()),
            config.signature() + (f"|index:xxh3:{index_checksum}" if index_checksum else ""),
            f"tame-wh-native {__version__}",
            utc_now(),
            input_warnings,
        ],
    )


# Per side searched (docs/exposure.md, "Sides"): every test segment's exposures from the
# registered UDFs, with its bin; a side not searched, and then the pair side, stays NULL.
_FILL_SQL = {
    "both": f"""
        INSERT INTO exposures
        SELECT $audit AS audit_id, seg_idx,
               x.source_exposure, x.source_nn, x.source_exact,
               x.target_exposure, x.target_nn, x.target_ref_idx, x.target_exact,
               x.pair_exposure, x.pair_nn, x.pair_exact,
               x.source_nn AS tm_hyp_idx,
               exposure_bin(x.source_exposure, x.source_exact, $near, $far) AS bin
        FROM (SELECT seg_idx, {EXPOSURE_FUNCTION}(src, refs) AS x
              FROM segments WHERE corpus_id = $test)
        """,
    "source": """
        INSERT INTO exposures BY NAME
        SELECT $audit AS audit_id, seg_idx,
               x.exposure AS source_exposure, x.nn AS source_nn, x.exact AS source_exact,
               x.nn AS tm_hyp_idx,
               exposure_bin(x.exposure, x.exact, $near, $far) AS bin
        FROM (SELECT seg_idx, tame_source_nn(src) AS x FROM segments WHERE corpus_id = $test)
        """,
    "target": """
        INSERT INTO exposures BY NAME
        SELECT $audit AS audit_id, seg_idx,
               x.exposure AS target_exposure, x.nn AS target_nn, x.ref_idx AS target_ref_idx,
               x.exact AS target_exact,
               side_bin('target', NULL, NULL, x.exposure, x.exact, $near, $far) AS bin
        FROM (SELECT seg_idx, tame_target_nn(refs) AS x FROM segments WHERE corpus_id = $test)
        """,
}


def _fill_exposures(
    con: duckdb.DuckDBPyConnection, audit_id: str, test: CorpusInfo, config: AuditConfig
) -> None:
    """Every test segment's exposures on the sides the audit searches, with its bin."""
    con.execute(
        _FILL_SQL[config.side],
        {"audit": audit_id, "near": config.near, "far": config.far, "test": test.corpus_id},
    )


def _store_tm_stats(con: duckdb.DuckDBPyConnection, audit_id: str, refs: list[list[str]]) -> None:
    """Score the audit's TM hypotheses against the references and store their statistics."""
    hyps = tm_hypotheses(con, audit_id)
    # TM scores in the views are BLEU and chrF++; TER, the slowest to extract, is not stored.
    stats = compute_segment_stats(hyps, refs, [False] * len(hyps), with_ter=False)
    n = len(hyps)
    table = pa.table(
        {
            "audit_id": pa.array([audit_id] * n, pa.string()),
            "seg_idx": pa.array(range(n), pa.int64()),
            "bleu_stats": pa.array(stats.bleu, pa.list_(pa.int64())),
            "chrf_stats": pa.array(stats.chrf, pa.list_(pa.int64())),
            "ter_stats": pa.array([None] * n, pa.list_(pa.float64())),
            "exact_match": pa.array(stats.exact_match, pa.bool_()),
            "length_ratio": pa.array(stats.length_ratio, pa.float64()),
            "chrf_sentence": pa.array(stats.chrf_sentence, pa.float64()),
        }
    )
    con.register("_tame_tm_stats", table)
    try:
        con.execute("INSERT INTO tm_segment_stats BY NAME SELECT * FROM _tame_tm_stats")
    finally:
        con.unregister("_tame_tm_stats")


# Fast against exact on a sample: neighbours and bins of both (on the side the bins follow), and
# their TM hypotheses, by the rules of sql/views/02_exposure_rules.sql.
_VALIDATION_SQL = """
SELECT CASE WHEN $side = 'target' THEN e.target_nn IS NOT DISTINCT FROM s.target_nn
            ELSE e.source_nn IS NOT DISTINCT FROM s.source_nn END AS same_nn,
       e.bin = side_bin($side, s.source_exposure, s.source_exact, s.target_exposure,
                        s.target_exact, $near, $far) AS same_bin,
       tm_hypothesis(ft.refs[1], te.src, $policy) AS fast_tm,
       tm_hypothesis(xt.refs[1], te.src, $policy) AS exact_tm,
       te.refs
FROM (SELECT unnest($seg) AS seg_idx,
             unnest($source_nn) AS source_nn, unnest($source_exposure) AS source_exposure,
             unnest($source_exact) AS source_exact, unnest($target_nn) AS target_nn,
             unnest($target_exposure) AS target_exposure, unnest($target_exact) AS target_exact) s
JOIN exposures e ON e.audit_id = $audit AND e.seg_idx = s.seg_idx
JOIN segments te ON te.corpus_id = $test AND te.seg_idx = s.seg_idx
LEFT JOIN segments ft ON ft.corpus_id = $train AND ft.seg_idx = e.source_nn
LEFT JOIN segments xt ON xt.corpus_id = $train AND xt.seg_idx = s.source_nn
ORDER BY s.seg_idx
"""


def _tm_bleu(hyps: list[str], refs: list[list[str]]) -> float:
    """Corpus BLEU of TM hypotheses."""
    stats = compute_segment_stats(hyps, refs, [False] * len(hyps), with_ter=False)
    return bleu_from_stats([sum(col) for col in zip(*stats.bleu, strict=True)])


def _validate_fast(
    con: duckdb.DuckDBPyConnection,
    index: SearchIndex,
    audit_id: str,
    corpora: tuple[CorpusInfo, CorpusInfo],
    texts: tuple[list[str], list[list[str]]],
    config: AuditConfig,
    threads: int | None,
) -> dict[str, Any]:
    """Rerun a seeded sample in exact mode (by the audit's measure); top-1 agreement and bin
    agreement on the side the bins follow, and |ΔTM-BLEU| when the audit has a TM baseline."""
    (test, train), (test_src, test_refs) = corpora, texts
    sample = sorted(
        random.Random(VALIDATION_SEED).sample(
            range(len(test_src)), min(config.validate_sample, len(test_src))
        )
    )
    exact = retrieval_audit(
        index,
        [test_src[i] for i in sample],
        [test_refs[i] for i in sample],
        config.normalization,
        replace(config.search, mode="exact"),
        threads,
    )
    rows = con.execute(
        _VALIDATION_SQL,
        {
            "seg": sample,
            "side": config.side,
            **{
                f"{side}_{column}": [cast(v) if v is not None else None for v in exact[name]]
                for side in ("source", "target")
                for column, cast in (("nn", int), ("exposure", float), ("exact", bool))
                for name in [f"{side}_{column}"]
            },
            "near": config.near,
            "far": config.far,
            "policy": config.tm_zero_policy,
            "audit": audit_id,
            "test": test.corpus_id,
            "train": train.corpus_id,
        },
    ).fetchall()
    n = len(rows)
    out: dict[str, Any] = {
        "sample_size": n,
        "seed": VALIDATION_SEED,
        "top1_agreement": sum(bool(r[0]) for r in rows) / n if n else None,
        "bin_agreement": sum(bool(r[1]) for r in rows) / n if n else None,
    }
    if config.has_tm:
        refs = [list(r[4]) for r in rows]
        exact_bleu = _tm_bleu([r[3] for r in rows], refs) if n else 0.0
        fast_bleu = _tm_bleu([r[2] for r in rows], refs) if n else 0.0
        out.update(
            tm_bleu_exact=exact_bleu,
            tm_bleu_fast=fast_bleu,
            abs_delta_tm_bleu=abs(exact_bleu - fast_bleu),
        )
    return out


def _record(
    con: duckdb.DuckDBPyConnection,
    audit_id: str,
    timings: dict[str, float],
    counters: SearchCounters | None,
    validation: dict[str, Any] | None,
) -> None:
    """Store the audit's timings, search counters and fast-mode validation."""
    work = {"postings": counters.postings()} if counters is not None else {}
    con.execute(
        "UPDATE audits SET timings = ?, validation = ? WHERE audit_id = ?",
        [
            json.dumps({**timings, **work}),
            json.dumps(validation) if validation else None,
            audit_id,
        ],
    )


def _direction_warnings(
    con: duckdb.DuckDBPyConnection, test: CorpusInfo, train: CorpusInfo, test_src: list[str]
) -> list[str | None]:
    """Whether the test set faces the way the training corpus does: the labelled languages,
    and the test sources' resemblance to each training side (on a sample of its lines; the
    index, when stored, spares reading the rest). A text corpus has one language for both
    sides: it should be one of the test set's."""
    if train.kind == "text":
        return [
            language_conflict(
                f"test set {test.name!r}",
                (test.src_lang, test.tgt_lang),
                f"text corpus {train.name!r}",
                train.src_lang,
            )
        ]
    lines = sample_lines(train.n_segments)
    train_src, train_tgt = (
        training_texts(con, train.corpus_id)
        if lines is None
        else training_lines(con, train.corpus_id, lines)
    )
    labels = direction_conflict(
        f"test set {test.name!r}",
        (test.src_lang, test.tgt_lang),
        f"training corpus {train.name!r}",
        (train.src_lang, train.tgt_lang),
    )
    return [labels, reversed_direction(test_src, train_src, train_tgt)]


def _compute_substring(
    con: duckdb.DuckDBPyConnection,
    audit: tuple[str, bool],
    corpora: tuple[CorpusInfo, CorpusInfo],
    config: AuditConfig,
    execution: Execution,
    texts: tuple[list[str], list[list[str]]],
    input_warnings: list[str],
    timings: dict[str, float],
    started: float,
    notify: Callable[[str], None],
) -> None:
    """Compute and store an audit by the substring lens (`_compute` for the suffix arrays)."""
    (audit_id, exists), (test, train) = audit, corpora
    answer = compute_lenses(con, train, texts, config, execution, notify=notify)
    timings["index_seconds"] = answer.index_seconds
    timings["search_seconds"] = answer.lens_seconds
    timings["index_loaded"] = 1.0 if answer.shards_built == 0 else 0.0
    timings["index_shards"] = float(answer.shards_built + answer.shards_loaded)
    timings["index_bytes"] = float(answer.index_bytes)
    with duckdb_threads(con, 1), transaction(con):
        if exists:
            delete_audits(con, [audit_id])
        _insert_audit_row(con, audit_id, test, train, config, input_warnings, answer.index_checksum)
        store_lenses(con, audit_id, test.corpus_id, answer, config)
        mark = time.perf_counter()
        if config.has_tm:
            _store_tm_stats(con, audit_id, texts[1])
        refresh_audit(con, audit_id)
        timings["tm_seconds"] = time.perf_counter() - mark
        timings["total_seconds"] = time.perf_counter() - started
        if execution.memory_limit is not None:
            timings["peak_rss_bytes"] = float(peak_rss())
        _record(con, audit_id, timings, None, None)


def _compute(
    con: duckdb.DuckDBPyConnection,
    audit: tuple[str, bool],
    corpora: tuple[CorpusInfo, CorpusInfo],
    config: AuditConfig,
    execution: Execution,
    *,
    progress: Progress | None,
    notify: Callable[[str], None],
) -> dict[str, float]:
    """Compute and store the audit `audit` (its id, and whether a stored one is replaced) of
    the test set against the training corpus `corpora`, run as `execution` says; returns its
    timings."""
    (audit_id, exists), (test, train) = audit, corpora
    timings: dict[str, float] = {}
    started = time.perf_counter()
    test_src, test_refs = corpus_texts(con, test.corpus_id)
    input_warnings = [w for w in _direction_warnings(con, test, train, test_src) if w]
    timings["read_seconds"] = time.perf_counter() - started
    for warning in input_warnings:
        notify(f"warning: {warning}")
    if config.measure == "substring":
        _compute_substring(
            con,
            (audit_id, exists),
            (test, train),
            config,
            execution,
            (test_src, test_refs),
            input_warnings,
            timings,
            started,
            notify,
        )
        return timings
    saves = BackgroundSaves()
    try:
        mark = time.perf_counter()
        index: SearchIndex
        if config.measure == "minhash":
            index = open_minhash_index(
                con, train, config, execution, (test_src, test_refs), notify=notify
            )
            loaded = False
        elif execution.on_cluster:
            from warehouse.exposure.index.cluster import open_on_cluster  # Ray is optional

            index, loaded = open_on_cluster(con, train, config, execution, notify=notify)
        else:
            index, loaded = open_training_index(
                con, train, config, execution, notify=notify, saves=saves
            )
        # A MinHash audit's sample is checked against the exact Jaccard search, whose index is
        # opened (loaded, else built and stored) before the audit's transaction starts.
        exact_index = index
        if config.measure == "minhash" and config.validate_sample:
            exact_config = replace(config, measure="jaccard", mode="exact", validate_sample=0)
            exact_index, _ = open_training_index(
                con, train, exact_config, execution, notify=notify, saves=saves
            )
        timings["index_seconds"] = time.perf_counter() - mark
        timings["index_loaded"] = 1.0 if loaded else 0.0
        counters = register_exposure_functions(
            con, index, config, threads=execution.threads, progress=progress, total=len(test_src)
        )
        # DuckDB's own workers stay idle while the native engine searches (restored afterwards,
        # also after a rollback).
        with duckdb_threads(con, 1), transaction(con):
            if exists:
                delete_audits(con, [audit_id])
            mark = time.perf_counter()
            _fill_exposures(con, audit_id, test, config)
            timings["search_seconds"] = time.perf_counter() - mark
            # The audit names the index it searched: a Ray cluster's shards report theirs
            # as they search.
            _insert_audit_row(
                con, audit_id, test, train, config, input_warnings, index_checksum(index)
            )
            mark = time.perf_counter()
            if config.has_tm:
                _store_tm_stats(con, audit_id, test_refs)
            refresh_audit(con, audit_id)
            timings["tm_seconds"] = time.perf_counter() - mark
            validation = None
            if config.mode == "fast" and config.validate_sample:
                validation = _validate_fast(
                    con,
                    exact_index,
                    audit_id,
                    (test, train),
                    (test_src, test_refs),
                    config,
                    execution.threads,
                )
            timings["total_seconds"] = time.perf_counter() - started
            if execution.memory_limit is not None:
                timings["peak_rss_bytes"] = float(peak_rss())
            _record(con, audit_id, timings, counters, validation)
    except BaseException:
        saves.wait(raise_errors=False)
        raise
    # A freshly built index is stored while the search runs; the file is complete (or its
    # failure reported) before the audit returns.
    saves.wait()
    return timings


def run_audit(
    con: duckdb.DuckDBPyConnection,
    train_name: str,
    test_name: str,
    config: AuditConfig | None = None,
    execution: Execution = LOCAL,
    *,
    force: bool = False,
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
) -> AuditResult:
    """Audit a test set against a training corpus; an identical stored audit is reused.

    Without `config`, the defaults and the warehouse's `settings` rows define the audit.
    `execution` says how the search runs (threads, stored index, memory limit, shards, Ray;
    docs/exposure.md): none of it changes the numbers. Warnings found before the search starts
    (a reversed language direction) go to `notify` at once and are stored with the audit; so
    does what happened to the training index (loaded when stored beside the warehouse, else
    built and stored unless the execution or the `index.store` setting says not to).
    """
    config = config or AuditOptions().resolve(con, train_name=train_name, test_name=test_name)
    train = get_corpus(con, train_name, "train")
    test = get_corpus(con, test_name, "test")
    audit_id = audit_id_for(test.corpus_id, train.corpus_id, config)
    exists = con.execute("SELECT 1 FROM audits WHERE audit_id = ?", [audit_id]).fetchone()
    if exists and not force:
        return load_audit(con, audit_id, action="unchanged")
    limit = execution.memory_limit
    row_needs = check_longest_row(
        config.measure, train.name, longest_row(con, train.corpus_id), limit
    )
    within = (
        duckdb_memory(con, duckdb_budget(limit, row_needs))
        if limit is not None
        else contextlib.nullcontext()
    )
    with within:
        timings = _compute(
            con,
            (audit_id, bool(exists)),
            (test, train),
            config,
            execution,
            progress=progress,
            notify=notify or silent,
        )
    if limit is not None:
        (notify or silent)(
            f"peak memory {size_text(int(timings['peak_rss_bytes']))} "
            f"(--memory-limit {size_text(limit)})"
        )
    return load_audit(con, audit_id, action="recomputed" if exists else "computed")
