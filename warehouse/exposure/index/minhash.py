"""The MinHash lens's index (docs/exposure.md, "MinHash lens"): signatures and LSH bands of a
training corpus's rows, built in memory for each audit (building takes one pass over the text),
searched through the same interface as the exact index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import duckdb

from warehouse.basics import Notify, silent
from warehouse.exposure.config import MINHASH_BANDS, MINHASH_BINS, AuditConfig, SearchSettings
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.memory import index_budget, release_cached_blocks
from warehouse.exposure.index.retrieval import (
    SearchIndex,
    SidesFromAudit,
    normalize_refs,
    normalized_utf8,
)
from warehouse.exposure.index.shards import AnsweredAhead, ShardedIndex, ShardPart
from warehouse.exposure.normalize import normalize_many
from warehouse.native import native
from warehouse.sizes import size_text
from warehouse.store.corpora import CorpusInfo, training_columns, training_text_bytes

if TYPE_CHECKING:
    from warehouse._native import AuditBuffers


class MinHashSearch(SidesFromAudit):
    """A `SearchIndex` over a training corpus's MinHash signatures: hits are estimates (the
    share of agreeing bins among LSH candidates), exact flags string equality."""

    def __init__(self, index: native.MinHashIndex) -> None:
        self.index = index

    def checksums(self) -> list[int]:
        """The index's checksum (one per index; a sharded one lists its shards')."""
        return [self.index.checksum()]

    def checksum(self) -> int:
        """The index's checksum (what a shard of a `ShardedIndex` reports)."""
        return int(self.index.checksum())

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair estimates of each test segment (normalised texts)."""
        return self.index.audit(list(sources), [list(r) for r in refs], search, threads)


# Peak bytes of building a MinHash index, per training row (both sides: 128 values, 32 band
# keys and rows, a text hash, and the band pairs while they are sorted) and per byte of text
# (the text read from the warehouse and its normalised copy); measured on the real en-fr
# corpus (231k rows: 0.72 GiB at the peak with the process's own 0.2 GiB).
PER_ROW = 3_000
PER_TEXT_BYTE = 4


def build_minhash_index(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    threads: int | None = None,
    rows: tuple[int, int] | None = None,
) -> MinHashSearch:
    """The MinHash index of `train` (its rows `start <= i < stop` when `rows` is given) under
    `config`'s gram orders and normalisation."""
    sources, targets = training_columns(con, train.corpus_id, rows)
    norm = config.normalization
    return MinHashSearch(
        native.MinHashIndex.from_joined(
            normalized_utf8(sources, norm),
            normalized_utf8(targets, norm),
            len(sources),
            list(config.orders),
            MINHASH_BINS,
            MINHASH_BANDS,
            threads,
        )
    )


def open_minhash_index(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    execution: Execution,
    test: tuple[Sequence[str], Sequence[Sequence[str]]],
    *,
    notify: Notify = silent,
) -> SearchIndex:
    """The MinHash index an audit of the test set `test` searches: the whole corpus at once;
    with a memory limit that it would exceed, shards of consecutive rows built one at a time,
    each released before the next (the answers equal the whole index's: every candidate of a
    row lies in its shard, and shards merge as the exact search's do)."""
    if execution.memory_limit is None:
        return build_minhash_index(con, train, config, execution.threads)
    budget = index_budget(execution.memory_limit)
    text = training_text_bytes(con, train.corpus_id)
    per_row = PER_ROW + PER_TEXT_BYTE * text / max(train.n_segments, 1)
    fit = max(1, min(train.n_segments, int(budget // per_row)))
    if fit >= train.n_segments:
        return build_minhash_index(con, train, config, execution.threads)
    notify(
        f"--memory-limit {size_text(execution.memory_limit)}: the MinHash index of "
        f"{train.name!r} in shards of {fit:,} rows (each about {size_text(int(fit * per_row))} "
        "to build), one at a time"
    )

    def opener(start: int, stop: int) -> Callable[[], MinHashSearch]:
        def build() -> MinHashSearch:
            built = build_minhash_index(con, train, config, execution.threads, (start, stop))
            release_cached_blocks(con)  # the shard's texts, cached by DuckDB's scan
            return built

        return build

    parts = [
        ShardPart(start, min(fit, train.n_segments - start),
                  opener(start, min(start + fit, train.n_segments)))  # type: ignore[arg-type]
        for start in range(0, train.n_segments, fit)
    ]  # fmt: skip
    sources, refs = test
    norm = config.normalization
    return AnsweredAhead(
        ShardedIndex(parts, resident=False),
        normalize_many(list(sources), norm),
        normalize_refs(refs, norm),
        config.search,
        execution.threads,
    )
