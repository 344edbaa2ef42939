"""Exposure retrieval over training pairs: a thin typed layer over the native engine, which
normalises texts the way docs/exposure.md defines before they cross."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from warehouse.exposure.config import DEFAULT_ORDERS, DEFAULT_RARE_GRAMS, DEFAULT_SHORTLIST
from warehouse.exposure.normalize import (
    DEFAULT_CONFIG,
    NormalizationConfig,
    normalize_joined,
    normalize_many,
)
from warehouse.native import RetrievalIndex, native

__all__ = ["Mode", "RetrievalIndex", "audit", "build_index", "search_source", "search_target"]

Mode = Literal["exact", "fast"]


def build_index(
    sources: Sequence[str],
    targets: Sequence[str],
    orders: Sequence[int] = DEFAULT_ORDERS,
    config: NormalizationConfig = DEFAULT_CONFIG,
    threads: int | None = None,
    dense_min_df: int | None = None,
) -> RetrievalIndex:
    """Normalise aligned training texts and build a `RetrievalIndex` over them.

    `dense_min_df` (grams in at least that many rows are kept as row bitmaps; default 1/32 of
    the rows, at least 64; never below 1/64 of the rows) changes only speed and memory, never
    results.
    """
    if len(sources) != len(targets):
        raise ValueError(
            f"sources and targets must have the same length, got {len(sources)} and {len(targets)}"
        )
    # The texts travel as two strings; the native side splits rows and collapses whitespace.
    return native.RetrievalIndex.from_joined(
        normalize_joined(sources, config),
        normalize_joined(targets, config),
        len(sources),
        orders=list(orders),
        threads=threads,
        dense_min_df=dense_min_df,
    )


def _normalize_refs(refs: Sequence[Sequence[str]], config: NormalizationConfig) -> list[list[str]]:
    """Each query's references normalised (all of them in one pass)."""
    flat = normalize_many([r for rs in refs for r in rs], config)
    out, at = [], 0
    for rs in refs:
        out.append(flat[at : at + len(rs)])
        at += len(rs)
    return out


def audit(
    index: RetrievalIndex,
    sources: Sequence[str],
    refs: Sequence[Sequence[str]],
    config: NormalizationConfig = DEFAULT_CONFIG,
    mode: Mode = "exact",
    rare_grams: int = DEFAULT_RARE_GRAMS,
    shortlist: int = DEFAULT_SHORTLIST,
    threads: int | None = None,
) -> dict[str, Any]:
    """Normalise test sources and their references, then audit them against `index`."""
    return index.audit(
        normalize_many(sources, config),
        _normalize_refs(refs, config),
        mode=mode,
        rare_grams=rare_grams,
        shortlist=shortlist,
        threads=threads,
    )


def search_source(
    index: RetrievalIndex,
    queries: Sequence[str],
    config: NormalizationConfig = DEFAULT_CONFIG,
    mode: Mode = "exact",
    rare_grams: int = DEFAULT_RARE_GRAMS,
    shortlist: int = DEFAULT_SHORTLIST,
    threads: int | None = None,
) -> dict[str, Any]:
    """Normalise queries and find their nearest training sources."""
    return index.search_source(
        normalize_many(queries, config),
        mode=mode,
        rare_grams=rare_grams,
        shortlist=shortlist,
        threads=threads,
    )


def search_target(
    index: RetrievalIndex,
    refs: Sequence[Sequence[str]],
    config: NormalizationConfig = DEFAULT_CONFIG,
    mode: Mode = "exact",
    rare_grams: int = DEFAULT_RARE_GRAMS,
    shortlist: int = DEFAULT_SHORTLIST,
    threads: int | None = None,
) -> dict[str, Any]:
    """Normalise each query's references and find their nearest training targets."""
    return index.search_target(
        _normalize_refs(refs, config),
        mode=mode,
        rare_grams=rare_grams,
        shortlist=shortlist,
        threads=threads,
    )
