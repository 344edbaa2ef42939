"""cyzil-compatible kernels: cyzil's known answers, properties, and the DuckDB SQL functions."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from warehouse.metrics.cyzil import (
    bleu_corpus,
    bleu_points,
    bleu_sentence,
    edit_distance_corpus,
    edit_distance_points,
    edit_distance_sentence,
    register_cyzil_functions,
)

# cyzil 0.3.1's outputs on 65 inputs, recorded once (tests/metrics/data).
KNOWN_ANSWERS = Path(__file__).resolve().parent / "data" / "cyzil_known_answers.json"
CASES: list[dict[str, Any]] = json.loads(KNOWN_ANSWERS.read_text())["cases"]
FUNCTIONS = {
    f.__name__: f
    for f in (
        bleu_sentence,
        bleu_corpus,
        bleu_points,
        edit_distance_sentence,
        edit_distance_corpus,
        edit_distance_points,
    )
}

# Our result for every case that cyzil leaves undefined (or that we deliberately define
# differently); every other case must equal cyzil's output exactly.
OUR_DEFINITION: dict[str, Any] = {
    # An order with zero clipped matches: precision and BLEU 0, brevity penalty as usual.
    "repeated_words_clipping_n2": [0.0, 1.0, 0.0],
    "cand_shorter_than_n_identical": [0.0, 1.0, 0.0],
    "no_unigram_match": [0.0, 1.0, 0.0],
    "bigram_zero_match_n4": [0.0, 1.0, 0.0],
    # Empty inputs: no candidate tokens scores [0, 0, 0]; no pairs gives no points.
    "corpus_all_candidates_empty": [0.0, 0.0, 0.0],
    "points_empty_corpus": [],
    "ed_corpus_empty": [0.0, 0.0],
    # Invalid arguments.
    "corpus_len_mismatch": ValueError,
    "ed_corpus_len_mismatch": ValueError,
    "max_ngram_zero": ValueError,
    "max_ngram_negative": ValueError,
    "ed_non_str_tokens": TypeError,
    # Any sequence of strings is a sentence, a tuple included.
    "bleu_sentence_tuple_arg": [1.0, 1.0, 1.0],
}


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(value["__tuple__"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _check_known_answer(case: dict[str, Any]) -> None:
    function = FUNCTIONS[case["function"]]
    args = _decode(case["args"])
    expected = OUR_DEFINITION.get(case["id"], case["expected"])
    if isinstance(expected, type):
        with pytest.raises(expected):
            function(*args)
    else:
        assert function(*args) == expected


def test_known_answers_file_has_65_cases_each_with_a_checked_outcome():
    assert KNOWN_ANSWERS.is_file(), f"cyzil known answers are missing: {KNOWN_ANSWERS}"
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)) == 65
    assert set(OUR_DEFINITION) <= set(ids)
    unchecked = [c["id"] for c in CASES if c["status"] != "ok" and c["id"] not in OUR_DEFINITION]
    assert unchecked == []
    checked = 0
    for case in CASES:
        _check_known_answer(case)
        checked += 1
    assert checked == 65


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_known_answer_is_bit_identical_to_cyzil_or_our_definition(case):
    _check_known_answer(case)


def test_every_defined_cyzil_answer_is_reproduced_without_exception():
    deviations = [c["id"] for c in CASES if c["status"] == "ok" and c["id"] in OUR_DEFINITION]
    assert deviations == []


# --- properties ----------------------------------------------------------------------------

_libm = ctypes.CDLL(ctypes.util.find_library("m"))
_libm.logf.argtypes = _libm.expf.argtypes = [ctypes.c_float]
_libm.logf.restype = _libm.expf.restype = ctypes.c_float
f32 = np.float32


def logf(x: np.float32) -> np.float32:
    """The C library's float32 log (numpy's own float32 log rounds differently)."""
    return f32(_libm.logf(x))


def expf(x: np.float32) -> np.float32:
    """The C library's float32 exp."""
    return f32(_libm.expf(x))


def ngrams(tokens: Sequence[str], max_order: int) -> Counter[str]:
    """N-grams of orders 1..max_order keyed like cyzil: each token followed by one space."""
    return Counter(
        "".join(t + " " for t in tokens[i : i + n])
        for n in range(1, max_order + 1)
        for i in range(len(tokens) - n + 1)
    )


