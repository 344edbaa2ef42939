"""cyzil-compatible BLEU and token edit distance, in Python and as DuckDB SQL functions.

Inputs are pre-tokenised: a sentence is a sequence of token strings, a corpus a sequence of
sentences. Results are float32 values (widened to Python floats) bit-identical to cyzil 0.3.1
wherever cyzil is defined; the kernels live in `native/src/cyzil.rs`, which documents the
arithmetic and the behaviour where cyzil is undefined. Corpora of different lengths and
`max_ngram < 1` raise ValueError.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import duckdb

from warehouse.native import native

Tokens = Sequence[str]
Corpus = Sequence[Tokens]


def bleu_sentence(reference: Tokens, candidate: Tokens, max_ngram: int = 4) -> list[float]:
    """Sentence BLEU as [precision, brevity penalty, bleu]."""
    return native.bleu_sentence(reference, candidate, max_ngram)


def bleu_corpus(references: Corpus, candidates: Corpus, max_ngram: int = 4) -> list[float]:
    """Corpus BLEU (statistics summed over all pairs) as [precision, brevity penalty, bleu]."""
    return native.bleu_corpus(references, candidates, max_ngram)


def bleu_points(references: Corpus, candidates: Corpus, max_ngram: int = 4) -> list[list[float]]:
    """Sentence BLEU of every reference/candidate pair."""
    return native.bleu_points(references, candidates, max_ngram)


def edit_distance_sentence(a: Tokens, b: Tokens) -> int:
    """Token-level Levenshtein distance between two sentences."""
    return native.edit_distance_sentence(a, b)


def edit_distance_corpus(references: Corpus, candidates: Corpus) -> list[float]:
    """Mean [distance, distance / len(reference)] over all pairs."""
    return native.edit_distance_corpus(references, candidates)


def edit_distance_points(references: Corpus, candidates: Corpus) -> list[list[float]]:
    """[distance, distance / len(reference)] of every reference/candidate pair."""
    return native.edit_distance_points(references, candidates)


_TOKENS = duckdb.list_type(duckdb.sqltypes.VARCHAR)
_CORPUS = duckdb.list_type(_TOKENS)
_SCORES = duckdb.list_type(duckdb.sqltypes.DOUBLE)
_POINTS = duckdb.list_type(_SCORES)
_INTEGER = duckdb.sqltypes.INTEGER

# name: (function, parameter types, return type, whether the last parameter is max_ngram)
_SQL_FUNCTIONS: dict[str, tuple[Callable[..., Any], list[Any], Any, bool]] = {
    "bleu_sentence": (bleu_sentence, [_TOKENS, _TOKENS, _INTEGER], _SCORES, True),
    "bleu_corpus": (bleu_corpus, [_CORPUS, _CORPUS, _INTEGER], _SCORES, True),
    "bleu_points": (bleu_points, [_CORPUS, _CORPUS, _INTEGER], _POINTS, True),
    "edit_distance_sentence": (
        edit_distance_sentence,
        [_TOKENS, _TOKENS],
        duckdb.sqltypes.BIGINT,
        False,
    ),
    "edit_distance_corpus": (edit_distance_corpus, [_CORPUS, _CORPUS], _SCORES, False),
    "edit_distance_points": (edit_distance_points, [_CORPUS, _CORPUS], _POINTS, False),
}


def names_a_cyzil_function(sql: str) -> bool:
    """Whether a SQL text may call one of the cyzil functions (any text naming one does)."""
    text = sql.lower()
    return any(name in text for name in _SQL_FUNCTIONS)


def register_cyzil_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Make the six cyzil functions callable from SQL on this connection (once per connection)."""
    for name, (function, parameters, result, has_max_ngram) in _SQL_FUNCTIONS.items():
        if not has_max_ngram:
            con.create_function(name, function, parameters, result)
            continue
        # A Python UDF cannot be overloaded, so a temporary macro supplies max_ngram := 4.
        con.create_function(f"_cyzil_{name}", function, parameters, result)
        con.execute(
            f"CREATE OR REPLACE TEMP MACRO {name}(refs, cands, max_ngram := 4) AS "
            f"_cyzil_{name}(refs, cands, max_ngram)"
        )
