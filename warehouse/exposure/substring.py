"""An audit by the substring lens (docs/exposure.md, "Substring lens"): each test source and
reference looked up in the suffix-array shards of the training corpus, stored in
`substring_lens` and, as exposures, in `exposures`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.exposure.config import WORD_ORDERS, AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.retrieval import normalized_utf8
from warehouse.exposure.index.substring import checksum_text, open_side
from warehouse.store.corpora import CorpusInfo

if TYPE_CHECKING:
    from warehouse._native import LensBuffers


@dataclass
class SubstringAnswer:
    """The lens of a test set's sources and references, and the index that gave it."""

    source: pa.Table
    target: pa.Table
    index_checksum: str
    shards_built: int
    shards_loaded: int
    index_bytes: int


def _uint(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.uint64).astype(np.int64)


def _lens_table(raw: LensBuffers, owners: list[int], ref_idx: list[int] | None) -> pa.Table:
    """One row per looked-up text, with the test segment (`seg_idx`) it belongs to."""
    n = len(owners)
    valid = pa.py_buffer(raw["doc_valid"])
    doc = pa.Array.from_buffers(pa.int64(), n, [valid, pa.py_buffer(raw["doc"])])
    offset = pa.Array.from_buffers(pa.int64(), n, [valid, pa.py_buffer(raw["offset"])])
    columns: dict[str, pa.Array | np.ndarray | list[int] | None] = {
        "seg_idx": pa.array(owners, pa.int64()),
        "ref_idx": pa.array(ref_idx, pa.int32())
        if ref_idx is not None
        else pa.nulls(n, pa.int32()),
        "chars": _uint(raw["chars"]),
        "longest_chars": _uint(raw["longest"]),
        "longest_start": _uint(raw["start"]),
        "train_seg_idx": doc,
        "train_offset": offset,
        "whole_count": _uint(raw["count"]),
    }
    for order, found, total in zip(WORD_ORDERS, raw["found"], raw["total"], strict=True):
        columns[f"words{order}_found"] = _uint(found)
        columns[f"words{order}_total"] = _uint(total)
    return pa.table(columns)


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
    training targets; a text corpus answers both)."""
    sources, refs = texts
    source_side = open_side(con, train, "source", config, execution, notify=notify)
    target_side = (
        source_side
        if train.kind == "text"
        else open_side(con, train, "target", config, execution, notify=notify)
    )
    norm, threads = config.normalization, execution.threads
    source_raw = source_side.index.lens(
        normalized_utf8(sources, norm), len(sources), list(WORD_ORDERS), threads
    )
    flat = [r for rs in refs for r in rs]
    owners = [i for i, rs in enumerate(refs) for _ in rs]
    which = [j for rs in refs for j in range(len(rs))]
    target_raw = target_side.index.lens(
        normalized_utf8(flat, norm), len(flat), list(WORD_ORDERS), threads
    )
    sides = [source_side] if target_side is source_side else [source_side, target_side]
    return SubstringAnswer(
        source=_lens_table(source_raw, list(range(len(sources))), None),
        target=_lens_table(target_raw, owners, which),
        index_checksum=checksum_text([s.index for s in sides]),
        shards_built=sum(s.built for s in sides),
        shards_loaded=sum(s.loaded for s in sides),
        index_bytes=sum(s.file_bytes for s in sides),
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

_EXPOSURES_SQL = """
INSERT INTO exposures
SELECT s.audit_id, s.seg_idx,
       s.longest_share, s.train_seg_idx, s.whole_count > 0,
       coalesce(t.longest_share, 0.0), t.train_seg_idx, t.ref_idx,
       coalesce(t.whole_count > 0, false),
       least(s.longest_share, coalesce(t.longest_share, 0.0)),
       CASE WHEN s.train_seg_idx = t.train_seg_idx THEN s.train_seg_idx END,
       s.whole_count > 0 AND coalesce(t.whole_count > 0, false),
       s.train_seg_idx AS tm_hyp_idx,
       exposure_bin(s.longest_share, s.whole_count > 0, $near, $far)
FROM substring_lens s
LEFT JOIN substring_lens t
    ON t.audit_id = s.audit_id AND t.seg_idx = s.seg_idx AND t.side = 'target'
WHERE s.audit_id = $audit AND s.side = 'source'
"""


def store_lenses(
    con: duckdb.DuckDBPyConnection, audit_id: str, answer: SubstringAnswer, config: AuditConfig
) -> None:
    """Store the audit's `substring_lens` and `exposures` rows (inside its transaction)."""
    con.register("_tame_lens_source", answer.source)
    con.register("_tame_lens_target", answer.target)
    try:
        con.execute(_STORE_SQL, {"audit": audit_id})
    finally:
        con.unregister("_tame_lens_source")
        con.unregister("_tame_lens_target")
    con.execute(_EXPOSURES_SQL, {"audit": audit_id, "near": config.near, "far": config.far})
