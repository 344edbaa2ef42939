"""Sharded indexes: random corpora split at random shard sizes (1-row shards, shards sharing no
gram with the queries) give exactly the unsharded audit and brute force."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.exposure.brute_force import BruteForce
from tests.exposure.index.test_retrieval_properties import (
    PROPERTY_SETTINGS,
    configs,
    corpora,
    orders_st,
)
from warehouse.exposure.config import GRAM_MEASURES, SearchSettings
from warehouse.exposure.index.retrieval import (
    Exposures,
    audit_exposures,
    build_index,
    source_exposures,
    target_exposures,
)
from warehouse.exposure.index.shards import ShardedIndex, ShardPart, unpack_side
from warehouse.exposure.normalize import NormalizationConfig, normalize, normalize_many


def sharded(
    sources: list[str],
    targets: list[str],
    cuts: list[int],
    orders: tuple[int, ...],
    config: NormalizationConfig,
    resident: bool = True,
) -> ShardedIndex:
    """Shards ending at the sorted `cuts` (and at the last row), each its own index."""
    bounds = sorted({c for c in cuts if 0 < c < len(sources)} | {len(sources)})
    parts, start = [], 0
    for stop in bounds:
        index = build_index(sources[start:stop], targets[start:stop], orders, config)
        parts.append(ShardPart(start, stop - start, lambda ix=index: ix))
        start = stop
    # Given out of order: the index merges in row order.
    return ShardedIndex(parts[::-1], resident=resident)


def without_stats(out: Exposures) -> dict[str, Any]:
    doc = out.to_pydict()
    doc.pop("stats")
    return doc


def ratios(raw: dict[str, Any], side: str, n: int) -> list[Fraction]:
    arrays = unpack_side(raw[side], n)
    return [Fraction(int(a), int(b)) for a, b in zip(arrays["num"], arrays["den"], strict=True)]


@PROPERTY_SETTINGS
@given(
    corpora(),
    orders_st,
    configs,
    st.lists(st.integers(0, 20), max_size=6),
    st.booleans(),
    st.sampled_from(GRAM_MEASURES),
)
def test_sharded_audit_equals_unsharded_and_brute_force(
    data, orders, config, cuts, resident, measure
):
    sources, targets, queries, refs = data
    whole = build_index(sources, targets, orders, config)
    shards = sharded(sources, targets, cuts, orders, config, resident)
    search = SearchSettings(measure=measure)
    want = audit_exposures(whole, queries, refs, config, search)
    got = audit_exposures(shards, queries, refs, config, search)
    assert without_stats(got) == without_stats(want)
    source = source_exposures(shards, queries, config, search).to_pydict()
    assert source["nn"] == got.to_pydict()["source_nn"]
    target = target_exposures(shards, refs, config, search).to_pydict()
    assert target["ref_idx"] == got.to_pydict()["target_ref_idx"]
    # The exact ratios equal the oracle's fractions.
    train = normalize_many(sources, config), normalize_many(targets, config)
    oracle = BruteForce(*train, orders, measure=measure)
    raw = shards.audit(
        normalize_many(queries, config),
        [normalize_many(r, config) for r in refs],
        search,
    )
    for side in ("source", "target", "pair"):
        got_ratios = ratios(raw, side, len(queries))
        for i, (q, r) in enumerate(zip(queries, refs, strict=True)):
            want_i = oracle.exposure(normalize(q, config), normalize_many(r, config))
            assert got_ratios[i] == getattr(want_i, f"{side}_exposure"), (side, i)


@PROPERTY_SETTINGS
@given(corpora(), orders_st)
def test_one_row_shards_equal_the_unsharded_index(data, orders):
    sources, targets, queries, refs = data
    config = NormalizationConfig()
    whole = audit_exposures(build_index(sources, targets, orders), queries, refs)
    shards = sharded(sources, targets, list(range(len(sources))), orders, config)
    assert without_stats(audit_exposures(shards, queries, refs)) == without_stats(whole)


def test_ties_and_exact_flags_across_shards():
    # Rows 0 and 3 tie on the source (the same gram set); rows 2 and 4 are exact copies in
    # different shards; shard [5, 7) shares no gram with any query.
    sources = ["aaaaa", "bcd", "the cat", "aaaaaa", "the cat", "zzzz", "qqqq"]
    targets = ["le chat", "x", "le chat", "le chat", "le chien", "zzz", "qqq"]
    queries = ["aaaaaaa", "the cat", "nothing"]
    refs = [["le chat"], ["le chien", "le chat"], ["vvvv"]]
    config = NormalizationConfig()
    whole = audit_exposures(build_index(sources, targets), queries, refs)
    for cuts in ([1], [3], [3, 5], [1, 2, 3, 4, 5, 6], [4]):
        got = audit_exposures(sharded(sources, targets, cuts, (3, 4, 5), config), queries, refs)
        assert without_stats(got) == without_stats(whole), cuts
    doc = without_stats(whole)
    assert doc["source_nn"] == [0, 2, None] and doc["source_exact"] == [False, True, False]
    assert doc["target_nn"] == [0, 0, None] and doc["target_ref_idx"] == [0, 1, None]
    assert doc["pair_nn"][1] == 2 and doc["pair_exact"][1] is True


def test_stats_are_summed_and_shards_are_released_when_not_resident():
    sources = [f"row {i} of the corpus" for i in range(40)]
    opened: list[int] = []

    def part(start: int, stop: int) -> ShardPart:
        def open_index():
            opened.append(start)
            return build_index(sources[start:stop], sources[start:stop])

        return ShardPart(start, stop - start, open_index)

    index = ShardedIndex([part(0, 20), part(20, 40)], resident=False)
    assert index.n_docs == 40
    out = audit_exposures(index, ["row 33 of the corpus"], [["row 3"]])
    audit_exposures(index, ["row 1"], [["row 2"]])
    assert opened == [0, 20, 0, 20] and all(p.index is None for p in index.parts)
    assert out.to_pydict()["source_nn"] == [33] and out.stats["postings_total"] > 0
    np.testing.assert_equal(out.to_pydict()["source_exact"], [True])
