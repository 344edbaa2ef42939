"""The MinHash lens's index (docs/exposure.md, "MinHash lens"): signatures and LSH bands of a
training corpus's rows, built in memory for each audit (building takes one pass over the text),
searched through the same interface as the exact index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb

from warehouse.exposure.config import MINHASH_BANDS, MINHASH_BINS, AuditConfig, SearchSettings
from warehouse.exposure.index.retrieval import SidesFromAudit, normalized_utf8
from warehouse.native import native
from warehouse.store.corpora import CorpusInfo, training_columns

if TYPE_CHECKING:
    from warehouse._native import AuditBuffers


class MinHashSearch(SidesFromAudit):
    """A `SearchIndex` over a training corpus's MinHash signatures: hits are estimates (the
    share of agreeing bins among LSH candidates), exact flags string equality."""

    def __init__(self, index: native.MinHashIndex) -> None:
        self.index = index

    def checksums(self) -> list[int]:
        """The index's checksum (one: it is never sharded)."""
        return [self.index.checksum()]

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair estimates of each test segment (normalised texts)."""
        return self.index.audit(list(sources), [list(r) for r in refs], search, threads)


def build_minhash_index(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    threads: int | None = None,
) -> MinHashSearch:
    """The MinHash index of `train` under `config`'s gram orders and normalisation."""
    sources, targets = training_columns(con, train.corpus_id)
    norm = config.normalization
    return MinHashSearch(
        native.MinHashIndex.from_joined(
            normalized_utf8(sources, norm),
            normalized_utf8(targets, norm),
            train.n_segments,
            list(config.orders),
            MINHASH_BINS,
            MINHASH_BANDS,
            threads,
        )
    )
