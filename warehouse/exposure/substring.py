"""An audit by the substring lens (docs/exposure.md, "Substring lens"): each test source and
reference looked up in the suffix-array shards of the training corpus, stored in
`substring_lens` and, as exposures, in `exposures`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.exposure.config import WORD_ORDERS, AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.checksums import checksum_text
from warehouse.exposure.index.retrieval import normalized_utf8
from warehouse.exposure.index.substring import LensColumns, lens_columns, open_side
from warehouse.store.corpora import CorpusInfo


@dataclass
class SubstringAnswer:
    """The lens of a test set's sources and references, and the index that gave it."""

    source: pa.Table
    target: pa.Table
    index_checksum: str
    shards_built: int
    shards_loaded: int
    index_bytes: int
    index_seconds: float  # opening (loading or building) the shards
    lens_seconds: float  # looking the texts up


def _lens_table(cols: LensColumns, owners: list[int], ref_idx: list[int] | None) -> pa.Table:
    """One row per looked-up text, with the test segment (`seg_idx`) it belongs to."""
    n = len(owners)
    placed = cols.doc >= 0
    columns: dict[str, pa.Array] = {
        "seg_idx": pa.array(owners, pa.int64()),
        "ref_idx": pa.array(ref_idx, pa.int32())
        if ref_idx is not None
        else pa.nulls(n, pa.int32()),
        "chars": pa.array(cols.chars),
        "longest_chars": pa.array(cols.longest),
        "longest_start": pa.array(cols.start),
        "train_seg_idx": pa.array(cols.doc, mask=~placed),
        "train_offset": pa.array(cols.offset, mask=~placed),
        "whole_count": pa.array(cols.count),
    }
    for order, found, total in zip(WORD_ORDERS, cols.found, cols.total, strict=True):
        columns[f"words{order}_found"] = pa.array(found)
        columns[f"words{order}_total"] = pa.array(total)
    return pa.table(columns)


def _split(cols: LensColumns, at: int) -> tuple[LensColumns, LensColumns]:
    """The lens of the first `at` texts and of the rest."""
    parts = [slice(0, at), slice(at, None)]
    head, tail = (
        LensColumns(
            cols.chars[p], cols.longest[p], cols.start[p], cols.doc[p], cols.offset[p],
            cols.count[p], [f[p] for f in cols.found], [t[p] for t in cols.total],
        )
        for p in parts
    )  # fmt: skip
    return head, tail


@dataclass
class _Side:
    """One side's lens and the shards behind it."""

    columns: LensColumns
    checksums: list[int]
    built: int
    loaded: int
    file_bytes: int


def _side_lens(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    side: str,
    config: AuditConfig,
    execution: Execution,
    texts: list[str],
    notify: Callable[[str], None],
) -> tuple[_Side, float]:
    """The lens of `texts` over one side of the training corpus (on the cluster when the
    execution says so), and the seconds spent opening or building its shards."""
    queries = normalized_utf8(texts, config.normalization)
    started = time.perf_counter()
    if execution.on_cluster:
        from warehouse.exposure.index.substring_cluster import lens_on_cluster  # Ray is optional

        done = lens_on_cluster(
            con, train, side, config, execution, (queries, len(texts)), list(WORD_ORDERS),
            notify=notify,
        )  # fmt: skip
        return _Side(done.columns, done.checksums, done.built, done.loaded, done.file_bytes), 0.0
    opened = open_side(con, train, side, config, execution, notify=notify)
    seconds = time.perf_counter() - started
    raw = opened.index.lens(queries, len(texts), list(WORD_ORDERS), execution.threads)
    side_lens = _Side(
        lens_columns(raw), opened.index.checksums, opened.built, opened.loaded, opened.file_bytes
    )
    return side_lens, seconds


def _no_texts() -> LensColumns:
    """The lens of no texts (a side the audit does not search)."""
    empty = np.zeros(0, np.int64)
    return LensColumns(empty, empty, empty, empty, empty, empty,
                       [empty] * len(WORD_ORDERS), [empty] * len(WORD_ORDERS))  # fmt: skip