def micro_average_bleu(refs, cands, max_ngram: int) -> list[float]:
    """Corpus BLEU by its definition: clipped matches, n-gram totals and lengths summed.

    An n-gram is its space-joined text, so a token "a b" is the bigram ("a", "b"); a match
    counts at the order its text spells, among the orders the candidate has n-grams of.
    """
    matches = [0] * max_ngram
    totals = [0] * max_ngram
    for ref, cand in zip(refs, cands, strict=True):
        orders = min(max_ngram, len(cand))
        available = ngrams(ref, orders)
        for gram, count in ngrams(cand, orders).items():
            order = gram.count(" ")
            if 1 <= order <= orders:
                matches[order - 1] += min(count, available[gram])
        for n in range(1, max_ngram + 1):
            totals[n - 1] += max(len(cand) - n + 1, 0)
    ref_len = sum(map(len, refs))
    cand_len = sum(map(len, cands))
    if ref_len == 0 or cand_len == 0:
        return [0.0, 0.0, 0.0]
    precision = f32(0.0)
    if min(matches) > 0:
        log_sum = f32(0.0)
        for m, t in zip(matches, totals, strict=True):
            log_sum = f32(log_sum + logf(f32(m) / f32(t)) / f32(max_ngram))
        precision = expf(log_sum)
    ratio = f32(ref_len) / f32(cand_len)
    bp = f32(math.exp(min(1.0 - float(ratio), 0.0)))
    return [float(precision), float(bp), float(f32(precision * bp))]


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


# A small vocabulary makes matches likely; "a b" and "" exercise cyzil's space-joined n-grams.
tokens = st.sampled_from(["a", "b", "c", "d", "A", "a b", "", "é"])
sentences = st.lists(tokens, max_size=12)
pairs = st.lists(st.tuples(sentences, sentences), max_size=8)
orders = st.integers(min_value=1, max_value=5)


def split(corpus_pairs):
    return [r for r, _ in corpus_pairs], [c for _, c in corpus_pairs]


@given(pairs, orders)
def test_corpus_bleu_is_the_micro_average_of_summed_statistics(corpus_pairs, max_ngram):
    refs, cands = split(corpus_pairs)
    assert bleu_corpus(refs, cands, max_ngram) == micro_average_bleu(refs, cands, max_ngram)


@given(pairs, orders)
def test_bleu_points_are_the_sentence_scores_of_each_pair(corpus_pairs, max_ngram):
    refs, cands = split(corpus_pairs)
    points = bleu_points(refs, cands, max_ngram)
    assert points == [bleu_sentence(r, c, max_ngram) for r, c in corpus_pairs]
    assert points == [micro_average_bleu([r], [c], max_ngram) for r, c in corpus_pairs]


@given(sentences, sentences)
def test_edit_distance_is_levenshtein_on_tokens(a, b):
    assert edit_distance_sentence(a, b) == levenshtein(a, b) == edit_distance_sentence(b, a)


@given(pairs)
def test_edit_distance_points_normalise_by_reference_length(corpus_pairs):
    refs, cands = split(corpus_pairs)
    expected = []
    for ref, cand in corpus_pairs:
        d = f32(levenshtein(ref, cand))
        expected.append([float(d), float(d / f32(len(ref))) if ref else 0.0])
    assert edit_distance_points(refs, cands) == expected


@given(pairs)
def test_corpus_edit_distance_is_the_float32_mean_of_the_points(corpus_pairs):
    refs, cands = split(corpus_pairs)
    points = edit_distance_points(refs, cands)
    sums = [f32(0.0), f32(0.0)]
    for point in points:
        sums = [f32(s + f32(v)) for s, v in zip(sums, point, strict=True)]
    n = f32(len(points))
    expected = [float(s / n) for s in sums] if points else [0.0, 0.0]
    assert edit_distance_corpus(refs, cands) == expected


def test_invalid_arguments_raise_value_error_naming_the_problem():
    with pytest.raises(ValueError, match=r"same length \(2 references, 1 candidates\)"):
        bleu_points([["a"], ["b"]], [["a"]])
    with pytest.raises(ValueError, match="max_ngram must be at least 1, got 0"):
        bleu_sentence(["a"], ["a"], 0)
    with pytest.raises(ValueError, match="max_ngram must be at least 1"):
        bleu_sentence([], [], -3)


def test_a_string_is_not_a_token_list():
    with pytest.raises(TypeError):
        bleu_sentence("a b", "a b")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        edit_distance_sentence(["a", None], ["a"])  # type: ignore[list-item]


def test_results_are_float32_values_and_edit_distance_is_an_int():
    score = bleu_sentence(["the", "cat", "sat"], ["the", "cat", "sat", "down"], 2)
    assert all(float(f32(v)) == v for v in score)
    assert type(edit_distance_sentence(["a"], ["b"])) is int


# --- DuckDB --------------------------------------------------------------------------------


@pytest.fixture
def con():
    connection = duckdb.connect()
    register_cyzil_functions(connection)
    yield connection
    connection.close()


