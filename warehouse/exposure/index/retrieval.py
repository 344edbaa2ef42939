"""Exposure retrieval over training pairs: a thin typed layer over the native engine, which
normalises texts the way docs/exposure.md defines before they cross.

The engine returns each search's columns as Arrow buffers (see `warehouse/_native.pyi`);
`Exposures` wraps them as Arrow arrays without copying. `audit_exposures`, `source_exposures` and
`target_exposures` return those; `audit`, `search_source` and `search_target` return the same
columns as Python lists (None where no training row shares a gram) with "stats".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from warehouse.exposure.config import DEFAULT_ORDERS, EXACT_SEARCH, SearchSettings
from warehouse.exposure.normalize import (
    DEFAULT_CONFIG,
    NormalizationConfig,
    Texts,
    normalize_joined,
    normalize_many,
)
from warehouse.native import RetrievalIndex, native

if TYPE_CHECKING:
    from warehouse._native import (
        AuditBuffers,
        HitBuffers,
        SearchStats,
        SourceSearch,
        TargetHitBuffers,
        TargetSearch,
    )

__all__ = [
    "Exposures",
    "RetrievalIndex",
    "SearchIndex",
    "SearchSettings",
    "SidesFromAudit",
    "audit",
    "audit_exposures",
    "build_index",
    "search_source",
    "search_target",
    "source_exposures",
    "target_exposures",
]


class SearchIndex(Protocol):
    """What the searches need of an index: `RetrievalIndex`, or shards of one
    (`warehouse.exposure.index.shards.ShardedIndex`), with the same buffers out."""

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair exposure of each test segment (normalised texts)."""
        ...

    def search_source(
        self,
        queries: Sequence[str],
        search: SearchSettings,
        threads: int | None = None,
    ) -> SourceSearch:
        """Source exposure of each query."""
        ...

    def search_target(
        self,
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> TargetSearch:
        """Target exposure of each query's references."""
        ...


class SidesFromAudit(ABC):
    """`search_source` and `search_target` of an index that only audits whole segments (a Ray
    cluster, MinHash): the side of an audit that the other side's texts cannot change."""

    @abstractmethod
    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair exposure of each test segment (normalised texts)."""

    def search_source(
        self, queries: Sequence[str], search: SearchSettings, threads: int | None = None
    ) -> SourceSearch:
        """Source exposure of each query (an audit's source side, which no reference changes)."""
        out = self.audit(queries, [[""]] * len(queries), search, threads)
        return {**out["source"], "stats": out["stats"]}

    def search_target(
        self, refs: Sequence[Sequence[str]], search: SearchSettings, threads: int | None = None
    ) -> TargetSearch:
        """Target exposure of each query's references (an audit's target side, which no source
        changes)."""
        out = self.audit([""] * len(refs), refs, search, threads)
        return {**out["target"], "stats": out["stats"]}


@dataclass(frozen=True)
class Exposures:
    """One batch of searches: named Arrow columns (one row per query) and the work counters."""

    columns: dict[str, pa.Array]
    stats: SearchStats

    def to_pydict(self) -> dict[str, Any]:
        """The columns as Python lists (None where a value is null) and "stats"."""
        out: dict[str, Any] = {name: array.to_pylist() for name, array in self.columns.items()}
        out["stats"] = dict(self.stats)
        return out

    @classmethod
    def of_audit(cls, raw: AuditBuffers) -> Exposures:
        """`RetrievalIndex.audit`'s buffers as source_*, target_* and pair_* columns."""
        sides = (
            ("source", _hit_arrays(raw["source"])),
            ("target", _target_arrays(raw["target"])),
            ("pair", _hit_arrays(raw["pair"])),
        )
        columns = {
            f"{side}_{name}": array for side, arrays in sides for name, array in arrays.items()
        }
        return cls(columns, raw["stats"])

    @classmethod
    def of_source_search(cls, raw: SourceSearch) -> Exposures:
        """`RetrievalIndex.search_source`'s buffers as exposure, nn and exact columns."""
        return cls(_hit_arrays(raw), raw["stats"])

    @classmethod
    def of_target_search(cls, raw: TargetSearch) -> Exposures:
        """`RetrievalIndex.search_target`'s buffers as exposure, nn, ref_idx and exact columns."""
        return cls(_target_arrays(raw), raw["stats"])


def _hit_arrays(raw: HitBuffers) -> dict[str, pa.Array]:
    """One side's hit buffers as Arrow arrays (views of the bytes, no copy)."""
    n = len(raw["exposure"]) // 8
    return {
        "exposure": pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(raw["exposure"])]),
        "nn": pa.Array.from_buffers(
            pa.int64(), n, [pa.py_buffer(raw["nn_valid"]), pa.py_buffer(raw["nn"])]
        ),
        "exact": pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(raw["exact"])]),
    }


def _target_arrays(raw: TargetHitBuffers) -> dict[str, pa.Array]:
    """Target hit buffers as Arrow arrays: exposure, nn, ref_idx, exact."""
    hit = _hit_arrays(raw)
    ref_idx = pa.Array.from_buffers(
        pa.int32(),
        len(hit["exposure"]),
        [pa.py_buffer(raw["ref_idx_valid"]), pa.py_buffer(raw["ref_idx"])],
    )
    return {"exposure": hit["exposure"], "nn": hit["nn"], "ref_idx": ref_idx, "exact": hit["exact"]}