def compute_lenses(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    texts: tuple[list[str], list[list[str]]],
    config: AuditConfig,
    execution: Execution,
    *,
    notify: Callable[[str], None],
) -> SubstringAnswer:
    """The lens of every test source (against the training sources) and reference (against the
    training targets; a text corpus answers both), on the sides the audit searches."""
    sources = texts[0] if config.searches_source else []
    refs = texts[1] if config.searches_target else []
    started = time.perf_counter()
    flat = [r for rs in refs for r in rs]
    owners = [i for i, rs in enumerate(refs) for _ in rs]
    which = [j for rs in refs for j in range(len(rs))]
    sides: list[_Side] = []
    opening = 0.0
    if train.kind == "text":
        # One text answers both: its shards are opened once, for sources and references.
        both, opening = _side_lens(
            con, train, "source", config, execution, [*sources, *flat], notify
        )
        sides = [both]
        source_cols, target_cols = _split(both.columns, len(sources))
    else:
        source_cols = target_cols = _no_texts()
        if config.searches_source:
            source, seconds = _side_lens(con, train, "source", config, execution, sources, notify)
            sides.append(source)
            opening += seconds
            source_cols = source.columns
        if config.searches_target:
            target, seconds = _side_lens(con, train, "target", config, execution, flat, notify)
            sides.append(target)
            opening += seconds
            target_cols = target.columns
    return SubstringAnswer(
        source=_lens_table(source_cols, list(range(len(sources))), None),
        target=_lens_table(target_cols, owners, which),
        index_checksum=checksum_text([c for s in sides for c in s.checksums]),
        shards_built=sum(s.built for s in sides),
        shards_loaded=sum(s.loaded for s in sides),
        index_bytes=sum(s.file_bytes for s in sides),
        index_seconds=opening,
        lens_seconds=time.perf_counter() - started - opening,
    )


# Per side one row per segment (the target: its reference with the largest share, the first
# among equals); exposures from them by the rules of docs/exposure.md, "Substring lens".
_STORE_SQL = """
INSERT INTO substring_lens BY NAME
SELECT $audit AS audit_id, seg_idx, 'source' AS side, * EXCLUDE (seg_idx),
       CASE WHEN chars = 0 THEN 0.0 ELSE longest_chars / chars END AS longest_share
FROM _tame_lens_source
UNION ALL BY NAME
SELECT $audit AS audit_id, seg_idx, 'target' AS side, * EXCLUDE (seg_idx),
       CASE WHEN chars = 0 THEN 0.0 ELSE longest_chars / chars END AS longest_share
FROM _tame_lens_target
QUALIFY row_number() OVER (
    PARTITION BY seg_idx
    ORDER BY CASE WHEN chars = 0 THEN 0.0 ELSE longest_chars / chars END DESC, ref_idx) = 1
"""

# Exposures from the lens of the sides searched: a test segment's exposure on a side is the share
# of its characters in its longest shared substring, exact when it occurs whole; the pair side
# is the lesser of the two (the row shared when both sides name one); bins follow `side_bin`. In
# an audit of both sides, a segment without references has target exposure 0.
_EXPOSURES_SQL = """
INSERT INTO exposures
SELECT $audit, g.seg_idx,
       s.longest_share, s.train_seg_idx, s.whole_count > 0,
       CASE WHEN $side <> 'source' THEN coalesce(t.longest_share, 0.0) END,
       t.train_seg_idx, t.ref_idx,
       CASE WHEN $side <> 'source' THEN coalesce(t.whole_count > 0, false) END,
       CASE WHEN $side = 'both' THEN least(s.longest_share, coalesce(t.longest_share, 0.0)) END,
       CASE WHEN s.train_seg_idx = t.train_seg_idx THEN s.train_seg_idx END,
       CASE WHEN $side = 'both'
            THEN s.whole_count > 0 AND coalesce(t.whole_count > 0, false) END,
       s.train_seg_idx AS tm_hyp_idx,
       side_bin($side, s.longest_share, s.whole_count > 0,
                coalesce(t.longest_share, 0.0), coalesce(t.whole_count > 0, false), $near, $far)
FROM segments g
LEFT JOIN substring_lens s
    ON s.audit_id = $audit AND s.seg_idx = g.seg_idx AND s.side = 'source'
LEFT JOIN substring_lens t
    ON t.audit_id = $audit AND t.seg_idx = g.seg_idx AND t.side = 'target'
WHERE g.corpus_id = $test
"""


def store_lenses(
    con: duckdb.DuckDBPyConnection,
    audit_id: str,
    test_corpus_id: str,
    answer: SubstringAnswer,
    config: AuditConfig,
) -> None:
    """Store the audit's `substring_lens` and `exposures` rows (inside its transaction)."""
    con.register("_tame_lens_source", answer.source)
    con.register("_tame_lens_target", answer.target)
    try:
        con.execute(_STORE_SQL, {"audit": audit_id})
    finally:
        con.unregister("_tame_lens_source")
        con.unregister("_tame_lens_target")
    con.execute(
        _EXPOSURES_SQL,
        {
            "audit": audit_id,
            "side": config.side,
            "test": test_corpus_id,
            "near": config.near,
            "far": config.far,
        },
    )