REFS = [["the", "cat", "sat", "on", "the", "mat"], ["a", "b", "c"], ["I", "see", "a", "cat"]]
CANDS = [["the", "cat", "sat", "on", "a", "mat"], ["a", "b"], ["I", "see", "a", "dog", "."]]


def test_sql_functions_return_the_python_values(con):
    def sql(query: str, *params: Any) -> Any:
        return con.execute(query, list(params)).fetchone()[0]

    for ref, cand in zip(REFS, CANDS, strict=True):
        for n in (1, 2, 4):
            assert sql("SELECT bleu_sentence(?, ?, ?)", ref, cand, n) == bleu_sentence(ref, cand, n)
        assert sql("SELECT edit_distance_sentence(?, ?)", ref, cand) == (
            edit_distance_sentence(ref, cand)
        )
    assert sql("SELECT bleu_corpus(?, ?, 3)", REFS, CANDS) == bleu_corpus(REFS, CANDS, 3)
    assert sql("SELECT bleu_points(?, ?, 3)", REFS, CANDS) == bleu_points(REFS, CANDS, 3)
    assert sql("SELECT edit_distance_corpus(?, ?)", REFS, CANDS) == (
        edit_distance_corpus(REFS, CANDS)
    )
    assert sql("SELECT edit_distance_points(?, ?)", REFS, CANDS) == (
        edit_distance_points(REFS, CANDS)
    )


def test_sql_max_ngram_defaults_to_4(con):
    ref, cand = REFS[0], CANDS[0]
    query = "SELECT bleu_sentence(?, ?), bleu_corpus([?], [?]), bleu_points([?], [?])"
    row = con.execute(query, [ref, cand] * 3).fetchone()
    assert row == (bleu_sentence(ref, cand),) * 2 + ([bleu_sentence(ref, cand)],)
    assert con.sql("SELECT bleu_sentence(['a', 'b'], ['a', 'b'], max_ngram := 2)").fetchone() == (
        [1.0, 1.0, 1.0],
    )


def test_sql_corpus_bleu_over_table_rows_equals_python(con):
    con.execute("CREATE TABLE pairs (id INTEGER, ref VARCHAR[], hyp VARCHAR[])")
    con.executemany(
        "INSERT INTO pairs VALUES (?, ?, ?)", list(zip(range(3), REFS, CANDS, strict=True))
    )
    rows = con.sql("SELECT bleu_sentence(ref, hyp) FROM pairs ORDER BY id").fetchall()
    assert [r[0] for r in rows] == bleu_points(REFS, CANDS)
    corpus = con.sql("SELECT bleu_corpus(list(ref ORDER BY id), list(hyp ORDER BY id)) FROM pairs")
    assert corpus.fetchone()[0] == bleu_corpus(REFS, CANDS)


def test_sql_types_and_null_input(con):
    row = con.sql(
        "SELECT typeof(bleu_sentence(['a'], ['a'])), typeof(edit_distance_sentence(['a'], [])),"
        " typeof(edit_distance_points([['a']], [['a']])), bleu_sentence(NULL, ['a'])"
    ).fetchone()
    assert row == ("DOUBLE[]", "BIGINT", "DOUBLE[][]", None)
    assert con.sql("SELECT edit_distance_points([['a']], [['a']])").fetchone() == ([[0.0, 0.0]],)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT bleu_corpus([['a']], [['a'], ['b']])",
        "SELECT bleu_points([['a']], [['a'], ['b']], 2)",
        "SELECT edit_distance_corpus([['a']], [['a'], ['b']])",
        "SELECT edit_distance_points([['a']], [['a'], ['b']])",
    ],
)
def test_sql_mismatched_corpus_lengths_raise_a_duckdb_error(con, query):
    with pytest.raises(duckdb.Error, match=r"same length \(1 references, 2 candidates\)"):
        con.sql(query).fetchall()


def test_sql_max_ngram_below_1_raises_a_duckdb_error(con):
    with pytest.raises(duckdb.Error, match="max_ngram must be at least 1, got 0"):
        con.sql("SELECT bleu_sentence(['a'], ['a'], 0)").fetchall()


def test_a_sql_text_names_a_cyzil_function_in_any_case_and_under_its_internal_name():
    from warehouse.metrics.cyzil import names_a_cyzil_function

    assert names_a_cyzil_function("SELECT BLEU_CORPUS(r, c) FROM t")
    assert names_a_cyzil_function("select _cyzil_bleu_points(r, c, 4)")
    assert names_a_cyzil_function("SELECT edit_distance_sentence(a, b)")
    assert not names_a_cyzil_function("SELECT bleu, chrf FROM leaderboard")