def build_index(
    sources: Texts,
    targets: Texts,
    orders: Sequence[int] = DEFAULT_ORDERS,
    config: NormalizationConfig = DEFAULT_CONFIG,
    threads: int | None = None,
    dense_min_df: int | None = None,
) -> RetrievalIndex:
    """Normalise aligned training texts (strings, or Arrow string columns) and build a
    `RetrievalIndex` over them.

    `dense_min_df` (grams in at least that many rows are kept as row bitmaps; default 1/32 of
    the rows, at least 64; never below 1/64 of the rows) changes only speed and memory, never
    results.
    """
    if len(sources) != len(targets):
        raise ValueError(
            f"sources and targets must have the same length, got {len(sources)} and {len(targets)}"
        )
    return index_of_normalized(
        normalized_utf8(sources, config),
        normalized_utf8(targets, config),
        len(sources),
        orders,
        threads=threads,
        dense_min_df=dense_min_df,
    )


def normalized_utf8(texts: Texts, config: NormalizationConfig = DEFAULT_CONFIG) -> bytes:
    """The texts normalised and joined by newlines (`normalize_joined`), as UTF-8."""
    # The texts travel as one UTF-8 string per side (a Python string of text with characters
    # beyond Latin-1 takes 2 or 4 bytes per character, and one more copy once handed over);
    # the native side splits rows and collapses whitespace.
    return normalize_joined(texts, config).encode()


def index_of_normalized(
    sources: bytes,
    targets: bytes,
    rows: int,
    orders: Sequence[int] = DEFAULT_ORDERS,
    threads: int | None = None,
    dense_min_df: int | None = None,
) -> RetrievalIndex:
    """A `RetrievalIndex` over `rows` aligned training texts given as `normalized_utf8`."""
    return native.RetrievalIndex.from_joined(
        sources, targets, rows, list(orders), threads=threads, dense_min_df=dense_min_df
    )


def normalize_refs(refs: Sequence[Sequence[str]], config: NormalizationConfig) -> list[list[str]]:
    """Each query's references normalised (all of them in one pass)."""
    flat = normalize_many([r for rs in refs for r in rs], config)
    out, at = [], 0
    for rs in refs:
        out.append(flat[at : at + len(rs)])
        at += len(rs)
    return out


def audit_exposures(
    index: SearchIndex,
    sources: Sequence[str],
    refs: Sequence[Sequence[str]],
    config: NormalizationConfig = DEFAULT_CONFIG,
    search: SearchSettings = EXACT_SEARCH,
    threads: int | None = None,
) -> Exposures:
    """Normalise test sources and their references, then audit them against `index`."""
    raw = index.audit(
        normalize_many(sources, config),
        normalize_refs(refs, config),
        search,
        threads,
    )
    return Exposures.of_audit(raw)


def source_exposures(
    index: SearchIndex,
    queries: Sequence[str],
    config: NormalizationConfig = DEFAULT_CONFIG,
    search: SearchSettings = EXACT_SEARCH,
    threads: int | None = None,
) -> Exposures:
    """Normalise queries and find their nearest training sources."""
    queries = normalize_many(queries, config)
    raw = index.search_source(queries, search, threads)
    return Exposures.of_source_search(raw)


def target_exposures(
    index: SearchIndex,
    refs: Sequence[Sequence[str]],
    config: NormalizationConfig = DEFAULT_CONFIG,
    search: SearchSettings = EXACT_SEARCH,
    threads: int | None = None,
) -> Exposures:
    """Normalise each query's references and find their nearest training targets."""
    normalized = normalize_refs(refs, config)
    raw = index.search_target(normalized, search, threads)
    return Exposures.of_target_search(raw)


def audit(
    index: SearchIndex,
    sources: Sequence[str],
    refs: Sequence[Sequence[str]],
    config: NormalizationConfig = DEFAULT_CONFIG,
    search: SearchSettings = EXACT_SEARCH,
    threads: int | None = None,
) -> dict[str, Any]:
    """`audit_exposures` as lists: source_*, target_* and pair_* columns, and "stats"."""
    return audit_exposures(index, sources, refs, config, search, threads).to_pydict()


def search_source(
    index: SearchIndex,
    queries: Sequence[str],
    config: NormalizationConfig = DEFAULT_CONFIG,
    search: SearchSettings = EXACT_SEARCH,
    threads: int | None = None,
) -> dict[str, Any]:
    """`source_exposures` as lists: exposure, nn, exact, and "stats"."""
    return source_exposures(index, queries, config, search, threads).to_pydict()


def search_target(
    index: SearchIndex,
    refs: Sequence[Sequence[str]],
    config: NormalizationConfig = DEFAULT_CONFIG,
    search: SearchSettings = EXACT_SEARCH,
    threads: int | None = None,
) -> dict[str, Any]:
    """`target_exposures` as lists: exposure, nn, ref_idx, exact, and "stats"."""
    return target_exposures(index, refs, config, search, threads).to_pydict()
