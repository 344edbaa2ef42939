"""Corpus scores from summed statistics: one Python implementation, equal to sacrebleu exactly
and to the SQL macros the views use."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF, TER

from tests.stats.test_resample import _system
from warehouse.metrics.scores import (
    bleu_from_stats,
    bleu_scores,
    chrf_from_stats,
    chrf_scores,
    ter_from_stats,
    ter_scores,
)
from warehouse.metrics.surface import compute_segment_stats
from warehouse.store.schema import ensure_schema

_BLEU, _CHRF, _TER = BLEU(tokenize="13a"), CHRF(word_order=2), TER()


@st.composite
def bleu_rows(draw: st.DrawFn) -> list[int]:
    """Summed BLEU statistics: lengths, then correct <= total per order (totals shrinking)."""
    hyp_len = draw(st.integers(0, 5000))
    ref_len = draw(st.integers(0, 5000))
    totals = [max(hyp_len - k * draw(st.integers(0, 50)), 0) for k in range(4)]
    correct = [draw(st.integers(0, t)) for t in totals]
    return [hyp_len, ref_len, *correct, *totals]


@st.composite
def chrf_rows(draw: st.DrawFn) -> list[int]:
    """Summed chrF++ statistics: [hyp, ref, match <= min(hyp, ref)] for 8 orders."""
    row: list[int] = []
    for _ in range(8):
        hyp, ref = draw(st.integers(0, 3000)), draw(st.integers(0, 3000))
        row += [hyp, ref, draw(st.integers(0, min(hyp, ref)))]
    return row


@settings(max_examples=300, deadline=None)
@given(st.lists(bleu_rows(), min_size=1, max_size=6))
def test_bleu_equals_sacrebleu_exactly_on_integer_and_float32_sums(rows):
    got = bleu_scores(np.array(rows, dtype=np.int64))
    assert got.tolist() == [_BLEU._compute_score_from_stats(list(r)).score for r in rows]
    as_float32 = np.array(rows, dtype=np.float32)
    got32 = bleu_scores(as_float32)
    assert got32.tolist() == [_BLEU._compute_score_from_stats(r).score for r in as_float32]


@settings(max_examples=300, deadline=None)
@given(st.lists(chrf_rows(), min_size=1, max_size=6))
def test_chrf_equals_sacrebleu_exactly_on_integer_and_float32_sums(rows):
    got = chrf_scores(np.array(rows, dtype=np.int64))
    assert got.tolist() == [_CHRF._compute_score_from_stats(list(r)).score for r in rows]
    as_float32 = np.array(rows, dtype=np.float32)
    got32 = chrf_scores(as_float32)
    assert got32.dtype == np.float32
    assert got32.tolist() == [float(_CHRF._compute_score_from_stats(r).score) for r in as_float32]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500)), min_size=1, max_size=6))
def test_ter_equals_sacrebleu_exactly(rows):
    floats = [[float(e), float(r)] for e, r in rows]
    assert ter_scores(floats).tolist() == [_TER._compute_score_from_stats(r).score for r in floats]


@pytest.fixture(scope="module")
def macros() -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory warehouse schema (its scoring macros), made once for the examples below."""
    con = duckdb.connect(":memory:")
    ensure_schema(con)
    yield con
    con.close()


@settings(max_examples=100, deadline=None)
@given(bleu_rows(), chrf_rows(), st.tuples(st.integers(0, 500), st.integers(0, 500)))
def test_sql_macros_agree_with_the_python_implementation(macros, bleu, chrf, ter):
    sql = macros.execute(
        "SELECT bleu_score(?), chrf_score(?), ter_score(?)", [bleu, chrf, [float(x) for x in ter]]
    ).fetchone()
    assert sql is not None
    python = (bleu_from_stats(bleu), chrf_from_stats(chrf), ter_from_stats([*map(float, ter)]))
    for ours, theirs in zip(python, sql, strict=True):
        assert ours == pytest.approx(theirs, abs=1e-9, rel=0)


@pytest.mark.parametrize("seed", range(6))
def test_corpus_scores_equal_sacrebleu_on_small_and_degenerate_corpora(seed):
    refs, hyps = _system(seed=100 + seed, n=1 + seed)
    stats = compute_segment_stats(hyps, [[r] for r in refs], [False] * len(hyps))
    bleu_sum = np.array(stats.bleu).sum(axis=0)
    chrf_sum = np.array(stats.chrf).sum(axis=0)
    assert bleu_scores(bleu_sum[None])[0] == _BLEU.corpus_score(hyps, [refs]).score
    assert chrf_scores(chrf_sum[None])[0] == _CHRF.corpus_score(hyps, [refs]).score


def test_degenerate_statistics_score_zero_like_sacrebleu():
    assert bleu_scores(np.zeros((1, 10), dtype=np.int64))[0] == 0.0
    assert chrf_scores(np.zeros((1, 24), dtype=np.int64))[0] == 0.0
    no_bigrams = np.array([[3, 3, 2, 0, 0, 0, 3, 0, 0, 0]])
    expected = _BLEU._compute_score_from_stats(no_bigrams[0].tolist()).score
    assert bleu_scores(no_bigrams)[0] == expected
